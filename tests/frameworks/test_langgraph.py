"""The LangGraph (create_agent + ToolNode) adapter on a handful of fixtures: mapping checks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langgraph", reason="langgraph is not installed (pip install '.[frameworks]')")
pytest.importorskip("langchain", reason="langchain is not installed (pip install '.[frameworks]')")

from conformance.adapters.langgraph import make_adapter
from conformance.judging.evaluate import judge, run_scenario
from conformance.seam.adapter import ScenarioSkipped, requirements, trim

RULES = Path(__file__).resolve().parents[2] / "conformance" / "fixtures" / "rules"

FIXTURES = [
    "PRE-2/deny-carries-reason",
    "PRE-3/ask-without-approval-service",
    "GUARD-1/guard-after-granted-approval",
    "DEF-2/schemas-are-whitelisted-copies",
]


def scenario(name: str) -> dict[str, Any]:
    """The fixture as the runner sends it: inert scripts of missing stages trimmed."""
    loaded = json.loads((RULES / f"{name}.json").read_text(encoding="utf-8"))
    return dict(trim(loaded, make_adapter().describe().capabilities))


def trace_of(name: str) -> dict[str, Any]:
    trace, no_trace = run_scenario(make_adapter(), scenario(name))
    assert no_trace is None, no_trace
    assert trace is not None
    return trace


def rule_verdicts(name: str, trace: dict[str, Any], rule: str) -> list[Any]:
    verdicts = judge(scenario(name), trace, [rule])[rule]
    return [v for v in verdicts if not v.subject.startswith("expect[")]


def body_entered(trace: dict[str, Any]) -> bool:
    return any(e.get("stage") == "body" and e.get("at") == "enter" for e in trace["events"])


def test_describe_names_the_exact_framework_version() -> None:
    info = make_adapter().describe()
    assert (info.name, info.version) == ("langgraph", "1.2.24")
    assert {"approval", "pre-execute", "guards", "observers"} <= info.capabilities
    assert {"agentless-calls", "wrappers", "post-execute", "finalizer"} <= set(info.missing)
    assert not info.capabilities & set(info.missing)


@pytest.mark.parametrize("name", FIXTURES)
def test_fixture_gives_a_well_formed_trace(name: str) -> None:
    s = scenario(name)
    assert requirements(s) <= make_adapter().describe().capabilities
    assert len(trace_of(name)["actions"]) == len(s["actions"])


def test_deny_is_a_short_circuit_with_its_reason() -> None:
    name = "PRE-2/deny-carries-reason"
    trace = trace_of(name)
    (answer,) = trace["actions"]
    assert answer["result"]["isError"] is True
    assert "outside the workspace" in answer["result"]["error"]["message"]
    assert not body_entered(trace)
    assert all(v.ok for v in rule_verdicts(name, trace, "PRE-2"))


def test_ask_without_approver_stays_interrupted() -> None:
    trace = trace_of("PRE-3/ask-without-approval-service")
    assert list(trace["actions"][0]) == ["interrupted"]
    assert not body_entered(trace)


def test_only_approve_runs_and_other_answers_stay_pending() -> None:
    """approve -> the body runs; reject -> HITL's error message; no HITL word -> pending."""
    trace = trace_of("PRE-4/only-allowed-once-proceeds")
    approved, rejected, cancelled = trace["actions"][:3]
    assert approved["result"]["isError"] is False
    assert rejected["result"]["isError"] is True
    assert "The tool was not executed" in rejected["result"]["error"]["message"]
    assert list(cancelled) == ["interrupted"]
    requests = [e for e in trace["events"] if e.get("stage") == "approval" and e["at"] == "request"]
    assert requests[0]["call"] == "c1"  # the per-call request names its call


def test_an_unknown_tool_is_unknown_tool() -> None:
    """ToolNode's "Error: X is not a valid tool, ..." message is UNKNOWN_TOOL."""
    s = {
        "id": "inline/unknown",
        "tools": [{"name": "edit", "description": "", "parameters": {"type": "object"}}],
        "actions": [{"call": {"callId": "c1", "name": "nope", "arguments": {}, "agent": "main"}}],
    }
    trace, _ = run_scenario(make_adapter(), s)
    assert trace is not None
    result = trace["actions"][0]["result"]
    assert result["isError"] is True
    assert result["error"]["info"] == {"code": "UNKNOWN_TOOL"}


def test_host_fields_stay_off_the_wire() -> None:
    trace = trace_of("DEF-2/schemas-are-whitelisted-copies")
    (entry,) = trace["actions"][0]["schemas"]
    assert set(entry) == {"name", "description", "parameters"}
    assert trace["actions"][1]["result"]["isError"] is False  # the tool registered and ran


def test_a_none_predicate_runs_the_tool_unreviewed() -> None:
    """The framework's behaviour, not the adapter's: ``when`` returning None auto-approves."""
    s = {
        "id": "inline/none-predicate",
        "tools": [
            {
                "name": "edit",
                "description": "Edits.",
                "parameters": {"type": "object"},
                "execute": [{"return": "ok"}],
            }
        ],
        "preExecute": [{"id": "broken", "steps": [{"return": None}]}],
        "actions": [{"call": {"callId": "c1", "name": "edit", "arguments": {}, "agent": "main"}}],
    }
    trace, _ = run_scenario(make_adapter(), s)
    assert trace is not None and body_entered(trace)
    assert trace["actions"][0]["result"]["isError"] is False


def test_an_awaiting_predicate_script_is_skipped() -> None:
    s = {
        "id": "inline/awaiting-predicate",
        "tools": [{"name": "edit", "description": "", "parameters": {"type": "object"}}],
        "preExecute": [{"id": "slow", "steps": [{"yield": 1}, {"return": {"kind": "allow"}}]}],
        "actions": [{"call": {"callId": "c1", "name": "edit", "arguments": {}, "agent": "main"}}],
    }
    with pytest.raises(ScenarioSkipped):
        make_adapter().run(s)
