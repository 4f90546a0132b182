"""Interruptible runs: SIGINT/SIGTERM stop a run cleanly; a second one exits at once.

See :func:`interruptible`; the runner checks :func:`interrupted` after every scenario.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Iterator
from types import FrameType

__all__ = ["interrupted", "interruptible"]


class _Interrupt:
    """The state of a SIGINT/SIGTERM during :func:`interruptible`."""

    signal: str | None = None


def interrupted() -> bool:
    """Has a SIGINT/SIGTERM arrived during the current :func:`interruptible` block?"""
    return _Interrupt.signal is not None


def _on_signal(signum: int, frame: FrameType | None) -> None:
    if _Interrupt.signal is not None:  # the second one: stop now, whatever is going on
        os.write(2, b"interrupted again: exiting at once\n")
        os._exit(130)
    _Interrupt.signal = signal.Signals(signum).name
    raise KeyboardInterrupt


@contextlib.contextmanager
def interruptible() -> Iterator[None]:
    """SIGINT and SIGTERM raise KeyboardInterrupt in the block; a second one exits 130 at once.

    The handler is the kit's own (not Python's default), so an event loop in the
    implementation does not turn the interrupt into a cancellation it may swallow;
    and the runner checks :func:`interrupted` after every scenario, so a swallowed
    KeyboardInterrupt still stops the run. Outside the main thread: no effect.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    saved = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    _Interrupt.signal = None
    for sig in saved:
        signal.signal(sig, _on_signal)
    try:
        yield
    finally:
        for sig, handler in saved.items():
            signal.signal(sig, handler)
        _Interrupt.signal = None
