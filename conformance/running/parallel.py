"""``run -j N``: the run's units of work on worker processes, merged as if run in one.

Each worker re-creates the adapter from its spec string (in-process adapters
only: see :func:`parallel_spec`), runs whole units (some fixtures, or one
rule's property) with a :class:`~conformance.running.tally.Tally` of its own and
hands back a :class:`~conformance.running.tally.Partial`, which the parent merges
in plan order. The implementation's log records travel back with it.
"""

from __future__ import annotations

import ctypes
import logging
import multiprocessing
import queue
import signal
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from conformance.processes import become_subreaper
from conformance.seam.adapter import Adapter, AdapterInfo

if TYPE_CHECKING:
    from conformance.judging.contract import Contract
    from conformance.running.plan import Unit
    from conformance.running.progress import Tick
    from conformance.running.tally import Partial, Tally

__all__ = ["WorkerDied", "parallel_spec", "run_parallel"]


class WorkerDied(Exception):
    """A worker process ended outright (the implementation exited, or crashed its process):
    the run cannot finish; the message names the units that were lost with it."""


def parallel_spec(adapter: Adapter, spec: str | None) -> bool:
    """Can workers re-create ``adapter`` from ``spec``? In-process adapters only (see run_suite)."""
    if spec is None or callable(getattr(adapter, "diagnostics", None)):
        return False
    return spec == "reference" or spec.startswith("python:")


class _Worker:
    """The state of one worker process: its own adapter and the run's settings."""

    adapter: ClassVar[Adapter | None] = None
    info: ClassVar[AdapterInfo | None] = None
    selection: ClassVar[dict[str, frozenset[str] | None]] = {}
    contract: ClassVar[Contract | None] = None
    report_dir: ClassVar[Path | None] = None
    record: ClassVar[bool] = False  # record the scenarios judged (a corpus being written)
    #: one byte per unit of the run, set by the worker that starts it (no lock: a worker
    #: that dies must not leave one held)
    begun: ClassVar[ctypes.Array[ctypes.c_byte]]


def _worker_start(
    load: Callable[[str], Adapter],
    spec: str,
    selection: dict[str, frozenset[str] | None],
    contract: Contract | None,
    report_dir: str | None,
    record: bool,
    begun: ctypes.Array[ctypes.c_byte],
) -> None:
    from conformance.running.tally import keep_hypothesis_out_of_the_cwd

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when to stop
    become_subreaper()  # what the worker's implementation starts ends with the worker
    keep_hypothesis_out_of_the_cwd()
    _Worker.adapter = load(spec)
    _Worker.info = _Worker.adapter.describe()
    _Worker.selection = selection
    _Worker.contract = contract
    _Worker.report_dir = Path(report_dir) if report_dir else None
    _Worker.record = record
    _Worker.begun = begun
    root = logging.getLogger()
    root.handlers = [_ForwardLogs()]
    root.setLevel(logging.INFO if report_dir else logging.WARNING)


class _ForwardLogs(logging.Handler):
    """A worker's log records, kept to be handed back with its unit's result."""

    records: ClassVar[list[tuple[str, int, str]]] = []

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = record.getMessage()
            if record.exc_info:
                text += "\n" + logging.Formatter().formatException(record.exc_info)
        except Exception:
            text = "<unformattable record>"
        self.records.append((record.name, record.levelno, text))


def _worker_unit(index: int, unit: Unit, profile: str, seed: int | None) -> Partial:
    from conformance.running.tally import Tally

    _Worker.begun[index] = 1
    tally = Tally(
        _Worker.selection, _Worker.adapter, _Worker.report_dir, _Worker.info, _Worker.contract
    )
    tally.recorded = [] if _Worker.record else None
    _ForwardLogs.records = []
    tally.run_unit(unit, profile, seed)
    part = tally.partial()
    part.logs = _ForwardLogs.records
    return part


