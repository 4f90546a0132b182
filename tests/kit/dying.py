"""An adapter whose process dies outright, for ``run -j N`` (tests/kit/test_interrupt.py).

``make`` runs the reference, except that in a worker process of ``run -j N`` its
``TOOLREG_TEST_DIE_AT``-th scenario (default 5) ends the process with ``os._exit``
-- as an implementation that calls ``exit()``, or crashes in native code, would.
The parent process (the kit itself, its preflight) is left alone. The kit must
report the lost work and end, not wait for it forever.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Mapping
from typing import Any

from conformance.adapters.reference import ReferenceAdapter


class _Dying(ReferenceAdapter):
    def __init__(self) -> None:
        super().__init__()
        self.at = int(os.environ.get("TOOLREG_TEST_DIE_AT", "5"))
        self.seen = 0

    def run(self, scenario: Mapping[str, Any]) -> dict[str, Any]:
        if multiprocessing.parent_process() is not None:  # a worker of run -j N
            self.seen += 1
            if self.seen == self.at:
                os._exit(3)
        return super().run(scenario)


def make() -> _Dying:
    return _Dying()
