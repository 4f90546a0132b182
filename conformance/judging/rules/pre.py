"""PRE -- ① tools/pre-execute, the allow / deny / ask waterfall."""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from hypothesis import strategies as st

from conformance.judging.model import CallView, View
from conformance.judging.rules import focus
from conformance.judging.rules._base import Scenario, Verdict, require, rule
from conformance.judging.rules._facts import (
    ABORTED_BEFORE_DISPATCH,
    dispatchable,
    masked,
    may_abort,
    next_raised,
    terminal,
)
from conformance.judging.rules._json import copies
from conformance.judging.rules._paths import disagreements
from conformance.scenario import strategies as s
from conformance.scenario.methods import empties, near_misses_of

# ------------------------------------------------------------------ helpers

Steps = list[dict[str, Any]]

APPROVAL_ANSWERS = ("rejected", "cancelled", "unavailable")


def menu_of(options: list[Steps]) -> st.SearchStrategy[Steps]:
    """A strategy drawing one of a few scripts (typed, for mypy)."""
    return st.sampled_from(options)


def _is_ask(decision: Any) -> bool:
    return (
        isinstance(decision, dict)
        and decision.get("kind") == "ask"
        and isinstance(decision.get("reason", ""), str)
    )


def decision_form(decision: Any) -> str:
    """``ok`` (a well-formed decision), ``malformed``, or ``ambiguous`` (the spec is silent).

    Well-formed: ``allow``; ``deny`` with a non-empty string reason; ``ask`` with a string
    reason or none. Ambiguous: ``deny`` with an empty or non-string reason (whether it is
    "without a reason" is open, but either reading denies) and ``ask`` with a non-string
    reason -- predicates never premise on the ambiguous ones.
    """
    if not isinstance(decision, Mapping):
        return "malformed"
    kind = decision.get("kind")
    if kind == "allow":
        return "ok"
    if kind == "deny":
        reason = decision.get("reason")
        if isinstance(reason, str) and reason:
            return "ok"
        return "malformed" if reason is None else "ambiguous"
    if kind == "ask":
        reason = decision.get("reason")
        return "ok" if reason is None or isinstance(reason, str) else "ambiguous"
    return "malformed"


def is_allow(decision: Any) -> bool:
    return isinstance(decision, Mapping) and decision.get("kind") == "allow"


def calls_next(steps: Sequence[Mapping[str, Any]]) -> bool:
    """Does this script call ``next()`` before it settles?"""
    for step in steps:
        ((kind, _),) = step.items()
        if kind in ("delegate", "callNext"):
            return True
        if kind in ("return", "throw", "returnNext"):
            return False
    return False


def _ends_in_next(steps: Sequence[Mapping[str, Any]]) -> bool:
    """Does the script settle by handing back what next() returned (delegate / returnNext)?"""
    last = terminal(steps)
    return last is not None and ("delegate" in last or "returnNext" in last)


def proceeded(call: CallView) -> bool:
    """Did the call pass the waterfall (a guard, a wrapper or the body was entered)? When
    guards ran and none objected (each returned nothing, none threw), the call must also have
    reached dispatch (a wrapper or the body): nothing after the guards may deny it."""
    if call.entered("wrapper") or call.body_entered:
        return True
    if not call.entered("guard"):
        return False
    return call.threw("guard") or any(e.get("returned") is not None for e in call.exits("guard"))


def policy_clean(call: CallView) -> bool:
    """No pre-execute listener of this call threw or returned a non-decision."""
    if call.threw("pre-execute"):
        return False
    return all(decision_form(e.get("returned")) == "ok" for e in call.exits("pre-execute"))


# ------------------------------------------------------------------- PRE-1


def _decided(
    call: CallView, stages: tuple[str, ...] = ("pre-execute",)
) -> Iterator[Mapping[str, Any]]:
    """The events a policy failure is about: the answers of ``stages`` (a listener's exit or
    throw, an approval's answer) and the body's entry, when the body ran (found as read:
    ``view.at`` reads them for a failure only)."""
    return (
        e
        for e in call.events
        if (e.get("stage") in stages and e.get("at") in ("exit", "throw", "answer"))
        or (e.get("stage") == "body" and e.get("at") == "enter")
    )


