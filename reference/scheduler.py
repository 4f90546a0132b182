"""A driver for one model turn's batch of calls (CONC-2).

Consecutive ``parallel`` calls form a group that runs in a bounded rolling
pool; each ``exclusive`` call runs alone, as a barrier. Within a group the
policy stages (``prepare``) run one call at a time in model order, bodies
overlap (``dispatch``), and completion -- post-execute, finalize,
``tools/result`` -- again runs in model order. Only bodies overlap.

CONC-3 is the tool author's side of the bargain and nothing here can check
it: a body that opts in must not mutate parent-owned state, and any recorder
races between overlapping bodies must commute or fail closed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Sequence
from typing import Any

from reference._types import ToolExecutionInput, ToolResult
from reference.registry import Prepared, Registry

__all__ = ["run_batch"]


def run_batch(
    registry: Registry, calls: Sequence[ToolExecutionInput], *, max_parallel: int = 4
) -> Coroutine[Any, Any, list[ToolResult]]:
    """Run ``calls`` as one turn's batch; results come back in model order.

    Every call's arguments are snapshotted now, when the batch is handed over (PIPE-2): a
    later member's are not taken only when its turn comes.
    """
    for call in calls:
        registry.snapshot(call)
    return _run_batch(registry, calls, max_parallel)


async def _run_batch(
    registry: Registry, calls: Sequence[ToolExecutionInput], max_parallel: int
) -> list[ToolResult]:
    if max_parallel < 1:
        raise ValueError("max_parallel must be at least 1")
    modes = [registry.execution_mode(call) for call in calls]  # CONC-1
    results: list[ToolResult] = []
    i = 0
    while i < len(calls):
        if modes[i] == "exclusive":  # a barrier: runs alone
            results.append(await registry.execute(calls[i]))
            i += 1
            continue
        j = i
        while j < len(calls) and modes[j] == "parallel":
            j += 1
        results.extend(await _pool(registry, calls[i:j], max_parallel))
        i = j
    return results


async def _pool(
    registry: Registry, calls: Sequence[ToolExecutionInput], max_parallel: int
) -> list[ToolResult]:
    slots = asyncio.Semaphore(max_parallel)
    started: list[tuple[Prepared, asyncio.Task[None] | None]] = []

    async def dispatch(run: Prepared) -> None:
        try:
            await registry.dispatch(run)
        finally:
            slots.release()

    try:
        for call in calls:
            run = await registry.prepare(call)  # policy in model order
            task = None
            if run.ready:
                await slots.acquire()  # bounded rolling pool
                task = asyncio.create_task(dispatch(run))
            started.append((run, task))
    finally:
        pending = [task for _, task in started if task is not None]
        if pending:
            await asyncio.wait(pending)  # CANCEL-4: never abandon a started body
    results = []
    for run, _task in started:
        results.append(await registry.complete(run))  # results in model order
    return results
