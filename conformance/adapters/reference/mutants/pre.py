"""Mutants of ① tools/pre-execute, the allow / deny / ask waterfall (PRE-1..8).

Read beside ``conformance/judging/rules/pre.py``: each class is the bug, the rule it
names is what catches it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

import reference.registry as regmod
from conformance.adapters.reference.mutants._base import mutant
from reference import ApprovalRequest, Registry, ToolExecution
from reference.registry import Prepared, ToolRunContext


@mutant("PRE-1", "the end of the waterfall answers deny instead of allow")
class EndOfChainDenies(Registry):
    """A "secure by default" chain: when every listener delegates, the call is refused.

    The spec wants the opposite: the end of the chain is ``allow``, so a registry
    with no policy stays usable, and any listener can stop the chain itself.
    """

    async def _pre_execute(self, execution: ToolExecution) -> Mapping[str, Any]:
        listeners = self._scoped_entries("tools/pre-execute", execution.agent)

        async def step(i: int) -> Any:
            if i == len(listeners):
                return {"kind": "deny", "reason": "no listener allowed it"}  # the bug
            return await listeners[i](execution, lambda: step(i + 1))

        return regmod._check_pre_decision(await step(0))


@mutant("PRE-1", "every listener runs: a decision without next() does not short-circuit")
class NoShortCircuit(Registry):
    """An event-bus instead of a waterfall: every listener is asked, the first non-allow wins.

    Looks equivalent, but a listener that decides without calling ``next()``
    must stop the chain: later listeners must not run for that call.
    """

    async def _pre_execute(self, execution: ToolExecution) -> Mapping[str, Any]:
        listeners = self._scoped_entries("tools/pre-execute", execution.agent)

        async def allow() -> Any:
            return {"kind": "allow"}

        decision: Mapping[str, Any] = {"kind": "allow"}
        for listener in listeners:  # the bug: no chain, everyone runs
            got = regmod._check_pre_decision(await listener(execution, allow))
            if decision["kind"] == "allow":
                decision = got
        return decision


@mutant("PRE-2", "a deny becomes a generic error, dropping the listener's reason")
class DenyDropsReason(Registry):
    """Denials are reported with one canned message, so the model cannot learn why."""

    async def _pre_execute(self, execution: ToolExecution) -> Mapping[str, Any]:
        decision = await super()._pre_execute(execution)
        if decision["kind"] == "deny":
            return {"kind": "deny", "reason": "denied by policy"}  # the bug
        return decision


@mutant("PRE-2", "deny is logged but the call goes on (an advisory deny)")
class DenyIsAdvisory(Registry):
    """A "dry-run" policy mode left on: a deny is noted and the body runs anyway."""

    async def _pre_execute(self, execution: ToolExecution) -> Mapping[str, Any]:
        decision = await super()._pre_execute(execution)
        return {"kind": "allow"} if decision["kind"] == "deny" else decision  # the bug


@mutant("PRE-3", "ask is allowed when no approval service is mounted")
class AskWithoutServiceAllows(Registry):
    """Nobody to ask, so the call goes ahead: a permission question silently becomes a grant."""

    async def _approve(self, execution: ToolExecution, reason: str | None) -> str | None:
        if self.approval is None:
            return None  # the bug: fail open
        return await super()._approve(execution, reason)


@mutant("PRE-3", "an ask on a nested call or run_code sub-dispatch is never put to anyone")
class NestedAskNotAsked(Registry):
    """Tempting: "the person already consented to the enclosing call": an ``ask`` on a call with
    a parent skips the approval step and goes on to the guards and the body. But the consent
    (if any) was for ``run_code`` or the composite, not for what its program or body then
    calls; with no approval service the ask no longer even fails closed."""

    async def _approve(self, execution: ToolExecution, reason: str | None) -> str | None:
        if execution.parent is not None:
            return None  # the bug
        return await super()._approve(execution, reason)


@mutant("PRE-4", "an approval system that is down (unavailable) lets the call through")
class UnavailableApprovalAllows(Registry):
    """Tempting: "Unavailable is not a no": the seed's step 10 says it is, and must deny."""

    async def _approve(self, execution: ToolExecution, reason: str | None) -> str | None:
        refusal = await super()._approve(execution, reason)
        return None if refusal == regmod.APPROVAL_DENIALS["unavailable"] else refusal