@rule("PRE-1", "Reorderable waterfall")
def PRE_1(view: View) -> Iterator[Verdict]:
    """Delegation runs the rest of the chain, a return without next() stops it, the end allows."""
    aborts = may_abort(view.scenario)
    for call in view.calls:
        if not dispatchable(view, call):
            continue
        applicable = view.listeners("preExecute", call.spec.get("agent"))
        if not applicable:
            continue
        steps = {e["id"]: e["steps"] for e in applicable}
        entered = [str(e.get("id")) for e in call.entered("pre-execute")]
        problems: list[str] = []
        if len(entered) != len(set(entered)):
            problems.append(f"a listener was entered more than once ({entered})")
        unknown = [i for i in entered if i not in steps]
        if unknown:
            problems.append(f"listeners {unknown} do not apply to this call but ran")
        known = [i for i in entered if i in steps]
        for i in known[:-1]:
            if not calls_next(steps[i]):
                problems.append(f"listener {i} returned without next() but the chain went on")
        if not aborts and known and calls_next(steps[known[-1]]):
            missing = [e["id"] for e in applicable if e["id"] not in known]
            if missing:
                problems.append(f"listener {known[-1]} delegated but {missing} never ran")
            elif _ends_in_next(steps[known[-1]]):
                exits = [e for e in call.exits("pre-execute") if e.get("id") == known[-1]]
                if exits and not is_allow(exits[-1].get("returned")):
                    problems.append(
                        f"the end of the chain answered {exits[-1].get('returned')!r}, not allow"
                    )
        if (
            not aborts
            and not problems
            and is_allow(call.decision())
            and policy_clean(call)
            and not proceeded(call)
        ):
            problems.append("the waterfall allowed but no guard, wrapper or body ran")
        # method 11: a raise out of next() is not the listener's own throw
        for ident in next_raised(
            call, "pre-execute", lambda e: decision_form(e.get("returned")) != "ok"
        ):
            problems.append(
                f"listener {ident}'s next() raised although no later listener failed: next() "
                "answers with the rest of the chain's decision"
            )
        yield require(
            not problems,
            call.id,
            "the pre-execute waterfall must run listeners until one returns without next(), "
            "end in allow, and proceed on allow: " + "; ".join(problems),
            # the decision (its answers) and the body that ran after it, if one did
            **view.at(call, _decided(call)),
        )


@st.composite
def _waterfall_scenarios(draw: st.DrawFn) -> s.Scenario:
    name = draw(s.NAMES)
    menu: list[Steps] = [
        [{"delegate": True}],
        [{"return": {"kind": "allow"}}],
        [{"return": {"kind": "deny", "reason": "stopped here"}}],
        [{"callNext": True}, {"returnNext": True}],
        [{"callNext": True}, {"return": {"kind": "allow"}}],
        [{"observe": "arguments"}, {"delegate": True}],
    ]
    chain = draw(st.lists(st.sampled_from(menu), min_size=1, max_size=3))
    pre = [s.listener(f"pre-{i}", steps) for i, steps in enumerate(chain)]
    calls = draw(st.lists(s.AGENTS, min_size=1, max_size=2))
    return s.scenario(
        "generated/PRE-1",
        [s.tool(name, [{"return": "ok"}])],
        [
            {"call": s.call(f"c{i}", name, {"path": "a"}, agent=agent)}
            for i, agent in enumerate(calls)
        ],
        preExecute=pre,
        observers=[s.listener("observer", [])],
    )


focus("PRE-1", _waterfall_scenarios())


# ------------------------------------------------------------------- PRE-2


def _denied(call: CallView) -> bool:
    decision = call.decision()
    return decision_form(decision) == "ok" and decision.get("kind") == "deny" and call.is_error


