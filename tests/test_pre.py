"""PRE-1..8: the allow / deny / ask waterfall and the approval seam."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

import pytest
from conftest import Approval, asynctest, call, code_of, execute, text_of, tool, yield_many

from reference import AbortController, Registry, allow, ask, deny


def registry_with_body(entered: list[str], **kw: Any) -> Registry:
    r = Registry(**kw)
    r.register(tool("t", lambda a, c: entered.append("body") or "ok"))
    return r


def test_PRE_1_end_of_chain_allows() -> None:
    """PRE-1: with every listener delegating via next(), the end of the chain is allow."""
    entered: list[str] = []
    events: list[str] = []
    r = registry_with_body(entered)
    for name in ("a", "b", "c"):

        async def listener(e: Any, next_: Any, name: str = name) -> Any:
            events.append(name)
            return await next_()

        r.on("tools/pre-execute", listener)
    assert not execute(r, "t").is_error
    assert events == ["a", "b", "c"]
    assert entered == ["body"]


def test_PRE_1_no_listeners_allows() -> None:
    """PRE-1: an empty waterfall is allow."""
    entered: list[str] = []
    assert not execute(registry_with_body(entered), "t").is_error
    assert entered == ["body"]


def test_PRE_1_short_circuit_skips_the_rest() -> None:
    """PRE-1: a listener that returns without next() short-circuits the rest."""
    entered: list[str] = []
    events: list[str] = []
    r = registry_with_body(entered)
    r.on("tools/pre-execute", lambda e, n: events.append("a") or allow())
    r.on("tools/pre-execute", lambda e, n: events.append("b") or deny("never reached"))
    assert not execute(r, "t").is_error
    assert events == ["a"]
    assert entered == ["body"]


def test_PRE_1_reorderable_prepend_runs_first() -> None:
    """PRE-1: the waterfall is reorderable; a prepended listener decides first."""
    entered: list[str] = []
    r = registry_with_body(entered)
    r.on("tools/pre-execute", lambda e, n: allow())
    r.on("tools/pre-execute", lambda e, n: deny("prepended"), prepend=True)
    result = execute(r, "t")
    assert result.is_error and "prepended" in result.message
    assert entered == []


def test_PRE_1_outer_listener_sees_inner_decision_and_may_override() -> None:
    """PRE-1: next() returns the downstream decision; the outer return decides."""
    seen: list[Any] = []
    entered: list[str] = []
    r = registry_with_body(entered)

    async def outer(e: Any, next_: Any) -> Any:
        seen.append(dict(await next_()))
        return deny("outer says no")

    r.on("tools/pre-execute", outer)
    result = execute(r, "t")
    assert seen == [{"kind": "allow"}]
    assert result.is_error and entered == []


def test_PRE_2_deny_is_error_with_reason() -> None:
    """PRE-2: deny(reason) is an error result carrying the reason; the body does not run."""
    entered: list[str] = []
    r = registry_with_body(entered)
    r.on("tools/pre-execute", lambda e, n: deny("writes outside the workspace"))
    result = execute(r, "t")
    assert result.is_error
    assert "writes outside the workspace" in result.message
    assert text_of(result) == "Error: " + result.message
    assert entered == []


def test_PRE_3_ask_without_approval_service_denies() -> None:
    """PRE-3: ask with no approval capability becomes a denial; the body never runs."""
    entered: list[str] = []
    r = registry_with_body(entered)
    r.on("tools/pre-execute", lambda e, n: ask("side effect"))
    result = execute(r, "t")
    assert result.is_error
    assert entered == []


def test_PRE_3_ask_without_reason_also_fails_closed() -> None:
    """PRE-3: a bare ask() (no reason) with no approval service still denies."""
    entered: list[str] = []
    r = registry_with_body(entered)
    r.on("tools/pre-execute", lambda e, n: ask())
    assert execute(r, "t").is_error
    assert entered == []


def test_PRE_4_allowed_once_proceeds() -> None:
    """PRE-4: only `allowed-once` proceeds to the body."""
    entered: list[str] = []
    r = registry_with_body(entered, approval=Approval("allowed-once"))
    r.on("tools/pre-execute", lambda e, n: ask("side effect"))
    assert not execute(r, "t").is_error
    assert entered == ["body"]


DENYING_ANSWERS: dict[str, Any] = {
    "rejected": Approval("rejected"),
    "cancelled": Approval("cancelled"),
    "unavailable": Approval("unavailable"),
    "unknown-answer": Approval("allowed-always"),
    "non-string-answer": Approval(True),
    "none-answer": Approval(None),
    "throwing-service": Approval(raises=RuntimeError("channel down")),
}


def deny_message(case: str, *, agent: str | None = "main") -> tuple[str, list[str]]:
    entered: list[str] = []
    r = registry_with_body(entered, approval=DENYING_ANSWERS[case])
    r.on("tools/pre-execute", lambda e, n: ask("side effect"))
    result = execute(r, "t", agent=agent)
    assert result.is_error, case
    return result.message, entered


@pytest.mark.parametrize("case", list(DENYING_ANSWERS))
def test_PRE_4_every_other_answer_denies(case: str) -> None:
    """PRE-4: rejected, cancelled, unavailable, unknown answers and a throwing service deny."""
    _, entered = deny_message(case)
    assert entered == []


def test_PRE_4_no_agent_denies() -> None:
    """PRE-4: a call without an agent to route the question to denies."""
    approval = Approval("allowed-once")
    entered: list[str] = []
    r = registry_with_body(entered, approval=approval)
    r.on("tools/pre-execute", lambda e, n: ask("side effect"))
    result = execute(r, "t", agent=None)
    assert result.is_error
    assert entered == []


def test_PRE_4_denial_reasons_are_pairwise_distinct() -> None:
    """PRE-4: "a person said no" is distinguishable from "no channel": distinct reasons."""
    messages = {case: deny_message(case)[0] for case in DENYING_ANSWERS}
    entered: list[str] = []
    r = registry_with_body(entered, approval=Approval("allowed-once"))
    r.on("tools/pre-execute", lambda e, n: ask("side effect"))
    messages["no-agent"] = execute(r, "t", agent=None).message
    r2 = registry_with_body(entered)
    r2.on("tools/pre-execute", lambda e, n: ask("side effect"))
    messages["no-service"] = execute(r2, "t").message
    # rejected / cancelled / unavailable / throwing / no-agent / no-service must differ
    distinct = [
        "rejected",
        "cancelled",
        "unavailable",
        "throwing-service",
        "no-agent",
        "no-service",
    ]
    for a, b in itertools.combinations(distinct, 2):
        assert messages[a] != messages[b], (a, b)
    assert messages["unknown-answer"] not in {messages[k] for k in distinct}


def test_PRE_5_request_carries_call_id_and_reason_not_arguments() -> None:
    """PRE-5: the approval request has the call id and the reason, and no arguments."""
    approval = Approval("allowed-once")
    entered: list[str] = []
    r = registry_with_body(entered, approval=approval)
    r.on("tools/pre-execute", lambda e, n: ask("side-effecting command"))
    execute(r, "t", {"path": "SECRET-ARG-VALUE"}, call_id="call-42")
    (request,) = approval.requests
    assert request.call_id == "call-42"
    assert request.reason == "side-effecting command"
    assert not hasattr(request, "arguments")
    assert not hasattr(request, "args")
    assert "SECRET-ARG-VALUE" not in repr(request)


def test_PRE_5_service_is_not_asked_without_an_ask() -> None:
    """PRE-5: the registry shows no UI; an allowed call never reaches the approval service."""
    approval = Approval("allowed-once")
    entered: list[str] = []
    r = registry_with_body(entered, approval=approval)
    execute(r, "t")
    assert approval.requests == []


MALFORMED: dict[str, Any] = {
    "unknown-kind": {"kind": "maybe"},
    "deny-without-reason": {"kind": "deny"},
    "deny-empty-reason": {"kind": "deny", "reason": ""},
    "bare-string": "allow",
    "nothing": None,
    "true": True,
    "list": [{"kind": "allow"}],
}


@pytest.mark.parametrize("case", list(MALFORMED))
def test_PRE_6_malformed_decision_fails_closed(case: str) -> None:
    """PRE-6: anything that is not a well-formed decision fails the call closed."""
    entered: list[str] = []
    guarded: list[str] = []
    r = registry_with_body(entered)
    r.on("tools/pre-execute", lambda e, n: MALFORMED[case])
    r.guard(lambda e: guarded.append("guard"))
    result = execute(r, "t")
    assert result.is_error
    assert entered == []


def test_PRE_6_throwing_listener_fails_closed() -> None:
    """PRE-6: a listener that throws fails the call closed."""
    entered: list[str] = []
    r = registry_with_body(entered)

    def boom(e: Any, n: Any) -> Any:
        raise RuntimeError("policy bug")

    r.on("tools/pre-execute", boom)
    assert execute(r, "t").is_error
    assert entered == []


def test_PRE_6_outer_listener_cannot_reopen_inner_failure() -> None:
    """PRE-6: an outer listener swallowing an inner failure cannot turn it into allow."""
    entered: list[str] = []
    r = registry_with_body(entered)

    async def forgiving(e: Any, next_: Any) -> Any:
        try:
            return await next_()
        except Exception:
            return allow()

    def broken(e: Any, n: Any) -> Any:
        return {"kind": "bogus"}

    r.on("tools/pre-execute", forgiving)
    r.on("tools/pre-execute", broken)
    assert execute(r, "t").is_error
    assert entered == []


def test_PRE_6_malformed_decision_never_skips_a_denying_guard() -> None:
    """PRE-6: a malformed decision never leads past the guards to the body."""
    entered: list[str] = []
    r = registry_with_body(entered)
    r.on("tools/pre-execute", lambda e, n: "allow")
    r.guard(lambda e: "guard objects")
    assert execute(r, "t").is_error
    assert entered == []


@asynctest
async def test_PRE_7_async_listener_observes_signal_then_registry_rechecks() -> None:
    """PRE-7: a listener sees the abort on exec.signal; the registry re-checks: no body."""
    controller = AbortController()
    entered: list[str] = []
    observed: list[bool] = []
    listening = asyncio.Event()
    r = registry_with_body(entered)

    async def listener(execution: Any, next_: Any) -> Any:
        listening.set()
        await execution.signal.wait()
        observed.append(execution.signal.aborted)
        return allow()  # an allow after the abort must not dispatch

    r.on("tools/pre-execute", listener)
    task = asyncio.create_task(r.execute(call("t", signal=controller.signal)))
    await asyncio.wait_for(listening.wait(), 5)
    controller.abort("user pressed stop")
    result = await asyncio.wait_for(task, 5)
    assert observed == [True]
    assert code_of(result) == "ABORTED_BEFORE_DISPATCH"
    assert entered == []


@asynctest
async def test_PRE_7_registry_never_abandons_a_listener_promise() -> None:
    """PRE-7: after an abort the registry still waits for the listener to settle."""
    controller = AbortController()
    gate = asyncio.Event()
    settled: list[str] = []
    entered: list[str] = []
    r = registry_with_body(entered)

    async def stubborn(execution: Any, next_: Any) -> Any:
        await gate.wait()  # ignores the signal
        settled.append("listener")
        return allow()

    r.on("tools/pre-execute", stubborn)
    task = asyncio.create_task(r.execute(call("t", signal=controller.signal)))
    await yield_many()
    controller.abort()
    await yield_many()
    assert not task.done()
    gate.set()
    result = await asyncio.wait_for(task, 5)
    assert settled == ["listener"]
    assert code_of(result) == "ABORTED_BEFORE_DISPATCH"
    assert entered == []


def test_PRE_8_scoped_listener_sees_only_its_agent() -> None:
    """PRE-8: a listener for one agent sees only that agent's calls; a global one sees all."""
    seen: list[tuple[str, Any]] = []
    r = registry_with_body([])
    r.on("tools/pre-execute", lambda e, n: seen.append(("a-only", e.agent)) or n(), scope="a")
    r.on("tools/pre-execute", lambda e, n: seen.append(("global", e.agent)) or n())
    execute(r, "t", agent="a")
    execute(r, "t", agent="b")
    execute(r, "t", agent=None)
    assert seen == [("a-only", "a"), ("global", "a"), ("global", "b"), ("global", None)]


def test_PRE_8_scoped_deny_does_not_affect_other_agents() -> None:
    """PRE-8: a scoped deny applies to its agent's calls only."""
    entered: list[str] = []
    r = registry_with_body(entered)
    r.on("tools/pre-execute", lambda e, n: deny("not for a"), scope="a")
    assert execute(r, "t", agent="a").is_error
    assert not execute(r, "t", agent="b").is_error
    assert entered == ["body"]
