"""An implementation that leaves a runaway chain of tasks behind, for tests/kit/test_quiet_exit.py.

Like a reference mutant whose wrapper re-enters itself: every generated scenario's run
starts a chain of tasks, each awaiting the next, that spawns a new link even when
cancelled, so links are still pending when the scenario's event loop closes. asyncio reports
each one ("Task was destroyed but it is pending!") when it is collected, at the latest when
the process exits; its default handler formats the task's repr, which follows the chain to
the interpreter's recursion limit, once per link.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping
from typing import Any

from conformance.adapters.reference import ReferenceAdapter, run_in_a_new_loop

LINKS = 400
_kept: list[Any] = []  # the chains, alive until the interpreter exits


async def _link(depth: int) -> None:
    if depth >= LINKS:
        await asyncio.Event().wait()
    try:
        await asyncio.ensure_future(_link(depth + 1))
    except asyncio.CancelledError:
        _kept.append(asyncio.ensure_future(_link(depth + 1)))  # one more, however told


class _Leaving(ReferenceAdapter):
    def run(self, scenario: Mapping[str, Any]) -> dict[str, Any]:
        if str(scenario.get("id", "")).startswith("generated/"):

            async def leave() -> None:
                _kept.append(asyncio.ensure_future(_link(0)))
                for _ in range(LINKS + 5):  # the chain grows to its full depth
                    await asyncio.sleep(0)

            with contextlib.suppress(Exception):
                run_in_a_new_loop(leave())
        return super().run(scenario)


def make_adapter() -> _Leaving:
    return _Leaving()
