"""Mutants of ④ tools/post-execute (POST-1..5).

Read beside ``conformance/judging/rules/post.py``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from jsonschema.validators import Draft202012Validator

from conformance.adapters.reference.mutants._base import mutant
from reference import Registry, ToolResult, ToolSuccess, text
from reference.registry import Prepared

PostOutcome = tuple[ToolResult, bool, Sequence[Any]]


@mutant("POST-1", "a body error is final: it bypasses post-execute")
class BodyErrorsBypassPostExecute(Registry):
    """Tempting: "Nothing to inspect in a failure": but a tool error is often exactly what a
    post-execute policy (corrective feedback, redaction) needs to rewrite."""

    async def complete(self, run: Prepared) -> ToolResult:
        if run.outcome == "dispatched" and run.result is not None and run.result.is_error:
            run.outcome = "policy-failure"  # the bug
        return await super().complete(run)


@mutant("POST-2", "a replacement value is applied but the old rendering kept")
class ReplacementValueNotRerendered(Registry):
    """The value changes, the content the model reads does not: the two projections of one
    truth disagree."""

    async def _post_execute(self, run: Prepared, result: ToolResult) -> PostOutcome:
        new, blocked, contexts = await super()._post_execute(run, result)
        if (
            isinstance(new, ToolSuccess)
            and isinstance(result, ToolSuccess)
            and new.value != result.value
        ):
            new = dataclasses.replace(new, content=result.content)  # the bug
        return new, blocked, contexts


@mutant("POST-2", "a post-execute replacement value is not revalidated against output.schema")
class ReplacementValueNotRevalidated(Registry):
    """Tempting: "The value was validated when the body returned it": a policy's replacement is
    trusted, so a value the declared output type forbids reaches programs as a success."""

    async def _post_execute(self, run: Prepared, result: ToolResult) -> PostOutcome:
        tool = run.tool
        assert tool is not None
        run.tool = dataclasses.replace(tool, output_validator=Draft202012Validator(True))  # bug
        try:
            return await super()._post_execute(run, result)
        finally:
            run.tool = tool


@mutant("POST-3", "a block renders as `Error: <message>` instead of the feedback itself")
class BlockShowsMessage(Registry):
    """The block becomes a generic error envelope: the corrective text the policy wrote is
    not what the model reads."""

    async def _post_execute(self, run: Prepared, result: ToolResult) -> PostOutcome:
        new, blocked, contexts = await super()._post_execute(run, result)
        if blocked and new.is_error:
            new = dataclasses.replace(new, content=text(f"Error: blocked ({new.message})"))
        return new, blocked, contexts


@mutant("POST-3", "a block only replaces the content: the result stays a success with its value")
class BlockReplacesContentOnly(Registry):
    """Block treated as a presentation change: the model reads the feedback, but programs
    still read the value -- content replacement is not a confidentiality boundary."""

    async def _post_execute(self, run: Prepared, result: ToolResult) -> PostOutcome:
        new, blocked, contexts = await super()._post_execute(run, result)
        if blocked and isinstance(result, ToolSuccess):
            new = dataclasses.replace(result, content=new.content)  # the bug
        return new, blocked, contexts


@mutant("POST-4", "a throwing post-execute listener is logged and the result goes through")
class SwallowsPostExecuteFailures(Registry):
    """Fail-open inspection: a crashed redaction policy lets the uninspected success out."""

    async def _post_execute(self, run: Prepared, result: ToolResult) -> PostOutcome:
        try:
            return await super()._post_execute(run, result)
        except Exception:
            return result, False, ()  # the bug


class _SwallowsAndSkipsTheEvent(Registry):
    """A framework's run loop that catches a post-execute hook's exception in the wrong place:
    the tool's output goes back to the caller unchecked, and the per-result event (the
    observers) is never emitted for it."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self._swallowed = False  # the call completing now: its post-execute hook threw

    async def complete(self, run: Prepared) -> ToolResult:
        self._swallowed = False
        try:
            return await super().complete(run)
        finally:
            self._swallowed = False

    async def _post_execute(self, run: Prepared, result: ToolResult) -> PostOutcome:
        try:
            return await super()._post_execute(run, result)
        except Exception:
            self._swallowed = True
            return result, False, ()  # the bug: the uninspected result goes through

    def _scoped_entries(self, event: str, agent: str | None) -> list[Any]:
        if event == "tools/result" and self._swallowed:
            return []  # ... and nobody hears of it
        return super()._scoped_entries(event, agent)


def _swallowed_under_raised() -> Any:
    """An agent framework that declares the closed form ``raised`` (a hook's exception ends
    the run) -- except where it forgets to: a throwing post-execute hook is caught, the
    uninspected success is returned to the caller, and its result event never fires. The
    closed form ``raised`` does not excuse a success (POST-4), and a result the caller got
    is a result every observer hears once (RES-1)."""
    from conformance.adapters.reference import ReferenceAdapter

    return ReferenceAdapter(
        lambda s: _SwallowsAndSkipsTheEvent(mode=s.get("registry", {}).get("mode", "native")),
        name="post.swallowed-under-raised",
        closed_forms=frozenset({"error-result", "raised"}),
    )


mutant(
    "POST-4,RES-1",
    "closed form 'raised' declared, yet a throwing post-execute hook yields an unheard success",
    replaces="adapter",
    name="swallowed-under-raised",
)(_swallowed_under_raised)


@mutant("POST-5", "a block keeps the body's deferred contexts")
class BlockKeepsBodyContexts(Registry):
    """The contexts a blocked call deferred still reach the model, despite the block."""

    async def _post_execute(self, run: Prepared, result: ToolResult) -> PostOutcome:
        new, _blocked, contexts = await super()._post_execute(run, result)
        return new, False, contexts  # the bug: the block is forgotten for contexts


@mutant("POST-5", "on accept, the decision's contexts come before the body's")
class DecisionContextsFirst(Registry):
    """Contexts appended in the order the registry learned about them, last stage first:
    the causal order (the body's, then the policy's) is lost."""

    async def _post_execute(self, run: Prepared, result: ToolResult) -> PostOutcome:
        new, blocked, decided = await super()._post_execute(run, result)
        if blocked or not decided:
            return new, blocked, decided
        body = list(run.deferred)
        run.deferred[:] = decided  # the bug: the decision's contexts first ...
        return new, blocked, body  # ... the body's after them


@mutant("POST-1", "a guard against re-entering post-execute stays set after a listener throws")
class PostExecuteLatchStuck(Registry):
    """A registry-wide "already in post-execute" latch keeps a listener's own nested call (a spill
    or summarizer tool) from re-entering the stage; it is cleared on the way out only when the
    stage returns. One throwing listener later, every call of the registry skips post-execute:
    no redaction, no spill, nothing inspects a result again."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._latched = False

    async def _post_execute(
        self, run: Prepared, result: ToolResult
    ) -> tuple[ToolResult, bool, Sequence[Any]]:
        if self._latched:
            return result, False, ()
        self._latched = True
        out = await super()._post_execute(run, result)  # the bug: a raise leaves it latched
        self._latched = False
        return out
