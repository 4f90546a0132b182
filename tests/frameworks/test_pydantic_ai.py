"""The pydantic-ai adapter (conformance/adapters/pydantic_ai.py) on fixtures and small scenarios.

Skipped when the framework is not installed (``pip install -e '.[frameworks]'``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pydantic_ai")

from pydantic_ai import Agent

from conformance.adapters.pydantic_ai import CAPABILITIES, make_adapter, make_inline_adapter
from conformance.judging.evaluate import evaluate, run_scenario

RULES = Path(__file__).resolve().parents[2] / "conformance" / "fixtures" / "rules"
FIXTURES = [
    "PRE-4/odd-answers-deny.json",
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


def resumed_runs(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Spy on Agent.run: one entry per run, True when it resumes with DeferredToolResults."""
    runs: list[bool] = []
    run = Agent.run

    async def spy(self: Any, *args: Any, **kwargs: Any) -> Any:
        runs.append(kwargs.get("deferred_tool_results") is not None)
        return await run(self, *args, **kwargs)

    monkeypatch.setattr(Agent, "run", spy)
    return runs


def test_inline_flavour_is_described_and_noted() -> None:
    """Same framework name and version; the flavour is in each trace's notes."""
    assert make_inline_adapter().describe() == make_adapter().describe()
    trace = make_inline_adapter().run(scenario([call("c1")]))
    assert trace["notes"] == ["approval flavour: inline callback (HandleDeferredToolCalls)"]
    assert make_adapter().run(scenario([call("c1")]))["notes"] == [
        "approval flavour: interrupt-then-resume"
    ]


def test_inline_approval_answers_within_the_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """PIPE-5's fixture: the resume flavour interrupts and resumes; the inline one answers
    through HandleDeferredToolCalls in its one run, and the allowed-once call runs its body."""
    data = json.loads((RULES / "PIPE-5/approver-sees-what-runs.json").read_text(encoding="utf-8"))
    runs = resumed_runs(monkeypatch)
    traces = {}
    for factory in (make_adapter, make_inline_adapter):
        runs.clear()
        trace, no_trace = run_scenario(factory(), data)
        assert no_trace is None and trace is not None
        traces[factory.__name__] = (trace, list(runs))
    (resume, resume_runs), (inline, inline_runs) = traces.values()
    assert resume_runs == [False, True]  # interrupted, then resumed
    assert inline_runs == [False]  # answered inline: nothing resumes
    assert not any("interrupted" in a for a in inline["actions"])
    assert inline["actions"] == resume["actions"] and inline["events"] == resume["events"]
    assert [e for e in inline["events"] if e.get("at") == "request"]
    assert entered(inline) == [c["call"]["callId"] for c in data["actions"]]
    assert not inline["actions"][0]["result"]["isError"]


def test_inline_approval_answers_map_like_resume(monkeypatch: pytest.MonkeyPatch) -> None:
    """allowed-once runs the body; rejected is a denial (its own message); no service ->
    interrupted in both flavours."""
    ask = [{"id": "ask", "steps": [{"return": {"kind": "ask", "reason": "side effects"}}]}]
    approval = {"steps": [{"return": "allowed-once"}], "byCall": {"c2": [{"return": "rejected"}]}}
    data = scenario([call("c1"), call("c2")], preExecute=ask, approval=approval)
    runs = resumed_runs(monkeypatch)
    result = evaluate(make_inline_adapter(), data, rules=["PRE-4"])
    assert result.trace is not None and not result.violations("PRE-4")
    assert runs == [False, False]
    first, second = (a["result"] for a in result.trace["actions"])
    assert first["value"] == "contents" and entered(result.trace) == ["c1"]
    assert second["error"]["message"] == "The approval service rejected the call."
    bare = make_inline_adapter().run(scenario([call("c3")], preExecute=ask))
    assert "interrupted" in bare["actions"][0]


def listener(ident: str, *steps: dict[str, Any]) -> dict[str, Any]:
    return {"id": ident, "steps": list(steps)}


def skipped(data: dict[str, Any]) -> str:
    trace, no_trace = run_scenario(make_adapter(), data)
    assert trace is None and no_trace is not None
    return no_trace.reason or ""


@pytest.mark.parametrize("stage", ["preExecute", "postExecute"])
def test_a_listener_chain_is_skipped_not_simulated(stage: str) -> None:
    """The framework has no waterfall: two listeners have no counterpart, one maps to one hook."""
    two = [listener("a", {"delegate": True}), listener("b", {"delegate": True})]
    reason = skipped(scenario([call("c1")], **{stage: two}))
    assert "no listener waterfall" in reason and "hooks.py:1178-1183" in reason
    trace = make_adapter().run(scenario([call("c1")], **{stage: two[:1]}))
    assert trace["actions"][0]["result"]["value"] == "contents"  # next() is the chain's end


@pytest.mark.parametrize("malformed", [None, "allow", 7, ["allow"]])
def test_a_non_mapping_decision_reaches_the_framework_PRE_6(malformed: Any) -> None:
    """after_tool_validate returns the args: a non-mapping is its own malformed return, and the
    framework refuses it (the run raises, the body never runs)."""
    pre = [listener("bad", {"return": malformed})]
    result = evaluate(make_adapter(), scenario([call("c1")], preExecute=pre), rules=["PRE-6"])
    assert result.trace is not None and not result.violations("PRE-6")
    assert "raised" in result.trace["actions"][0] and entered(result.trace) == []


