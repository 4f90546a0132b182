"""The pydantic-ai adapter (conformance/adapters/pydantic_ai.py) on fixtures and small scenarios.

Skipped when the framework is not installed (``pip install -e '.[frameworks]'``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pydantic_ai")

from conformance.adapters.pydantic_ai import CAPABILITIES, make_adapter
from conformance.core.evaluate import evaluate, run_scenario

RULES = Path(__file__).resolve().parents[2] / "conformance" / "fixtures" / "rules"
FIXTURES = [
    "PRE-1/end-of-chain-allows.json",
    "PRE-5/request-carries-call-id-not-arguments.json",
    "POST-3/block-with-feedback.json",
    "DEF-2/schemas-are-whitelisted-copies.json",
    "GUARD-2/non-reason-denies.json",
]
READ = {
    "name": "read_file",
    "description": "Read a file.",
    "parameters": {
        "type": "object",
        "properties": {"path": {"type": "string"}},
        "required": ["path"],
        "additionalProperties": False,
    },
    "execute": [{"return": "contents"}],
}


def scenario(actions: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {"id": "pydantic-ai-test", "tools": [READ], "actions": actions, **extra}


def call(call_id: str, name: str = "read_file", **arguments: Any) -> dict[str, Any]:
    arguments = arguments or {"path": "/a"}
    return {"call": {"callId": call_id, "name": name, "arguments": arguments, "agent": "a1"}}


def entered(trace: dict[str, Any], stage: str = "body") -> list[str]:
    return [e["call"] for e in trace["events"] if e["stage"] == stage and e.get("at") == "enter"]


def test_describe() -> None:
    info = make_adapter().describe()
    assert info.name == "pydantic-ai-slim" and info.version == "2.68.0"
    assert "approval" in info.capabilities and "finalizer" not in info.capabilities
    assert set(info.missing).isdisjoint(CAPABILITIES)


@pytest.mark.parametrize("fixture", FIXTURES)
def test_fixture_traces_are_well_formed(fixture: str) -> None:
    data = json.loads((RULES / fixture).read_text(encoding="utf-8"))
    trace, no_trace = run_scenario(make_adapter(), data)
    assert no_trace is None and trace is not None
    assert len(trace["actions"]) == len(data["actions"])


def test_unknown_tool_is_unknown() -> None:
    """The framework's retried 'Unknown tool name' (cause unknown_tool) maps to UNKNOWN_TOOL."""
    result = evaluate(make_adapter(), scenario([call("c1", "nope")]), rules=["RES-3"])
    assert result.trace is not None
    answer = result.trace["actions"][0]["result"]
    assert answer["isError"] and answer["error"]["info"]["code"] == "UNKNOWN_TOOL"
    assert "Unknown tool name: 'nope'" in answer["error"]["message"]


def test_deny_holds_PRE_2() -> None:
    deny = [{"id": "no", "steps": [{"return": {"kind": "deny", "reason": "not today"}}]}]
    result = evaluate(make_adapter(), scenario([call("c1")], preExecute=deny), rules=["PRE-2"])
    assert result.trace is not None and not result.violations("PRE-2")
    assert result.trace["actions"][0]["result"]["error"]["message"] == "not today"
    assert entered(result.trace) == []


def test_approval_interrupt_then_resume() -> None:
    ask = [{"id": "ask", "steps": [{"return": {"kind": "ask", "reason": "side effects"}}]}]
    approval = {"steps": [{"return": "allowed-once"}], "byCall": {"c2": [{"return": "rejected"}]}}
    data = scenario([call("c1"), call("c2")], preExecute=ask, approval=approval)
    result = evaluate(make_adapter(), data, rules=["PRE-4"])
    assert result.trace is not None and not result.violations("PRE-4")
    first, second = (a["result"] for a in result.trace["actions"])
    assert first == {"isError": False, "value": "contents", "content": [
        {"type": "text", "text": "contents"}]}  # fmt: skip
    assert second["isError"] and entered(result.trace) == ["c1"]
    # without an approval service the run stops with the request pending
    bare = make_adapter().run(scenario([call("c3")], preExecute=ask))
    assert "interrupted" in bare["actions"][0]


def test_body_exception_is_raised() -> None:
    """A plain exception from the body propagates out of Agent.run: the closed form raised."""
    throwing = {**READ, "execute": [{"throw": "disk full"}]}
    trace = make_adapter().run({"id": "t", "tools": [throwing], "actions": [call("c1")]})
    assert trace["actions"] == [{"raised": "RuntimeError: disk full"}]


def test_from_schema_does_not_validate_PIPE_4() -> None:
    """Tool.from_schema skips schema validation (pa/tools.py:549): the body runs, PIPE-4 fails."""
    result = evaluate(make_adapter(), scenario([call("c1", path=7)]), rules=["PIPE-4"])
    assert result.trace is not None and entered(result.trace) == ["c1"]
    assert result.violations("PIPE-4")


def test_finalizer_scenarios_are_skipped() -> None:
    data = scenario([call("c1")])
    data["tools"] = [{**READ, "finalizeContent": [{"return": None}]}]
    trace, no_trace = run_scenario(make_adapter(), data)
    assert trace is None and no_trace is not None and "finalizer" in no_trace.reason


def test_guards_run_before_the_wrappers_GUARD_1() -> None:
    """Pre-execute and guards are after_tool_validate hooks: they run before every wrap."""
    data = scenario(
        [call("c1")],
        preExecute=[{"id": "pre", "steps": [{"delegate": True}]}],
        guards=[{"id": "g", "steps": [{"return": None}]}],
        wrappers=[{"id": "w", "steps": [{"delegate": True}]}],
    )
    result = evaluate(make_adapter(), data, rules=["GUARD-1"])
    assert result.trace is not None and not result.violations("GUARD-1")
    order = [e["stage"] for e in result.trace["events"] if e.get("at") == "enter"]
    assert order == ["pre-execute", "guard", "wrapper", "body"]


def test_observer_sees_the_calls_arguments() -> None:
    """An observer finds its call's ToolCallPart in ctx.messages by tool_call_id."""
    observers = [{"id": "log", "steps": [{"observe": "arguments"}]}]
    trace = make_adapter().run(scenario([call("c1", path="/b")], observers=observers))
    seen = [e["observed"] for e in trace["events"] if e["stage"] == "result" and "observed" in e]
    assert {"path": "/b"} in seen


def test_streamed_approval_request_shows_parsed_arguments_PIPE_5() -> None:
    """Observers make the turn streamed (args are JSON text); the approver sees them parsed."""
    ask = [{"id": "ask", "steps": [{"return": {"kind": "ask", "reason": "r"}}]}]
    data = scenario(
        [call("c1", path="/b")],
        preExecute=ask,
        approval={"steps": [{"return": "allowed-once"}]},
        observers=[{"id": "log", "steps": []}],
    )
    result = evaluate(make_adapter(), data, rules=["PIPE-5"])
    assert result.trace is not None and not result.violations("PIPE-5")
    requests = [e for e in result.trace["events"] if e.get("at") == "request"]
    assert requests[0]["arguments"] == {"path": "/b"}