@mutant("PRE-4", "a non-string approval answer crashes the denial lookup: execute raises")
class UncheckedAnswerLookup(Registry):
    """The answer is looked up in the table of denial reasons before anyone checks it is a
    string: ``["rejected"]`` or ``{"answer": ...}`` raises TypeError (unhashable) out of
    execute(), so the call gets no denial, no finalizeContent and no tools/result."""

    async def _approve(self, execution: ToolExecution, reason: str | None) -> str | None:
        if self.approval is None or execution.agent is None:
            return await super()._approve(execution, reason)
        request = ApprovalRequest(
            call_id=execution.call_id,
            tool_name=execution.name,
            agent=execution.agent,
            reason=reason,
            signal=execution.signal,
        )
        try:
            answer = await regmod._settle(self.approval.request(request))
        except Exception as e:
            return f"the approval service failed: {e}"
        if answer == "allowed-once":
            return None
        if answer in regmod.APPROVAL_DENIALS:  # the bug: unhashable answers raise here
            return regmod.APPROVAL_DENIALS[answer]
        return f"the approval service gave an unrecognized answer ({answer!r}); denied"


@mutant("PRE-4", "every refused approval carries the same reason")
class OneReasonForEveryRefusal(Registry):
    """Rejected, cancelled and unavailable all read "approval denied": the model cannot tell
    "a person said no" from "there was nobody to ask"."""

    async def _approve(self, execution: ToolExecution, reason: str | None) -> str | None:
        refusal = await super()._approve(execution, reason)
        return None if refusal is None else "approval denied"  # the bug


@mutant("PRE-4", "an approval answer other than allowed-once is treated as yes")
class AnyOtherAnswerApproves(Registry):
    """A blacklist of refusals: only rejected / cancelled / unavailable deny, so an answer the
    registry does not know (``allowed-always``, ``None``, a typo) approves the call."""

    async def _approve(self, execution: ToolExecution, reason: str | None) -> str | None:
        if self.approval is None or execution.agent is None:
            return await super()._approve(execution, reason)
        request = ApprovalRequest(
            execution.call_id, execution.name, execution.agent, reason, execution.signal
        )
        try:
            answer = await regmod._settle(self.approval.request(request))
        except Exception as e:
            return f"the approval service failed: {e}"
        if answer in regmod.APPROVAL_DENIALS:  # the bug: a blacklist of refusals
            return regmod.APPROVAL_DENIALS[answer]
        return None


@mutant("PRE-5", "the approval request carries the call's arguments")
class ApprovalRequestCarriesArguments(Registry):
    """Approval prompts that "helpfully" show what will run: the request carries the arguments,
    a second rendering that can drift from the call the UI already streamed."""

    async def _approve(self, execution: ToolExecution, reason: str | None) -> str | None:
        if self.approval is None or execution.agent is None:
            return await super()._approve(execution, reason)
        answer = await self.approval.request(
            {"callId": execution.call_id, "reason": reason, "arguments": execution.arguments}
        )
        return None if answer == "allowed-once" else "not approved"


@mutant("PRE-6", "a listener returning nothing, a bare string or an unknown kind means allow")
class MalformedDecisionAllows(Registry):
    """Lenient parsing of decisions: anything that is not a deny or an ask reads as allow,
    and a throwing listener is skipped. A policy bug silently widens permissions."""

    async def _pre_execute(self, execution: ToolExecution) -> Mapping[str, Any]:
        listeners = self._scoped_entries("tools/pre-execute", execution.agent)

        async def step(i: int) -> Any:
            if i == len(listeners):
                return {"kind": "allow"}
            decision = await listeners[i](execution, lambda: step(i + 1))
            if not isinstance(decision, Mapping) or decision.get("kind") not in ("deny", "ask"):
                return {"kind": "allow"}  # the bug
            return decision

        try:
            return regmod._check_pre_decision(await step(0))
        except Exception:
            return {"kind": "allow"}  # the bug


