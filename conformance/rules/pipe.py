"""PIPE -- the five-stage pipeline (and the flow helpers OUT, EXEC and POST share).

The helpers here read a scenario's scripts to learn what a scripted callable
did (which steps ran before it returned or threw, whether it aborted the
caller, what it decided) and compare JSON the way the spec means it (a
boolean is never a number). They derive everything from the scenario and the
events the kit recorded, never from an implementation.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import jsonschema
from hypothesis import strategies as st
from jsonschema.validators import Draft202012Validator

from .. import strategies as s
from ..model import STAGES, CallView, View
from . import focus
from ._base import Scenario, Trace, Verdict, expect, rule

__all__ = [
    "MISSING",
    "effective_exit",
    "executed",
    "has_special",
    "may_abort",
    "original_arguments",
    "passive",
    "project",
    "same_json",
    "script_of",
    "scripted_decision",
    "tool_for",
    "valid_against",
]

MISSING: Any = object()

# ----------------------------------------------------------------- JSON helpers


def has_special(value: Any) -> bool:
    """True when ``value`` holds a ``{"$special": ...}`` marker (a non-lossless value) anywhere."""
    if isinstance(value, Mapping):
        return "$special" in value or any(has_special(v) for v in value.values())
    if isinstance(value, list):
        return any(has_special(v) for v in value)
    return False


def same_json(a: Any, b: Any) -> bool:
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


def valid_against(schema: Any, value: Any) -> bool:
    """Does lossless ``value`` validate against the JSON Schema ``schema`` (draft 2020-12)?"""
    try:
        return Draft202012Validator(schema).is_valid(value)
    except jsonschema.SchemaError:
        return False


def _parsed(text: Any) -> Any:
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


# -------------------------------------------------------------- script helpers

_TERMINAL = ("return", "throw", "delegate", "returnNext")
_KEYS = {
    "pre-execute": "preExecute",
    "guard": "guards",
    "wrapper": "wrappers",
    "post-execute": "postExecute",
    "result": "observers",
}


def original_arguments(call: CallView) -> Any:
    """The arguments the caller handed over, as scenario JSON."""
    return call.spec.get("arguments", {})


def tool_for(view: View, call: CallView) -> Mapping[str, Any] | None:
    """The scenario tool a model-direct call resolves to, when that is statically known."""
    if not view.lifecycle_static:
        return None
    return view.visible_tool(call.spec["name"], call.spec.get("agent"))


def script_of(view: View, call: CallView, stage: str, ident: Any) -> list[Mapping[str, Any]] | None:
    """The steps of the callable that recorded ``stage``/``ident`` events for ``call``."""
    if stage in ("body", "finalize"):
        spec = tool_for(view, call)
        if spec is None or spec["name"] != ident:
            return None
        key = "execute" if stage == "body" else "finalizeContent"
        return list(spec.get(key, [])) if key in spec else None
    listeners_key = _KEYS.get(stage)
    if listeners_key is None:
        return None
    for entry in view.listeners(listeners_key, call.spec.get("agent")):
        if entry["id"] == ident:
            return list(entry["steps"])
    return None


def executed(steps: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The steps a script runs before its terminating step (return, throw, delegate...)."""
    out: list[Mapping[str, Any]] = []
    for step in steps:
        ((kind, arg),) = step.items()
        if kind in _TERMINAL:
            break
        if kind == "deferContext" and has_special(arg):
            break  # may raise at the source (OUT-5)
        out.append(step)
    return out


