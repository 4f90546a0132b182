"""Mutants of tools/result, the authoritative result (RES-1..3).

Read beside ``conformance/judging/rules/res.py``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any, cast

import reference.registry as regmod
from conformance.adapters.reference.mutants._base import mutant, variant
from reference import (
    Registry,
    ToolExecution,
    ToolExecutionInput,
    ToolFailure,
    ToolResult,
    ToolSuccess,
    failure,
    materialize,
    text,
    thaw,
)
from reference.registry import Listener, Prepared, _settle


@mutant("RES-1", "every observer is registered twice over: each result is published two times")
class PublishesTwice(Registry):
    """Observers registered on two internal buses (say, a legacy one and a new one) that both
    forward to the same listeners: the log records each call twice."""

    def _scoped_entries(self, event: str, agent: str | None) -> list[Listener]:
        entries = super()._scoped_entries(event, agent)
        return entries * 2 if event == "tools/result" else entries  # the bug


@mutant(
    "RES-1",
    "results are frozen at the top level only: an observer can edit their content",
    replaces="reference.registry:_replace",
)
def shallow_frozen_results(result: ToolResult, **changes: Any) -> ToolResult:
    """The result is a frozen dataclass -- whose ``content`` is a plain list of plain dicts.
    One observer's edit changes what later observers and the caller see."""
    replaced = dataclasses.replace(result, **changes)
    return dataclasses.replace(replaced, content=thaw(replaced.content))  # the bug


@mutant("RES-1", "one observer's exception stops the observers after it")
class ObserverExceptionStopsOthers(Registry):
    """One ``try`` around the whole notification loop instead of one per observer: the first
    observer that throws silences every later one (the UI, the log...)."""

    def _scoped_entries(self, event: str, agent: str | None) -> list[Listener]:
        entries = super()._scoped_entries(event, agent)
        if event != "tools/result" or not entries:
            return entries

        async def notify_all(execution: ToolExecution, result: ToolResult) -> None:
            for observe in entries:  # the bug: no containment per observer
                await _settle(observe(execution, result))

        return [notify_all]


@mutant("RES-1", "an observer's exception turns the call's result into an error")
class ObserverExceptionFailsTheCall(Registry):
    """Tempting: "Surface every error": a logging observer that crashes is reported on the call's
    own result, so the caller's result differs from what the observers received."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._observer_errors: dict[str, Exception] = {}

    def _scoped_entries(self, event: str, agent: str | None) -> list[Listener]:
        entries = super()._scoped_entries(event, agent)
        return [self._watched(fn) for fn in entries] if event == "tools/result" else entries

    def _watched(self, observe: Listener) -> Listener:
        async def observer(execution: ToolExecution, result: ToolResult) -> Any:
            try:
                return await _settle(observe(execution, result))
            except Exception as e:
                self._observer_errors[execution.call_id] = e
                raise

        return observer

    async def complete(self, run: Prepared) -> ToolResult:
        result = await super().complete(run)
        error = self._observer_errors.pop(run.execution.call_id, None)
        if error is not None:
            return failure(f"a tools/result observer failed: {error}")  # the bug
        return result


@mutant("RES-2", "observers get the finalized result, the caller the one from before finalization")
class ReturnsUnfinalized(Registry):
    """The caller keeps its own reference to the result from before the last stage, so the
    loop that appends the result and the log that records it disagree."""

    async def complete(self, run: Prepared) -> ToolResult:
        finalizer = run.finalizer
        before: list[ToolResult] = []
        if finalizer is not None:

            def capture(execution: ToolExecution, result: ToolResult) -> Any:
                before.append(result)
                return finalizer(execution, result)

            run.finalizer = capture
        result = await super().complete(run)
        return before[0] if before else result  # the bug


@mutant("RES-3", "early failures carry the bare message as content, without `Error: `")
class BareFailureContent(Registry):
    """Two code paths build failures, and one forgets the envelope the model learned to
    recognize."""

    async def prepare(self, call: ToolExecutionInput) -> Prepared:
        run = await super().prepare(call)
        if run.result is not None and run.result.is_error:
            run.result = dataclasses.replace(run.result, content=text(run.result.message))  # bug
        return run


@mutant("RES-3", "a guard's objection that is not a string becomes error.message as it is")
class GuardValueAsMessage(Registry):
    """Found in @deepseek-ai/dsh-tools 0.1.0-rc.8 (docs/implementations/dsh-tools-0.1.0-rc.8):
    ``if (reason !== void 0) return reason;`` -- the guard's return value is the denial
    reason, whatever its type. The call is denied (fail-closed holds), but a guard that
    returns ``true`` or an object publishes a failure whose ``error.message`` is not a
    string."""

    def _guards_for(self, execution: ToolExecution) -> tuple[str, str] | None:
        for entry in self._guards:
            if entry.scope is not None and entry.scope != execution.agent:
                continue
            try:
                verdict = entry.fn(execution)
            except Exception:
                return super()._guards_for(execution)
            if verdict is not None:
                return "denied", cast(str, verdict)  # the bug: not necessarily a string
        return None


_ORIGINAL_FINALIZE = regmod._finalize
_RESULT_KEYS = {"is_error": "isError", "additional_contexts": "additionalContexts"}


class _AssignableResult:
    """A finalized result whose top-level fields can be assigned (what it reads as JSON
    follows the assignments)."""

    def __init__(self, result: ToolResult) -> None:
        object.__setattr__(self, "_result", result)
        object.__setattr__(self, "_assigned", {})

    def __getattr__(self, name: str) -> Any:
        assigned = object.__getattribute__(self, "_assigned")
        return assigned[name] if name in assigned else getattr(self._result, name)

    def __setattr__(self, name: str, value: Any) -> None:
        self._assigned[name] = value  # the bug: nothing refuses the write

    def assigned_onto(self, result: ToolResult) -> Any:
        """``result`` with this one's assignments (itself, unwrapped, when there are none)."""
        assigned: dict[str, Any] = object.__getattribute__(self, "_assigned")
        if not assigned:
            return result
        out = _AssignableResult(result)
        object.__getattribute__(out, "_assigned").update(assigned)
        return out

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = self._result.to_json()
        for name, value in self._assigned.items():
            key = _RESULT_KEYS.get(name, name)
            out[key] = thaw(value)
        return out


