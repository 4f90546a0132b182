"""FIN -- ⑤ finalizeContent, the tool's last mile.

Also home of a few helpers the FIN, RES, CTX, CONC, CANCEL and CODE predicates
share: which tool spec a call resolved to when it started (when the scenario
makes that determinable), whether its arguments are valid, which steps of a
script were certainly reached, and an outcome-rich scenario strategy.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from hypothesis import strategies as st
from jsonschema.validators import Draft202012Validator

from .. import strategies as s
from ..model import CallView, View
from . import focus
from ._base import Scenario, Trace, Verdict, expect, rule

JSON = Any
MISSING: Any = object()

# Steps that never end a script and never raise (in any stage that allows them).
SAFE_STEPS = frozenset({"observe", "mutate", "yield", "register", "dispose"})
# The same, for synchronous scripts (guards, classifiers, finalizers), where abort is harmless.
SYNC_SAFE_STEPS = frozenset({"observe", "mutate", "register", "dispose", "abort"})


# ------------------------------------------------------------------ helpers


def resolution_known(view: View, call: CallView) -> bool:
    """True when the set-up registrations alone decide what ``call`` resolved to at its start.

    Either nothing is ever registered or disposed after set-up, or the call is the
    first action that can run a script (only ``schemas`` queries before it) and
    every registration key occurs once in the trace (so set-up outcomes are plain).
    """
    if view.lifecycle_static:
        return True
    if call.batch:
        return False
    for action in view.scenario.get("actions", [])[: call.action_index]:
        if "schemas" not in action:
            return False
    keys = [r.get("key") for r in view.trace.get("registrations", [])]
    return len(keys) == len(set(keys))


def resolved_spec(view: View, call: CallView) -> Mapping[str, Any] | None:
    """The tool spec a model-direct call resolved to when it started, or None (unknown / not
    determinable)."""
    if not resolution_known(view, call):
        return None
    return view.visible_tool(str(call.spec["name"]), call.spec.get("agent"))


def has_special(value: JSON) -> bool:
    """Does a scenario value hold a ``$special`` (non-lossless) marker?"""
    if isinstance(value, Mapping):
        return "$special" in value or any(has_special(v) for v in value.values())
    if isinstance(value, list):
        return any(has_special(v) for v in value)
    return False


def arguments_of(call_spec: Mapping[str, Any]) -> JSON:
    return call_spec.get("arguments", {})


def args_valid(tool: Mapping[str, Any], arguments: JSON) -> bool | None:
    """Lossless and valid per ``parameters``: True / False, None when the schema is unusable."""
    if has_special(arguments):
        return False
    try:
        return bool(
            Draft202012Validator(tool.get("parameters", {"type": "object"})).is_valid(arguments)
        )
    except Exception:
        return None


def step_kinds(steps: Sequence[Mapping[str, Any]]) -> list[str]:
    return [next(iter(step)) for step in steps]


def reached(
    steps: Sequence[Mapping[str, Any]], index: int, safe: frozenset[str] = SAFE_STEPS
) -> bool:
    """Is step ``index`` certainly reached once the script starts (only safe steps before it)?"""
    return all(kind in safe for kind in step_kinds(steps[:index]))


def first_terminal(steps: Sequence[Mapping[str, Any]]) -> tuple[str, JSON] | None:
    """The first ``return`` / ``throw`` step of a synchronous script, if only safe steps precede
    it."""
    for step in steps:
        ((kind, arg),) = step.items()
        if kind in ("return", "throw"):
            return kind, arg
        if kind not in SYNC_SAFE_STEPS:
            return None
    return ("return", None)


def is_content(value: JSON) -> bool:
    """A well-formed, lossless content list: blocks with a string ``type`` (text: ``text``)."""
    return (
        isinstance(value, list)
        and not has_special(value)
        and all(
            isinstance(b, Mapping)
            and isinstance(b.get("type"), str)
            and (b["type"] != "text" or isinstance(b.get("text"), str))
            for b in value
        )
    )


def observers_for(view: View, call: CallView) -> list[Mapping[str, Any]]:
    return view.listeners("observers", call.spec.get("agent"))


def event_index(view: View, event: Mapping[str, Any]) -> int:
    events = view.trace.get("events", [])
    return next(i for i, e in enumerate(events) if e is event)


def without(result: Mapping[str, Any] | None, *keys: str) -> dict[str, Any]:
    return {k: v for k, v in (result or {}).items() if k not in keys}


def finalize_exits(call: CallView) -> list[Mapping[str, Any]]:
    return call.exits("finalize")


def finalize_threw(call: CallView) -> bool:
    return any(e.get("stage") == "finalize" and e.get("at") == "throw" for e in call.events)


# ------------------------------------------------------------- strategies

TEXT = st.sampled_from(["a", "capped", "x y"])


def content_blocks(text: str) -> list[dict[str, str]]:
    return [{"type": "text", "text": text}]


FINALIZERS: st.SearchStrategy[list[dict[str, Any]]] = st.one_of(
    st.just([{"observe": "result"}, {"return": None}]),
    st.just([{"return": None}]),
    TEXT.map(lambda t: [{"observe": "result"}, {"return": content_blocks(t)}]),
    st.just([{"observe": "execution"}, {"return": content_blocks("final")}]),
)

# One variation per normalized outcome the pipeline can produce (FIN-2's list).
OUTCOMES = (
    "success",
    "body-error",
    "deny",
    "ask-no-service",
    "ask-rejected",
    "ask-unavailable",
    "ask-throws",
    "guard",
    "guard-throws",
    "invalid-args",
    "non-lossless-args",
    "wrapper-throws",
    "post-throws",
    "output-invalid",
    "abort-before",
    "abort-in-pre",
    "abort-in-body",
    "malformed-decision",
    "post-block",
    "post-value",
    "defer-and-throw",
    "conclude",
)


def outcome_scenario(
    outcome: str, finalizer: list[dict[str, Any]] | None, *, observers: int = 1, name: str = "t"
) -> s.Scenario:
    """One call to one tool, steered into ``outcome``."""
    tool = s.tool(name, [{"observe": "signal"}, {"return": "ok"}])
    if finalizer is not None:
        tool["finalizeContent"] = finalizer
    call = s.call("c0", name, {"path": "a"}, agent="main")
    extra: dict[str, Any] = {}
    if outcome == "body-error":
        tool["execute"] = [{"throw": "body failed"}]
    elif outcome == "deny":
        extra["preExecute"] = [s.listener("policy", [{"return": {"kind": "deny", "reason": "no"}}])]
    elif outcome.startswith("ask"):
        extra["preExecute"] = [
            s.listener("policy", [{"return": {"kind": "ask", "reason": "check"}}])
        ]
        answer = {
            "ask-rejected": [{"return": "rejected"}],
            "ask-unavailable": [{"return": "unavailable"}],
            "ask-throws": [{"throw": "service down"}],
        }.get(outcome)
        if answer is not None:
            extra["approval"] = {"steps": answer}
    elif outcome == "guard":
        extra["guards"] = [s.listener("guard", [{"return": "guarded"}])]
    elif outcome == "guard-throws":
        extra["guards"] = [s.listener("guard", [{"throw": "guard broke"}])]
    elif outcome == "invalid-args":
        tool["parameters"] = {"type": "object", "required": ["command"]}
    elif outcome == "non-lossless-args":
        call["arguments"] = {"n": {"$special": "nan"}}
    elif outcome == "wrapper-throws":
        extra["wrappers"] = [s.listener("wrap", [{"callNext": True}, {"throw": "wrapper failed"}])]
    elif outcome == "post-throws":
        extra["postExecute"] = [s.listener("post", [{"throw": "post failed"}])]
    elif outcome == "post-block":
        extra["postExecute"] = [
            s.listener("post", [{"return": {"kind": "block", "feedback": content_blocks("no")}}])
        ]
    elif outcome == "post-value":
        extra["postExecute"] = [
            s.listener("post", [{"return": {"kind": "accept", "value": "new"}}])
        ]
    elif outcome == "output-invalid":
        tool["output"] = {"schema": {"type": "string"}, "render": "text"}
        tool["execute"] = [{"return": 1}]
    elif outcome == "abort-before":
        call["abortBefore"] = True
    elif outcome == "abort-in-pre":
        extra["preExecute"] = [s.listener("policy", [{"abort": True}, {"delegate": True}])]
    elif outcome == "abort-in-body":
        tool["execute"] = [{"abort": True}, {"observe": "signal"}, {"return": "ok"}]
    elif outcome == "malformed-decision":
        extra["preExecute"] = [s.listener("policy", [{"return": "allow"}])]
    elif outcome == "defer-and-throw":
        tool["execute"] = [
            {"deferContext": {"role": "user", "content": "d1"}},
            {"throw": "late failure"},
        ]
    elif outcome == "conclude":
        tool["execute"] = [
            {"deferContext": {"role": "user", "content": "d1"}},
            {"concludeTurn": True},
            {"return": "ok"},
        ]
    extra["observers"] = [s.listener(f"observer-{i}", []) for i in range(observers)]
    return s.scenario(f"generated/{outcome}", [tool], [{"call": call}], **extra)


@st.composite
def outcome_scenarios(
    draw: st.DrawFn, finalizers: st.SearchStrategy[Any] = FINALIZERS
) -> s.Scenario:
    return outcome_scenario(
        draw(st.sampled_from(OUTCOMES)), draw(finalizers), observers=draw(st.integers(1, 2))
    )


def script_value(steps: Sequence[Mapping[str, Any]]) -> tuple[str, JSON] | None:
    """Alias of :func:`first_terminal` for readability in finalizer checks."""
    return first_terminal(steps)


# -------------------------------------------------------------------- rules


def _start_candidates(view: View, spec: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [t for t in view.tool_specs if t["name"] == spec["name"] and "finalizeContent" in t]


@rule("FIN-1", "Finalizer snapshot")
def FIN_1(scenario: Scenario, trace: Trace) -> Iterator[Verdict]:
    """Registering, disposing or replacing the tool mid-call keeps the finalizer resolved at the
    start."""
    view = View(scenario, trace)
    if view.lifecycle_static:
        return
    for call in view.calls:
        if not call.returned:
            continue
        spec = resolved_spec(view, call)
        if spec is None or "finalizeContent" not in spec:
            continue
        mine = script_value(spec["finalizeContent"])
        if mine is None or mine[0] != "return":
            continue
        others = [
            script_value(t["finalizeContent"])
            for t in _start_candidates(view, spec)
            if t is not spec
        ]
        if not any(o != mine for o in others):
            continue  # no same-name replacement whose finalizer would be told apart
        returned = [e.get("returned", MISSING) for e in finalize_exits(call)]
        yield expect(
            bool(returned) and all(r == mine[1] for r in returned),
            call.id,
            "the finalizer of the definition resolved when the call started must run (returning "
            f"{mine[1]!r}); "
            f"the finalizers that ran returned {returned!r}",
        )


@rule("FIN-2", "Exactly once per outcome")
def FIN_2(scenario: Scenario, trace: Trace) -> Iterator[Verdict]:
    """A resolved definition's finalizeContent runs exactly once, for every outcome, before
    tools/result."""
    view = View(scenario, trace)
    for call in view.calls:
        if not call.returned:
            continue
        spec = resolved_spec(view, call)
        if spec is None or "finalizeContent" not in spec:
            continue
        entered = call.entered("finalize")
        results = call.entered("result")
        before = (
            not entered
            or not results
            or event_index(view, entered[0]) < event_index(view, results[0])
        )
        yield expect(
            len(entered) == 1 and before,
            call.id,
            f"finalizeContent must run exactly once, before tools/result, for every outcome "
            f"(ran {len(entered)} times{'' if before else ', after tools/result'}; "
            f"outcome isError={call.is_error}, code={call.code})",
        )


@rule("FIN-3", "Content-only authority")
def FIN_3(scenario: Scenario, trace: Trace) -> Iterator[Verdict]:
    """The finalizer sees the complete result; returning nothing keeps content; content replaces
    only content."""
    view = View(scenario, trace)
    for call in view.calls:
        if not call.returned or call.result is None:
            continue
        spec = resolved_spec(view, call)
        if spec is None or "finalizeContent" not in spec:
            continue
        exits = finalize_exits(call)
        if len(exits) != 1 or finalize_threw(call):
            continue
        returned = exits[0].get("returned")
        seen = [
            e.get("observed")
            for e in call.events
            if e.get("stage") == "finalize" and e.get("what") == "result"
        ]
        final = call.result
        problems: list[str] = []
        if is_content(returned) and final.get("content") != returned:
            problems.append(
                f"the finalizer returned content {returned!r} but the result's content is "
                f"{final.get('content')!r}"
            )
        if seen:
            observed = seen[0] if isinstance(seen[0], Mapping) else {}
            if without(observed, "content") != without(final, "content"):
                problems.append(
                    "only content may differ from the result the finalizer received: received "
                    f"{without(observed, 'content')!r}, final {without(final, 'content')!r}"
                )
            if returned is None and observed.get("content") != final.get("content"):
                problems.append(
                    "the finalizer returned nothing, so the content it received must stay"
                )
        if not seen and not is_content(returned):
            continue  # nothing this rule can judge: no observation, no replacement content
        yield expect(not problems, call.id, "; ".join(problems))


@rule("FIN-4", "Total finalizer")
def FIN_4(scenario: Scenario, trace: Trace) -> Iterator[Verdict]:
    """A throwing finalizer still yields exactly one published and returned result."""
    view = View(scenario, trace)
    for call in view.calls:
        if not call.returned or not finalize_threw(call):
            continue
        if resolved_spec(view, call) is None:
            continue
        observers = len(observers_for(view, call))
        seen = call.notifications
        yield expect(
            seen == observers,
            call.id,
            f"after a throwing finalizer the registry must still publish exactly one result "
            f"({observers} observer(s) should each be notified once; saw {seen} notification(s))",
        )


# --------------------------------------------------------------- focus


@st.composite
def _replacement_scenarios(draw: st.DrawFn) -> s.Scenario:
    where = draw(st.sampled_from(["body", "pre-execute", "guard", "wrapper"]))
    mutation = draw(
        st.sampled_from(
            [
                [{"dispose": "original"}, {"register": "replacement"}],
                [{"dispose": "original"}],
                [{"register": "replacement"}],
            ]
        )
    )
    original = s.tool(
        "t",
        [{"return": "ok"}],
        key="original",
        finalizeContent=[{"return": content_blocks("original")}],
    )
    replacement = s.tool(
        "t",
        [{"return": "new"}],
        key="replacement",
        registered=False,
        finalizeContent=[{"return": content_blocks("replacement")}],
    )
    extra: dict[str, Any] = {"observers": [s.listener("observer", [])]}
    if where == "body":
        original["execute"] = [*mutation, {"return": "ok"}]
    elif where == "pre-execute":
        extra["preExecute"] = [s.listener("reload", [*mutation, {"delegate": True}])]
    elif where == "guard":
        extra["guards"] = [s.listener("reload", [*mutation, {"return": None}])]
    else:
        extra["wrappers"] = [s.listener("reload", [*mutation, {"delegate": True}])]
    if draw(st.booleans()):
        extra["postExecute"] = [s.listener("post", [{"return": {"kind": "accept"}}])]
    call = s.call("c0", "t", draw(s.arguments()), agent=draw(s.AGENTS))
    actions: list[dict[str, Any]] = [{"call": call}]
    if draw(st.booleans()):
        actions.append({"call": s.call("c1", "t", {})})
    return s.scenario("generated/FIN-1", [original, replacement], actions, **extra)


focus("FIN-1", _replacement_scenarios(), "registry-mutation")
focus("FIN-2", outcome_scenarios())
focus(
    "FIN-3",
    outcome_scenarios(
        st.one_of(
            st.just([{"observe": "result"}, {"return": None}]),
            TEXT.map(lambda t: [{"observe": "result"}, {"return": content_blocks(t)}]),
        )
    ),
)
focus(
    "FIN-4",
    outcome_scenarios(
        st.sampled_from(
            [
                [{"throw": "finalizer broke"}],
                [{"observe": "result"}, {"throw": "finalizer broke"}],
            ]
        )
    ),
)
