"""Mutants of ⑤ finalizeContent, the tool's last mile (FIN-1..4).

Read beside ``conformance/judging/rules/fin.py``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import reference.registry as regmod
from conformance.adapters.reference.mutants._base import mutant
from reference import Registry, ToolExecution, ToolFailure, ToolResult
from reference.registry import Prepared, _exception_failure, _finalize

PostOutcome = tuple[ToolResult, bool, Any]
_ORIGINAL_FINALIZE = regmod._finalize


@mutant("FIN-1", "finalizeContent is looked up when the call ends, not snapshotted at its start")
class FinalizerLookedUpAtTheEnd(Registry):
    """Tempting: "Use the current definition": a tool reloaded (or disposed) while a call runs hands
    that call's outcome to another definition's finalizer -- or to none."""

    async def complete(self, run: Prepared) -> ToolResult:
        ex = run.execution
        tool = self._resolve(ex.name, ex.agent, ex.parent)  # the bug: resolved again, late
        run.finalizer = tool.finalize_content if tool is not None else None
        return await super().complete(run)


@mutant("FIN-2", "finalizeContent is skipped on denials")
class DenialsNotFinalized(Registry):
    """Tempting: "The tool never ran, so its finalizer has nothing to do": but the finalizer owns
    the last mile of *every* outcome, denials included."""

    async def complete(self, run: Prepared) -> ToolResult:
        if run.outcome in ("denied", "policy-failure"):
            run.finalizer = None  # the bug
        return await super().complete(run)


@mutant("FIN-2", "finalizeContent runs only for dispatched calls (never on early failures)")
class FinalizesOnlyDispatched(Registry):
    """The finalizer is attached to the dispatch route: invalid arguments, denials, a
    pre-dispatch cancellation and wrapper failures all escape the tool's last invariant."""

    async def complete(self, run: Prepared) -> ToolResult:
        if run.outcome != "dispatched":
            run.finalizer = None  # the bug
        return await super().complete(run)


@mutant("FIN-2", "finalizeContent is called twice when a post-execute listener throws")
class FinalizesPostFailureTwice(Registry):
    """The post-execute error handler finalizes the failure it builds "to be safe"; the normal
    end of the pipeline then finalizes it again."""

    async def _post_execute(self, run: Prepared, result: ToolResult) -> PostOutcome:
        try:
            return await super()._post_execute(run, result)
        except Exception as e:
            failed: ToolResult = _exception_failure(e)
            if run.finalizer is not None:
                failed = _finalize(run.finalizer, run.execution, failed)  # the bug: once here
            return failed, False, ()  # ... and once more at the end of complete()


@mutant(
    "FIN-3",
    "a finalizer that returns nothing empties the content",
    replaces="reference.registry:_finalize",
)
def nothing_empties_content(
    finalizer: Callable[[ToolExecution, ToolResult], Any],
    execution: ToolExecution,
    result: ToolResult,
) -> ToolResult:
    """``None`` read as "no content" instead of "keep the content"."""
    finalized = _finalize(finalizer, execution, result)
    if finalized is result:
        return dataclasses.replace(result, content=())  # the bug
    return finalized


@mutant(
    "FIN-3",
    "a finalizer's content on a failure also rewrites error.message",
    replaces="reference.registry:_finalize",
)
def message_follows_content(
    finalizer: Callable[[ToolExecution, ToolResult], Any],
    execution: ToolExecution,
    result: ToolResult,
) -> ToolResult:
    """Tempting: "Keep the message in sync with what the model reads": the finalizer gains authority
    over the error, which stays registry-owned."""
    finalized = _finalize(finalizer, execution, result)
    if isinstance(finalized, ToolFailure) and finalized.content != result.content:
        said = " ".join(b.get("text", "") for b in finalized.content if b.get("type") == "text")
        return dataclasses.replace(finalized, message=said or finalized.message)  # the bug
    return finalized


@mutant("FIN-4", "no result is published when the finalizer throws")
class SilentAfterThrowingFinalizer(Registry):
    """The finalizer's exception is caught, but the publication step is skipped with it:
    observers (the log, the UI) never learn how the call ended."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._threw = False

    async def complete(self, run: Prepared) -> ToolResult:
        finalizer = run.finalizer
        self._threw = False
        if finalizer is not None:

            def wrapped(execution: ToolExecution, result: ToolResult) -> Any:
                try:
                    return finalizer(execution, result)
                except Exception:
                    self._threw = True
                    raise

            run.finalizer = wrapped
        return await super().complete(run)

    def _scoped_entries(self, event: str, agent: str | None) -> list[regmod.Listener]:
        if event == "tools/result" and self._threw:
            return []  # the bug
        return super()._scoped_entries(event, agent)


@mutant(
    "FIN-3",
    "finalizeContent is handed an assignable result: assigning its fields changes the outcome",
    replaces="reference.registry:_finalize",
)
def finalizer_assigns_fields(finalizer: Any, execution: ToolExecution, result: ToolResult) -> Any:
    """The finalizer's authority is meant to be its returned content; here it is handed the
    result in an assignable wrapper that the registry then publishes, so a finalizer that sets
    ``result.isError`` or ``result.value`` (a top-level write, not one inside the frozen
    content) rewrites the truth of the outcome."""
    from conformance.adapters.reference.mutants.res import _AssignableResult

    handed = _AssignableResult(result)
    published = _ORIGINAL_FINALIZE(lambda e, _: finalizer(e, handed), execution, result)
    return handed.assigned_onto(published)  # the bug: the finalizer's assignments are kept


@mutant(
    "FIN-4",
    "execute raises the finalizer's exception instead of publishing a result",
    replaces="reference.registry:_finalize",
)
def finalizer_error_propagates(
    finalizer: Callable[[ToolExecution, ToolResult], Any],
    execution: ToolExecution,
    result: ToolResult,
) -> ToolResult:
    """Tempting: "A broken finalizer is a bug; let it surface": the exception escapes
    ``execute``, so no result is published or returned and the caller loses the call --
    exactly what FIN-4 forbids. The kit must report FIN-4 ``fail``, not an ``error`` of the
    implementation."""
    content = finalizer(execution, result)  # the bug: nothing catches a throw
    if content is None:
        return result
    return _ORIGINAL_FINALIZE(lambda e, r: content, execution, result)


@mutant("FIN-2", "a nested call (one with a parent) is never finalized")
class NestedCallsNotFinalized(Registry):
    """ "A nested result never reaches the model: the outer tool's finalizer owns the content",
    so calls with a parent -- a composite tool's nested call, a run_code sub-dispatch -- skip
    their own finalizeContent. But the finalizer is the tool's last invariant on its content
    (the seed's bash caps its output there), and a composite forwards or quotes that content:
    FIN-2 holds for every execution whose definition was resolved, on every path."""

    async def complete(self, run: Prepared) -> ToolResult:
        if run.execution.parent is not None:
            run.finalizer = None  # the bug
        return await super().complete(run)
