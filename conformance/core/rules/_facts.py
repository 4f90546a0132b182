"""Scenario facts the rule groups share: one definition of each question predicates ask.

What a script does (which steps run, how it settles, whether it may abort a
signal), which tool spec a call resolved to, what a waterfall decided, whether
arguments or values are lossless and valid, and how JSON compares. Everything
is derived from the scenario and the events the kit recorded, never from an
implementation. The leading underscore keeps the rule auto-loader away.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from hypothesis import strategies as st
from jsonschema.validators import Draft202012Validator

from conformance.core import strategies as s
from conformance.core.interpreter import STEPS
from conformance.core.model import CallView, View, resolve
from conformance.core.scenario import mutates_registry, scripts_of

__all__ = [
    "ABORTED_BEFORE_DISPATCH",
    "FINALIZERS",
    "MISSING",
    "OUTCOMES",
    "SAFE_STEPS",
    "STAGE_KEYS",
    "SYNC_SAFE_STEPS",
    "TEXT",
    "UNKNOWN_TOOL",
    "all_passive",
    "args_valid",
    "arguments_of",
    "content_blocks",
    "content_may_be_replaced",
    "content_replaced",
    "dispatchable",
    "effective_decision",
    "effective_exit",
    "event_index",
    "executed",
    "finalizer_may_replace",
    "finalizer_threw",
    "first_terminal",
    "has_special",
    "index_of",
    "is_content",
    "masked",
    "may_abort",
    "message",
    "mutates_registry",
    "observers_for",
    "outcome_scenario",
    "passive",
    "post_touched",
    "project",
    "resolution_known",
    "resolve",
    "resolved_spec",
    "same_json",
    "script_of",
    "scripted_decision",
    "step_kinds",
    "terminal",
    "valid_against",
]

JSON = Any
MISSING: Any = object()

ABORTED_BEFORE_DISPATCH = "ABORTED_BEFORE_DISPATCH"
UNKNOWN_TOOL = "UNKNOWN_TOOL"

# Steps that never end a script and never raise (in any stage that allows them),
# and the same for synchronous scripts (guards, classifiers, finalizers), where
# abort is harmless: both read from the step table (fixtures/schema/steps.json).
SAFE_STEPS = frozenset(name for name, step in STEPS.items() if step.safe)
SYNC_SAFE_STEPS = frozenset(name for name, step in STEPS.items() if step.safe_in_sync)

# Event stage -> the scenario key of the listeners that record it.
STAGE_KEYS = {
    "pre-execute": "preExecute",
    "guard": "guards",
    "wrapper": "wrappers",
    "post-execute": "postExecute",
    "result": "observers",
}

_ENDS = tuple(name for name, step in STEPS.items() if step.ends)


# ------------------------------------------------------------------ JSON values


def has_special(value: JSON) -> bool:
    """True when ``value`` holds a ``{"$special": ...}`` marker (a non-lossless value) anywhere."""
    if isinstance(value, Mapping):
        return "$special" in value or any(has_special(v) for v in value.values())
    if isinstance(value, list):
        return any(has_special(v) for v in value)
    return False


def same_json(a: JSON, b: JSON) -> bool:
    """JSON equality: numbers compare by value, but a boolean is never a number."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return set(a) == set(b) and all(same_json(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and bool(a == b)


def _validates(schema: JSON, value: JSON) -> bool | None:
    """Does ``value`` validate against ``schema`` (draft 2020-12)? None: the schema is unusable."""
    try:
        return bool(Draft202012Validator(schema).is_valid(value))
    except Exception:
        return None


def valid_against(schema: JSON, value: JSON) -> bool:
    """Does ``value`` validate against the JSON Schema ``schema``? An unusable schema: False."""
    return _validates(schema, value) is True


def args_valid(tool: Mapping[str, Any], arguments: JSON) -> bool | None:
    """Lossless and valid per ``parameters``: True / False, None when the schema is unusable."""
    if has_special(arguments):
        return False
    return _validates(tool.get("parameters", {"type": "object"}), arguments)