@rule("PRE-2", "Deny")
def PRE_2(view: View) -> Iterator[Verdict]:
    """An effective deny(reason) is an error result carrying the reason; the body never runs."""
    # method 6: the same denied call as a nested call or sub-dispatch is denied too
    yield from disagreements(view, ("body", "outcome"), "a deny holds on every path", when=_denied)
    aborts = may_abort(view.scenario)
    for call in view.calls:
        if not dispatchable(view, call) or not call.entered("pre-execute"):
            continue
        decision = call.decision()
        if decision_form(decision) != "ok" or decision.get("kind") != "deny":
            continue
        if not policy_clean(call):
            continue
        reason = decision["reason"]
        cancelled = aborts and call.code == ABORTED_BEFORE_DISPATCH  # CANCEL-2: either conforms
        carries = (
            cancelled or call.post_touched() or call.finalizer_threw() or reason in call.message()
        )
        yield require(
            call.closed and not call.body_entered and carries,
            call.id,
            f"deny({reason!r}) must be an error result whose message carries the reason, "
            f"without running the body (closed={call.closed}, body entered="
            f"{call.body_entered}, message={call.message()!r})",
            # the decision (its answers) and the body that ran after it, if one did
            **view.at(call, _decided(call)),
        )


@st.composite
def _deny_scenarios(draw: st.DrawFn) -> s.Scenario:
    name = draw(s.NAMES)
    reason = draw(st.sampled_from(["path outside the workspace", "no", "policy: read-only"]))
    deny = draw(
        menu_of(
            [
                [{"return": {"kind": "deny", "reason": reason}}],
                [{"callNext": True}, {"return": {"kind": "deny", "reason": reason}}],
                [{"observe": "arguments"}, {"return": {"kind": "deny", "reason": reason}}],
            ]
        )
    )
    pre = [s.listener("policy", deny)]
    if draw(st.booleans()):
        pre.insert(0, s.listener("outer", [{"delegate": True}]))
    fields: dict[str, Any] = {"observers": [s.listener("observer", [])]}
    if draw(st.booleans()):
        fields["guards"] = [s.listener("guard", [{"return": None}])]
    tool = s.tool(name, draw(s.body_scripts()))
    if draw(st.booleans()):
        tool["finalizeContent"] = [{"return": None}]
    return s.scenario(
        "generated/PRE-2",
        [tool],
        [{"call": s.call("c0", name, draw(s.arguments()), agent=draw(s.AGENTS))}],
        preExecute=pre,
        **fields,
    )


focus("PRE-2", _deny_scenarios())


# ------------------------------------------------------------------- PRE-3


def _asked(call: CallView) -> bool:
    return _is_ask(call.decision()) and call.is_error


@rule("PRE-3", "Fail-closed ask")
def PRE_3(view: View) -> Iterator[Verdict]:
    """An effective ``ask`` with no approval service denies; the body never runs."""
    if view.approval_mounted:
        return
    # method 6: the same unapproved call as a nested call or sub-dispatch is denied too
    yield from disagreements(
        view, ("body", "outcome"), "an ask nobody approved holds on every path", when=_asked
    )
    for call in view.calls:
        if not call.answered or not _is_ask(call.decision()):
            continue
        yield require(
            call.closed and not call.body_entered,
            call.id,
            "ask without an approval service must deny without running the body "
            f"(closed={call.closed}, body entered={call.body_entered})",
            # the decision (its answers) and the body that ran after it, if one did
            **view.at(call, _decided(call)),
        )


@st.composite
def _ask_scenarios(draw: st.DrawFn) -> s.Scenario:
    name = draw(s.NAMES)
    steps = draw(
        menu_of(
            [
                [{"return": {"kind": "ask", "reason": "side-effecting command"}}],
                [{"return": {"kind": "ask"}}],
                [{"callNext": True}, {"return": {"kind": "ask", "reason": "after next"}}],
            ]
        )
    )
    pre = [s.listener("permission", steps)]
    if draw(st.booleans()):
        pre.insert(0, s.listener("outer", [{"delegate": True}]))
    return s.scenario(
        "generated/PRE-3",
        [s.tool(name, draw(s.body_scripts()))],
        [{"call": s.call("c0", name, draw(s.arguments()), agent=draw(s.AGENTS))}],
        preExecute=pre,
        observers=[s.listener("observer", [])],
    )


focus("PRE-3", _ask_scenarios())


# ------------------------------------------------------------------- PRE-4


