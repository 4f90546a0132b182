"""GUARD-1..3: monotonic guards."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import Approval, execute, text_of, tool

from reference import Registry, allow, ask


def registry(entered: list[str], **kw: Any) -> Registry:
    r = Registry(**kw)
    r.register(tool("t", lambda a, c: entered.append("body") or "ok"))
    return r


def test_GUARD_1_guards_run_after_waterfall_and_approval() -> None:
    """GUARD-1: guards run after the waterfall and a granted approval, before dispatch."""
    events: list[str] = []
    approval = Approval("allowed-once")
    r = registry(events, approval=approval)
    r.on("tools/pre-execute", lambda e, n: events.append("pre") or ask("why"))
    r.on("tools/result", lambda e, res: events.append("result"))

    async def wrapper(d: Any, n: Any) -> Any:
        events.append(f"approved={len(approval.requests)}")
        return await n()

    r.guard(lambda e: events.append(f"guard(approved={len(approval.requests)})"))
    r.on("tools/execute", wrapper)
    execute(r, "t")
    assert events == ["pre", "guard(approved=1)", "approved=1", "body", "result"]


def test_GUARD_1_denial_is_final_over_explicit_allow() -> None:
    """GUARD-1: a guard denial is final; an explicit allow from pre-execute cannot override it."""
    entered: list[str] = []
    r = registry(entered)
    r.on("tools/pre-execute", lambda e, n: allow(), prepend=True)
    r.guard(lambda e: "protected path")
    result = execute(r, "t")
    assert result.is_error and "protected path" in result.message
    assert entered == []


def test_GUARD_1_denial_is_final_over_granted_approval() -> None:
    """GUARD-1: a granted approval cannot turn a guard denial into permission."""
    entered: list[str] = []
    r = registry(entered, approval=Approval("allowed-once"))
    r.on("tools/pre-execute", lambda e, n: ask("sure?"))
    r.guard(lambda e: "sandbox forbids it")
    assert execute(r, "t").is_error
    assert entered == []


def test_GUARD_1_guard_cannot_allow() -> None:
    """GUARD-1: a guard returns a reason or nothing: nothing defers, it never grants past a deny."""
    entered: list[str] = []
    r = registry(entered)
    r.on("tools/pre-execute", lambda e, n: {"kind": "deny", "reason": "policy"})
    r.guard(lambda e: None)
    r.guard(lambda e: allow())  # type: ignore[arg-type, return-value]
    assert execute(r, "t").is_error
    assert entered == []


def test_GUARD_1_any_guard_objecting_denies_regardless_of_order() -> None:
    """GUARD-1: with several guards, one objection anywhere denies."""
    for order in ((None, "no"), ("no", None)):
        entered: list[str] = []
        r = registry(entered)
        for verdict in order:
            r.guard(lambda e, v=verdict: v)
        assert execute(r, "t").is_error
        assert entered == []


def test_GUARD_2_denial_is_an_error_result() -> None:
    """GUARD-2: a guard denial is an error result; the body never runs."""
    entered: list[str] = []
    r = registry(entered)
    r.guard(lambda e: "outside the workspace")
    result = execute(r, "t")
    assert result.is_error
    assert "outside the workspace" in result.message
    assert text_of(result) == "Error: " + result.message
    assert entered == []


@pytest.mark.parametrize("verdict", [False, True, 0, 1, "", {"kind": "allow"}, ["no"]], ids=repr)
def test_GUARD_2_anything_but_no_objection_denies(verdict: Any) -> None:
    """GUARD-2: a guard returning anything other than "no objection" denies (fail-closed)."""
    entered: list[str] = []
    r = registry(entered)
    r.guard(lambda e: verdict)
    assert execute(r, "t").is_error
    assert entered == []


def test_GUARD_2_throwing_guard_denies() -> None:
    """GUARD-2: a guard that throws denies."""
    entered: list[str] = []
    r = registry(entered)

    def boom(e: Any) -> Any:
        raise RuntimeError("guard bug")

    r.guard(boom)
    assert execute(r, "t").is_error
    assert entered == []


def test_GUARD_2_passing_guard_lets_the_call_through() -> None:
    """GUARD-2: a guard returning nothing is no objection."""
    entered: list[str] = []
    r = registry(entered)
    r.guard(lambda e: None)
    assert not execute(r, "t").is_error
    assert entered == ["body"]


def test_GUARD_3_scoped_guard_applies_only_to_its_agent() -> None:
    """GUARD-3: a guard for one agent applies only to that agent's calls."""
    entered: list[str] = []
    seen: list[Any] = []
    r = registry(entered)
    r.guard(lambda e: seen.append(e.agent) or "agent a may not", scope="a")
    assert execute(r, "t", agent="a").is_error
    assert not execute(r, "t", agent="b").is_error
    assert not execute(r, "t", agent=None).is_error
    assert seen == ["a"]
    assert entered == ["body", "body"]
