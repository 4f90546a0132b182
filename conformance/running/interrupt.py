"""Interruptible runs: SIGINT/SIGTERM stop a run within seconds, whatever the implementation does.

See :func:`interruptible`. Rules of this file:

* The first SIGINT/SIGTERM raises KeyboardInterrupt in the block (the kit's own handler,
  not Python's default, so an implementation's event loop cannot turn it into a
  cancellation it swallows unnoticed), and the runner checks :func:`interrupted` after
  every scenario, so a swallowed KeyboardInterrupt still stops the run at the next one.
* An implementation that never returns -- a loop that swallows the KeyboardInterrupt, or
  one raised while ``logging`` formats a runaway traceback -- cannot keep the kit: a
  watchdog thread gives the block :data:`GRACE_S` seconds to end after the signal, then
  calls the block's ``on_stuck`` (the run writes its partial report, marked incomplete),
  ends every descendant process (:func:`conformance.processes.end_descendants`) and
  exits 130 at once. A second signal does the same without waiting for the grace, and
  without a report.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Final

from conformance.processes import end_descendants

__all__ = ["EXIT_INTERRUPTED", "GRACE_S", "Stop", "interrupted", "interruptible"]

#: How long a block has to end after the first signal before the watchdog ends the process.
GRACE_S: Final = 2.0
EXIT_INTERRUPTED: Final = 130


class Stop:
    """The current :func:`interruptible` block: what to do if it does not end in time."""

    def __init__(self, grace_s: float) -> None:
        self.grace_s = grace_s
        #: Called from the watchdog thread when the block is stuck past the grace (the run
        #: writes its partial report). Its own failure does not stop the exit.
        self.on_stuck: Callable[[], None] | None = None
        self.ended = threading.Event()
        self._claim = threading.Lock()  # who finishes the run: the block, or the watchdog

    def settle(self) -> None:
        """The block has its thread back (the run returned): no rescue is needed any more.

        If the watchdog already began ending the process, wait for it to finish (it exits).
        """
        if self.ended.is_set():
            return
        if not self._claim.acquire(blocking=False):
            threading.Event().wait()  # the watchdog is writing the report and will exit
        self.ended.set()

    def _rescue(self) -> bool:
        """The watchdog's claim: True when the block has not settled (the watchdog acts)."""
        return not self.ended.is_set() and self._claim.acquire(blocking=False)


class _Interrupt:
    """The state of a SIGINT/SIGTERM during :func:`interruptible`."""

    signal: str | None = None
    stop: Stop | None = None


def interrupted() -> bool:
    """Has a SIGINT/SIGTERM arrived during the current :func:`interruptible` block?"""
    return _Interrupt.signal is not None


def _exit_now(message: bytes) -> None:
    os.write(2, message)
    with contextlib.suppress(Exception):
        end_descendants()
    os._exit(EXIT_INTERRUPTED)


def _watch(stop: Stop) -> None:
    if stop.ended.wait(stop.grace_s) or not stop._rescue():
        return
    os.write(2, f"the run did not stop within {stop.grace_s:g} s: ending it\n".encode())
    if stop.on_stuck is not None:
        try:
            stop.on_stuck()
        except BaseException as e:  # the exit must happen whatever the report writer did
            os.write(2, f"could not write the partial report: {type(e).__name__}: {e}\n".encode())
    _exit_now(b"")


def _on_signal(signum: int, frame: FrameType | None) -> None:
    if _Interrupt.signal is not None:  # the second one: stop now, whatever is going on
        _exit_now(b"interrupted again: exiting at once\n")
    _Interrupt.signal = signal.Signals(signum).name
    stop = _Interrupt.stop
    if stop is not None:
        threading.Thread(target=_watch, args=(stop,), name="toolreg-stop", daemon=True).start()
    raise KeyboardInterrupt


@contextlib.contextmanager
def interruptible(grace_s: float = GRACE_S) -> Iterator[Stop]:
    """SIGINT and SIGTERM raise KeyboardInterrupt in the block; see the module's rules.

    Yields the block's :class:`Stop`: set its ``on_stuck`` to what must still happen (write
    the partial report) if the block does not end within ``grace_s`` after a signal.
    Outside the main thread: no signal handling (the yielded Stop is inert).
    """
    stop = Stop(grace_s)
    if threading.current_thread() is not threading.main_thread():
        yield stop
        return
    saved = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    _Interrupt.signal = None
    _Interrupt.stop = stop
    for sig in saved:
        signal.signal(sig, _on_signal)
    try:
        yield stop
    finally:
        stop.settle()
        for sig, handler in saved.items():
            signal.signal(sig, handler)
        _Interrupt.signal = None
        _Interrupt.stop = None