@mutant(
    "RES-1",
    "the finalized result is handed on as an assignable object: an observer can set its fields",
    replaces="reference.registry:_finalize",
)
def assignable_after_finalize(finalizer: Any, execution: ToolExecution, result: ToolResult) -> Any:
    """Deep-freezing the fields but not the object holding them: a tools/result observer that
    assigns ``result.isError`` or a new ``result.content`` (a top-level write, not one inside
    the frozen content) changes what every later observer and the caller receive."""
    return _AssignableResult(_ORIGINAL_FINALIZE(finalizer, execution, result))


_OWN_WRITE_WITNESS: Mapping[str, Any] = {
    "id": "witness/observer-private-copies",
    "rules": ["RES-1", "RES-2"],
    "description": "A tools/result observer assigns the result's isError and content, then reads "
    "its result back; a second observer and the caller see the untouched success.",
    "tools": [
        {
            "name": "t",
            "description": "The t tool.",
            "parameters": {"type": "object"},
            "output": {"schema": {}, "render": "json"},
            "execute": [{"return": {"k": 1}}],
            "finalizeContent": [{"return": None}],
        }
    ],
    "observers": [
        {
            "id": "tamper",
            "steps": [
                {"mutate": {"target": "result", "path": ["isError"], "value": True}},
                {
                    "mutate": {
                        "target": "result",
                        "path": ["content"],
                        "value": [{"type": "text", "text": "tampered"}],
                    }
                },
                {"observe": "result"},
            ],
        },
        {"id": "later", "steps": [{"observe": "result"}]},
    ],
    "actions": [{"call": {"callId": "c0", "name": "t", "arguments": {}}}],
}


@variant(
    "each tools/result observer is handed its own assignable copy of the result",
    witness=_OWN_WRITE_WITNESS,
)
class ObserverPrivateCopies(Registry):
    """RES-1 requires that observers cannot change the result -- the published one, what other
    observers receive, what the caller gets. Handing each observer a private copy it may write
    to satisfies that: an observer that assigns a field of its copy and reads it back sees its
    own write, and nobody else does (the kit must not flag the observer's own view)."""

    def _scoped_entries(self, event: str, agent: str | None) -> list[Listener]:
        entries = super()._scoped_entries(event, agent)
        if event != "tools/result":
            return entries
        return [_with_private_copy(entry) for entry in entries]


def _with_private_copy(observe: Listener) -> Listener:
    def observer(execution: ToolExecution, result: ToolResult) -> Any:
        return observe(execution, _AssignableResult(result))  # a fresh copy per observer

    return observer


