"""Implementations that never give the kit its thread back, for tests/kit/test_stop.py.

``make_looping``: from its first generated scenario on, ``run`` loops forever, logging a
runaway error with its traceback on every turn and swallowing every exception,
KeyboardInterrupt included (the kit's interrupt cannot end it from inside). It says
``stuck: looping`` on stderr once, so a test knows when to send the signal.
``make_term_ignoring``: the same, and it ignores SIGTERM as well (a ``-j`` worker that
the pool's terminate() cannot end).
"""

from __future__ import annotations

import contextlib
import logging
import signal
import sys
import threading
from collections.abc import Mapping
from typing import Any

from conformance.adapters.reference import ReferenceAdapter

log = logging.getLogger("stuck")


class _Looping(ReferenceAdapter):
    def __init__(self, ignore_term: bool) -> None:
        super().__init__()
        self.ignore_term = ignore_term

    def run(self, scenario: Mapping[str, Any]) -> dict[str, Any]:
        if not str(scenario.get("id", "")).startswith("generated/"):
            return super().run(scenario)
        if self.ignore_term and threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
        while True:  # the one KeyboardInterrupt the kit raises lands in a try, wherever it hits
            with contextlib.suppress(BaseException):  # nothing stops this loop from inside
                # said inside the try: the test signals the moment it reads this line
                print("stuck: looping", file=sys.stderr, flush=True)
                _spin()


def _spin() -> None:
    turn = 0
    while True:
        try:
            try:
                raise RuntimeError(f"runaway error {turn}")
            except RuntimeError:
                log.exception("the implementation failed again (%d)", turn)
            turn += 1
        except BaseException:
            pass


def make_looping() -> _Looping:
    return _Looping(ignore_term=False)


def make_term_ignoring() -> _Looping:
    return _Looping(ignore_term=True)