def approval_cause(scenario: Scenario, call: CallView) -> str:
    """What an approval service answers this call, per its script: ``allowed-once``,
    ``rejected``, ``cancelled``, ``unavailable`` or ``no-channel`` (no agent, a throwing
    service, an unrecognized answer)."""
    if call.spec.get("agent") is None:
        return "no-channel"
    approval = scenario["approval"]
    steps = approval.get("byCall", {}).get(call.id, approval["steps"])
    last = terminal(steps) or {}
    if "return" in last and last["return"] in ("allowed-once", *APPROVAL_ANSWERS):
        return str(last["return"])
    return "no-channel"


# Pairs of causes whose denial messages must differ (PRE-4).
_DISTINCT = {
    frozenset(p)
    for p in [
        ("rejected", "cancelled"),
        ("rejected", "unavailable"),
        ("cancelled", "unavailable"),
        ("no-channel", "rejected"),
        ("no-channel", "cancelled"),
    ]
}


def _normalized(call: CallView, reason: Any) -> str:
    """The denial message with the call's own id, tool, agent and reason masked."""
    words = [call.id, str(call.spec["name"])]
    if isinstance(call.spec.get("agent"), str):
        words.append(call.spec["agent"])
    if isinstance(reason, str):
        words.append(reason)
    return str(masked(call.message(), words))


def _request_identity_rewritten(call: CallView) -> bool:
    """Did the approval service's write to its request's ``callId`` or ``toolName`` take
    effect (not raise)? Its ``allowed-once`` then names another call (SPEC PRE-4)."""
    return any(
        e.get("stage") == "approval"
        and e.get("raised") is False
        and str(e.get("mutate", "")).startswith(("request['callId']", "request['toolName']"))
        for e in call.events
    )


def _strangers_dispatched(view: View) -> set[str]:
    """Call ids no caller made (and no parent's nested call) that reached a stage past
    the approval: a call the approval service's rewrite of its request made up."""
    known = {c.id for c in view.calls}
    return {
        str(e.get("call"))
        for e in view.trace.get("events", [])
        if e.get("stage") in _PAST_APPROVAL
        and e.get("hasParent") is False
        and e.get("call") not in known
    }


_PAST_APPROVAL = frozenset({"guard", "wrapper", "body", "post-execute", "finalizer", "result"})


#: PRE-4's clauses (SPEC PRE-4): the portable set keeps ``answers``.
PRE_4_CLAUSES = {
    "answers": "only allowed-once proceeds; every other answer, a throwing service and a call "
    "with no agent to ask deny, without running the body",
    "reasons": "the denials for rejected, cancelled, unavailable and a missing channel carry "
    "distinct reasons",
    "identity-rewrite": "an allowed-once from a service that rewrote its request's identity "
    "proceeds or denies, and no call of the rewritten identity runs",
}


