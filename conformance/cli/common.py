"""What every ``toolreg-conformance`` command shares: exit codes, usage errors,
adapter loading and closing, progress (lines, or a run's live status line), the
implementation's log records,
and the checks a command makes *before* it starts a run.

Exit codes (README, "Exit codes"):

======  ==============================================================
``0``   conformant, or exactly as expected; ``replay``: fixed
``1``   not conformant; ``replay``: still failing -- a verdict on the
        implementation, never anything else
``2``   usage error, an adapter that cannot be loaded, a malformed fixture,
        scenario or expect file, an unwritable report directory, or a crash of
        the kit itself (one line on stderr; set ``TOOLREG_CONFORMANCE_DEBUG=1``
        for the traceback)
``130`` interrupted (SIGINT/SIGTERM); a partial report is written when asked for
======  ==============================================================
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import shutil
import sys
import tempfile
import traceback
from collections import deque
from collections.abc import Callable, Iterator
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Final, TextIO

from conformance.adapters import load_adapter
from conformance.seam.adapter import Adapter, AdapterError
from conformance.transport.policy import check_seconds

if TYPE_CHECKING:
    from conformance.running.progress import Tick

__all__ = [
    "EXIT_FAIL",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_USAGE",
    "CapturedLogs",
    "RunProgress",
    "UsageError",
    "capture_logs",
    "check_deadline",
    "close_adapter",
    "debug_enabled",
    "leave_quietly",
    "load",
    "opened",
    "progress_printer",
    "status_text",
    "writable_dir",
]

EXIT_OK: Final = 0
EXIT_FAIL: Final = 1
EXIT_USAGE: Final = 2
EXIT_INTERRUPTED: Final = 130


class UsageError(Exception):
    """A bad command line or input file: exit code 2, before anything runs."""


def debug_enabled() -> bool:
    """``TOOLREG_CONFORMANCE_DEBUG=1``: kit crashes print their traceback."""
    return os.environ.get("TOOLREG_CONFORMANCE_DEBUG", "") not in ("", "0")


def check_deadline(value: float | None, option: str = "--deadline") -> None:
    """A deadline must be a positive, finite number of seconds (the transports' own check,
    :func:`conformance.transport.policy.check_seconds`, made a usage error)."""
    if value is None:
        return
    try:
        check_seconds(option, value)
    except AdapterError as e:
        raise UsageError(str(e)) from None


def load(args: argparse.Namespace, spec: str | None = None) -> Adapter:
    """The adapter ``spec`` (default ``args.adapter``), with the transport options, described.

    Anything that goes wrong while loading -- a module that does not import, a
    factory that raises, an adapter that cannot describe itself -- is an
    :class:`AdapterError` (exit 2), never a verdict on the implementation.
    """
    spec = spec if spec is not None else str(args.adapter)
    deadline = getattr(args, "deadline", None)
    check_deadline(deadline)
    if spec.startswith("mutant:"):
        return _mutant(spec.removeprefix("mutant:"))
    if spec.startswith("python:") and "" not in sys.path and str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))  # let python:module:factory name a module in cwd
    adapter = load_adapter(
        spec,
        validate_protocol=getattr(args, "validate_protocol", False),
        deadline_s=deadline,
    )
    try:
        adapter.describe()
    except AdapterError:
        close_adapter(adapter)
        raise
    except Exception as e:
        close_adapter(adapter)
        raise AdapterError(f"adapter {spec!r} failed to describe itself: {e}") from e
    return adapter


def _mutant(name: str) -> Adapter:
    """``mutant:NAME``: a known-bad registry of the bundled catalogue (what ``explain`` and
    the spec site replay their failing traces on)."""
    from conformance.adapters.reference.mutants import CATALOGUE

    if name not in CATALOGUE:
        near = [n for n in CATALOGUE if name and (name in n or n.endswith(name))][:5]
        hint = f" (did you mean {', '.join(near)}?)" if near else ""
        raise AdapterError(f"mutant:{name}: no such mutant in the catalogue{hint}")
    return CATALOGUE[name].build()


def close_adapter(adapter: Adapter) -> None:
    """Close an adapter that has a ``close()`` (transports stop their harness)."""
    close = getattr(adapter, "close", None)
    if callable(close):
        close()


@contextlib.contextmanager
def opened(adapter: Adapter) -> Iterator[Adapter]:
    """``with opened(load(args)) as adapter:`` -- closed however the block ends."""
    try:
        yield adapter
    finally:
        close_adapter(adapter)


def progress_printer(quiet: bool, err: TextIO) -> Callable[[str], None]:
    """The progress callback of a command: ``  .. line`` on stderr, nothing with ``-q``."""

    def progress(line: str) -> None:
        if not quiet:
            print(f"  .. {line}", file=err, flush=True)

    return progress


def _clock(seconds: float) -> str:
    """``0:14``, ``12:05``, ``1:02:03``."""
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def status_text(tick: Tick) -> str:
    """``rules 12/57 · units 30/140 · 812 scenarios · 0:14 elapsed · ETA ~0:41``.

    ETA = elapsed / units done * units left, an estimate (``~``); none before a unit finished.
    """
    parts = [
        f"rules {tick.rules_done}/{tick.rules_total}",
        f"units {tick.units_done}/{tick.units_total}",
        f"{tick.scenarios} scenarios",
        f"{_clock(tick.elapsed_s)} elapsed",
    ]
    if tick.units_done:
        left = tick.units_total - tick.units_done
        parts.append(f"ETA ~{_clock(tick.elapsed_s / tick.units_done * left)}")
    return " · ".join(parts)


class RunProgress:
    """The progress of ``run`` and ``publish`` on ``err``, in one of three modes.

    * ``live`` (``err`` is a terminal): ONE status line, redrawn in place (carriage
      return, clear to the end of the line) with the counts of the last
      :class:`~conformance.running.progress.Tick` and the current unit's label, cut to
      the terminal's width; :meth:`close` ends it with a newline.
    * ``lines`` (not a terminal, ``--progress``): one plain line per finished unit,
      with the same counts.
    * ``off`` (``-q``, or not a terminal without ``--progress``: CI logs, pipes): nothing.

    Call it with a unit's label (the ``progress`` callback of
    :func:`~conformance.running.runner.run_suite`), hand :meth:`tick` to it as ``tick=``
    for the counts, :meth:`note` a line of the command's own; use it as a
    context manager so that the live line ends however the run does.
    """

    def __init__(
        self, err: TextIO, *, quiet: bool = False, lines: bool = False, width: int | None = None
    ) -> None:
        self.err = err
        self.mode = "off" if quiet else "live" if _isatty(err) else "lines" if lines else "off"
        self.width = width  # None: the terminal's, at every redraw
        self.label = ""
        self.last: Tick | None = None
        self.shown = False  # a live line is on the screen, not yet ended

    def __call__(self, label: str) -> None:
        """The unit under way (one process) or just finished (``-j N``)."""
        self.label = label
        if self.mode == "live":
            self._draw()

    def tick(self, tick: Tick) -> None:
        """The run's counts, as it starts and after every finished unit."""
        self.last = tick
        if self.mode == "live":
            self._draw()
        elif self.mode == "lines" and tick.unit is not None:
            self._write(f"  .. {status_text(tick)} · {tick.unit}\n")

    def note(self, text: str) -> None:
        """A line of the command's own (what runs, how long it took), above the live line."""
        if self.mode == "off":
            return
        if self.shown:
            self._write("\r\x1b[K")
        self._write(f"  .. {text}\n")
        if self.shown:
            self._draw()

    def close(self) -> None:
        """End the live line with a newline (the run ended or was interrupted)."""
        if self.shown:
            self.shown = False
            self._write("\n")

    def __enter__(self) -> RunProgress:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def _draw(self) -> None:
        width = self.width if self.width is not None else shutil.get_terminal_size().columns
        parts = [status_text(self.last)] if self.last is not None else []
        if self.label:
            parts.append(self.label)
        line = " · ".join(parts)[: max(width - 1, 0)]  # never wrap: \r redraws one line only
        self._write(f"\r\x1b[K{line}")
        self.shown = True

    def _write(self, text: str) -> None:
        self.err.write(text)
        self.err.flush()


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # no such method, or a closed stream
        return False


