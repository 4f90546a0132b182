"""The openai-agents adapter on a handful of fixtures: well-formed traces, a few verdicts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("agents", reason="openai-agents is not installed (pip install '.[frameworks]')")

from conformance.adapters.openai_agents import make_adapter
from conformance.core.adapter import requirements, trim
from conformance.core.evaluate import judge, run_scenario

RULES = Path(__file__).resolve().parents[2] / "conformance" / "fixtures" / "rules"

FIXTURES = [
    "PRE-2/deny-carries-reason",
    "PRE-3/ask-without-approval-service",
    "PRE-5/request-carries-call-id-not-arguments",
    "SCOPE-1/hidden-equals-missing",
    "GUARD-2/non-reason-denies",
    "POST-3/block-with-feedback",
    "DEF-2/schemas-are-whitelisted-copies",
]


def scenario(name: str) -> dict[str, Any]:
    """The fixture as the runner sends it: inert scripts of missing stages trimmed."""
    loaded = json.loads((RULES / f"{name}.json").read_text(encoding="utf-8"))
    return dict(trim(loaded, make_adapter().describe().capabilities))


def rule_verdicts(name: str, trace: dict[str, Any], rule: str) -> list[Any]:
    """The rule's own verdicts (not the fixture's expect block, which may name a trimmed stage)."""
    verdicts = judge(scenario(name), trace, [rule])[rule]
    return [v for v in verdicts if not v.subject.startswith("expect[")]


def trace_of(name: str) -> dict[str, Any]:
    trace, no_trace = run_scenario(make_adapter(), scenario(name))
    assert no_trace is None, no_trace
    assert trace is not None
    return trace


def body_entered(trace: dict[str, Any]) -> bool:
    return any(e.get("stage") == "body" and e.get("at") == "enter" for e in trace["events"])


def test_describe_names_the_exact_framework_version() -> None:
    info = make_adapter().describe()
    assert info.name == "openai-agents"
    assert info.version == "0.24.0"
    assert {"approval", "guards", "post-execute", "observers"} <= info.capabilities
    assert {"wrappers", "finalizer", "classifier"} <= set(info.missing)
    assert info.closed_forms == {"error-result", "raised", "interrupted"}


@pytest.mark.parametrize("name", FIXTURES)
def test_fixture_gives_a_well_formed_trace(name: str) -> None:
    s = scenario(name)
    assert requirements(s) <= make_adapter().describe().capabilities
    trace = trace_of(name)
    assert len(trace["actions"]) == len(s["actions"])


def test_hidden_tool_looks_unknown() -> None:
    name = "SCOPE-1/hidden-equals-missing"
    trace = trace_of(name)
    hidden, unknown = (a["result"] for a in trace["actions"])
    assert hidden["error"]["info"] == unknown["error"]["info"] == {"code": "UNKNOWN_TOOL"}
    verdicts = rule_verdicts(name, trace, "SCOPE-1")
    assert verdicts and all(v.ok for v in verdicts)


def test_deny_closes_the_call_with_its_reason() -> None:
    name = "PRE-2/deny-carries-reason"
    trace = trace_of(name)
    (answer,) = trace["actions"]
    assert answer["result"]["isError"] is True
    assert "outside the workspace" in answer["result"]["error"]["message"]
    assert not body_entered(trace)
    verdicts = rule_verdicts(name, trace, "PRE-2")
    assert verdicts and all(v.ok for v in verdicts)


def test_ask_without_approver_stays_interrupted() -> None:
    trace = trace_of("PRE-3/ask-without-approval-service")
    assert list(trace["actions"][0]) == ["interrupted"]
    assert not body_entered(trace)


def test_approval_request_carries_the_arguments() -> None:
    """A real SDK behaviour: ToolApprovalItem exposes ``arguments`` (PRE-5 fails)."""
    name = "PRE-5/request-carries-call-id-not-arguments"
    trace = trace_of(name)
    (request,) = [
        e for e in trace["events"] if e.get("stage") == "approval" and e["at"] == "request"
    ]
    assert "arguments" in request["keys"] and "callId" in request["keys"]
    verdicts = rule_verdicts(name, trace, "PRE-5")
    assert any(not v.ok for v in verdicts)
