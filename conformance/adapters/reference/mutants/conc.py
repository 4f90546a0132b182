"""Mutants of concurrency classification and scheduling (CONC-1..2; CONC-3 binds tool authors).

Read beside ``conformance/judging/rules/conc.py``. The CONC-2 mutants are batch
drivers: CONC-2 binds the driver, not the registry.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Sequence
from typing import Any

from conformance.adapters.reference.mutants._base import mutant
from reference import (
    NotLosslessJSON,
    Registry,
    ToolExecutionInput,
    ToolResult,
    materialize,
    run_batch,
    thaw,
)
from reference.registry import ExecutionMode, Prepared
from reference.scheduler import _pool


@mutant("CONC-1", "isConcurrencySafe returning 1 (any truthy value) is treated as parallel")
class TruthyClassifier(Registry):
    """``if tool.is_concurrency_safe(args):`` -- the natural Python spelling, and wrong: ``1``,
    ``"true"`` or ``{}``-ish objects are not a proof of safety; only ``True`` is."""

    def execution_mode(self, call: ToolExecutionInput) -> ExecutionMode:
        tool = self._resolve(call.name, call.agent, call.parent)
        if tool is None or tool.is_concurrency_safe is None:
            return "exclusive"
        try:
            args = materialize(call.arguments)
        except NotLosslessJSON:
            return "exclusive"
        if next(tool.params_validator.iter_errors(thaw(args)), None) is not None:
            return "exclusive"
        try:
            return "parallel" if tool.is_concurrency_safe(args) else "exclusive"  # the bug
        except Exception:
            return "exclusive"


@mutant("CONC-1", "a classifier that throws is treated as parallel")
class ThrowingClassifierParallel(Registry):
    """Tempting: "The tool declared a classifier, so it meant to opt in": an exception while
    classifying is read as safe. Every doubt must resolve to exclusive."""

    def execution_mode(self, call: ToolExecutionInput) -> ExecutionMode:
        tool = self._resolve(call.name, call.agent, call.parent)
        if tool is None or tool.is_concurrency_safe is None:
            return "exclusive"
        try:
            return "parallel" if tool.is_concurrency_safe(call.arguments) is True else "exclusive"
        except Exception:
            return "parallel"  # the bug


@mutant("CONC-1", "the classifier is asked about arguments that violate the parameters")
class ClassifiesInvalidArguments(Registry):
    """Classification skips validation: a call that can only fail with INVALID_ARGS is still
    scheduled as parallel when its classifier says yes."""

    def execution_mode(self, call: ToolExecutionInput) -> ExecutionMode:
        tool = self._resolve(call.name, call.agent, call.parent)
        if tool is None or tool.is_concurrency_safe is None:
            return "exclusive"
        try:
            args = materialize(call.arguments)
            return "parallel" if tool.is_concurrency_safe(args) is True else "exclusive"  # bug
        except Exception:
            return "exclusive"


@mutant(
    "CONC-2",
    "the driver ignores classification: every call of the batch runs at once",
    replaces="batch",
)
async def all_at_once(
    registry: Registry, calls: Sequence[ToolExecutionInput], *, max_parallel: int = 4
) -> list[ToolResult]:
    """``asyncio.gather`` over the whole batch: exclusive calls are no barrier, and their
    bodies overlap others."""
    return list(await asyncio.gather(*(registry.execute(call) for call in calls)))


def _groups(
    registry: Registry, calls: Sequence[ToolExecutionInput]
) -> list[list[ToolExecutionInput]]:
    """Consecutive parallel calls form one group; each exclusive call is a group of its own."""
    groups: list[list[ToolExecutionInput]] = []
    previous = "exclusive"
    for call in calls:
        mode = registry.execution_mode(call)
        if mode == "parallel" and previous == "parallel":
            groups[-1].append(call)
        else:
            groups.append([call])
        previous = mode
    return groups


def _pool_size(max_parallel: int) -> None:
    if max_parallel < 1:
        raise ValueError("max_parallel must be at least 1")


@mutant(
    "CONC-2",
    "a pool size of 0 means no limit: the batch runs instead of being refused",
    replaces="batch",
)
async def zero_means_unbounded(
    registry: Registry, calls: Sequence[ToolExecutionInput], *, max_parallel: int = 4
) -> list[ToolResult]:
    """The common idiom ``limit or len(calls)``: a caller asking for a pool of zero (a
    configuration slip) gets an unbounded pool, and every call runs."""
    return await run_batch(registry, calls, max_parallel=max_parallel or max(1, len(calls)))


@mutant("CONC-2", "results come back in completion order, not model order", replaces="batch")
async def completion_order(
    registry: Registry, calls: Sequence[ToolExecutionInput], *, max_parallel: int = 4
) -> list[ToolResult]:
    """Policy in model order, bodies in a bounded pool -- and each call completed and reported
    as soon as its body is done, so results no longer line up with the model's calls."""
    _pool_size(max_parallel)  # refused as the reference refuses it: not this mutant's bug
    slots = asyncio.Semaphore(max_parallel)

    async def finish(run: Prepared) -> ToolResult:
        if run.ready:
            async with slots:
                await registry.dispatch(run)
        return await registry.complete(run)

    results: list[ToolResult] = []
    for group in _groups(registry, calls):
        runs = [await registry.prepare(call) for call in group]
        tasks = [asyncio.ensure_future(finish(run)) for run in runs]
        results.extend([await done for done in asyncio.as_completed(tasks)])  # the bug
    return results