def arguments_of(call: CallView | Mapping[str, Any]) -> JSON:
    """The arguments the caller handed over (of a call view or a call spec), as scenario JSON."""
    spec = call.spec if isinstance(call, CallView) else call
    return spec.get("arguments", {})


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


def masked(value: JSON, words: Iterable[str]) -> JSON:
    """``value`` with each non-empty word replaced by a placeholder in every string."""
    order = sorted({w for w in words if w}, key=lambda w: (-len(w), w))
    if isinstance(value, str):
        for i, word in enumerate(order):
            value = value.replace(word, f"<{i}>")
        return value
    if isinstance(value, Mapping):
        return {k: masked(v, order) for k, v in value.items()}
    if isinstance(value, list):
        return [masked(v, order) for v in value]
    return value


def _parsed(text: JSON) -> JSON:
    if not isinstance(text, str):
        return MISSING
    try:
        return json.loads(text)
    except ValueError:
        return MISSING


def project(kind: Any, args: Any, value: Any, *, content: bool, got: Any) -> bool | None:
    """Does ``got`` equal the projection ``kind`` of (args, value)? None: not computable.

    The vocabulary is scenario.schema.json's ``projection``. JSON text
    (``json``, ``args``, ``value``, ``call``, ``text`` of a non-string) is
    compared parsed, so the check does not depend on a language's number
    formatting; ``const`` and ``text`` of a string are compared exactly.
    """
    if isinstance(kind, Mapping):
        const = kind.get("const")
        if has_special(const):
            return None
        return same_json(got, const)
    if kind == "text" and isinstance(value, str):
        payload: Any = value
        exact = True
    elif kind == "args":
        payload, exact = {"args": args}, False
    elif kind == "value":
        payload, exact = {"value": value}, False
    elif kind == "call":
        payload, exact = {"args": args, "value": value}, False
    elif kind in ("json", "text"):
        payload, exact = value, False
    else:
        return None
    if content:
        if not (isinstance(got, list) and len(got) == 1 and isinstance(got[0], Mapping)):
            return False
        block = got[0]
        if set(block) != {"type", "text"} or block.get("type") != "text":
            return False
        text = block.get("text")
        if exact:
            return bool(text == payload)
        parsed = _parsed(text)
        return parsed is not MISSING and same_json(parsed, payload)
    if exact or kind in ("json", "text"):
        if exact:
            return bool(got == payload)
        parsed = _parsed(got)
        return parsed is not MISSING and same_json(parsed, payload)
    return same_json(got, payload)


# ---------------------------------------------------------------- script facts


def step_kinds(steps: Sequence[Mapping[str, Any]]) -> list[str]:
    """The kind (single key) of each step."""
    return [next(iter(step)) for step in steps]


def executed(
    steps: Sequence[Mapping[str, Any]], *, special_defer_raises: bool = True
) -> list[Mapping[str, Any]]:
    """The steps a script runs before its ending step (return, throw, delegate, returnNext).

    With ``special_defer_raises`` (the default) a ``deferContext`` of a non-JSON
    value also ends the prefix: it may raise at the source (OUT-5). CTX-1/2 pass
    False and instead skip any script that defers a non-JSON value.
    """
    out: list[Mapping[str, Any]] = []
    for step in steps:
        ((kind, arg),) = step.items()
        if kind in _ENDS:
            break
        if special_defer_raises and kind == "deferContext" and has_special(arg):
            break
        out.append(step)
    return out