# ----------------------------------------------------- late writes: what was not snapshotted
#
# Each mutant below keeps by reference one object a stage handed the registry (or the
# registry handed a stage), where the reference takes a snapshot: a write made after it
# was handed over -- through a ``mutate`` of a ``kept`` value or the approval request --
# then reaches what later stages, the observers and the caller see (attack-surface
# objects ``kept.*`` and ``request.*``).


@mutant("RES-1,RES-2", "the body's value is published by reference, not as a snapshot")
class BodyValueKeptLive(Registry):
    """The value is checked and rendered, then the body's own object is stored in the result:
    whoever still holds it (the body, a later stage it was shared with) changes the value
    observers and the caller receive after the fact."""

    def _normalize(self, run: Prepared, value: Any) -> ToolResult:
        out = super()._normalize(run, value)
        if isinstance(out, ToolSuccess) and isinstance(value, dict | list):
            return dataclasses.replace(out, value=value)  # the bug: the body's live object
        return out


@mutant("POST-2,RES-1", "a post-execute accept's replacement content is used by reference")
class PostContentKeptLive(Registry):
    """The accept decision's content is validated, then the listener's own list is stored: a
    write the listener (or anyone it shared the list with) makes later changes the published
    content."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._decided: dict[str, Any] = {}

    def _scoped_entries(self, event: str, agent: str | None) -> list[Listener]:
        entries = super()._scoped_entries(event, agent)
        if event != "tools/post-execute":
            return entries
        return [self._recording(entry) for entry in entries]

    def _recording(self, listener: Listener) -> Listener:
        async def recording(execution: ToolExecution, result: ToolResult, next_: Any) -> Any:
            decision = await _settle(listener(execution, result, next_))
            self._decided[execution.call_id] = decision  # the outermost one settles last
            return decision

        return recording

    async def _post_execute(
        self, run: Prepared, result: ToolResult
    ) -> tuple[ToolResult, bool, Sequence[Any]]:
        out, blocked, contexts = await super()._post_execute(run, result)
        decision = self._decided.pop(run.execution.call_id, None)
        if isinstance(decision, Mapping) and not blocked and "value" not in decision:
            content = decision.get("content")
            if isinstance(content, list):
                out = dataclasses.replace(out, content=cast(Any, content))  # the bug: live
        return out, blocked, contexts


@mutant(
    "FIN-3,RES-1",
    "finalizeContent's returned content is used by reference",
    replaces="reference.registry:_finalize",
)
def finalized_content_kept_live(
    finalizer: Any, execution: ToolExecution, result: ToolResult
) -> ToolResult:
    """The finalizer's blocks are checked, then its own list goes into the result: the
    finalizer (or a later callable it shared the list with) can still edit what observers and
    the caller get."""
    returned: list[Any] = []

    def recording(execution: ToolExecution, result: ToolResult) -> Any:
        returned.append(finalizer(execution, result))
        return returned[-1]

    out = _ORIGINAL_FINALIZE(recording, execution, result)
    if returned and isinstance(returned[-1], list) and out is not result:
        return dataclasses.replace(out, content=cast(Any, returned[-1]))  # the bug: live
    return out


class _InternedRequest:
    """A mutable approval request, one per (tool, agent), refreshed for each call."""

    def __init__(self, call_id: str, tool_name: str, agent: str, reason: Any, signal: Any) -> None:
        self.call_id, self.tool_name, self.agent = call_id, tool_name, agent
        self.reason, self.signal = reason, signal


@mutant("PRE-5", "approval requests are reused per tool and agent, and mutable")
class InternedApprovalRequests(Registry):
    """An allocation saved: one request object per (tool, agent), its call id, reason and
    signal refreshed for each call. Whatever else an approval service left on it -- the
    arguments it looked up, say -- is on the next call's request too."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._requests: dict[tuple[str, str], _InternedRequest] = {}

    async def _approve(self, execution: ToolExecution, reason: str | None) -> str | None:
        service = self.approval
        if service is None or execution.agent is None:
            return await super()._approve(execution, reason)
        key = (execution.name, execution.agent)
        request = self._requests.get(key)
        if request is None:  # the bug: one mutable object per tool and agent
            request = self._requests[key] = _InternedRequest(
                execution.call_id, execution.name, execution.agent, reason, execution.signal
            )
        request.call_id, request.reason, request.signal = (
            execution.call_id,
            reason,
            execution.signal,
        )
        try:
            answer = await _settle(service.request(request))
        except Exception as e:
            return f"the approval service failed: {e}"
        if answer == "allowed-once":
            return None
        if isinstance(answer, str) and answer in regmod.APPROVAL_DENIALS:
            return regmod.APPROVAL_DENIALS[answer]
        return f"the approval service gave an unrecognized answer ({answer!r}); denied"


