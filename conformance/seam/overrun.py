"""A scenario that keeps the kit's thread: the bound on one ``adapter.run``.

The per-action deadline (:data:`conformance.vocab.ACTION_DEADLINE_S`) ends a hang that yields
to its event loop. A hang that never yields -- an in-process implementation looping in
plain Python, such as a batch driver whose index stops moving -- gives no loop a turn, so
no deadline of the loop can end it, and a run with ``-j 1`` would wait forever.

:func:`bounded` arms a real-time timer around one scenario; when it fires (and the scenario
is still running) its handler raises :class:`Overran` wherever the implementation is,
between two bytecodes. Rules of this file:

* Only in the main thread (where Python runs signal handlers), only when nothing else has
  SIGALRM (a handler other than the default is left alone: no bound then), and never
  nested.
* The bound is generous: every action its full deadline, plus one more, plus slack
  (:func:`budget`), so a scenario that only waits never reaches it.
* :class:`Overran` is a ``BaseException``, so the implementation's ``except Exception``
  does not swallow it. One that swallows everything gets it again every
  :data:`REPEAT_S` seconds until ``run`` returns; the kit's own SIGINT/SIGTERM handling
  (:mod:`conformance.running.interrupt`) remains the last resort.
* After the block the timer is disarmed and the previous handler put back, whatever
  happened.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator, Mapping
from types import FrameType
from typing import Any, Final

__all__ = ["REPEAT_S", "SLACK_S", "Overran", "bounded", "budget"]

#: Added to a scenario's per-action deadlines before the bound fires.
SLACK_S: Final = 5.0
#: After the first :class:`Overran`, raised again this often until the scenario returns.
REPEAT_S: Final = 2.0


class Overran(BaseException):
    """The scenario kept the kit's thread past its bound (a hang that never yields)."""

    def __init__(self, seconds: float) -> None:
        super().__init__(
            f"the implementation kept the kit's thread for {seconds:g} s without yielding "
            "(a hang no per-action deadline can end)"
        )
        self.seconds = seconds


def budget(scenario: Mapping[str, Any], action_deadline_s: float) -> float:
    """The bound of one scenario: each action its deadline, one more, and :data:`SLACK_S`."""
    actions = scenario.get("actions")
    count = len(actions) if isinstance(actions, list) else 0
    return action_deadline_s * (count + 1) + SLACK_S


_active = threading.local()


@contextlib.contextmanager
def bounded(seconds: float) -> Iterator[None]:
    """Raise :class:`Overran` in this block if it is still running after ``seconds``."""
    usable = (
        threading.current_thread() is threading.main_thread()
        and hasattr(signal, "setitimer")
        and signal.getsignal(signal.SIGALRM) in (signal.SIG_DFL, None)
        and not getattr(_active, "on", False)
    )
    if not usable:
        yield
        return

    def overran(signum: int, frame: FrameType | None) -> None:
        if getattr(_active, "on", False):
            raise Overran(seconds)

    previous = signal.signal(signal.SIGALRM, overran)
    _active.on = True
    try:
        signal.setitimer(signal.ITIMER_REAL, seconds, REPEAT_S)
        yield
    finally:
        _active.on = False
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
