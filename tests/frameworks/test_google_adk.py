"""The google-adk adapter on a handful of fixtures: well-formed traces, a few verdicts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip(
    "google.adk", reason="google-adk is not installed (pip install '.[frameworks]')"
)

from conformance.adapters.google_adk import make_adapter
from conformance.judging.evaluate import judge, run_scenario
from conformance.seam.adapter import ScenarioSkipped, requirements, trim

RULES = Path(__file__).resolve().parents[2] / "conformance" / "fixtures" / "rules"

FIXTURES = [
    "SCOPE-1/hidden-equals-missing",
    "GUARD-2/non-reason-denies",
    "GUARD-2/throwing-guard-denies",
    "FIN-2/guard-denial",
    "POST-3/block-with-feedback",
    "POST-4/throwing-post-listener",
    "SCOPE-2/shown-equals-runnable",
    "DEF-2/schemas-are-whitelisted-copies",
]


def scenario(name: str) -> dict[str, Any]:
    """The fixture as the runner sends it: inert scripts of missing stages trimmed."""
    loaded = json.loads((RULES / f"{name}.json").read_text(encoding="utf-8"))
    return dict(trim(loaded, make_adapter().describe().capabilities))


def rule_verdicts(scn: dict[str, Any], trace: dict[str, Any], rule: str) -> list[Any]:
    """The rule's own verdicts (not the fixture's expect block)."""
    return [v for v in judge(scn, trace, [rule])[rule] if not v.subject.startswith("expect[")]


def trace_for(scn: dict[str, Any]) -> dict[str, Any]:
    trace, no_trace = run_scenario(make_adapter(), scn)
    assert no_trace is None, no_trace
    assert trace is not None
    return trace


def body_entered(trace: dict[str, Any]) -> bool:
    return any(e.get("stage") == "body" and e.get("at") == "enter" for e in trace["events"])


def guarded(returns: Any) -> dict[str, Any]:
    """One call of a tool behind one guard that returns ``returns``, and one observer."""
    return {
        "id": "test/guarded",
        "tools": [
            {
                "name": "read_file",
                "description": "Reads a file.",
                "parameters": {"type": "object"},
                "output": {"render": "json", "schema": {}},
                "execute": [{"return": "contents"}],
            }
        ],
        "guards": [{"id": "g", "steps": [{"return": returns}]}],
        "observers": [{"id": "o", "steps": [{"observe": "result"}]}],
        "actions": [
            {"call": {"callId": "c1", "name": "read_file", "agent": "main", "arguments": {}}}
        ],
    }


def test_describe_names_the_exact_framework_version() -> None:
    info = make_adapter().describe()
    assert info.name == "google-adk"
    assert info.version == "2.13.0"
    assert {"guards", "post-execute", "observers", "scopes"} <= info.capabilities
    assert {"approval", "pre-execute"} <= info.capabilities
    assert {"wrappers", "finalizer", "classifier"} <= set(info.missing)
    assert not info.capabilities & set(info.missing)
    assert info.closed_forms == {"error-result", "raised", "interrupted"}


@pytest.mark.parametrize("name", FIXTURES)
def test_fixture_gives_a_well_formed_trace(name: str) -> None:
    s = scenario(name)
    assert requirements(s) <= make_adapter().describe().capabilities
    trace = trace_for(s)
    assert len(trace["actions"]) == len(s["actions"])


def test_hidden_tool_looks_unknown() -> None:
    s = scenario("SCOPE-1/hidden-equals-missing")
    trace = trace_for(s)
    hidden, unknown = (a["result"] for a in trace["actions"])
    assert hidden["error"]["info"] == unknown["error"]["info"] == {"code": "UNKNOWN_TOOL"}
    verdicts = rule_verdicts(s, trace, "SCOPE-1")
    assert verdicts and all(v.ok for v in verdicts)


def test_scoped_tool_on_its_agent_is_not_unknown() -> None:
    """The check above can fail: the same call from the tool's own agent runs it."""
    s = scenario("SCOPE-1/hidden-equals-missing")
    scoped = next(t for t in s["tools"] if t.get("scope") is not None)
    call = next(a["call"] for a in s["actions"] if a["call"]["name"] == scoped["name"])
    s["actions"] = [{"call": {**call, "agent": scoped["scope"]}}]
    trace = trace_for(s)
    assert body_entered(trace)
    assert trace["actions"][0]["result"]["isError"] is False


def test_guard_reason_closes_the_call_as_an_error() -> None:
    s = guarded("outside the workspace")
    trace = trace_for(s)
    result = trace["actions"][0]["result"]
    assert result["isError"] is True
    assert result["error"]["message"] == "outside the workspace"
    assert not body_entered(trace)
    verdicts = rule_verdicts(s, trace, "GUARD-2")
    assert verdicts and all(v.ok for v in verdicts)