@pytest.mark.parametrize("malformed", [{"kind": "maybe"}, {"kind": "deny"}, {"allow": True}])
def test_a_mapping_that_is_no_decision_is_skipped_PRE_6(malformed: dict[str, Any]) -> None:
    """A dict an after_tool_validate hook returns IS the args: no malformed counterpart."""
    pre = [listener("bad", {"return": malformed})]
    assert "has no counterpart" in skipped(scenario([call("c1")], preExecute=pre))


def test_a_guard_answers_in_the_hooks_terms_GUARD_2() -> None:
    """A reason is ToolFailed; a non-mapping (True) is the hook's malformed return, which the
    framework refuses; a mapping would be the args and is skipped."""
    reason = [listener("g", {"return": "no writes"})]
    result = evaluate(make_adapter(), scenario([call("c1")], guards=reason), rules=["GUARD-2"])
    assert result.trace is not None and not result.violations("GUARD-2")
    assert result.trace["actions"][0]["result"]["error"]["message"] == "no writes"
    confused = [listener("g", {"return": True})]
    result = evaluate(make_adapter(), scenario([call("c1")], guards=confused), rules=["GUARD-2"])
    assert result.trace is not None and not result.violations("GUARD-2")
    assert "raised" in result.trace["actions"][0] and entered(result.trace) == []
    mapping = [listener("g", {"return": {"deny": True}})]
    assert "has no counterpart" in skipped(scenario([call("c1")], guards=mapping))


def test_post_execute_decisions_in_the_hooks_terms() -> None:
    """accept{value} replaces the result, block is ToolFailed, anything else is skipped."""
    value = [listener("p", {"return": {"kind": "accept", "value": "redacted"}})]
    trace = make_adapter().run(scenario([call("c1")], postExecute=value))
    assert trace["actions"][0]["result"]["value"] == "redacted"
    block = [listener("p", {"return": {"kind": "block", "feedback": "leak"}})]
    trace = make_adapter().run(scenario([call("c1")], postExecute=block))
    assert trace["actions"][0]["result"]["error"]["message"] == "leak"
    for malformed in ({"kind": "maybe"}, "accept", None):
        post = [listener("p", {"return": malformed})]
        assert "has no counterpart" in skipped(scenario([call("c1")], postExecute=post))


def mutate(path: list[Any], value: Any) -> dict[str, Any]:
    return {"schemas": {}, "mutate": {"path": path, "value": value}}


def test_schemas_are_the_definitions_own_objects_DEF_2() -> None:
    """The entry is the kit's projection (model_entry) of the ToolDefinition a model receives,
    holding its own parameters dict: a write into it is what the next request carries."""
    path = [0, "parameters", "properties", "path", "type"]
    result = evaluate(make_adapter(), scenario([mutate(path, "number")]), rules=["DEF-2"])
    assert result.trace is not None
    answer = result.trace["actions"][0]
    assert answer["schemas"] == [
        {"name": "read_file", "description": "Read a file.", "parameters": READ["parameters"]}
    ]
    assert answer["after"][0]["parameters"]["properties"]["path"] == {"type": "number"}
    assert result.violations("DEF-2")  # the copy clause judges pydantic-ai, not the adapter
    # a top-level write goes into that request's entry only: each request builds new ones
    trace = make_adapter().run(scenario([mutate([0, "name"], "other")]))
    assert trace["actions"][0]["after"] == trace["actions"][0]["schemas"]


def test_the_scenarios_parameters_stay_the_kits() -> None:
    """The Tool gets its own dict (the author's), so the kit's write never edits the scenario."""
    data = scenario([mutate([0, "parameters", "type"], "array")])
    make_adapter().run(data)
    assert data["tools"][0]["parameters"]["type"] == "object"


PUBLISHED = Path(__file__).resolve().parents[2] / "docs" / "implementations" / "pydantic-ai-2.68.0"


def evidence_of(contract: dict[str, Any]) -> list[dict[str, Any]]:
    found = []
    for section in ("promises", "notPromised"):
        for entry in contract[section].values():
            found += entry["evidence"]
    return found


def test_every_contract_quote_is_where_it_says() -> None:
    """contract.json: each quote from the installed package is found, whitespace folded, in
    the lines it names (a tracker quote names its thread instead)."""
    import pydantic_ai

    package = Path(pydantic_ai.__file__).parent
    contract = json.loads((PUBLISHED / "contract.json").read_text(encoding="utf-8"))
    checked = 0
    for evidence in evidence_of(contract):
        if evidence["kind"] == "tracker":
            assert evidence["source"].startswith("https://github.com/pydantic/pydantic-ai/")
            continue
        path, _, lines = evidence["source"].partition(":")
        first, _, last = lines.partition("-")
        text = (package.parent / path).read_text(encoding="utf-8").splitlines()
        span = " ".join(text[int(first) - 1 : int(last or first)])
        assert " ".join(evidence["quote"].split()) in " ".join(span.split()), evidence
        checked += 1
    assert checked >= 20


@pytest.mark.slow  # nine interpreters, about 2 s each
@pytest.mark.parametrize("script", sorted(p.name for p in (PUBLISHED / "repro").glob("*.py")))
def test_each_reproduction_still_reproduces(script: str) -> None:
    """repro/RULE.py uses only pydantic-ai's API and exits 0 while the finding reproduces."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, str(PUBLISHED / "repro" / script)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr
    source = (PUBLISHED / "repro" / script).read_text(encoding="utf-8")
    assert not re.search(r"^\s*(from|import)\s+conformance\b", source, re.M)  # no kit