def terminal(steps: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The step that ends a script, or None when it runs off its end."""
    done = len(executed(steps))
    return steps[done] if done < len(steps) else None


def passive(steps: Sequence[Mapping[str, Any]]) -> bool:
    """A delegating listener: only observations and yields, then ``delegate``."""
    if not steps or steps[-1] != {"delegate": True}:
        return False
    return all(set(step) <= {"observe", "yield"} for step in steps[:-1])


def all_passive(view: View, key: str, agent: Any) -> bool:
    return all(passive(entry["steps"]) for entry in view.listeners(key, agent))


def _scripts(view: View) -> list[Sequence[Mapping[str, Any]]]:
    scripts: list[Sequence[Mapping[str, Any]]] = [
        t.get(k, []) for t in view.tool_specs for k in ("execute", "finalizeContent")
    ]
    for key in ("preExecute", "guards", "wrappers", "postExecute", "observers"):
        scripts += [entry["steps"] for entry in view.scenario.get(key, [])]
    if "approval" in view.scenario:
        scripts.append(view.scenario["approval"].get("steps", []))
        scripts += list(view.scenario["approval"].get("byCall", {}).values())
    return scripts


def may_abort(view: View, call: CallView) -> bool:
    """Could the call's signal abort (a pre-aborted entry, an abort step, a deadline)?"""
    if call.spec.get("abortBefore") or view.scenario.get("timeoutPolicy"):
        return True
    return any("abort" in step for script in _scripts(view) for step in script)


def effective_exit(call: CallView, stage: str) -> Any:
    """What a waterfall stage returned as a whole: the first-entered listener's exit value."""
    entered = call.entered(stage)
    if not entered:
        return MISSING
    first = entered[0].get("id")
    exits = [e for e in call.exits(stage) if e.get("id") == first]
    return exits[-1].get("returned") if exits else MISSING


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


def index_of(call: CallView, event: Mapping[str, Any]) -> int:
    return next(i for i, e in enumerate(call.events) if e is event)


# -------------------------------------------------------------------- PIPE-1

# Stages whose view carries the execution's arguments (an approval request
# deliberately does not, PRE-5).
_SEES_ARGUMENTS = ("pre-execute", "guard", "wrapper", "body", "post-execute", "finalize", "result")


def _direct(event: Mapping[str, Any]) -> bool:
    return not event.get("hasParent", False)


@rule("PIPE-1", "Stage order")
def PIPE_1(scenario: Scenario, trace: Trace) -> Iterator[Verdict]:
    """Stages are first entered in pipeline order; no listener is entered twice per execution."""
    view = View(scenario, trace)
    rank = {stage: i for i, stage in enumerate(STAGES)}
    for call in view.calls:
        if not call.returned:
            continue
        events = [e for e in call.events if _direct(e) and e.get("stage") in rank]
        order: list[str] = []
        counts: dict[tuple[str, str], int] = {}
        for e in events:
            if e.get("at") not in ("enter", "request"):
                continue
            stage = str(e["stage"])
            if stage not in order:
                order.append(stage)
            key = (stage, str(e.get("id", "")))
            counts[key] = counts.get(key, 0) + 1
        if len(order) < 2 and not counts:
            continue
        in_order = all(rank[a] < rank[b] for a, b in itertools.pairwise(order))
        twice = sorted(f"{st_}:{ident}" for (st_, ident), n in counts.items() if n > 1)
        yield expect(
            in_order and not twice,
            call.id,
            "stages must be entered in the order pre-execute, approval, guard, wrapper, body, "
            "post-execute, finalize, result, each listener at most once per execution; "
            f"the trace shows first entries {order}"
            + (f" and repeated entries of {twice}" if twice else ""),
        )


# -------------------------------------------------------------------- PIPE-2


def _mutations_before(call: CallView, limit: int, targets: tuple[str, ...]) -> list[str]:
    return [
        str(e["mutate"])
        for e in call.events[:limit]
        if isinstance(e.get("mutate"), str) and str(e["mutate"]).split("[")[0] in targets
    ]


@rule("PIPE-2", "Materialize once and deep-freeze")
def PIPE_2(scenario: Scenario, trace: Trace) -> Iterator[Verdict]:
    """Arguments are a deep-frozen snapshot; non-lossless arguments never reach policy or body."""
    view = View(scenario, trace)
    for call in view.calls:
        if not call.returned:
            continue
        args = original_arguments(call)
        if has_special(args):
            reached = [
                stage
                for stage in ("pre-execute", "approval", "guard", "wrapper", "body", "post-execute")
                if any(e.get("stage") == stage for e in call.events)
            ]
            known = tool_for(view, call) is not None or not view.lifecycle_static
            codes = {"INVALID_ARGS"} if known else {"INVALID_ARGS", "UNKNOWN_TOOL"}
            yield expect(
                call.is_error and call.code in codes and not reached,
                call.id,
                f"non-lossless arguments must be an error result ({' or '.join(sorted(codes))}) "
                "that reaches no policy stage and not the body; the trace shows "
                f"isError={call.is_error}, code={call.code}, stages entered {reached}",
            )
            continue
        for i, event in enumerate(call.events):
            if event.get("what") not in ("arguments", "execution") or "observed" not in event:
                continue
            if not _direct(event) or event.get("stage") not in _SEES_ARGUMENTS:
                continue
            mutated = _mutations_before(call, i, ("arguments", "caller-arguments", "execution"))
            if not mutated:
                continue
            observed = event["observed"]
            if event.get("what") == "execution":
                observed = observed.get("arguments") if isinstance(observed, Mapping) else None
            yield expect(
                same_json(observed, args),
                call.id,
                f"after mutation attempts {mutated}, the {event.get('stage')} stage must still "
                f"see the original arguments {args!r} (snapshot, deep-frozen); it saw {observed!r}",
            )


# -------------------------------------------------------------------- PIPE-3


@rule("PIPE-3", "No argument rewriting")
def PIPE_3(scenario: Scenario, trace: Trace) -> Iterator[Verdict]:
    """Every stage, the body included, sees exactly the caller's (materialized) arguments."""
    view = View(scenario, trace)
    for call in view.calls:
        if not call.returned:
            continue
        args = original_arguments(call)
        if has_special(args):
            continue
        for event in call.observations("arguments"):
            if not _direct(event) or event.get("stage") not in _SEES_ARGUMENTS:
                continue
            yield expect(
                same_json(event["observed"], args),
                call.id,
                f"the {event.get('stage')} stage must see the arguments {args!r} unchanged; "
                f"it saw {event['observed']!r}",
            )


# -------------------------------------------------------------------- PIPE-4


def _policy_may_stop(view: View, call: CallView) -> bool:
    agent = call.spec.get("agent")
    return bool(
        may_abort(view, call)
        or view.listeners("preExecute", agent)
        or view.listeners("guards", agent)
        or view.listeners("wrappers", agent)
        or view.scenario.get("timeoutPolicy")
    )


@rule("PIPE-4", "Parameters enforced before the body")
def PIPE_4(scenario: Scenario, trace: Trace) -> Iterator[Verdict]:
    """Arguments violating ``parameters``: INVALID_ARGS, the body never runs."""
    view = View(scenario, trace)
    for call in view.calls:
        if not call.returned:
            continue
        spec = tool_for(view, call)
        args = original_arguments(call)
        if spec is None or has_special(args) or "parameters" not in spec:
            continue
        if valid_against(spec["parameters"], args):
            continue
        strict = not _policy_may_stop(view, call)
        good = (
            call.is_error and not call.body_entered and (not strict or call.code == "INVALID_ARGS")
        )
        yield expect(
            good,
            call.id,
            f"arguments {args!r} violate {spec['name']}'s parameters: the body must not run and "
            "the call must be an error"
            + (" with code INVALID_ARGS" if strict else "")
            + f"; the trace shows isError={call.is_error}, code={call.code}, "
            f"body entered={call.body_entered}",
        )


# ---------------------------------------------------------------- strategies

_NESTED_ARGS = st.fixed_dictionaries(
    {
        "path": s.json_scalars,
        "opts": st.fixed_dictionaries(
            {"n": s.json_scalars, "list": st.lists(s.json_scalars, min_size=1, max_size=2)}
        ),
    }
)
_PATHS: st.SearchStrategy[list[Any]] = st.sampled_from(
    [["path"], ["opts", "n"], ["opts", "list", 0], ["new"], ["opts", "new"]]
)


@st.composite
def _order_scenarios(draw: st.DrawFn) -> dict[str, Any]:
    out = draw(s.scenarios())
    for spec in out["tools"]:
        spec["finalizeContent"] = [{"return": None}]
    if draw(st.booleans()):
        out["wrappers"] = [s.listener("wrap", [{"delegate": True}])]
    if draw(st.booleans()):
        out["postExecute"] = [
            s.listener("post-0", [{"delegate": True}]),
            *out.get("postExecute", []),
        ]
    out["id"] = "generated/PIPE-1"
    return out


focus("PIPE-1", _order_scenarios(), "approval", "scopes")


@st.composite
def _freeze_scenarios(draw: st.DrawFn, *, everywhere: bool) -> dict[str, Any]:
    name = draw(s.NAMES)

    def mutate(target: str) -> dict[str, Any]:
        return {"mutate": {"target": target, "path": draw(_PATHS), "value": draw(s.json_scalars)}}

    body = [
        {"observe": "arguments"},
        mutate("arguments"),
        {"observe": "arguments"},
        {"return": "ok"},
    ]
    pre = [
        mutate("caller-arguments"),
        {"observe": "arguments"},
        mutate("arguments"),
        {"delegate": True},
    ]
    fields: dict[str, Any] = {
        "preExecute": [s.listener("pre", pre)],
        "observers": [s.listener("observer", [{"observe": "arguments"}])],
    }
    if everywhere:
        fields["guards"] = [s.listener("guard", [{"observe": "arguments"}, mutate("arguments")])]
        fields["wrappers"] = [
            s.listener("wrap", [mutate("arguments"), {"observe": "arguments"}, {"delegate": True}])
        ]
        paths: list[Any] = draw(_PATHS)
        execution = {"mutate": {"target": "execution", "path": ["arguments", *paths], "value": 0}}
        fields["postExecute"] = [
            s.listener("post", [{"observe": "arguments"}, execution, {"delegate": True}])
        ]
    tool = s.tool(name, body, finalizeContent=[{"observe": "arguments"}, {"return": None}])
    calls = []
    for i in range(draw(st.integers(1, 2))):
        args: Any = draw(st.one_of(_NESTED_ARGS, s.arguments()))
        if not everywhere and draw(st.integers(0, 3)) == 0:
            args = {**args, "path": draw(s.special())}
        calls.append({"call": s.call(f"c{i}", name, args)})
    return s.scenario("generated/PIPE-2", [tool], calls, **fields)


focus("PIPE-2", _freeze_scenarios(everywhere=False))
focus("PIPE-3", _freeze_scenarios(everywhere=True))

_STRICT_PARAMS = {
    "type": "object",
    "properties": {"path": {"type": "string"}, "n": {"type": "integer"}},
    "required": ["path"],
    "additionalProperties": False,
}


@st.composite
def _params_scenarios(draw: st.DrawFn) -> dict[str, Any]:
    name = draw(s.NAMES)
    tool = s.tool(name, [{"observe": "arguments"}, {"return": "ok"}], parameters=_STRICT_PARAMS)
    if draw(st.booleans()):
        tool["finalizeContent"] = [{"return": None}]
    fields: dict[str, Any] = {"observers": [s.listener("observer", [])]}
    if draw(st.integers(0, 3)) == 0:
        fields["preExecute"] = [s.listener("pre", [{"delegate": True}])]
    args = draw(
        st.one_of(
            s.arguments(),
            st.fixed_dictionaries({"path": s.json_scalars}),
            st.fixed_dictionaries({"path": st.just("a"), "n": s.json_scalars}),
            st.lists(s.json_scalars, max_size=2),
            s.json_scalars,
        )
    )
    return s.scenario("generated/PIPE-4", [tool], [{"call": s.call("c0", name, args)}], **fields)


focus("PIPE-4", _params_scenarios())
