"""PIPE -- the five-stage pipeline: stage order, frozen arguments, parameters enforced."""

from __future__ import annotations

import dataclasses
import itertools
from collections import Counter
from collections.abc import Collection, Iterator, Mapping, Sequence
from typing import Any

from hypothesis import strategies as st

from conformance.judging.model import STAGES, CallView, View
from conformance.judging.rules import focus
from conformance.judging.rules._base import Verdict, require, rule
from conformance.judging.rules._facts import (
    args_valid,
    arguments_of,
    has_special,
    may_abort,
    resolved_spec,
    same_json,
    valid_against,
)
from conformance.judging.rules._paths import disagreements
from conformance.scenario import strategies as s
from conformance.scenario.surface import Cell, cells, probe_scenario
from conformance.seam.adapter import PIPELINE_STAGES
from conformance.vocab import ErrorCode

# -------------------------------------------------------------------- PIPE-1

# Stages whose view carries the execution's arguments (an approval request
# deliberately does not, PRE-5).
_SEES_ARGUMENTS = ("pre-execute", "guard", "wrapper", "body", "post-execute", "finalize", "result")


def _direct(event: Mapping[str, Any]) -> bool:
    return not event.get("hasParent", False)


@rule("PIPE-1", "Stage order")
def PIPE_1(view: View) -> Iterator[Verdict]:
    """Stages are first entered in pipeline order; no listener is entered twice per execution.

    A call that ended without a result (it raised, hit the deadline, or ran away) is judged on
    what it entered before it ended: an entry out of order or a second entry is a fact either
    way."""
    rank = {stage: i for i, stage in enumerate(STAGES)}
    for call in view.calls:
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
        yield require(
            in_order and not twice,
            call.id,
            "stages must be entered in the order pre-execute, approval, guard, wrapper, body, "
            "post-execute, finalize, result, each listener at most once per execution; "
            f"the trace shows first entries {order}"
            + (f" and repeated entries of {twice}" if twice else ""),
            # the stages' entries, whose order (or repetition) is the violation
            **view.at(call, (e for e in events if e.get("at") in ("enter", "request"))),
        )


# -------------------------------------------------------------------- PIPE-2


def _mutations_before(call: CallView, limit: int, targets: tuple[str, ...]) -> list[str]:
    return [
        str(e["mutate"])
        for e in call.events[:limit]
        if isinstance(e.get("mutate"), str) and str(e["mutate"]).split("[")[0] in targets
    ]


