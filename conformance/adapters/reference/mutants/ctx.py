"""Mutants of the two cross-call mechanisms: deferred context and concluding the turn (CTX-1..2).

Read beside ``conformance/judging/rules/ctx.py``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from conformance.adapters.reference.mutants._base import mutant
from reference import (
    Registry,
    ToolCallError,
    ToolExecution,
    ToolExecutionInput,
    ToolFailure,
    ToolResult,
    ToolSuccess,
)
from reference._json import thaw
from reference.code_mode import CodeSdk
from reference.registry import Listener, Prepared, ToolRunContext


@mutant("CTX-1", "the body's deferred contexts are dropped when the dispatch ends in an error")
class ContextsLostOnFailure(Registry):
    """Tempting: "Contexts belong to a successful result": but a sub-agent that gathered context and
    then failed still has to hand that context to the model.

    Found in @deepseek-ai/dsh-tools 0.1.0-rc.8 for one kind of error: a tools/execute
    wrapper that throws after the body deferred its contexts."""

    async def dispatch(self, run: Prepared) -> None:
        await super().dispatch(run)
        if run.result is not None and run.result.is_error:
            run.deferred.clear()  # the bug


@mutant("CTX-1", "deferred contexts come out in reverse call order")
class DeferredContextsReversed(Registry):
    """Contexts kept on a stack (newest first): the model reads them out of order."""

    async def dispatch(self, run: Prepared) -> None:
        await super().dispatch(run)
        run.deferred.reverse()  # the bug


@mutant("CTX-2", "concludeTurn() is ignored: no result ever concludes the turn")
class ConcludeTurnIgnored(Registry):
    """The mark is accepted by the run context and never copied onto the result."""

    async def dispatch(self, run: Prepared) -> None:
        await super().dispatch(run)
        run.concluded = False  # the bug


@dataclass(frozen=True)
class _ConcludingFailure(ToolFailure):
    """A failure that (wrongly) carries the turn mark."""

    concludes_turn: bool = True

    def to_json(self) -> dict[str, Any]:
        out = ToolFailure.to_json(self)
        out["concludesTurn"] = True
        return out


def _marked(result: ToolResult, concluded: bool) -> ToolResult:
    if concluded and isinstance(result, ToolFailure):
        fields = {f.name: getattr(result, f.name) for f in dataclasses.fields(result) if f.init}
        return _ConcludingFailure(**fields)
    return result


@mutant("CTX-2", "concludesTurn is kept on a failure")
class FailureKeepsConcludesTurn(Registry):
    """The turn mark is kept on the call, not on the result, and stamped on whatever result
    comes out: a block, an ABORTED or an invalid output still ends the agent's turn."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._concluded: set[str] = set()

    async def complete(self, run: Prepared) -> ToolResult:
        if run.concluded:
            self._concluded.add(run.execution.call_id)
        try:
            return _marked(await super().complete(run), run.concluded)  # the bug
        finally:
            self._concluded.discard(run.execution.call_id)

    def _scoped_entries(self, event: str, agent: str | None) -> list[Listener]:
        entries = super()._scoped_entries(event, agent)
        if event != "tools/result":
            return entries
        return [self._stamping(observe) for observe in entries]

    def _stamping(self, observe: Listener) -> Listener:
        def observer(execution: ToolExecution, result: ToolResult) -> Any:
            return observe(execution, _marked(result, execution.call_id in self._concluded))

        return observer


@mutant("CTX-2", "the turn mark defaults to set: every success concludes the turn")
class EverySuccessConcludes(Registry):
    """The run's ``concluded`` flag is initialised the wrong way round (or "a tool call ends the
    turn unless told otherwise"): a plain success that never called ``concludeTurn()`` still
    carries ``concludesTurn: true`` and stops the agent after one call."""

    async def prepare(self, call: Any) -> Prepared:
        run = await super().prepare(call)
        run.concluded = True  # the bug
        return run


