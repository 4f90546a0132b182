"""``run -j N``: the run's units of work on worker processes, merged as if run in one.

Each worker re-creates the adapter from its spec string (in-process adapters
only: see :func:`parallel_spec`), runs whole units (some fixtures, or one
rule's property) with a :class:`~conformance.running.tally.Tally` of its own and
hands back a :class:`~conformance.running.tally.Partial`, which the parent merges
in plan order. The implementation's log records travel back with it.
"""

from __future__ import annotations

import functools
import logging
import multiprocessing
import queue
import signal
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from conformance.processes import become_subreaper
from conformance.seam.adapter import Adapter, AdapterInfo

if TYPE_CHECKING:
    from conformance.judging.contract import Contract
    from conformance.running.plan import Unit
    from conformance.running.progress import Tick
    from conformance.running.tally import Partial, Tally

__all__ = ["parallel_spec", "run_parallel"]


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


def _worker_start(
    load: Callable[[str], Adapter],
    spec: str,
    selection: dict[str, frozenset[str] | None],
    contract: Contract | None,
    report_dir: str | None,
    record: bool = False,
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


def _worker_unit(unit: Unit, profile: str, seed: int | None) -> Partial:
    from conformance.running.tally import Tally

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
    finished: queue.SimpleQueue[tuple[int, Partial | BaseException]] = queue.SimpleQueue()
    results: dict[int, Partial] = {}
    order = sorted(range(len(units)), key=lambda i: units[i].rule is None)
    record = tally.recorded is not None
    pool = context.Pool(
        jobs, _worker_start, (load, spec, tally.selection, tally.contract, report_dir, record)
    )
    scenarios = tally.scenarios  # run so far, counting the units that finished
    try:
        ticks.start()
        for index in order:
            pool.apply_async(
                _worker_unit,
                (units[index], profile, seed),
                callback=functools.partial(_put, finished, index),
                error_callback=functools.partial(_put, finished, index),
            )
        for _ in order:
            index, part = finished.get()
            if isinstance(part, BaseException):
                raise part
            results[index] = part
            scenarios += part.scenarios
            progress(units[index].label)
            ticks.done(index, scenarios)
        pool.close()
    except BaseException:
        # Interrupted: a worker may be stuck in an implementation that ignores SIGTERM, and
        # Pool.terminate() would wait for it forever. The unfinished units are lost anyway.
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


#: How long ending the pool may take before its workers are killed and it is left behind.
END_GRACE_S = 5.0


def _end(pool: Any, grace_s: float = END_GRACE_S) -> None:
    """``pool.terminate()`` and ``join()``, bounded. A worker killed while it held one of the
    pool's queue locks (a run stopped by an error or a signal kills the workers first: one may
    be stuck in an implementation that ignores SIGTERM) leaves ``terminate`` waiting for that
    lock forever -- a ``run -j 2`` whose worker raised hung so. After ``grace_s`` the workers
    are killed and the pool is left to the daemon thread that was ending it (its finalizer
    has run: nothing waits on it at exit)."""
    ender = threading.Thread(target=lambda: (pool.terminate(), pool.join()), daemon=True)
    ender.start()
    ender.join(grace_s)
    if ender.is_alive():
        for worker in multiprocessing.active_children():
            worker.kill()


def _put(
    into: queue.SimpleQueue[tuple[int, Partial | BaseException]],
    index: int,
    value: Partial | BaseException,
) -> None:
    into.put((index, value))