def writable_dir(path: str | None, option: str = "--report") -> Path | None:
    """Create ``path`` and prove it writable now, not after a long run."""
    if path is None:
        return None
    directory = Path(path)
    try:
        directory.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=directory, prefix=".probe-"):
            pass
    except OSError as e:
        raise UsageError(f"{option} {path}: cannot write there ({e.strerror or e})") from None
    return directory


class _BoundedFormatter(logging.Formatter):
    """A record's traceback cut to its last frames: a runaway recursion's is thousands."""

    FRAMES = 30

    def formatException(self, ei: Any) -> str:
        _, error, tb = ei
        if error is None:
            return super().formatException(ei)
        lines = traceback.format_exception(type(error), error, tb, limit=-self.FRAMES)
        return "".join(lines).rstrip("\n")


def leave_quietly() -> None:
    """After a command, before the interpreter exits: what an in-process implementation left
    behind (tasks still pending when their event loop closed, which asyncio reports when they
    are collected at exit, formatting a repr and a traceback each) is not the terminal's
    business. Its records go to a handler that neither formats nor prints them; the report
    was written already. (A reference mutant whose wrappers re-enter without end printed
    two million lines there, and took longer to exit than to be judged.)"""
    logging.getLogger().handlers = [logging.NullHandler()]