@mutant("CTX-2", "a wrapper's own success keeps the turn mark it brought (a cached result)")
class AuthoredSuccessKeepsTheMark(Registry):
    """ "Keep what the wrapper said": a caching ``tools/execute`` wrapper answers a repeated call
    with the stored result of an earlier one that concluded the turn, and the registry takes
    its ``concludesTurn`` along -- though this call's body never ran, let alone concluded, and
    the agent stops a turn nobody ended."""

    def _normalize_authored(self, run: Prepared, result: Any) -> ToolResult:
        if isinstance(result, ToolSuccess):
            run.concluded = run.concluded or result.concludes_turn  # the bug
        elif isinstance(result, Mapping) and result.get("isError") is False:
            run.concluded = run.concluded or result.get("concludesTurn") is True  # the bug
        return super()._normalize_authored(run, result)


@mutant(
    "CTX-1",
    "the contexts a run_code sub-dispatch deferred are not ferried into the run_code result",
    replaces="reference.code_mode:CodeSdk",
)
class SubDispatchContextsDropped(CodeSdk):
    """A sub-dispatch's result goes to the program, and with it (so the registry assumes)
    everything it carries: the program receives the value, and the contexts the nested body
    deferred never reach the model."""

    async def call(self, name: str, arguments: Any) -> Any:
        self._count += 1
        call_id = f"{self._outer.call_id}:code:{self._count}"
        call = ToolExecutionInput(
            call_id=call_id,
            name=name,
            arguments=arguments,
            signal=self._signal,
            agent=self._outer.agent,
            parent=self._outer.token,
        )
        result = await self._registry.execute(call)
        await self._log(call_id, name, result)  # the bug: result.additional_contexts dropped
        if isinstance(result, ToolSuccess):
            return thaw(result.value)
        raise ToolCallError(name, result.message)


class _MarkOnlyContext(ToolRunContext):
    """The bug of :func:`forward_drops_contexts`: the turn mark is forwarded, the contexts not."""

    def forward(self, nested: ToolResult) -> None:
        if isinstance(nested, ToolSuccess) and nested.concludes_turn:  # the bug: no contexts
            self.conclude_turn()


class _AnyMarkContext(ToolRunContext):
    """The bug of :func:`forward_concludes_on_failure`: any nested mark concludes the turn."""

    def forward(self, nested: ToolResult) -> None:
        for message in nested.additional_contexts:
            self.defer_context(message)
        if getattr(nested, "concludes_turn", False) or nested.is_error:  # the bug
            self.conclude_turn()


@mutant(
    "CTX-1",
    "a composite tool forwards a nested result's turn mark but drops its contexts",
    replaces="reference.registry:ToolRunContext",
)
def forward_drops_contexts(run: Prepared, signal: Any) -> ToolRunContext:
    """``forward()`` was written for the turn mark ("a sub-agent that finished ends the turn")
    and the loop over the nested result's ``additionalContexts`` was forgotten: what a nested
    call deferred never reaches the model."""
    return _MarkOnlyContext(run, signal)


@mutant(
    "CTX-2",
    "a composite tool concludes the turn from a failed nested result",
    replaces="reference.registry:ToolRunContext",
)
def forward_concludes_on_failure(run: Prepared, signal: Any) -> ToolRunContext:
    """``forward()`` treats "the nested call is over" as "the nested call concluded": a nested
    failure (its turn mark already dropped) still ends the outer run, though only an
    authoritative nested success may."""
    return _AnyMarkContext(run, signal)


@mutant(
    "CTX-1",
    "a deferred context that is empty ('', 0, false, [], {}) is dropped as nothing",
    replaces="reference.registry:ToolRunContext",
)
class SkipsEmptyContexts(ToolRunContext):
    """``if not message: return`` in ``deferContext``, to skip "nothing": but an empty string,
    a zero, ``false``, an empty list or object is a message the body deferred on purpose (a
    cleared status, a zero count), and CTX-1 says it rides the result like any other."""

    __slots__ = ()

    def defer_context(self, message: Any) -> None:
        if not message:  # the bug: "nothing to defer"
            return
        super().defer_context(message)