@rule("PRE-4", "Only allowed-once proceeds", clauses=PRE_4_CLAUSES)
def PRE_4(view: View) -> Iterator[Verdict]:
    """With an approval service, only ``allowed-once`` proceeds; refusals have distinct reasons."""
    if not view.approval_mounted:
        return
    aborts = may_abort(view.scenario)
    denied: dict[str, tuple[CallView, Any]] = {}
    for call in view.calls:
        raised = call.raised_instead()
        answers = [
            e for e in call.events if e.get("stage") == "approval" and e.get("at") == "answer"
        ]
        if raised is not None and not call.closed and answers:
            yield require(  # an answer that makes execute raise is no denial: no result at all
                False,
                call.id,
                f"the approval service answered {answers[-1].get('returned')!r}; the call must "
                f"be denied or run, but execute raised instead: {raised}",
                clause="answers",
                **view.at(call, answers[-1:]),
            )
            continue
        if not dispatchable(view, call) or not policy_clean(call):
            continue
        decision = call.decision()
        if not _is_ask(decision) or decision_form(decision) != "ok":
            continue
        cause = approval_cause(view.scenario, call)
        if cause == "allowed-once":
            if aborts:
                continue
            if _request_identity_rewritten(call):  # consent to a call that does not exist
                strangers = _strangers_dispatched(view)
                yield require(
                    (proceeded(call) or (call.closed and not call.body_entered)) and not strangers,
                    call.id,
                    "an ask answered allowed-once by a service that rewrote the request's "
                    "identity must proceed or be denied"
                    + (
                        f", but the rewritten call ran as {sorted(strangers)}"
                        if strangers
                        else ", but it ran without the guards"
                    ),
                    clause="identity-rewrite",
                    # the decision (its answers) and the body that ran after it, if one did
                    **view.at(call, _decided(call, ("approval",))),
                )
                continue
            yield require(
                proceeded(call),
                call.id,
                "an ask answered allowed-once must proceed to the guards and dispatch, "
                "but no guard, wrapper or body ran",
                clause="answers",
                # the decision (its answers) and the body that ran after it, if one did
                **view.at(call, _decided(call, ("approval",))),
            )
            continue
        yield require(
            call.closed and not call.body_entered,
            call.id,
            f"an ask answered {cause!r} must deny without running the body "
            f"(closed={call.closed}, body entered={call.body_entered})",
            clause="answers",
            # the decision (its answers) and the body that ran after it, if one did
            **view.at(call, _decided(call, ("approval",))),
        )
        if call.is_error and not call.post_touched() and call.code != ABORTED_BEFORE_DISPATCH:
            denied.setdefault(cause, (call, decision.get("reason")))
    for a, b in itertools.combinations(sorted(denied), 2):
        if frozenset((a, b)) not in _DISTINCT:
            continue
        (ca, ra), (cb, rb) = denied[a], denied[b]
        yield require(
            _normalized(ca, ra) != _normalized(cb, rb),
            f"{ca.id}/{cb.id}",
            f"denials for {a!r} ({ca.id}) and {b!r} ({cb.id}) must carry distinct reasons, "
            f"both say {ca.message()!r}",
            clause="reasons",
            # the two denials: the approval answers of both calls (ca's lane); a registry that
            # never asked the service denied on the policy's decisions: those
            **view.at(ca, _answers(ca, cb) or [*_decided(ca), *_decided(cb)]),
        )


def _answers(*calls: CallView) -> list[Mapping[str, Any]]:
    """The approval service's answers to ``calls``."""
    return [e for c in calls for e in c.of_kind("approval", "answer")]


@st.composite
def _approval_scenarios(draw: st.DrawFn) -> s.Scenario:
    name = draw(s.NAMES)
    exact = menu_of(
        [
            [{"return": "allowed-once"}],
            [{"return": "rejected"}],
            [{"return": "cancelled"}],
            [{"return": "unavailable"}],
            *([{"return": v}] for v in empties()),  # method 2: no empty value is a grant
            [{"return": 1}],
            [{"yield": 2}, {"return": "rejected"}],
            [{"throw": "approval backend down"}],
        ]
    )
    # method 1: every near miss of every answer (the table of literals) must deny
    answers = st.one_of(exact, near_misses_of("approval-answer").map(lambda a: [{"return": a}]))
    count = draw(st.integers(1, 3))
    agents = draw(
        st.lists(st.sampled_from(["main", "main", "helper", None]), min_size=count, max_size=count)
    )
    by_call = {f"c{i}": draw(answers) for i in range(count) if draw(st.integers(0, 3))}
    approval: dict[str, Any] = {"steps": draw(answers)}
    if by_call:
        approval["byCall"] = by_call
    fields: dict[str, Any] = {"approval": approval, "observers": [s.listener("observer", [])]}
    if draw(st.booleans()):
        fields["guards"] = [s.listener("guard", [{"return": None}])]
    return s.scenario(
        "generated/PRE-4",
        [s.tool(name, [{"return": "done"}], finalizeContent=[{"return": None}])],
        [
            {"call": s.call(f"c{i}", name, {"command": "make"}, agent=agent)}
            for i, agent in enumerate(agents)
        ],
        preExecute=[
            s.listener("permission", [{"return": {"kind": "ask", "reason": "runs a command"}}])
        ],
        **fields,
    )


focus("PRE-4", _approval_scenarios(), "approval")


# ------------------------------------------------------------------- PRE-5

# Request fields that would carry the arguments (or a copy of them).
_ARGUMENT_KEYS = frozenset(
    {
        "arguments",
        "args",
        "argv",
        "input",
        "inputs",
        "params",
        "toolinput",
        "toolargs",
        "toolarguments",
        "rawarguments",
        "rawargs",
        "execution",
        "call",
        "payload",
    }
)


