"""GUARD -- ② monotonic guards."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from hypothesis import strategies as st

from conformance.judging.model import CallView, View
from conformance.judging.rules import focus
from conformance.judging.rules._base import Verdict, require, rule
from conformance.judging.rules._facts import (
    ABORTED_BEFORE_DISPATCH,
    dispatchable,
    may_abort,
)
from conformance.judging.rules._paths import disagreements
from conformance.scenario import strategies as s
from conformance.scenario.methods import empties


def _objections(call: CallView) -> dict[str, Any]:
    """Guards of this call that objected: id -> the reason they returned (or an exception marker).

    "No objection" is exactly nothing (``None``). An empty string is left out: whether ``""`` is
    a reason or nothing is open, and predicates never premise on it.
    """
    out: dict[str, Any] = {}
    for event in call.events:
        if event.get("stage") != "guard":
            continue
        if event.get("at") == "throw":
            out[str(event.get("id"))] = {"thrown": True}
        elif event.get("at") == "exit" and event.get("returned") is not None:
            out[str(event.get("id"))] = event.get("returned")
    return out


def _ambiguous(call: CallView) -> bool:
    return any(e.get("returned") == "" for e in call.exits("guard"))


def _index(call: CallView, stage: str, at: tuple[str, ...]) -> list[int]:
    return [i for i, e in enumerate(call.events) if e.get("stage") == stage and e.get("at") in at]


# ------------------------------------------------------------------ GUARD-1


@rule("GUARD-1", "Monotonic guards")
def GUARD_1(view: View) -> Iterator[Verdict]:
    """Guards run after the waterfall and approval, before dispatch; any objection is final."""
    for call in view.calls:
        if not call.answered or _ambiguous(call):
            continue
        applicable = view.listeners("guards", call.spec.get("agent"))
        if not applicable or not (call.entered("guard") or dispatchable(view, call)):
            continue
        problems: list[str] = []
        objections = _objections(call)
        if objections and (call.body_entered or not call.closed):
            problems.append(f"guards {sorted(objections)} objected but the call proceeded")
        if call.body_entered:
            entered = {str(e.get("id")) for e in call.entered("guard")}
            missing = [e["id"] for e in applicable if e["id"] not in entered]
            if missing:
                problems.append(f"the body ran without consulting guards {missing}")
        guards = _index(call, "guard", ("enter",))
        if guards:
            before = _index(call, "pre-execute", ("exit", "throw")) + _index(
                call, "approval", ("answer", "exit", "throw")
            )
            after = _index(call, "wrapper", ("enter",)) + _index(call, "body", ("enter",))
            if before and max(before) > guards[0]:
                problems.append("a guard ran before the waterfall or the approval settled")
            if after and min(after) < guards[-1]:
                problems.append("a guard ran after dispatch began")
        yield require(
            not problems,
            call.id,
            "guards must run after the waterfall and before dispatch, and any objection is "
            "final: " + "; ".join(problems),
            # the guards' answers and what ran after them (a wrapper, the body)
            **view.at(
                call,
                (
                    e
                    for e in call.events
                    if (e.get("stage") == "guard" and e.get("at") in ("exit", "throw"))
                    or (e.get("stage") in ("wrapper", "body") and e.get("at") == "enter")
                ),
            ),
        )


@st.composite
def _monotonic_scenarios(draw: st.DrawFn) -> s.Scenario:
    name = draw(s.NAMES)
    verdict = st.sampled_from([None, None, "outside the sandbox", "budget exhausted"])
    guards = [
        s.listener(f"guard-{i}", [{"return": draw(verdict)}])
        for i in range(draw(st.integers(1, 3)))
    ]
    near_miss = s.near_miss_decisions().map(
        lambda decision: [s.listener("near-miss", [{"return": decision}])]
    )
    pre = draw(
        st.one_of(
            st.sampled_from(
                [
                    [],
                    [s.listener("allow", [{"return": {"kind": "allow"}}])],
                    [
                        s.listener("outer", [{"delegate": True}]),
                        s.listener("allow", [{"return": {"kind": "allow"}}]),
                    ],
                    [s.listener("delegating", [{"callNext": True}, {"returnNext": True}])],
                    # A malformed decision must fail closed (PRE-6); a registry that lets such a
                    # call through anyway must still not dispatch it past the guards.
                    [s.listener("malformed", [{"return": {"kind": "deny"}}])],
                    [s.listener("malformed", [{"return": 1}])],
                ]
            ),
            near_miss,
        )
    )
    tool = s.tool(name, [{"return": "ran"}], finalizeContent=[{"return": None}])
    return s.scenario(
        "generated/GUARD-1",
        [tool],
        [
            {"call": s.call(f"c{i}", name, {"path": "a"}, agent=agent)}
            for i, agent in enumerate(draw(st.lists(s.AGENTS, min_size=1, max_size=2)))
        ],
        preExecute=pre,
        guards=guards,
        observers=[s.listener("observer", [])],
    )


focus("GUARD-1", _monotonic_scenarios())


# ------------------------------------------------------------------ GUARD-2


@rule("GUARD-2", "Guard denial fail-closed")
def GUARD_2(view: View) -> Iterator[Verdict]:
    """A guard objection -- a reason, a throw, anything but nothing -- denies; no body runs."""
    # method 6: the same call as a nested call or sub-dispatch meets the same objection
    yield from disagreements(
        view,
        ("body", "outcome"),
        "a guard's objection holds on every path",
        when=lambda direct: bool(_objections(direct)) and direct.is_error,
    )
    aborts = may_abort(view.scenario)
    for call in view.calls:
        if not call.returned or _ambiguous(call):
            continue
        objections = _objections(call)
        if not objections:
            continue
        problems: list[str] = []
        if call.body_entered:
            problems.append("the body ran")
        if not call.is_error:
            problems.append("the result is a success")
        (reason,) = objections.values() if len(objections) == 1 else (None,)
        cancelled = aborts and call.code == ABORTED_BEFORE_DISPATCH
        checkable = (
            isinstance(reason, str)
            and not cancelled
            and not call.post_touched()
            and not call.finalizer_threw()
        )
        if checkable and call.is_error and str(reason) not in call.message():
            problems.append(f"the message {call.message()!r} does not carry the reason {reason!r}")
        yield require(
            not problems,
            call.id,
            f"a guard that objected ({objections!r}) must deny with its reason, fail-closed: "
            + "; ".join(problems),
            # the guards' answers and what ran after them (a wrapper, the body)
            **view.at(
                call,
                (
                    e
                    for e in call.events
                    if (e.get("stage") == "guard" and e.get("at") in ("exit", "throw"))
                    or (e.get("stage") in ("wrapper", "body") and e.get("at") == "enter")
                ),
            ),
        )


GUARD_OBJECTIONS: list[list[Mapping[str, Any]]] = [
    [{"return": "outside the sandbox"}],
    [{"throw": "guard crashed"}],
    [{"return": True}],
    [{"return": False}],
    [{"return": 1}],
    [{"return": "allow"}],
    [{"return": {"kind": "allow"}}],
    [{"return": ["no"]}],
    [{"observe": "execution"}, {"return": "read-only session"}],
]
# method 2: an empty value is something, not nothing
GUARD_OBJECTIONS += [[{"return": v}] for v in empties() if v is not None and v != ""]


@st.composite
def _objecting_scenarios(draw: st.DrawFn) -> s.Scenario:
    name = draw(s.NAMES)
    guards = [s.listener("objecting", draw(st.sampled_from(GUARD_OBJECTIONS)))]
    if draw(st.booleans()):
        guards.insert(draw(st.integers(0, 1)), s.listener("quiet", [{"return": None}]))
    fields: dict[str, Any] = {"observers": [s.listener("observer", [])]}
    if draw(st.booleans()):
        fields["preExecute"] = [s.listener("allow", [{"return": {"kind": "allow"}}])]
    return s.scenario(
        "generated/GUARD-2",
        [s.tool(name, draw(s.body_scripts()), finalizeContent=[{"return": None}])],
        [{"call": s.call("c0", name, draw(s.arguments()), agent=draw(s.AGENTS))}],
        guards=guards,
        **fields,
    )


focus("GUARD-2", _objecting_scenarios())


# ------------------------------------------------------------------ GUARD-3


@rule("GUARD-3", "Scoped guards")
def GUARD_3(view: View) -> Iterator[Verdict]:
    """A guard registered for one agent applies only to that agent's calls."""
    # method 6: a nested call or sub-dispatch is a call of its agent: the same guards judge it
    yield from disagreements(view, ("guard",), "guards judge every call of their scope")
    guards = view.scenario.get("guards", [])
    if not any(g.get("scope") is not None for g in guards):
        return
    scopes = {g["id"]: g.get("scope") for g in guards}
    for call in view.calls:
        if not call.returned or _ambiguous(call):
            continue
        agent = call.spec.get("agent")
        entered = call.entered("guard")
        if not entered and not dispatchable(view, call):
            continue
        problems: list[str] = []
        wrong: list[Mapping[str, Any]] = []  # the guards that ran for another agent
        for event in entered:
            ident = str(event.get("id"))
            if event.get("agent") != agent:
                problems.append(f"guard {ident} saw agent {event.get('agent')!r}")
                wrong.append(event)
            scope = scopes.get(ident)
            if scope is not None and scope != agent:
                problems.append(
                    f"guard {ident}, scoped to {scope!r}, ran for a call of agent {agent!r}"
                )
                wrong.append(event)
        if call.body_entered:
            seen = {str(e.get("id")) for e in entered}
            missing = [g["id"] for g in view.listeners("guards", agent) if g["id"] not in seen]
            if missing:
                problems.append(
                    f"guards {missing} apply to agent {agent!r} but the body ran without them"
                )
        yield require(
            not problems,
            call.id,
            "a scoped guard applies to its own agent's calls only: " + "; ".join(problems),
            # the guards that ran for another agent, else the body that ran without one
            **view.at(call, wrong or call.entered("body")),
        )


@st.composite
def _scoped_guard_scenarios(draw: st.DrawFn) -> s.Scenario:
    name = draw(s.NAMES)
    scopes = draw(st.lists(st.sampled_from(["main", "helper", None]), min_size=1, max_size=3))
    if all(scope is None for scope in scopes):
        scopes[0] = draw(st.sampled_from(["main", "helper"]))
    verdict = st.sampled_from([None, "not for this agent"])
    guards = [
        s.listener(f"guard-{i}", [{"return": draw(verdict)}], scope=scope)
        for i, scope in enumerate(scopes)
    ]
    agents = draw(st.lists(s.AGENTS, min_size=1, max_size=3))
    return s.scenario(
        "generated/GUARD-3",
        [s.tool(name, [{"return": "ran"}])],
        [{"call": s.call(f"c{i}", name, {"n": i}, agent=agent)} for i, agent in enumerate(agents)],
        guards=guards,
    )


focus("GUARD-3", _scoped_guard_scenarios(), "scopes")