@mutant(
    "PRE-6, GUARD-1",
    "a decision other than an exact allow denies only when it carries a reason; "
    "otherwise the body runs and no guard is asked",
)
class ReasonlessDecisionRunsUnguarded(Registry):
    """Found in @deepseek-ai/dsh-tools 0.1.0-rc.8 (docs/implementations/dsh-tools-0.1.0-rc.8):
    ``const denialReason = decision.kind === "allow" ? this.guardReason(exec) : decision.reason;``

    Guards are consulted only for an exact ``allow``, and any other decision denies only
    through its ``reason``. So ``{kind: "deny"}`` without a reason, an unknown kind or a
    bare ``1`` is neither a denial nor guarded: the call fails open (PRE-6), and is
    dispatched without asking the guards (GUARD-1).
    """

    unguarded: set[str] | None = None

    async def _pre_execute(self, execution: ToolExecution) -> Mapping[str, Any]:
        listeners = self._scoped_entries("tools/pre-execute", execution.agent)

        async def step(i: int) -> Any:
            if i == len(listeners):
                return {"kind": "allow"}
            return await regmod._settle(listeners[i](execution, regmod._once(lambda: step(i + 1))))

        try:
            decision = await step(0)
        except Exception as e:  # a throwing listener still fails closed, as upstream does
            raise regmod._PolicyFailure(f"pre-execute listener failed: {e}") from e
        kind = decision.get("kind") if isinstance(decision, Mapping) else None
        if kind in ("allow", "ask"):
            return regmod._check_pre_decision(decision)
        reason = decision.get("reason") if isinstance(decision, Mapping) else None
        if reason is not None:
            return {"kind": "deny", "reason": str(reason)}
        if self.unguarded is None:
            self.unguarded = set()
        self.unguarded.add(execution.call_id)  # the bug: neither denied nor guarded
        return {"kind": "allow"}

    def _guards_for(self, execution: ToolExecution) -> tuple[str, str] | None:
        if self.unguarded and execution.call_id in self.unguarded:
            return None
        return super()._guards_for(execution)


@mutant("PRE-7", "the waterfall is raced against the caller's signal; the listener is abandoned")
class AbandonsPendingListener(Registry):
    """Stops waiting for a slow policy listener as soon as the caller aborts, leaving its
    work running behind a call that already returned."""

    async def _pre_execute(self, execution: ToolExecution) -> Mapping[str, Any]:
        work = asyncio.ensure_future(super()._pre_execute(execution))
        aborted = asyncio.ensure_future(execution.signal.wait())
        done, _ = await asyncio.wait({work, aborted}, return_when=asyncio.FIRST_COMPLETED)
        if work in done:
            aborted.cancel()
            return work.result()
        return {"kind": "deny", "reason": "cancelled while deciding"}  # the bug


@mutant("PRE-7", "cancellation is never re-checked after the listeners settle")
class NoRecheckAfterListeners(Registry):
    """Checks the signal only on entry: an abort that arrives while a listener awaits I/O is
    missed, and the body runs on an aborted signal."""

    def _cancelled(self, run: Prepared) -> bool:
        return False  # the bug

    async def dispatch(self, run: Prepared) -> None:
        tool = run.tool
        assert tool is not None
        run.body_entered = True
        context = ToolRunContext(run, run.execution.signal)
        value = await regmod._settle(tool.execute(run.execution.arguments, context))
        self._end(run, "dispatched", self._normalize(run, value))


@mutant("PRE-8", "listener scopes are recorded but ignored: every listener sees every call")
class UnscopedListeners(Registry):
    """The scope argument of ``on()`` is stored and never consulted."""

    def _scoped_entries(self, event: str, agent: str | None) -> list[Callable[..., Awaitable[Any]]]:
        return [e.fn for e in self._listeners[event]]  # the bug: no scope filter


_CHECK_PRE_DECISION = regmod._check_pre_decision  # the reference's own check