@rule("PRE-5", "Approval request carries no arguments")
def PRE_5(view: View) -> Iterator[Verdict]:
    """The approval request carries the call id and the ask reason, never the arguments."""
    by_id = {c.id: c for c in view.calls}
    for event in view.trace.get("events", []):
        if event.get("stage") != "approval" or event.get("at") != "request":
            continue
        keys = [str(k) for k in event.get("keys", [])]
        call_id = event.get("call")
        subject = f"approval request {call_id}"
        problems: list[str] = []
        if "callId" not in keys or not isinstance(call_id, str) or not call_id:
            problems.append(f"it carries no call id (keys {keys})")
        leaked = [k for k in keys if k.lower() in _ARGUMENT_KEYS]
        if leaked:
            problems.append(f"it carries {leaked}, a copy of the arguments")
        call = by_id.get(str(call_id))
        if call is not None:
            decision = call.decision()
            reason = decision.get("reason") if isinstance(decision, Mapping) else None
            if isinstance(reason, str) and reason and event.get("reason") != reason:
                problems.append(f"its reason is {event.get('reason')!r}, not the ask's {reason!r}")
            # method 7: no copy in any form -- in any field, the reason and a message included
            own = [call.id, str(call.spec.get("name")), str(call.spec.get("agent")), str(reason)]
            fields = {k: v for k, v in (event.get("fields") or {}).items() if k not in leaked}
            found = copies(call.arguments, fields, own)
            if found:
                problems.append(f"it carries a copy of the arguments: {'; '.join(found[:3])}")
        yield require(
            not problems,
            subject,
            "an approval request must carry the call id and the ask reason and no arguments: "
            + "; ".join(problems),
            # the request itself (a request without a call id points at no lane)
            call=call_id if isinstance(call_id, str) and call_id else None,
            events=[view.position(event)],
        )


_DISTINCTIVE = [
    "/home/ana/notes/secret-plan.md",
    "rm -rf ./build && make release",
    "transfer 500 EUR to mallory",
    {"to": "mallory@example.com", "amount": 500},
]


@st.composite
def _request_scenarios(draw: st.DrawFn) -> s.Scenario:
    name = draw(s.NAMES)
    reason = draw(st.sampled_from(["runs a command", "writes outside the workspace"]))
    ask = {"kind": "ask", "reason": reason} if draw(st.booleans()) else {"kind": "ask"}
    arguments = draw(st.dictionaries(s.KEYS, s.json_values(1), min_size=1, max_size=3))
    if draw(st.booleans()):  # method 7: values distinctive enough that a copy of them shows
        arguments[draw(s.KEYS)] = draw(st.sampled_from(_DISTINCTIVE))
    answer = draw(st.sampled_from(["allowed-once", "rejected", "unavailable"]))
    tool = s.tool(name, [{"return": "done"}])
    if draw(st.booleans()):
        tool["presentCall"] = draw(st.sampled_from(["args", "call"]))
    return s.scenario(
        "generated/PRE-5",
        [tool],
        [{"call": s.call("c0", name, arguments, agent=draw(st.sampled_from(["main", "helper"])))}],
        preExecute=[s.listener("permission", [{"return": ask}])],
        approval={"steps": [{"return": answer}]},
    )


focus("PRE-5", _request_scenarios(), "approval")


# ------------------------------------------------------------------- PRE-6


def _broken_listener(call: CallView) -> bool:
    """A pre-execute listener of this call threw or returned a malformed decision."""
    if call.threw("pre-execute"):
        return True
    return any(decision_form(e.get("returned")) == "malformed" for e in call.exits("pre-execute"))


@rule("PRE-6", "Malformed decisions fail closed")
def PRE_6(view: View) -> Iterator[Verdict]:
    """A throwing listener or a malformed decision fails the call closed; the body never runs."""
    for call in view.calls:
        if not dispatchable(view, call) or not _broken_listener(call):
            continue
        if any(decision_form(e.get("returned")) == "ambiguous" for e in call.exits("pre-execute")):
            continue
        yield require(
            call.closed and not call.body_entered,
            call.id,
            "a throwing pre-execute listener or a malformed decision must fail the call closed "
            f"(closed={call.closed}, body entered={call.body_entered})",
            # the decision (its answers) and the body that ran after it, if one did
            **view.at(call, _decided(call)),
        )


