"""CODE -- Code Mode: run_code, sub-dispatch, the dispatch log, the reserved name.

Programs are the kit's scripted runtime format: ``run_code`` arguments
``{"code": JSON text of {"steps": [{"call": NAME, "arguments": {...}} | {"log": TEXT} |
{"return": V}]}, "description": ...}``; without ``return`` the program's result is the
list of call outcomes, ``{"ok": value}`` or ``{"error": {...}}``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from hypothesis import strategies as st

from conformance.judging.model import STAGES, CallView, View, scripted_throw
from conformance.judging.rules import focus
from conformance.judging.rules._base import Trace, Verdict, require, rule
from conformance.judging.rules._facts import (
    args_valid,
    content_blocks,
    first_terminal,
    is_content,
    resolution_known,
)
from conformance.judging.rules._paths import disagreements, during
from conformance.judging.rules._programs import program_calls, program_outcomes, program_steps
from conformance.scenario import strategies as s
from conformance.vocab import RUN_CODE, ErrorCode

POLICY_STAGES = ("pre-execute", "approval", "guard", "post-execute")


def program(*steps: Mapping[str, Any], description: str = "a program") -> dict[str, str]:
    """run_code arguments for a scripted program."""
    return {"code": json.dumps({"steps": list(steps)}), "description": description}


@rule("CODE-1", "Model-direct native calls are unknown")
def CODE_1(view: View) -> Iterator[Verdict]:
    """Under mode code a model-direct call to a native tool is UNKNOWN_TOOL, before policy,
    pointing to run_code."""
    if view.mode != "code":
        return
    for call in view.calls:
        name = str(call.spec["name"])
        if not call.returned or name == RUN_CODE or not resolution_known(view, call):
            continue
        if view.catalog_tool(name, call.spec.get("agent")) is None:
            continue  # not a native tool of this scope (SCOPE-1 governs missing names)
        message = call.message()
        stages = sorted(
            {str(e.get("stage")) for e in call.events} & {*POLICY_STAGES, "body", "wrapper"}
        )
        yield require(
            call.code == ErrorCode.UNKNOWN_TOOL and RUN_CODE in str(message) and not stages,
            call.id,
            f"under mode code a model-direct call to {name!r} must be UNKNOWN_TOOL before any "
            "policy stage, with a "
            f"message mentioning run_code; got code={call.code}, stages entered={stages}, "
            f"message={message!r}",
            # the stages it entered; none: its answer (or its last event)
            **view.at(call, (e for e in call.events if e.get("stage") in stages)),
        )


def _first_stage(view: View, agent: str | None) -> str:
    for stage, key in (("pre-execute", "preExecute"), ("guard", "guards"), ("wrapper", "wrappers")):
        if view.listeners(key, agent):
            return stage
    return "body"


@rule("CODE-2", "Sub-dispatch through the full pipeline")
def CODE_2(view: View) -> Iterator[Verdict]:
    """A run_code program's calls traverse the full pipeline with a parent; native/both run direct
    calls."""
    # method 6: a sub-dispatch meets every stage its model-direct twin meets
    yield from disagreements(
        view,
        ("pre-execute", "guard", "post-execute", "body"),
        "a sub-dispatch goes through the full pipeline",
        paths=("run_code sub-dispatch",),
    )
    if not view.lifecycle_static:
        return
    if view.mode in ("native", "both"):
        for call in view.calls:
            if (
                call.returned
                and view.visible_tool(str(call.spec["name"]), call.spec.get("agent")) is not None
                # a call a stage renamed no longer names the visible tool: that is PIPE-3's
                and not call.identity_changes(STAGES)
            ):
                yield require(
                    call.code != ErrorCode.UNKNOWN_TOOL,
                    call.id,
                    f"under mode {view.mode} a model-direct call to a visible native tool must "
                    "execute, not UNKNOWN_TOOL",
                    # about the answer: the call's last event, or its answer when it has none
                    **view.at(call),
                )
    if view.mode == "native":
        return
    expected: dict[tuple[str, str], int] = {}
    # Sub-calls naming a tool the scope cannot see, or with invalid arguments, may also
    # traverse the first stage: resolution and validation may happen at dispatch (SCOPE-1
    # note, PIPE-4). They are allowed, never required.
    optional: dict[tuple[str, str], int] = {}
    outer: list[CallView] = []
    for call in view.calls:
        if call.spec["name"] != RUN_CODE or call.is_error or not call.returned:
            continue
        steps = program_steps(call.spec)
        if steps is None:
            continue
        agent = call.spec.get("agent")
        for step in program_calls(steps):
            name = str(step["call"])
            tool = view.catalog_tool(name, agent)
            key = (name, _first_stage(view, agent))
            if tool is None or args_valid(tool, step.get("arguments", {})) is not True:
                optional[key] = optional.get(key, 0) + 1
                continue
            expected[key] = expected.get(key, 0) + 1
            outer.append(call)
    if not expected:
        return
    problems: list[str] = []
    shown: list[Mapping[str, Any]] = []  # the sub-dispatches of a miscounted tool
    # the sub-dispatches of the run_code calls (not a composite tool's nested calls)
    runs = {call.id: call for call in outer}
    events = [e for call in runs.values() for e in during(view, call)]
    for (name, stage), count in sorted(expected.items()):
        seen = [
            e
            for e in events
            if e.get("stage") == stage
            and e.get("at") == "enter"
            and e.get("tool") == name
            and e.get("hasParent") is True
        ]
        if not count <= len(seen) <= count + optional.get((name, stage), 0):
            problems.append(
                f"{count} sub-dispatch(es) of {name!r} should each enter {stage} with a parent; "
                f"saw {len(seen)}"
            )
            shown += seen
    yield require(
        not problems,
        ",".join(sorted({c.id for c in outer})),
        "a run_code program's calls must go through the full pipeline: " + "; ".join(problems),
        # the sub-dispatches it miscounted; none entered: the first run_code call's own events
        call=outer[0].id,
        events=[view.position(e) for e in shown or outer[0].events],
    )


def _log_entries(trace: Trace) -> list[Mapping[str, Any]]:
    return [
        e
        for e in trace.get("log", [])
        if isinstance(e, Mapping) and e.get("type") == "tool/code-dispatch"
    ]


@rule("CODE-3", "Dispatch-log shaping")
def CODE_3(view: View) -> Iterator[Verdict]:
    """tools/code-dispatch-log changes only the durable log copy; a throwing listener falls back."""
    if view.mode == "native" or not view.scenario.get("codeDispatchLog"):
        return
    runs = [c for c in view.calls if c.spec["name"] == RUN_CODE]
    if len(runs) != 1:
        return
    run = runs[0]
    raised = run.raised_instead()
    log_threw = any(  # its own throw (method 11): a next() that raised is no listener's
        e.get("stage") == "code-dispatch-log" and scripted_throw(e)
        for e in view.trace.get("events", [])
    )
    if raised is not None and log_threw and not run.finalizer_threw():
        yield require(
            False,
            run.id,
            "a throwing dispatch-log listener must fall back to the original content, the "
            f"dispatch not failing; run_code raised instead: {raised}",
            call=run.id,
            events=[
                i
                for i, e in enumerate(view.trace.get("events", []))
                if e.get("stage") == "code-dispatch-log" and scripted_throw(e)
            ],
        )
        return
    if not run.returned or run.is_error:
        return
    steps = program_steps(run.spec)
    if steps is None or any(
        "return" in step or "fail" in step or step.get("call") == RUN_CODE for step in steps
    ):
        return
    listeners = view.listeners("codeDispatchLog", run.spec.get("agent"))
    if not listeners:
        return
    # SPEC CODE-3: the log entry is written whatever the listeners do (the durable log holds
    # one entry per sub-dispatch), judged where the trace carries the log
    calls = len(program_calls(steps))
    if "log" in view.trace:
        entries = len(_log_entries(view.trace))
        yield require(
            entries == calls,
            run.id,
            f"the program made {calls} sub-dispatch(es), the durable log has {entries} "
            "entries: each sub-dispatch's entry is written, shaped or not",
            call=run.id,
            events=[view.position(e) for e in run.events],
        )
    only = first_terminal(listeners[0]["steps"]) if len(listeners) == 1 else None
    replaced = only[1] if only is not None and only[0] == "return" else None
    outcomes = program_outcomes((run.result or {}).get("value"), calls)
    markers = {
        block.get("text")
        for entry in listeners
        for step in entry["steps"]
        if "return" in step and is_content(step["return"])
        for block in step["return"]
        if isinstance(block.get("text"), str)
    }
    visible = json.dumps(run.result, ensure_ascii=False)
    background = json.dumps([view.tool_specs, run.spec], ensure_ascii=False)
    events = view.trace.get("events", [])
    for i, entry in enumerate(_log_entries(view.trace)):
        sub = entry.get("id")
        mine = [e for e in events if e.get("call") == sub]
        log_events = [e for e in mine if e.get("stage") == "code-dispatch-log"]
        observed = [
            e.get("observed") for e in mine if e.get("stage") == "result" and e.get("at") == "enter"
        ]
        original = observed[0] if observed and isinstance(observed[0], Mapping) else None
        problems: list[str] = []
        first = log_events[0].get("id") if log_events else None
        threw = any(e.get("id") == first and scripted_throw(e) for e in log_events)
        exits = [e for e in log_events if e.get("id") == first and e.get("at") == "exit"]
        if threw and original is not None and entry.get("content") != original.get("content"):
            problems.append(
                "the listener threw, so the log copy must fall back to the original content"
            )
        if (
            not threw
            and exits
            and is_content(exits[-1].get("returned"))
            and entry.get("content") != exits[-1]["returned"]
        ):
            problems.append(
                "the log copy must carry the content the dispatch-log waterfall returned"
            )
        elif is_content(replaced) and entry.get("content") != replaced:
            problems.append(
                f"the only dispatch-log listener returns {replaced!r} at once: the log copy must "
                f"carry it, not {entry.get('content')!r}"
            )
        if isinstance(outcomes, list) and i < len(outcomes) and original is not None:
            wanted = {"ok": original.get("value")} if original.get("isError") is False else None
            if wanted is not None and outcomes[i] != wanted:
                problems.append(
                    f"the program must see the sub-call's own value {wanted!r}, got {outcomes[i]!r}"
                )
        broken = [  # method 11: a next() that raised (a listener re-entered) is no listener's
            str(e.get("id"))
            for e in log_events
            if e.get("at") == "throw"
            and e.get("unscripted")
            and not any(scripted_throw(x) for x in log_events)
        ]
        if broken:
            problems.append(
                f"the dispatch-log listener(s) {sorted(set(broken))} had a next() that raised "
                "although no listener failed: the waterfall must run each listener once, in turn"
            )
        leaked = [m for m in markers if m and m in visible and m not in background]
        if leaked:
            problems.append(
                f"log-only content {leaked} leaked into the model-visible run_code result"
            )
        yield require(
            not problems,
            f"{run.id}/{sub}",
            "; ".join(problems),
            # the sub-call's own lane: its dispatch-log events (else all of its events)
            call=str(sub),
            events=[view.position(e) for e in log_events or mine],
        )


@rule("CODE-4", "Reserved run_code")
def CODE_4(view: View) -> Iterator[Verdict]:
    """Registering run_code fails in every layer, whatever the mode."""
    reserved = {t.get("key", t["name"]) for t in view.tool_specs if t["name"] == RUN_CODE}
    if not reserved:
        return
    for position, registration in enumerate(view.trace.get("registrations", [])):
        if registration.get("key") in reserved:
            yield require(
                registration.get("ok") is False,
                f"register({registration.get('key')})",
                "run_code is reserved: registering it must fail in every layer",
                registration=position,
            )
    for index, action, answer in view.answers("register"):
        if action["register"] in reserved and "ok" in answer:
            yield require(
                answer["ok"] is False,
                f"register@{index}({action['register']})",
                "run_code is reserved: registering it must fail in every layer",
                action=index,
            )


# --------------------------------------------------------------- focus


@st.composite
def _direct_scenarios(draw: st.DrawFn) -> s.Scenario:
    tool = s.tool("read_file", [{"return": "text"}], finalizeContent=[{"return": None}])
    extra: dict[str, Any] = {
        "registry": {"mode": "code"},
        "preExecute": [s.listener("policy", [{"delegate": True}])],
        "guards": [s.listener("guard", [{"return": None}])],
        "postExecute": [s.listener("post", [{"delegate": True}])],
        "observers": [s.listener("observer", [])],
    }
    if draw(st.booleans()):
        extra["approval"] = {"steps": [{"return": "allowed-once"}]}
        extra["preExecute"] = [
            s.listener("policy", [{"return": {"kind": "ask", "reason": "check"}}])
        ]
    calls = [{"call": s.call("c0", "read_file", draw(s.arguments()), agent=draw(s.AGENTS))}]
    if draw(st.booleans()):
        calls.append(
            {
                "call": s.call(
                    "c1", RUN_CODE, program({"call": "read_file", "arguments": {}}), agent="main"
                )
            }
        )
    return s.scenario("generated/CODE-1", [tool], calls, **extra)


@st.composite
def _program_scenarios(draw: st.DrawFn) -> s.Scenario:
    tools = [s.tool("read_file", [{"return": "text"}]), s.tool("grep", [{"return": ["a", "b"]}])]
    if draw(st.booleans()):
        tools[1]["parameters"] = {"type": "object", "required": ["pattern"]}
    names = draw(
        st.lists(st.sampled_from(["read_file", "grep", "missing"]), min_size=1, max_size=3)
    )
    steps: list[dict[str, Any]] = [
        {"call": n, "arguments": draw(st.sampled_from([{}, {"pattern": "x"}]))} for n in names
    ]
    if draw(st.booleans()):
        steps.insert(0, {"log": "start"})
    extra: dict[str, Any] = {
        "registry": {"mode": draw(st.sampled_from(["code", "both"]))},
        "observers": [s.listener("observer", [])],
    }
    if draw(st.booleans()):
        extra["preExecute"] = [s.listener("policy", [{"delegate": True}])]
    if draw(st.booleans()):
        extra["guards"] = [s.listener("guard", [{"return": None}])]
    agent = draw(s.AGENTS)
    calls = [
        {"call": s.call("c0", RUN_CODE, program(*steps), **({"agent": agent} if agent else {}))}
    ]
    if draw(st.booleans()):
        calls.append({"call": s.call("c1", "read_file", {}, agent="main")})
    return s.scenario("generated/CODE-2", tools, calls, **extra)


LOG_LISTENERS: st.SearchStrategy[list[dict[str, Any]]] = st.sampled_from(
    [
        [{"return": content_blocks("log-preview")}],
        [{"callNext": True}, {"return": content_blocks("log-preview")}],
        [{"throw": "log listener broke"}],
        [{"delegate": True}],
        [{"return": "not content"}],
    ]
)


@st.composite
def _log_scenarios(draw: st.DrawFn) -> s.Scenario:
    tools = [
        s.tool("read_file", [{"return": {"text": "file body"}}]),
        s.tool("bash", [{"throw": "exit 1"}]),
    ]
    names = draw(st.lists(st.sampled_from(["read_file", "bash"]), min_size=1, max_size=3))
    steps = [{"call": n, "arguments": {}} for n in names]
    listeners = draw(st.lists(LOG_LISTENERS, min_size=1, max_size=2))
    return s.scenario(
        "generated/CODE-3",
        tools,
        [{"call": s.call("c0", RUN_CODE, program(*steps), agent="main")}],
        registry={"mode": draw(st.sampled_from(["code", "both"]))},
        codeDispatchLog=[s.listener(f"log-{i}", steps) for i, steps in enumerate(listeners)],
        observers=[s.listener("observer", [])],
    )


@st.composite
def _reserved_scenarios(draw: st.DrawFn) -> s.Scenario:
    reserved = s.tool(
        RUN_CODE,
        [{"return": "hijacked"}],
        key="impostor",
        scope=draw(st.sampled_from([None, "main"])),
    )
    if reserved["scope"] is None:
        del reserved["scope"]
    actions: list[dict[str, Any]] = []
    if draw(st.booleans()):
        reserved["registered"] = False
        actions.append({"register": "impostor"})
    actions.append({"call": s.call("c0", RUN_CODE, program({"log": "hi"}), agent="main")})
    mode = draw(st.sampled_from(["native", "code", "both"]))
    return s.scenario(
        "generated/CODE-4", [reserved, s.tool("grep")], actions, registry={"mode": mode}
    )


focus("CODE-1", _direct_scenarios(), "code-mode")
# method 6: the same call on every path (direct, batch member, composite, run_code)
focus("CODE-2", st.one_of(_program_scenarios(), s.path_scenarios()), "code-mode")
focus("CODE-3", _log_scenarios(), "code-mode")
focus("CODE-4", _reserved_scenarios())