@rule("PIPE-2", "Materialize once and deep-freeze")
def PIPE_2(view: View) -> Iterator[Verdict]:
    """Arguments are a deep-frozen snapshot; non-lossless arguments never reach policy or body."""
    for call in view.calls:
        if not call.returned:
            continue
        args = arguments_of(call)
        if has_special(args):
            reached = [
                stage
                for stage in ("pre-execute", "approval", "guard", "wrapper", "body", "post-execute")
                if any(e.get("stage") == stage for e in call.events)
            ]
            known = (
                resolved_spec(view, call, static_only=True) is not None or not view.lifecycle_static
            )
            codes = (
                {ErrorCode.INVALID_ARGS}
                if known
                else {ErrorCode.INVALID_ARGS, ErrorCode.UNKNOWN_TOOL}
            )
            coded = call.code in codes or call.finalizer_threw()  # FIN-4: the registry's choice
            yield require(
                call.is_error and coded and not reached,
                call.id,
                f"non-lossless arguments must be an error result ({' or '.join(sorted(codes))}) "
                "that reaches no policy stage and not the body; the trace shows "
                f"isError={call.is_error}, code={call.code}, stages entered {reached}",
                # the stages it reached; none: its last event, or its answer
                **view.at(call, (e for e in call.events if e.get("stage") in reached)),
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
            yield require(
                same_json(observed, args),
                call.id,
                f"after mutation attempts {mutated}, the {event.get('stage')} stage must still "
                f"see the original arguments {args!r} (snapshot, deep-frozen); it saw {observed!r}",
                # what it saw, and the mutation attempts before it
                **view.at(call, [*(e for e in call.events[:i] if "mutate" in e), event]),
            )


# -------------------------------------------------------------------- PIPE-3


def unique_calls(view: View) -> list[CallView]:
    """The calls whose call id no other call of the scenario shares (their events are theirs)."""
    ids = [c.id for c in view.calls]
    return [c for c in view.calls if ids.count(c.id) == 1]


#: PIPE-3's clauses (SPEC PIPE-3): the portable set keeps ``identity``.
PIPE_3_CLAUSES = {
    "arguments": "every stage and the body see exactly the materialized arguments",
    "identity": "no stage's write to the execution's callId, name, agent or parent changes "
    "what a later stage, the body, the observers or the published result see as the call",
}


@rule("PIPE-3", "No argument rewriting", clauses=PIPE_3_CLAUSES)
def PIPE_3(view: View) -> Iterator[Verdict]:
    """Every stage, the body included, sees exactly the caller's (materialized) arguments,
    and the call as the caller made it: no stage's write to the execution's identity
    (``callId``, ``name``, ``agent``, ``parent``) reaches a later stage or the events."""
    for call in unique_calls(view):
        if call.returned and any(e.get("stage") in _SEES_ARGUMENTS for e in call.events):
            changed = call.identity_changes(_SEES_ARGUMENTS)
            yield require(
                not changed,
                call.id,
                f"no stage may rewrite the call: every stage must see it as {call.identity()} "
                f"(a callable reading back its own write aside); {'; '.join(changed)}",
                clause="identity",
                # the writes to the execution and the entries and observations that saw them
                **view.at(call, _identity_events(call)),
            )
    for call in view.calls:
        if not call.returned:
            continue
        args = arguments_of(call)
        if has_special(args):
            continue
        for event in call.observations("arguments"):
            if not _direct(event) or event.get("stage") not in _SEES_ARGUMENTS:
                continue
            if call.wrote_before(event, "arguments") or call.wrote_before(
                event, "execution['arguments']"
            ):
                continue  # a callable reading back its own write (to its own copy: PIPE-2's)
            seen = event["observed"]
            yield require(
                same_json(seen, args),
                call.id,
                f"the {event.get('stage')} stage must see the arguments {args!r} unchanged; "
                f"it saw {seen!r}",
                clause="arguments",
                **view.at(call, [event]),
            )


def _identity_events(call: CallView) -> Iterator[Mapping[str, Any]]:
    """The events where a call's identity could change or be seen changed: the writes to the
    execution, the stages' entries (which carry the identity) and the execution observed
    (found as read: ``view.at`` reads them for a failure only)."""
    return (
        e
        for e in call.events
        if str(e.get("mutate", "")).startswith("execution[")
        or (e.get("at") == "enter" and "tool" in e and e.get("stage") in _SEES_ARGUMENTS)
        or e.get("what") == "execution"
    )


# -------------------------------------------------------------------- PIPE-4


def _policy_may_stop(view: View, call: CallView) -> bool:
    agent = call.spec.get("agent")
    return bool(
        may_abort(view.scenario, call, deadline=True)
        or view.listeners("preExecute", agent)
        or view.listeners("guards", agent)
        or view.listeners("wrappers", agent)
        or view.scenario.get("timeoutPolicy")
    )


def _invalid(view: View, call: CallView) -> bool:
    spec = resolved_spec(view, call, static_only=True)
    args = arguments_of(call)
    return (
        spec is not None
        and not has_special(args)
        and not valid_against(spec.get("parameters", {"type": "object"}), args)
    )


@rule("PIPE-4", "Parameters enforced before the body")
def PIPE_4(view: View) -> Iterator[Verdict]:
    """Arguments violating ``parameters``: INVALID_ARGS, the body never runs."""
    # method 6: the same invalid call as a nested call or sub-dispatch never runs either
    yield from disagreements(
        view,
        ("body", "outcome"),
        "parameters are enforced on every path",
        when=lambda direct: _invalid(view, direct) and direct.code == ErrorCode.INVALID_ARGS,
    )
    for call in view.calls:
        if not call.returned:
            continue
        spec = resolved_spec(view, call, static_only=True)
        args = arguments_of(call)
        if spec is None or has_special(args) or "parameters" not in spec:
            continue
        if valid_against(spec["parameters"], args):
            continue
        strict = not _policy_may_stop(view, call) and not call.finalizer_threw()
        good = (
            call.is_error
            and not call.body_entered
            and (not strict or call.code == ErrorCode.INVALID_ARGS)
        )
        yield require(
            good,
            call.id,
            f"arguments {args!r} violate {spec['name']}'s parameters: the body must not run and "
            "the call must be an error"
            + (" with code INVALID_ARGS" if strict else "")
            + f"; the trace shows isError={call.is_error}, code={call.code}, "
            f"body entered={call.body_entered}",
            # the body that ran (else the call's last event, or its answer)
            **view.at(call, stage="body"),
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
        spec = s.call(f"c{i}", name, args)
        if draw(st.integers(0, 2)) == 0:  # method 8: right after invoking, before awaiting
            spec["afterInvoke"] = [mutate("caller-arguments")["mutate"]]
        calls.append({"call": spec})
    return s.scenario("generated/PIPE-2", [tool], calls, **fields)


def surface_cells(stages: Collection[str] | None = None) -> list[Cell]:
    """The attack-surface cells of the pipeline's own stages (no approval, no Code Mode)
    that write a top-level field of an execution (identity, arguments, a new field) or a
    value a stage returned earlier (``kept``), in ``stages`` (None: every stage)."""
    return [
        cell
        for cell in cells(PIPELINE_STAGES)
        if cell.step["target"] in ("execution", "kept")
        and cell.stage != "code-dispatch-log"
        and cell.leads
        and (stages is None or cell.stage in stages)
    ]


@st.composite
def cell_scenarios(draw: st.DrawFn, stages: Collection[str] | None = None) -> dict[str, Any]:
    """A drawn cell's probe (:func:`conformance.scenario.surface.probe_scenario`): its write in its
    stage, observed by every later stage, the observers and a later call; the written value
    and the calls' agent drawn too."""
    cell = draw(st.sampled_from(surface_cells(stages)))
    step = dict(cell.step)
    if (
        "value" in step
        and step.get("op", "assign") == "assign"
        and step["target"] != "kept"
        and not cell.group
    ):
        step["value"] = draw(st.one_of(st.just(step["value"]), s.json_scalars))
    out = probe_scenario(dataclasses.replace(cell, step=step))
    assert out is not None
    agent = draw(st.sampled_from(["main", "helper"]))
    calls = out["actions"][: draw(st.integers(1, len(out["actions"])))]
    out["actions"] = [{"call": {**a["call"], "agent": agent}} for a in calls]
    out["id"] = f"generated/{cell.id}"
    return out


focus("PIPE-2", _freeze_scenarios(everywhere=False))
focus("PIPE-3", st.one_of(_freeze_scenarios(everywhere=True), cell_scenarios()))

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


# -------------------------------------------------------------------- PIPE-5


@rule("PIPE-5", "The approval sees what runs")
def PIPE_5(view: View) -> Iterator[Verdict]:
    """The body of an approved call receives exactly the arguments its approver was shown:
    those the approval request carries, else the call as the caller made it."""
    for call in unique_calls(view):
        if not call.body_entered:
            continue
        requests = [
            e for e in call.events if e.get("stage") == "approval" and e.get("at") == "request"
        ]
        if not requests:
            continue
        shown = requests[-1]["arguments"] if "arguments" in requests[-1] else arguments_of(call)
        if has_special(shown):
            continue
        for event in call.observations("arguments"):
            if event.get("stage") != "body" or not _direct(event):
                continue
            yield require(
                same_json(event["observed"], shown),
                call.id,
                f"the approver was shown the arguments {shown!r}; the body received "
                f"{event['observed']!r}",
                call=call.id,
                events=(view.position(requests[-1]), view.position(event)),
            )


@st.composite
def _consent_scenarios(draw: st.DrawFn) -> dict[str, Any]:
    """An ask answered allowed-once, and one stage that tries to change the arguments: the
    asking policy itself before it asks (what it asks about is what the approver is shown
    -- unless it runs again after the answer), a listener before it, a guard or a wrapper.
    One writer per scenario, so a framework without some of these stages still runs most."""
    name = draw(s.NAMES)
    kind = draw(st.sampled_from(["whole", "field", "append"]))
    write: dict[str, Any]
    if kind == "whole":  # the whole arguments object, as a hook would assign it
        value = {"amount": draw(st.integers(1, 500)), "to": "mallory"}
        write = {"mutate": {"target": "execution", "path": ["arguments"], "value": value}}
    elif kind == "append":  # not idempotent: a stage that runs twice appends twice
        append: dict[str, Any] = {"target": "arguments", "path": ["memo"], "op": "append"}
        write = {"mutate": {**append, "value": draw(s.json_scalars)}}
    else:
        path = draw(st.sampled_from([["amount"], ["to"], ["extra"]]))
        write = {"mutate": {"target": "arguments", "path": path, "value": draw(s.json_scalars)}}
    where = draw(st.sampled_from(["policy", "outer", "guard", "wrapper"]))
    policy = [write] if where == "policy" else []
    fields: dict[str, Any] = {
        "preExecute": [s.listener("policy", [*policy, {"observe": "arguments"}, {"return": _ASK}])],
        "approval": {"steps": [{"return": "allowed-once"}]},
    }
    if where == "outer":
        fields["preExecute"].insert(0, s.listener("outer", [write, {"delegate": True}]))
    elif where == "guard":
        fields["guards"] = [s.listener("guard", [write, {"return": None}])]
    elif where == "wrapper":
        fields["wrappers"] = [s.listener("wrap", [write, {"delegate": True}])]
    arguments = {
        "amount": draw(st.integers(1, 500)),
        "to": draw(st.sampled_from(["ana", "bo"])),
        "memo": [],
    }
    return s.scenario(
        "generated/PIPE-5",
        [s.tool(name, [{"observe": "arguments"}, {"return": "sent"}])],
        [{"call": s.call("c0", name, arguments, agent="main")}],
        **fields,
    )


_ASK = {"kind": "ask", "reason": "moves money"}

focus("PIPE-5", _consent_scenarios(), "approval")


# -------------------------------------------------------------------- PIPE-6

#: The listener kinds PIPE-6 replays, each with the stage its events record.
_KINDS: Mapping[str, str] = {
    "preExecute": "pre-execute",
    "guards": "guard",
    "wrappers": "wrapper",
    "postExecute": "post-execute",
    "observers": "result",
}


def _history(view: View) -> dict[int, dict[str, list[str]]]:
    """The registered listener ids of each kind (in registration order, an id once per
    registration) before each action, replayed from the scenario: a dispose removes the
    latest registration of its id, ``again`` nothing."""
    active: dict[str, list[str]] = {
        kind: [e["id"] for e in view.scenario.get(kind, []) if e.get("registered", True)]
        for kind in _KINDS
    }
    out: dict[int, dict[str, list[str]]] = {}
    for index, action in enumerate(view.scenario.get("actions", [])):
        out[index] = {kind: list(ids) for kind, ids in active.items()}
        kind = action.get("of")
        if kind not in _KINDS:
            continue
        ids = active[kind]
        if "register" in action:
            ids.append(str(action["register"]))
        elif "dispose" in action and not action.get("again") and action["dispose"] in ids:
            del ids[len(ids) - 1 - ids[::-1].index(str(action["dispose"]))]
    return out


def _passes(steps: Sequence[Mapping[str, Any]], kind: str) -> bool:
    """Does this listener let every call through to the next one (so every registered one of
    its kind must see the call)? Delegating listeners, quiet guards, any observer."""
    if kind == "observers":
        return True
    if kind == "guards":
        return (
            bool(steps)
            and steps[-1] == {"return": None}
            and all(set(step) <= {"observe"} for step in steps[:-1])
        )
    return (
        bool(steps)
        and steps[-1] == {"delegate": True}
        and all(set(step) <= {"observe"} for step in steps[:-1])
    )


@rule("PIPE-6", "Listener and guard disposers")
def PIPE_6(view: View) -> Iterator[Verdict]:
    """Every registration of a listener, guard or the timeout policy is undone by its own
    disposer, exactly: each call sees exactly the registrations that are active, twice
    where one was registered twice, none that was disposed."""
    if not view.relisted:
        return
    history = _history(view)
    specs = {(k, e["id"]): e for k in _KINDS for e in view.scenario.get(k, [])}
    for call in view.relisted:
        if not call.returned or call.spec.get("abortBefore") or not view.lifecycle_static:
            continue
        tool = view.visible_tool(str(call.spec["name"]), call.spec.get("agent"))
        if tool is None or args_valid(tool, arguments_of(call)) is not True:
            continue
        agent = call.spec.get("agent")
        problems: list[str] = []
        wrong: set[str] = set()  # the stages that ran the wrong registrations
        reached = True
        for kind, stage in _KINDS.items():
            ids = [
                i
                for i in history.get(call.action_index, {}).get(kind, [])
                if specs[kind, i].get("scope") in (None, agent)
            ]
            if not all(_passes(specs[kind, i]["steps"], kind) for i in ids):
                reached = reached and kind == "observers"
                continue
            if stage in ("wrapper", "post-execute") and not call.body_entered:
                continue
            if not reached and kind != "observers":
                continue
            entered = [str(e.get("id")) for e in call.entered(stage)]
            if Counter(entered) != Counter(ids):
                problems.append(
                    f"{stage} ran {sorted(entered)}, but the registrations active for this call "
                    f"are {sorted(ids)}"
                )
                wrong.add(stage)
                continue
            for scope in (None, agent):  # within one layer, registration order stands
                mine = [i for i in ids if specs[kind, i].get("scope") == scope]
                seen = [i for i in entered if specs[kind, i].get("scope") == scope]
                if kind != "observers" and seen != mine:
                    problems.append(f"{stage} ran {seen} in another order than registered {mine}")
                    wrong.add(stage)
        yield require(
            not problems,
            call.id,
            "disposing a registration must remove exactly it, and registering again must add "
            "it again: " + "; ".join(problems),
            # the entries of the stages that ran the wrong registrations
            **view.at(call, (e for e in call.events if e.get("stage") in wrong)),
        )


@st.composite
def _disposer_scenarios(draw: st.DrawFn) -> dict[str, Any]:
    """Listeners of several kinds, some registered later; calls interleaved with registering
    and disposing them -- again, out of order, a second registration of the same one."""
    kinds = draw(st.lists(st.sampled_from(sorted(_KINDS)), min_size=1, max_size=3, unique=True))
    fields: dict[str, Any] = {}
    ids: list[tuple[str, str]] = []
    for kind in kinds:
        entries = []
        for i in range(draw(st.integers(2, 3))):
            ident = f"{kind}-{i}"
            steps: list[dict[str, Any]] = [{"observe": "execution"}]
            steps.append({"return": None} if kind == "guards" else {"delegate": True})
            entry = s.listener(ident, [] if kind == "observers" else steps)
            entry["scope"] = draw(st.sampled_from([None, None, "main"]))
            if entry["scope"] is None:
                del entry["scope"]
            if draw(st.integers(0, 3)) == 0:
                entry["registered"] = False
            entries.append(entry)
            ids.append((kind, ident))
        fields[kind] = entries
    if "wrappers" in kinds and draw(st.integers(0, 2)) == 0:
        # the timeout policy is a registration too, installed ahead of the wrappers: its own
        # disposer must remove it, never the wrapper that happens to stand first
        fields["timeoutPolicy"] = True
        ids.append(("timeoutPolicy", "timeoutPolicy"))
    actions: list[dict[str, Any]] = []
    for i in range(draw(st.integers(2, 4))):
        kind, ident = draw(st.sampled_from(ids))
        verb = draw(st.sampled_from(["dispose", "dispose", "register", "again"]))
        if verb == "again":
            actions.append({"dispose": ident, "of": kind, "again": True})
        else:
            actions.append({verb: ident, "of": kind})
        actions.append({"call": s.call(f"c{i}", "run", {"n": i}, agent="main")})
    if fields.get("timeoutPolicy") and draw(st.booleans()):  # its disposer, run twice
        for i, again in enumerate((False, True), start=len(actions)):
            dispose: dict[str, Any] = {"dispose": "timeoutPolicy", "of": "timeoutPolicy"}
            actions.append({**dispose, "again": True} if again else dispose)
            actions.append({"call": s.call(f"c{i}", "run", {"n": i}, agent="main")})
    return s.scenario("generated/PIPE-6", [s.tool("run", [{"return": "ok"}])], actions, **fields)


focus("PIPE-6", _disposer_scenarios(), "listener-disposers")


# -------------------------------------------------------------------- PIPE-7


def asked_tool(request: Mapping[str, Any], call: CallView) -> Any:
    """The tool an approval request asked about: the request's own field naming it (a
    ``toolName`` or a ``name``, whichever it has), else the tool the caller named."""
    fields = request.get("fields")
    if isinstance(fields, Mapping):
        for key in ("toolName", "name"):
            if isinstance(fields.get(key), str):
                return fields[key]
    return call.spec.get("name")


@rule("PIPE-7", "The approval binds the tool")
def PIPE_7(view: View) -> Iterator[Verdict]:
    """The body that runs for an approved call is the body of the tool its approver was
    asked about (PIPE-5 binds the arguments; this, what runs them)."""
    for call in unique_calls(view):
        approval = [e for e in call.events if e.get("stage") == "approval"]
        requests = [e for e in approval if e.get("at") == "request"]
        granted = any(
            e.get("at") == "answer" and e.get("returned") == "allowed-once" for e in approval
        )
        if not requests or not granted:
            continue
        asked = asked_tool(requests[-1], call)
        for event in call.entered("body"):
            if not _direct(event):
                continue
            yield require(
                event.get("id") == asked,
                call.id,
                f"the approver was asked about {asked!r}; the body of {event.get('id')!r} ran",
                call=call.id,
                events=(view.position(requests[-1]), view.position(event)),
            )


@st.composite
def _renamed_scenarios(draw: st.DrawFn) -> dict[str, Any]:
    """An ask answered allowed-once for one tool, and one stage that renames the call to
    another registered tool (whose body is its own): the asking policy before it asks (the
    request then names what the approver consents to), a listener before it, a guard or a
    wrapper (after the answer)."""
    asked, other = draw(st.lists(s.NAMES, min_size=2, max_size=2, unique=True))
    rename = {"mutate": {"target": "execution", "path": ["name"], "value": other}}
    where = draw(st.sampled_from(["policy", "outer", "guard", "wrapper"]))
    policy = [rename] if where == "policy" else []
    fields: dict[str, Any] = {
        "preExecute": [s.listener("policy", [*policy, {"return": _ASK}])],
        "approval": {"steps": [{"return": "allowed-once"}]},
    }
    if where == "outer":
        fields["preExecute"].insert(0, s.listener("outer", [rename, {"delegate": True}]))
    elif where == "guard":
        fields["guards"] = [s.listener("guard", [rename, {"return": None}])]
    elif where == "wrapper":
        fields["wrappers"] = [s.listener("wrap", [rename, {"delegate": True}])]
    return s.scenario(
        "generated/PIPE-7",
        [s.tool(asked, [{"return": "read"}]), s.tool(other, [{"return": "WROTE"}])],
        [{"call": s.call("c0", asked, {"path": "notes.md"}, agent="main")}],
        **fields,
    )


focus("PIPE-7", _renamed_scenarios(), "approval")