MALFORMED: list[Steps] = [
    [{"return": None}],
    [],
    [{"return": "allow"}],
    [{"return": {"kind": "maybe"}}],
    [{"return": {"kind": "deny"}}],
    [{"return": {"allow": True}}],
    [{"return": 1}],
    [{"return": ["allow"]}],
    [{"throw": "policy crashed"}],
    [{"callNext": True}, {"throw": "policy crashed after next"}],
    # method 2: no empty value is a decision ({} above all: no kind is no allow)
    *([{"return": v}] for v in empties()),
]


@st.composite
def _malformed_scenarios(draw: st.DrawFn) -> s.Scenario:
    name = draw(s.NAMES)
    broken = draw(
        st.one_of(
            st.sampled_from(MALFORMED),
            s.near_miss_decisions().map(lambda decision: [{"return": decision}]),
        )
    )
    pre = [s.listener("broken", broken)]
    outer = draw(
        menu_of(
            [
                [],
                [{"delegate": True}],
                [{"callNext": True}, {"returnNext": True}],
                [{"callNext": True}, {"return": {"kind": "allow"}}],
            ]
        )
    )
    if outer:
        pre.insert(0, s.listener("outer", outer))
    fields: dict[str, Any] = {"observers": [s.listener("observer", [])]}
    if draw(st.booleans()):
        fields["guards"] = [s.listener("guard", [{"return": None}])]
    return s.scenario(
        "generated/PRE-6",
        [s.tool(name, [{"return": "ran"}], finalizeContent=[{"return": None}])],
        [{"call": s.call("c0", name, draw(s.arguments()), agent=draw(s.AGENTS))}],
        preExecute=pre,
        **fields,
    )


focus("PRE-6", _malformed_scenarios())


# ------------------------------------------------------------------- PRE-7


@rule("PRE-7", "Async listeners and cancellation")
def PRE_7(view: View) -> Iterator[Verdict]:
    """A caller abort while a listener ran is re-checked after it settles; it is never abandoned."""
    for call in view.calls:
        if not dispatchable(view, call):
            continue
        agent = call.spec.get("agent")
        aborting = {
            e["id"]
            for e in view.listeners("preExecute", agent)
            if any("abort" in x for x in e["steps"])
        }
        entered = [str(e.get("id")) for e in call.entered("pre-execute")]
        if not aborting.intersection(entered):
            continue
        problems: list[str] = []
        if call.body_entered:
            problems.append("the body ran after the caller aborted during pre-execute")
        if not call.is_error:
            problems.append("the result is a success")
        elif (
            call.code != ABORTED_BEFORE_DISPATCH
            and is_allow(call.decision())
            and not call.finalizer_threw()
        ):
            others = bool(view.listeners("guards", agent))
            if not others:
                problems.append(
                    "the waterfall allowed, so the code must be "
                    f"{ABORTED_BEFORE_DISPATCH}, not {call.code}"
                )
        events = call.events
        ending = [
            i
            for i, e in enumerate(events)
            if e.get("stage") in ("finalize", "result") and e.get("at") == "enter"
        ]
        for ident in dict.fromkeys(entered):
            settled = [
                i
                for i, e in enumerate(events)
                if e.get("stage") == "pre-execute"
                and e.get("id") == ident
                and e.get("at") in ("exit", "throw")
            ]
            if not settled:
                problems.append(f"listener {ident} never settled (abandoned)")
            elif ending and settled[-1] > ending[0]:
                problems.append(
                    f"listener {ident} settled after the result was finalized/published (abandoned)"
                )
        yield require(
            not problems,
            call.id,
            "after an async listener settles the registry must re-check cancellation and never "
            "abandon the listener: " + "; ".join(problems),
            # the listeners' runs and what came after them (the body, finalization, results)
            **view.at(
                call,
                (
                    e
                    for e in call.events
                    if e.get("stage") == "pre-execute"
                    or (e.get("stage") in ("body", "finalize", "result") and e.get("at") == "enter")
                ),
            ),
        )