@mutant(
    "PRE-6",
    "decision kinds are matched case- and space-insensitively: 'Allow' and 'allow ' allow",
    replaces="reference.registry:_check_pre_decision",
)
def forgiving_kinds(decision: Any) -> Mapping[str, Any]:
    """A "be liberal in what you accept" registry: a listener's ``Allow`` or ``ALLOW`` is read
    as the allow it surely meant. A near-miss kind is not a decision of the vocabulary, and a policy
    slip must fail closed, never widen permissions."""
    if isinstance(decision, Mapping) and isinstance(decision.get("kind"), str):
        decision = {**decision, "kind": decision["kind"].strip().lower()}  # the bug
    return _CHECK_PRE_DECISION(decision)


@mutant(
    "PRE-6",
    "only the reason is validated: an unknown kind ('accept', 'reject' with a reason) allows",
    replaces="reference.registry:_check_pre_decision",
)
def unknown_kinds_fall_through(decision: Any) -> Mapping[str, Any]:
    """The check validates what each decision *carries* (a string reason, or none) and the
    pipeline then switches on ``deny`` and ``ask`` only: any other kind -- ``accept`` from the
    post-execute vocabulary, ``reject`` or ``refuse`` with a reason -- falls through to allow."""
    if (
        isinstance(decision, Mapping)
        and isinstance(decision.get("kind"), str)
        and decision["kind"] not in ("deny", "ask")  # the bug: no closed set of kinds
        and (decision.get("reason") is None or isinstance(decision.get("reason"), str))
    ):
        return decision
    return _CHECK_PRE_DECISION(decision)


@dataclass(frozen=True, slots=True)
class _PreviewRequest(ApprovalRequest):
    """An approval request with a UI preview of the call."""

    preview: Any = None


@mutant("PRE-5", "the approval request carries a preview: the tool's presentCall of the arguments")
class ApprovalRequestPreview(Registry):
    """A helpful registry renders the call for the approver: the request gains a ``preview``
    field holding the tool's own ``presentCall(args)``. No field is named ``arguments``, yet the
    preview is a second rendering of them -- exactly what PRE-5 forbids: it can drift from
    the card the UI already streamed, and the person approves what the preview says."""

    async def _approve(self, execution: ToolExecution, reason: str | None) -> str | None:
        service = self.approval
        tool = self._resolve(execution.name, execution.agent, execution.parent)
        present = tool.definition.get("present_call") if tool is not None else None
        if service is None or execution.agent is None or not callable(present):
            return await super()._approve(execution, reason)
        request = _PreviewRequest(
            call_id=execution.call_id,
            tool_name=execution.name,
            agent=execution.agent,
            reason=reason,
            signal=execution.signal,
            preview=present(execution.arguments),  # the bug: a copy of the arguments
        )
        try:
            answer = await regmod._settle(service.request(request))
        except Exception as e:
            return f"the approval service failed: {e}"
        if answer == "allowed-once":
            return None
        return (
            regmod.APPROVAL_DENIALS.get(answer, "denied") if isinstance(answer, str) else "denied"
        )


_ASK = "ask"  # interned, as the literal of the host's own ask() constructor is


@mutant("PRE-4", "an ask is recognised by identity: an ask built from data denies unasked")
class AskByIdentity(Registry):
    """Found by machine mutation (cosmic-ray's ``==`` -> ``is`` in ``_check_pre_decision``,
    benchmarks/mutation.md): ``kind is "ask"``. CPython interns the literal of the host's
    own ``ask()`` constructor, so every decision that constructor builds passes; a policy
    that builds its decision from data (``json.loads``, a config file, upstream's plain
    objects) hands a ``"ask"`` that is equal but not identical, and its question becomes
    PRE-6's fail-closed denial: the approval service is never asked, so an answer
    ``allowed-once`` never comes to let the call proceed (PRE-4)."""

    async def _pre_execute(self, execution: ToolExecution) -> Mapping[str, Any]:
        decision = await super()._pre_execute(execution)
        kind = decision.get("kind")
        if kind in ("allow", "deny") or kind is _ASK:  # the bug: `is`, not `==`
            return decision
        raise regmod._PolicyFailure(f"pre-execute returned a malformed decision: {decision!r}")