def run_parallel(
    tally: Tally,
    units: Sequence[Unit],
    done: set[int],
    spec: str,
    jobs: int,
    profile: str,
    seed: int | None,
    progress: Callable[[str], None],
    *,
    tick: Callable[[Tick], None] | None = None,
    started: float | None = None,
    load: Callable[[str], Adapter],
    kept: dict[int, Partial] | None = None,
) -> None:
    """Run ``units`` on ``jobs`` worker processes; merge their results into ``tally`` in order.

    Each worker builds its adapter with ``load(spec)`` (the caller's loader, e.g.
    :func:`conformance.adapters.load_adapter`: the runner knows no adapter kinds).

    Properties go out first (they take longest), fixtures fill the gaps; progress is
    told as units finish, and so is ``tick`` (the counts of a
    :class:`~conformance.running.progress.Tick`, elapsed since ``started``, a
    ``time.monotonic()``; default: now), once as the work starts and once per
    finished unit; the merge follows the plan, so the outcome is the same as in
    one process. Interrupted, the units that finished are merged, the rest are not.
    ``kept`` (when given) is also handed each merged unit's Partial, by its index in ``units``.
    """
    from conformance.running.progress import Ticks

    ticks = Ticks(units, tally.rule_ids, tick, started)
    methods = multiprocessing.get_all_start_methods()
    method = "forkserver" if "forkserver" in methods else "spawn"
    context = multiprocessing.get_context(method)
    if method == "forkserver":  # import the kit once, in the server the workers fork from
        context.set_forkserver_preload(["conformance.running.tally"])
    report_dir = str(tally.report_dir) if tally.report_dir is not None else None
    finished: queue.SimpleQueue[Future[Partial]] = queue.SimpleQueue()
    results: dict[int, Partial] = {}
    order = sorted(range(len(units)), key=lambda i: units[i].rule is None)
    record = tally.recorded is not None
    begun = context.RawArray(ctypes.c_byte, len(units))  # see _Worker.begun
    pool = ProcessPoolExecutor(
        jobs,
        mp_context=context,
        initializer=_worker_start,
        initargs=(load, spec, tally.selection, tally.contract, report_dir, record, begun),
    )
    scenarios = tally.scenarios  # run so far, counting the units that finished
    try:
        ticks.start()
        index_of: dict[Future[Partial], int] = {}
        for index in order:
            future = pool.submit(_worker_unit, index, units[index], profile, seed)
            index_of[future] = index
            future.add_done_callback(finished.put)
        for _ in order:
            future = finished.get()
            index = index_of[future]
            try:
                part = future.result()
            except BrokenProcessPool as e:
                lost = [u.label for i, u in enumerate(units) if begun[i] and i not in results]
                raise WorkerDied(_lost(lost)) from e
            results[index] = part
            scenarios += part.scenarios
            progress(units[index].label)
            ticks.done(index, scenarios)
    except BaseException:
        # Interrupted: a worker may be stuck in an implementation that ignores SIGTERM, and
        # ending the pool would wait for it forever. The unfinished units are lost anyway.
        for worker in multiprocessing.active_children():
            worker.kill()
        raise
    finally:
        _end(pool)
        for index in sorted(results):
            for name, level, text in results[index].logs:
                logging.getLogger(name).log(level, "%s", text)
            tally.merge(results[index])
            done.add(index)
            if kept is not None:
                kept[index] = results[index]


def _lost(running: Sequence[str]) -> str:
    """A worker died outright: what it took with it (one of the units that were running)."""
    return (
        "a worker process of run -j ended abruptly (the implementation exited or crashed "
        f"its process) while running {' or '.join(running) or 'a unit'}; the run stopped "
        "there (run with -j 1 to see which scenario ends the process)"
    )


#: How long ending the pool may take before its workers are killed and it is left behind.
END_GRACE_S = 5.0


def _end(pool: Any, grace_s: float = END_GRACE_S) -> None:
    """``pool.shutdown()``, bounded. A worker stuck in an implementation (a run stopped by an
    error or a signal kills the workers first, but one may ignore SIGTERM), or killed while it
    held one of the pool's queue locks, can leave the shutdown waiting forever -- a
    ``run -j 2`` whose worker raised hung so. After ``grace_s`` the workers are killed and
    the pool is left to the daemon thread that was ending it."""
    ender = threading.Thread(
        target=lambda: pool.shutdown(wait=True, cancel_futures=True), daemon=True
    )
    ender.start()
    ender.join(grace_s)
    if ender.is_alive():
        for worker in multiprocessing.active_children():
            worker.kill()