@st.composite
def _abort_listener_scenarios(draw: st.DrawFn) -> s.Scenario:
    name = draw(s.NAMES)
    turns = draw(st.integers(1, 20))
    steps = draw(
        menu_of(
            [
                [{"abort": True}, {"yield": turns}, {"return": {"kind": "allow"}}],
                [{"abort": True}, {"yield": turns}, {"delegate": True}],
                [
                    {"yield": turns},
                    {"abort": True},
                    {"yield": turns},
                    {"return": {"kind": "allow"}},
                ],
                [{"callNext": True}, {"abort": True}, {"yield": turns}, {"returnNext": True}],
                [
                    {"abort": True},
                    {"observe": "signal"},
                    {"yield": turns},
                    {"return": {"kind": "deny", "reason": "late"}},
                ],
            ]
        )
    )
    pre = [s.listener("slow-gate", steps)]
    if draw(st.booleans()):
        pre.append(s.listener("inner", [{"yield": draw(st.integers(1, 5))}, {"delegate": True}]))
    return s.scenario(
        "generated/PRE-7",
        [s.tool(name, [{"return": "ran"}], finalizeContent=[{"return": None}])],
        [{"call": s.call("c0", name, {"path": "a"}, agent=draw(s.AGENTS))}],
        preExecute=pre,
        observers=[s.listener("observer", [])],
    )


focus("PRE-7", _abort_listener_scenarios())


# ------------------------------------------------------------------- PRE-8


@rule("PRE-8", "Scope-filtered listeners")
def PRE_8(view: View) -> Iterator[Verdict]:
    """A listener registered for one agent sees only that agent's calls; a global one sees all."""
    # method 6: a nested call or sub-dispatch is a call of its agent: the same listeners see it
    yield from disagreements(
        view, ("pre-execute",), "listeners see every call of their scope, on every path"
    )
    listeners = view.scenario.get("preExecute", [])
    if not any(e.get("scope") is not None for e in listeners):
        return
    scopes = {e["id"]: e.get("scope") for e in listeners}
    aborts = may_abort(view.scenario)
    for call in view.calls:
        if not call.returned:
            continue
        agent = call.spec.get("agent")
        problems: list[str] = []
        for event in call.entered("pre-execute"):
            ident = event.get("id")
            if event.get("agent") != agent:
                problems.append(f"listener {ident} saw agent {event.get('agent')!r}")
            scope = scopes.get(str(ident))
            if scope is not None and scope != agent:
                problems.append(
                    f"listener {ident}, scoped to {scope!r}, saw a call of agent {agent!r}"
                )
        applicable = view.listeners("preExecute", agent)
        entered = {str(e.get("id")) for e in call.entered("pre-execute")}
        if (
            dispatchable(view, call)
            and not aborts
            and all(calls_next(e["steps"]) for e in applicable)
        ):
            missing = [e["id"] for e in applicable if e["id"] not in entered]
            if missing:
                problems.append(
                    f"listeners {missing} apply to agent {agent!r} but never saw the call"
                )
        if not problems and not entered and not dispatchable(view, call):
            continue  # nothing to judge: the call never reached pre-execute
        yield require(
            not problems,
            call.id,
            "pre-execute listeners must see exactly the calls of their scope: "
            + "; ".join(problems),
            # the listeners' entries (whom they saw), else the body that ran without them
            **view.at(call, call.entered("pre-execute") or call.entered("body")),
        )


@st.composite
def _scoped_listener_scenarios(draw: st.DrawFn) -> s.Scenario:
    name = draw(s.NAMES)
    steps = menu_of(
        [
            [{"delegate": True}],
            [{"observe": "execution"}, {"delegate": True}],
            [{"callNext": True}, {"returnNext": True}],
        ]
    )
    scopes = draw(st.lists(st.sampled_from(["main", "helper", None]), min_size=1, max_size=3))
    if all(scope is None for scope in scopes):
        scopes[0] = "main"
    pre = [s.listener(f"pre-{i}", draw(steps), scope=scope) for i, scope in enumerate(scopes)]
    agents = draw(st.lists(s.AGENTS, min_size=1, max_size=3))
    return s.scenario(
        "generated/PRE-8",
        [s.tool(name, [{"return": "ok"}])],
        [{"call": s.call(f"c{i}", name, {"n": i}, agent=agent)} for i, agent in enumerate(agents)],
        preExecute=pre,
    )


focus("PRE-8", _scoped_listener_scenarios(), "scopes")