class _KeepsPreDecisions(Registry):
    """Keeps each call's pre-execute decision: the listener's own mapping, not a snapshot."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._decisions: dict[str, Mapping[str, Any]] = {}

    async def _pre_execute(self, execution: ToolExecution) -> Mapping[str, Any]:
        decision = await super()._pre_execute(execution)
        self._decisions[execution.call_id] = decision  # the bug: the live object, kept
        return decision


@mutant("PRE-1", "the pre-execute decision is read again at dispatch: a late deny there wins")
class PreDecisionReadAtDispatch(_KeepsPreDecisions):
    """The waterfall's decision object is kept and consulted once more right before the
    wrappers and the body ("in case policy changed its mind"): a write to it after the
    waterfall settled -- by a guard, say -- turns an allowed call into a denied one."""

    async def dispatch(self, run: Prepared) -> None:
        decision = self._decisions.pop(run.execution.call_id, None)
        if isinstance(decision, Mapping) and decision.get("kind") == "deny":
            self._end(run, "denied", failure(str(decision.get("reason") or "denied")))
            return
        await super().dispatch(run)


# ------------------------------------------------ in-place edits: the result as a mutable draft
#
# Each mutant below hands a late stage a mutable form of the result (its JSON form, a plain
# dict, as a JavaScript registry would) and goes on with what the stage left in it, where the
# reference hands every stage a deep-frozen result: a write to a top-level field or inside the
# content then takes effect (attack-surface objects ``result.*``). A reader of the draft is
# tolerant, as JSON readers are: a missing field reads as absent (a deleted ``isError`` reads
# as a success, so deleting it from a success changes nothing).


def _from_draft(draft: Mapping[str, Any], like: ToolResult) -> ToolResult:
    """The result a draft now describes (contexts and turn mark as ``like`` had them)."""
    content = regmod._content(draft.get("content", []), "$.content")
    meta = materialize(draft.get("meta"), "$.meta")
    if draft.get("isError"):
        error = draft.get("error")
        message = error.get("message") if isinstance(error, Mapping) else None
        return ToolFailure(
            message=str(message or ""),
            content=content,
            info=like.info if isinstance(like, ToolFailure) else None,
            meta=meta,
            additional_contexts=like.additional_contexts,
        )
    return ToolSuccess(
        value=materialize(draft.get("value"), "$.value"),
        content=content,
        meta=meta,
        additional_contexts=like.additional_contexts,
        concludes_turn=isinstance(like, ToolSuccess) and like.concludes_turn,
    )


@mutant("OUT-2,RES-3", "post-execute listeners edit the result in place: their writes are kept")
class PostExecuteEditsInPlace(Registry):
    """Tempting: "a listener that only wants to redact a line should not have to build an
    accept decision": post-execute listeners are handed the result as a mutable draft, and a
    listener that calls ``next()`` accepts *what it left in the draft*. A listener that assigns
    ``result.value`` or edits a content block changes the outcome without a decision -- the
    value is no longer revalidated or re-rendered (POST-2), content and value disagree."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._drafts: dict[str, dict[str, Any]] = {}

    def _scoped_entries(self, event: str, agent: str | None) -> list[Listener]:
        entries = super()._scoped_entries(event, agent)
        if event != "tools/post-execute":
            return entries
        return [self._handed_the_draft(entry) for entry in entries]

    def _handed_the_draft(self, listener: Listener) -> Listener:
        def handed(execution: ToolExecution, result: ToolResult, next_: Any) -> Any:
            return listener(execution, self._drafts.get(execution.call_id, result), next_)

        return handed

    async def _post_execute(
        self, run: Prepared, result: ToolResult
    ) -> tuple[ToolResult, bool, Sequence[Any]]:
        draft = self._drafts[run.execution.call_id] = result.to_json()  # a mutable copy
        try:
            out, blocked, contexts = await super()._post_execute(run, result)
        finally:
            self._drafts.pop(run.execution.call_id, None)
        if out is result:  # accepted unchanged: unchanged as the listeners left it
            out = _from_draft(draft, result)  # the bug: the draft's edits are the outcome
        return out, blocked, contexts