def terminal(steps: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The step that ends a script, or None when it runs off its end."""
    done = len(executed(steps))
    return steps[done] if done < len(steps) else None


def first_terminal(steps: Sequence[Mapping[str, Any]]) -> tuple[str, JSON] | None:
    """How a synchronous script settles, ("return" | "throw", arg), if only safe steps precede it.

    Stricter than :func:`terminal`: None unless every earlier step is in
    SYNC_SAFE_STEPS; running off the end returns None (``("return", None)``).
    """
    done = executed(steps)
    if any(kind not in SYNC_SAFE_STEPS for kind in step_kinds(done)):
        return None
    last = terminal(steps)
    if last is None:
        return ("return", None)
    ((kind, arg),) = last.items()
    return (kind, arg) if kind in ("return", "throw") else None


def passive(steps: Sequence[Mapping[str, Any]]) -> bool:
    """A delegating listener: only observations and yields, then ``delegate``."""
    if not steps or steps[-1] != {"delegate": True}:
        return False
    return all(set(step) <= {"observe", "yield"} for step in steps[:-1])


def all_passive(view: View, key: str, agent: Any) -> bool:
    """Every listener under ``key`` that applies to ``agent`` is passive."""
    return all(passive(entry["steps"]) for entry in view.listeners(key, agent))


def may_abort(
    scenario: Mapping[str, Any], call: CallView | None = None, *, deadline: bool = False
) -> bool:
    """Can a signal abort: an ``abort`` step, ``abortBefore``, or (``deadline``) a timeout policy?

    An ``abort`` step in any script may abort any call. ``abortBefore`` counts
    for ``call`` only, or for every call when ``call`` is None. ``deadline``
    adds the timeout policy, which aborts the body's signal: the PRE/GUARD/DEF
    predicates leave it out (it cannot fire before dispatch), the flow
    predicates (PIPE, POST, EXEC, CANCEL) count it.
    """
    if deadline and scenario.get("timeoutPolicy"):
        return True
    if call is not None:
        if call.spec.get("abortBefore"):
            return True
    else:
        for action in scenario.get("actions", []):
            calls = action.get("batch", [action["call"]] if "call" in action else [])
            if any(c.get("abortBefore") for c in calls):
                return True
    return any("abort" in step for script in scripts_of(scenario) for step in script)


# -------------------------------------------------------------- tool resolution


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


def resolved_spec(
    view: View, call: CallView, *, static_only: bool = False
) -> Mapping[str, Any] | None:
    """The tool spec a model-direct call resolved to at its start; None: unknown or undecidable.

    ``static_only`` demands a registry no action or script ever changes (the
    PIPE/OUT/POST/EXEC predicates reason about the whole call, which a
    mid-call registration change could affect); otherwise :func:`resolution_known`
    suffices (FIN, CANCEL, CTX look at what was fixed at the start).
    """
    known = view.lifecycle_static if static_only else resolution_known(view, call)
    if not known:
        return None
    return view.visible_tool(str(call.spec["name"]), call.spec.get("agent"))


def script_of(
    view: View, call: CallView, stage: str, ident: Any, *, static_only: bool = True
) -> list[Mapping[str, Any]] | None:
    """The steps of the callable that recorded ``stage``/``ident`` events for ``call``, or None.

    Body and finalizer scripts come from the resolved tool (``static_only`` as in
    :func:`resolved_spec`); a listener's from the one entry of that id applying to
    the call's agent (None when the id is ambiguous).
    """
    if stage in ("body", "finalize"):
        spec = resolved_spec(view, call, static_only=static_only)
        if spec is None or spec["name"] != ident:
            return None
        key = "execute" if stage == "body" else "finalizeContent"
        return list(spec[key]) if key in spec else None
    listeners = STAGE_KEYS.get(stage)
    if listeners is None:
        return None
    found = [e for e in view.scenario.get(listeners, []) if e.get("id") == ident]
    if len(found) != 1 or found[0] not in view.listeners(listeners, call.spec.get("agent")):
        return None
    return list(found[0]["steps"])


def observers_for(view: View, call: CallView) -> list[Mapping[str, Any]]:
    """The tools/result observers that apply to ``call``'s agent."""
    return view.listeners("observers", call.spec.get("agent"))


def dispatchable(view: View, call: CallView) -> bool:
    """The call returned, names a tool its scope runs directly, with valid arguments, and its
    signal was not aborted on entry: only policy can stop it before dispatch."""
    if not call.returned or call.spec.get("abortBefore") or not view.lifecycle_static:
        return False
    spec = view.visible_tool(str(call.spec["name"]), call.spec.get("agent"))
    return spec is not None and args_valid(spec, arguments_of(call)) is True


# ----------------------------------------------------------- recorded outcomes


def effective_exit(call: CallView, stage: str) -> Any:
    """What a waterfall stage returned as a whole: the first-entered listener's exit value.

    MISSING when no listener was entered or the first one never exited.
    """
    entered = call.entered(stage)
    if not entered:
        return MISSING
    first = entered[0].get("id")
    exits = [e for e in call.exits(stage) if e.get("id") == first]
    return exits[-1].get("returned") if exits else MISSING


def effective_decision(call: CallView) -> Any:
    """The pre-execute waterfall's decision: allow for an empty chain (PRE-1), None if unsettled."""
    if not call.entered("pre-execute"):
        return {"kind": "allow"}
    decision = effective_exit(call, "pre-execute")
    return None if decision is MISSING else decision


def scripted_decision(view: View, call: CallView, stage: str) -> Any:
    """A waterfall's decision as the scenario scripted it (``$special`` markers intact).

    Walks the entered listeners in order past those that delegate; MISSING when
    the deciding listener threw or its decision cannot be read from its script.
    """
    for event in call.entered(stage):
        steps = script_of(view, call, stage, event.get("id"))
        last = terminal(steps) if steps is not None else None
        if last is None:
            return MISSING
        if "return" in last:
            return last["return"]
        if "delegate" not in last and "returnNext" not in last:
            return MISSING
    return MISSING


def message(call: CallView) -> str:
    """The error message of a call's result ("" when there is none)."""
    error = (call.result or {}).get("error")
    text = error.get("message") if isinstance(error, Mapping) else None
    return text if isinstance(text, str) else ""


def finalizer_threw(call: CallView) -> bool:
    """Did the tool's finalizeContent throw (FIN-4)?

    Then the registry publishes one result of its own choosing: the
    unfinalized result or an error in its place. Rules about what the result
    says (codes, messages, content) do not judge such a call; fail-closed
    facts (an error stays an error, the body's run or not) still hold.
    """
    return call.threw("finalize")


def post_touched(call: CallView) -> bool:
    """Did post-execute see the call (so it may have rewritten the result)?"""
    return bool(call.entered("post-execute"))


def finalizer_may_replace(spec: Mapping[str, Any] | None) -> bool:
    """May the tool's finalizeContent return replacement content? (Unknown tool: assume so.)"""
    if spec is None:
        return True
    return any(
        "return" in step and step["return"] is not None for step in spec.get("finalizeContent", [])
    )


def content_may_be_replaced(view: View, call: CallView, spec: Mapping[str, Any]) -> bool:
    """Per the scripts: may a content authority (post-execute, finalizeContent) replace it?"""
    if finalizer_may_replace(spec):
        return True
    for entry in view.listeners("postExecute", call.spec.get("agent")):
        for step in entry["steps"]:
            decision = step.get("return")
            if isinstance(decision, Mapping) and ("content" in decision or "feedback" in decision):
                return True
    return False


def content_replaced(view: View, call: CallView) -> bool:
    """Per the trace: did an explicit content authority (post-execute, finalizer, an authoring
    wrapper) speak?"""
    for e in call.exits("post-execute"):
        returned = e.get("returned")
        if isinstance(returned, Mapping) and ("content" in returned or "feedback" in returned):
            return True
    if any(e.get("returned") is not None for e in call.exits("finalize")):
        return True
    wrappers = view.listeners("wrappers", call.spec.get("agent"))
    return any("return" in step for w in wrappers for step in w["steps"])


def index_of(call: CallView, event: Mapping[str, Any]) -> int:
    """Position of ``event`` among the call's events (by identity)."""
    return next(i for i, e in enumerate(call.events) if e is event)


def event_index(view: View, event: Mapping[str, Any]) -> int:
    """Position of ``event`` in the whole trace's event log (by identity)."""
    return view.position(event)


# --------------------------------------------------- shared scenario builders

TEXT = st.sampled_from(["a", "capped", "x y"])


def content_blocks(text: str) -> list[dict[str, str]]:
    """One text block."""
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
