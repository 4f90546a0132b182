"""An adapter that interrupts its own run, for the interruption tests (tests/kit/test_interrupt.py).

``make_swallowing`` sends SIGINT to its own process while it runs its
``TOOLREG_TEST_INTERRUPT_AT``-th scenario (default 3) and swallows the
KeyboardInterrupt -- as an implementation that takes it for a cancellation
would -- then answers normally. ``make_twice`` sends two, both swallowed: the
second must end the process at once. The kit must stop the run either way.
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Mapping
from typing import Any

from conformance.adapters.reference import ReferenceAdapter


class _Interrupting(ReferenceAdapter):
    def __init__(self, times: int) -> None:
        super().__init__()
        self.at = int(os.environ.get("TOOLREG_TEST_INTERRUPT_AT", "3"))
        self.times = times
        self.seen = 0

    def run(self, scenario: Mapping[str, Any]) -> dict[str, Any]:
        if str(scenario.get("id", "")).startswith("doctor/"):
            return super().run(scenario)  # run's preflight probes are not the run's scenarios
        self.seen += 1
        if self.seen == self.at:
            for _ in range(self.times):
                # taken for a cancellation: the implementation goes on
                with contextlib.suppress(KeyboardInterrupt):
                    os.kill(os.getpid(), signal.SIGINT)
        return super().run(scenario)


def make_swallowing() -> _Interrupting:
    return _Interrupting(1)


def make_twice() -> _Interrupting:
    return _Interrupting(2)