class CapturedLogs(logging.Handler):
    """The implementation's own log records, kept off the terminal.

    An in-process implementation may log (the reference logs every failing
    finalizer and observer it contains). Those records are the implementation's
    business, not the kit's output: they are counted, the last few kept, and
    with a report directory written in full to ``implementation.log`` there.
    """

    #: At most this many characters of the implementation's records go to the log file; the
    #: rest are counted only (a runaway implementation's flood is not the disk's problem).
    LOG_FILE_LIMIT = 20_000_000

    def __init__(self, log_file: Path | None, keep: int = 20) -> None:
        super().__init__(logging.DEBUG)
        self.count = 0
        self.written = 0
        self.tail: deque[str] = deque(maxlen=keep)
        self.log_file = log_file
        self._stream: TextIO | None = None
        self.setFormatter(_BoundedFormatter("%(levelname)s %(name)s: %(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = self.format(record)
        except Exception:  # a record that cannot be formatted is still counted
            text = f"{record.levelname} {record.name}: <unformattable record>"
        self.count += 1
        self.tail.append(text.splitlines()[0] if text else "")
        if self.log_file is None or self.written > self.LOG_FILE_LIMIT:
            return
        if self._stream is None:
            self._stream = self.log_file.open("w", encoding="utf-8")
        self.written += len(text) + 1
        if self.written > self.LOG_FILE_LIMIT:
            text = f"... (more than {self.LOG_FILE_LIMIT} characters: the rest counted, not kept)"
        self._stream.write(text + "\n")

    def close(self) -> None:
        if self._stream is not None:
            self._stream.close()
            self._stream = None
        super().close()

    def summary(self) -> str | None:
        """One line for the terminal, or ``None`` if nothing was logged."""
        if not self.count:
            return None
        where = f" (all of them in {self.log_file})" if self.log_file else ""
        return f"the implementation logged {self.count} records{where}"


@contextlib.contextmanager
def capture_logs(report_dir: Path | None) -> Iterator[CapturedLogs]:
    """Route every log record to a :class:`CapturedLogs` for the duration of a run.

    The root logger's own handlers are set aside meanwhile, so nothing reaches
    the terminal (including Python's last-resort handler), and put back after.
    """
    root = logging.getLogger()
    handler = CapturedLogs(report_dir / "implementation.log" if report_dir else None)
    saved, saved_level = root.handlers[:], root.level
    root.handlers = [handler]
    root.setLevel(logging.INFO if report_dir else logging.WARNING)
    try:
        yield handler
    finally:
        root.handlers = saved
        root.setLevel(saved_level)
        handler.close()