@mutant(
    "CONC-2",
    "parallel calls run their whole pipeline concurrently, policy included",
    replaces="batch",
)
async def parallel_pipelines(
    registry: Registry, calls: Sequence[ToolExecutionInput], *, max_parallel: int = 4
) -> list[ToolResult]:
    """Each parallel call's ``execute`` is a task of its own, in a bounded pool: pre-execute
    listeners, approval prompts and guards of the group interleave instead of keeping model
    order."""
    _pool_size(max_parallel)  # refused as the reference refuses it: not this mutant's bug
    slots = asyncio.Semaphore(max_parallel)

    async def bounded(call: ToolExecutionInput) -> ToolResult:
        async with slots:
            return await registry.execute(call)  # the bug: policy inside the pool

    results: list[ToolResult] = []
    for group in _groups(registry, calls):
        results.extend(await asyncio.gather(*(bounded(call) for call in group)))
    return results


@mutant(
    "CONC-2",
    "the parallel pool ignores maxParallel: the whole group runs at once",
    replaces="batch",
)
async def unbounded_pool(
    registry: Registry, calls: Sequence[ToolExecutionInput], *, max_parallel: int = 4
) -> list[ToolResult]:
    """Policy in model order and results in model order -- but every body of a parallel group
    is started at once, however large the group (a fan-out that exhausts the host)."""
    results: list[ToolResult] = []
    for group in _groups(registry, calls):
        runs = [await registry.prepare(call) for call in group]
        await asyncio.gather(*(registry.dispatch(run) for run in runs if run.ready))  # the bug
        results.extend([await registry.complete(run) for run in runs])
    return results


@mutant(
    "PIPE-2",
    "the batch driver snapshots each member's arguments only when its turn comes",
    replaces="batch",
)
async def snapshots_when_its_turn_comes(
    registry: Registry, calls: Sequence[ToolExecutionInput], *, max_parallel: int = 4
) -> list[ToolResult]:
    """The driver reads nothing of a member until the member's turn comes: a caller that
    changes a later call's arguments while the batch's first call runs -- it already
    streamed them, it is reusing its dict -- changes what runs. PIPE-2's "later changes
    change nothing" counts from the moment of the call, for every member of a batch."""
    from reference.scheduler import _run_batch

    return await _run_batch(registry, calls, max_parallel)  # the bug: no snapshot at the call


@mutant(
    "CONC-2",
    "an exclusive call's barrier lifts after its body: its completion overlaps the next calls",
    replaces="batch",
)
def barrier_lifted_after_the_body(
    registry: Registry, calls: Sequence[ToolExecutionInput], *, max_parallel: int = 4
) -> Any:
    """An exclusive call is a barrier "for its body": once the body settled, the driver
    moves on and lets the call's post-execute, finalizer and observers finish in the
    background while the next calls' policy and bodies already run. Bodies never overlap,
    so a check that only looks at bodies passes it; but CONC-2 runs an exclusive call alone,
    as a barrier -- its whole pipeline, measured against the calls after it too."""
    for call in calls:
        registry.snapshot(call)

    async def run() -> list[ToolResult]:
        _pool_size(max_parallel)
        finishing: list[asyncio.Future[list[ToolResult]]] = []
        for group in _groups(registry, calls):
            if len(group) == 1 and registry.execution_mode(group[0]) == "exclusive":
                prepared = await registry.prepare(group[0])
                if prepared.ready:
                    await registry.dispatch(prepared)
                done = asyncio.ensure_future(registry.complete(prepared))  # the bug
                finishing.append(asyncio.ensure_future(_listed(done)))
            else:
                finishing.append(asyncio.ensure_future(_pool(registry, group, max_parallel)))
                await finishing[-1]
        return [r for part in await asyncio.gather(*finishing) for r in part]

    return run()


async def _listed(pending: Awaitable[ToolResult]) -> list[ToolResult]:
    return [await pending]


@mutant("CONC-1", "a classification is remembered by tool name and arguments, for every layer")
class VerdictRememberedByName(Registry):
    """ "A classifier is a pure function of its arguments", so its verdict is cached under the
    call's name and arguments -- but not under *which* definition answered: an agent's own
    ``read_file`` (whose classifier says no) inherits the global one's ``parallel`` for the
    same arguments, and runs beside other bodies without ever being asked."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._verdicts: dict[str, ExecutionMode] = {}

    def execution_mode(self, call: ToolExecutionInput) -> ExecutionMode:
        try:
            key = json.dumps([call.name, call.arguments], sort_keys=True)
        except (TypeError, ValueError):
            return super().execution_mode(call)
        if key not in self._verdicts:  # the bug: no agent, no definition in the key
            self._verdicts[key] = super().execution_mode(call)
        return self._verdicts[key]