def test_guard_none_runs_the_body_and_the_observer_hears_it_once() -> None:
    trace = trace_for(guarded(None))
    result = trace["actions"][0]["result"]
    assert body_entered(trace)
    assert result == {
        "isError": False,
        "value": "contents",  # ADK's {'result': 'contents'} unwrapped
        "content": [{"type": "text", "text": '{"result": "contents"}'}],
    }
    heard = [e for e in trace["events"] if e.get("stage") == "result" and e.get("at") == "enter"]
    assert [e["observed"] for e in heard] == [result]
    assert heard[0]["agent"] == "main"  # the FunctionResponse event's author


def test_non_reason_guard_return_is_a_success_response() -> None:
    """ADK's documented behaviour (the published GUARD-2 difference): the tool is skipped,
    the return is the response; GUARD-2 judges it failing."""
    s = guarded(True)
    trace = trace_for(s)
    assert not body_entered(trace)
    assert trace["actions"][0]["result"]["value"] is True
    assert not all(v.ok for v in rule_verdicts(s, trace, "GUARD-2"))


def test_schemas_are_the_request_declarations() -> None:
    s = scenario("DEF-2/schemas-are-whitelisted-copies")
    trace = trace_for(s)
    first = next(a for a in trace["actions"] if "schemas" in a)
    assert first["schemas"]
    assert all(set(entry) == {"name", "description", "parameters"} for entry in first["schemas"])


def test_scoped_listener_is_skipped_with_its_reason() -> None:
    s = guarded(None)
    s["guards"][0]["scope"] = "main"
    with pytest.raises(ScenarioSkipped, match="scoped callbacks"):
        make_adapter().run(s)


def gated(policy: Any, answer: str | None) -> dict[str, Any]:
    """One call of a tool whose pre-execute policy returns ``policy``; the approver answers
    ``answer`` (None: no approval service)."""
    s = guarded(None)
    s["guards"] = []
    s["preExecute"] = [{"id": "policy", "steps": [{"return": policy}]}]
    if answer is not None:
        s["approval"] = {"steps": [{"return": answer}]}
    return s


def test_ask_then_allowed_once_runs_the_body_after_the_resume() -> None:
    trace = trace_for(gated({"kind": "ask", "reason": "reads"}, "allowed-once"))
    asked = [e for e in trace["events"] if e.get("stage") == "approval" and e["at"] == "request"]
    assert [e["call"] for e in asked] == ["c1"]
    assert asked[0]["arguments"] == {}  # the original call ADK shows the host
    assert body_entered(trace)
    assert trace["actions"][0]["result"]["value"] == "contents"


def test_ask_then_rejected_closes_the_call_as_an_error() -> None:
    trace = trace_for(gated({"kind": "ask", "reason": "reads"}, "rejected"))
    assert not body_entered(trace)
    result = trace["actions"][0]["result"]
    assert result["isError"] is True
    assert result["error"]["message"] == "This tool call is rejected."


def test_ask_without_an_answer_stays_interrupted() -> None:
    trace = trace_for(gated({"kind": "ask", "reason": "reads"}, None))
    assert not body_entered(trace)
    assert "interrupted" in trace["actions"][0]


def test_allow_runs_without_a_question() -> None:
    trace = trace_for(gated({"kind": "allow"}, "rejected"))
    assert body_entered(trace)
    assert not [e for e in trace["events"] if e.get("stage") == "approval"]


def test_pre_execute_deny_is_skipped_with_its_reason() -> None:
    with pytest.raises(ScenarioSkipped, match="no pre-execute denial"):
        make_adapter().run(gated({"kind": "deny", "reason": "no"}, None))


def test_caller_writes_reach_the_function_call_adk_runs() -> None:
    """The afterInvoke write lands on the FunctionCall of the event the host is handed,
    which ADK then runs (it takes no snapshot there); afterResult writes are made too."""
    write = [{"target": "caller-arguments", "path": ["x"], "value": 2}]
    call = {"callId": "c1", "name": "read_file", "agent": "main", "arguments": {"x": 1}}
    scn = guarded(None)
    scn["tools"][0]["execute"] = [{"observe": "arguments"}, {"return": "contents"}]
    scn["actions"] = [{"call": {**call, "afterInvoke": write, "afterResult": write}}]
    trace = trace_for(scn)
    made = [e["id"] for e in trace["events"] if e.get("stage") == "caller" and "mutate" in e]
    assert made == ["after-invoke", "after-result"]
    seen = [e["observed"] for e in trace["events"] if e.get("what") == "arguments"]
    assert seen == [{"x": 2}]