@mutant(
    "FIN-3",
    "finalizeContent edits the result in place: every field it changes is kept",
    replaces="reference.registry:_finalize",
)
def finalizer_edits_in_place(finalizer: Any, execution: ToolExecution, result: ToolResult) -> Any:
    """An API that lets the finalizer "trim the content in place" instead of returning new
    content: it is handed a mutable draft of the result, and when it returns nothing the
    registry publishes the draft as the finalizer left it. Content edits were the point; but a
    finalizer that deletes the content or the value, or sets ``isError``, rewrites the truth
    the registry owns (FIN-3)."""
    draft = result.to_json()
    published = _ORIGINAL_FINALIZE(lambda e, _: finalizer(e, draft), execution, result)
    if published is result:  # it returned nothing: the draft, as it left it
        return _from_draft(draft, result)  # the bug
    return published


@mutant("RES-1,RES-2", "the tools/result observers share one mutable payload of the result")
class ObserversShareOnePayload(Registry):
    """An optimization: the result is serialized once per call, and that one dict is handed to
    every observer (the log, the UI, telemetry). An observer that edits or deletes a field of
    its payload -- a logger that pops the bulky ``value`` before writing, say -- changes what
    every later observer receives, and observers no longer agree with the caller."""

    def _scoped_entries(self, event: str, agent: str | None) -> list[Listener]:
        entries = super()._scoped_entries(event, agent)
        if event != "tools/result" or not entries:
            return entries
        payloads: dict[int, dict[str, Any]] = {}

        def sharing(observe: Listener) -> Listener:
            def observer(execution: ToolExecution, result: ToolResult) -> Any:
                payload = payloads.setdefault(id(result), result.to_json())  # the bug: shared
                return observe(execution, payload)

            return observer

        return [sharing(entry) for entry in entries]


@mutant("POST-1", "a call's route is read from the kept pre-execute decision when it completes")
class RouteReadFromKeptDecision(_KeepsPreDecisions):
    """Tempting as "one source of truth": the run keeps the waterfall's decision object, and
    the route of the call (does it pass post-execute?) is looked up from it when the call
    completes instead of being recorded when the policy stages ended. The decision is the
    listener's own mapping: a guard, a wrapper or the body that later writes ``kind`` (to
    ``deny``, or deletes it) makes a call that was allowed and ran skip post-execute, as if it
    had been denied."""

    async def complete(self, run: Prepared) -> ToolResult:
        decision = self._decisions.pop(run.execution.call_id, None)
        if (
            run.outcome == "dispatched"
            and isinstance(decision, Mapping)
            and decision.get("kind") not in ("allow", "ask")
        ):
            run.outcome = "denied"  # routed as the decision now reads
        return await super().complete(run)


class _ReadOnlyBlock(dict[str, Any]):
    """A content block that refuses ``block[key] = v`` and ``del block[key]`` -- and nothing
    else: ``update``, ``setdefault``, ``pop``, ``popitem``, ``clear`` and ``|=`` are dict's own."""

    def __setitem__(self, key: str, value: Any) -> None:
        raise TypeError(f"content blocks are read-only (attempted to set {key!r})")

    def __delitem__(self, key: str) -> None:
        raise TypeError(f"content blocks are read-only (attempted to delete {key!r})")


_original_content = regmod._content


@mutant(
    "RES-1",
    "content blocks are a dict subclass that blocks item assignment but not update or pop",
    replaces="reference.registry:_content",
)
def half_frozen_content_blocks(blocks: Any, path: str) -> tuple[Any, ...]:
    """Content blocks "frozen" by overriding the two dunder writes everybody tests
    (``block["text"] = ...`` and ``del block["text"]``) on a ``dict`` subclass. The rest of
    dict's mutators still write: an observer that calls ``block.update(text="redacted")`` or
    ``block.pop("text")`` changes what every later observer, the log and the caller see."""
    return tuple(_ReadOnlyBlock(b) for b in _original_content(blocks, path))  # the bug


_exception_failure = regmod._exception_failure  # the reference's own, before any patching


@mutant(
    "RES-3",
    "an error with an empty message: error.message falls back to its type, the content does not",
    replaces="reference.registry:_exception_failure",
)
def content_before_the_fallback(e: Exception) -> ToolFailure:
    """The content is built from ``str(e)`` before the non-empty fallback fixes the message: a
    bare ``TimeoutError()`` is logged as ``TimeoutError`` while the model reads only
    ``Error: `` and, knowing nothing of what went wrong, repeats the identical call."""
    failure = _exception_failure(e)
    if str(e):
        return failure
    return dataclasses.replace(failure, content=text("Error: "))  # the bug
