"""PRE-1..8: each predicate catches a realistically broken registry; the reference passes."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import reference.registry as regmod
from reference import Registry
from tests.kit.support import mutant_status as _status


class _EndOfChainDenies(Registry):
    """The end of the waterfall answers deny instead of allow."""

    async def _pre_execute(self, execution: Any) -> Mapping[str, Any]:
        listeners = self._scoped_entries("tools/pre-execute", execution.agent)

        async def step(i: int) -> Any:
            if i == len(listeners):
                return {"kind": "deny", "reason": "no listener allowed it"}
            return await listeners[i](execution, lambda: step(i + 1))

        return regmod._check_pre_decision(await step(0))


class _NoShortCircuit(Registry):
    """Every listener runs; the first non-allow decision wins (no short-circuit)."""

    async def _pre_execute(self, execution: Any) -> Mapping[str, Any]:
        listeners = self._scoped_entries("tools/pre-execute", execution.agent)

        async def allow() -> Any:
            return {"kind": "allow"}

        decision: Mapping[str, Any] = {"kind": "allow"}
        for listener in listeners:
            got = regmod._check_pre_decision(await listener(execution, allow))
            if decision["kind"] == "allow":
                decision = got
        return decision


def test_PRE_1_catches_end_of_chain_deny() -> None:
    assert _status(_EndOfChainDenies, "PRE-1") == "fail"


def test_PRE_1_catches_missing_short_circuit() -> None:
    assert _status(_NoShortCircuit, "PRE-1") == "fail"


class _DenyWithoutReason(Registry):
    """A deny becomes a generic error, dropping the listener's reason."""

    async def _pre_execute(self, execution: Any) -> Mapping[str, Any]:
        decision = await super()._pre_execute(execution)
        if decision["kind"] == "deny":
            return {"kind": "deny", "reason": "denied by policy"}
        return decision


class _DenyIsAdvisory(Registry):
    """deny is logged but the call goes on (fail-open)."""

    async def _pre_execute(self, execution: Any) -> Mapping[str, Any]:
        decision = await super()._pre_execute(execution)
        return {"kind": "allow"} if decision["kind"] == "deny" else decision


def test_PRE_2_catches_dropped_reason() -> None:
    assert _status(_DenyWithoutReason, "PRE-2") == "fail"


def test_PRE_2_catches_advisory_deny() -> None:
    assert _status(_DenyIsAdvisory, "PRE-2") == "fail"


class _UnavailableAllows(Registry):
    """An approval system that is down lets the call through."""

    async def _approve(self, execution: Any, reason: str | None) -> str | None:
        refusal = await super()._approve(execution, reason)
        return None if refusal == regmod.APPROVAL_DENIALS["unavailable"] else refusal


class _OneReasonForAll(Registry):
    """Every refused approval says the same thing."""

    async def _approve(self, execution: Any, reason: str | None) -> str | None:
        refusal = await super()._approve(execution, reason)
        return None if refusal is None else "approval denied"


def test_PRE_4_catches_unavailable_allowing() -> None:
    assert _status(_UnavailableAllows, "PRE-4") == "fail"


def test_PRE_4_catches_indistinct_reasons() -> None:
    assert _status(_OneReasonForAll, "PRE-4") == "fail"


class _RequestWithArguments(Registry):
    """The approval request is handed the whole execution, arguments included."""

    async def _approve(self, execution: Any, reason: str | None) -> str | None:
        if self.approval is None or execution.agent is None:
            return await super()._approve(execution, reason)
        answer = await self.approval.request(
            {"callId": execution.call_id, "reason": reason, "arguments": execution.arguments}
        )
        return None if answer == "allowed-once" else "not approved"


def test_PRE_5_catches_arguments_in_request() -> None:
    assert _status(_RequestWithArguments, "PRE-5") == "fail"


class _NothingMeansAllow(Registry):
    """A listener that returns nothing (or a bare "allow") is read as allow: fail-open."""

    async def _pre_execute(self, execution: Any) -> Mapping[str, Any]:
        listeners = self._scoped_entries("tools/pre-execute", execution.agent)

        async def step(i: int) -> Any:
            if i == len(listeners):
                return {"kind": "allow"}
            decision = await listeners[i](execution, lambda: step(i + 1))
            if decision is None or decision == "allow" or not isinstance(decision, Mapping):
                return {"kind": "allow"}
            if decision.get("kind") not in ("deny", "ask"):
                return {"kind": "allow"}
            return decision

        try:
            return regmod._check_pre_decision(await step(0))
        except regmod._PolicyFailure:
            return {"kind": "allow"}


def test_PRE_6_catches_fail_open_malformed_decisions() -> None:
    assert _status(_NothingMeansAllow, "PRE-6") == "fail"


class _AbandonsListeners(Registry):
    """Races the waterfall against the caller's signal and walks away from the listener."""

    async def _pre_execute(self, execution: Any) -> Mapping[str, Any]:
        work = asyncio.ensure_future(super()._pre_execute(execution))
        aborted = asyncio.ensure_future(execution.signal.wait())
        done, _ = await asyncio.wait({work, aborted}, return_when=asyncio.FIRST_COMPLETED)
        if work in done:
            aborted.cancel()
            return work.result()
        return {"kind": "deny", "reason": "cancelled while deciding"}


class _NoRecheck(Registry):
    """Never re-checks cancellation between the stages: the body runs on an aborted signal."""

    def _cancelled(self, run: Any) -> bool:
        return False

    async def dispatch(self, run: Any) -> None:
        tool = run.tool
        run.body_entered = True
        value = await tool.execute(
            run.execution.arguments, regmod.ToolRunContext(run, run.execution.signal)
        )
        self._end(run, "dispatched", self._normalize(run, value))


def test_PRE_7_catches_abandoned_listener() -> None:
    assert _status(_AbandonsListeners, "PRE-7") == "fail"


def test_PRE_7_catches_missing_recheck() -> None:
    assert _status(_NoRecheck, "PRE-7") == "fail"


class _UnscopedListeners(Registry):
    """Listener scopes are recorded but ignored: every listener sees every call."""

    def _scoped_entries(self, event: str, agent: str | None) -> list[Callable[..., Awaitable[Any]]]:
        return [e.fn for e in self._listeners[event]]


def test_PRE_8_catches_unscoped_listeners() -> None:
    assert _status(_UnscopedListeners, "PRE-8") == "fail"


class _AskAllows(Registry):
    """ask with no approval service proceeds (fail-open)."""

    async def _approve(self, execution: Any, reason: str | None) -> str | None:
        return None


def test_PRE_3_catches_fail_open_ask() -> None:
    assert _status(_AskAllows, "PRE-3") == "fail"
