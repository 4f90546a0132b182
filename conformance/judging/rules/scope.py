"""SCOPE -- visibility: hidden equals missing, one visibility view."""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping
from typing import Any

from hypothesis import strategies as st

from conformance.judging.model import CallView, View
from conformance.judging.rules import focus
from conformance.judging.rules._base import Scenario, Verdict, require, rule
from conformance.judging.rules._facts import (
    ABORTED_BEFORE_DISPATCH,
    MISSING,
    UNKNOWN_TOOL,
    masked,
    may_abort,
)
from conformance.judging.rules._paths import disagreements
from conformance.scenario import strategies as s
from conformance.scenario.methods import family, near_misses
from conformance.vocab import RUN_CODE


def _unseen(view: View, call: CallView) -> str | None:
    """``hidden`` (registered, but for other agents only), ``missing`` (nowhere), or None."""
    name = str(call.spec["name"])
    if name == RUN_CODE or not view.lifecycle_static:
        return None
    if view.catalog_tool(name, call.spec.get("agent")) is not None:
        return None
    registered = [
        t
        for t in view.tool_specs
        if t["name"] == name and view.registered_ok(t.get("key", t["name"]))
    ]
    return "hidden" if registered else "missing"


def _policy_stopped(scenario: Scenario, call: CallView) -> bool:
    """Did a policy stage the call traversed -- or a cancellation -- stop it before dispatch?

    True for a throwing pre-execute listener or guard, a waterfall that did not allow, an
    ``ask`` not answered ``allowed-once``, a guard objection, or ABORTED_BEFORE_DISPATCH
    when the scenario can abort.
    """
    if call.threw("pre-execute", "guard", "approval"):  # its own throw (method 11)
        return True
    if call.entered("pre-execute"):
        decision = call.decision()
        kind = decision.get("kind") if isinstance(decision, Mapping) else None
        if kind not in ("allow", "ask"):
            return True
        if kind == "ask":
            answers = [
                e for e in call.events if e.get("stage") == "approval" and e.get("at") == "answer"
            ]
            if not answers or answers[-1].get("returned") != "allowed-once":
                return True
    if any(e.get("returned") is not None for e in call.exits("guard")):
        return True
    return call.code == ABORTED_BEFORE_DISPATCH and may_abort(scenario, call)


def _post_rewrote(call: CallView) -> bool:
    """Did post-execute replace the failure: a throw, a block, a malformed decision, or an
    accept that replaces content or value (not a pass-through ``next()``)?"""
    if call.threw("post-execute"):
        return True
    decision = call.effective_exit("post-execute")
    if decision is MISSING:
        return False
    passes = isinstance(decision, Mapping) and decision.get("kind") == "accept"
    return not passes or "content" in decision or "value" in decision


def _wrapper_rewrote(view: View, call: CallView) -> bool:
    """Did a tools/execute wrapper the call reached throw or author its own result?

    An implementation that fails unknown tools *at dispatch* runs the wrappers
    around that failure (stage 3), so a wrapper failure (EXEC-4) or a
    wrapper-authored result (EXEC-3) may stand in its place.
    """
    if call.threw("wrapper"):
        return True
    entered = {e.get("id") for e in call.entered("wrapper")}
    return any(
        "return" in step
        for entry in view.listeners("wrappers", call.spec.get("agent"))
        if entry["id"] in entered
        for step in entry["steps"]
    )


# ------------------------------------------------------------------ SCOPE-1


@rule("SCOPE-1", "Hidden equals missing")
def SCOPE_1(view: View) -> Iterator[Verdict]:
    """A tool the caller cannot see fails like a name that exists nowhere: UNKNOWN_TOOL, no body."""
    unseen: dict[str, list[CallView]] = {"hidden": [], "missing": []}
    for call in view.calls:
        if not call.returned:
            continue
        kind = _unseen(view, call)
        if kind is None:
            continue
        unseen[kind].append(call)
        ran = [
            e
            for e in call.events
            if e.get("stage") in ("body", "finalize") and e.get("at") == "enter"
        ]
        # SCOPE-1 note: the call may traverse pre-execute and guards before failing at
        # dispatch -- inside the tools/execute wrappers -- and then reach post-execute
        # (section 5); if a policy stage or a cancellation stopped it first, or a wrapper or
        # post-execute rewrote the failure, that error stands -- the pairing below still
        # demands that hidden and missing look the same.
        excused = (
            _policy_stopped(view.scenario, call)
            or _wrapper_rewrote(view, call)
            or _post_rewrote(call)
        )
        yield require(
            call.is_error and (call.code == UNKNOWN_TOOL or excused) and not ran,
            call.id,
            f"a call naming a {kind} tool must be an {UNKNOWN_TOOL} error and resolve no "
            "definition "
            f"(isError={call.is_error}, code={call.code}, "
            f"stages run={sorted({str(e.get('stage')) for e in ran})})",
            # the stages that ran (else the call's last event, or its answer)
            **view.at(call, ran),
        )
    # method 6: the same call as a nested call or sub-dispatch is as unknown
    yield from disagreements(
        view,
        ("body", "outcome"),
        "a name the scope cannot see is unknown on every path",
        when=lambda direct: _unseen(view, direct) is not None and direct.code == UNKNOWN_TOOL,
    )
    for hidden, missing in itertools.product(unseen["hidden"], unseen["missing"]):
        if hidden.spec.get("agent") != missing.spec.get("agent"):
            continue
        if not hidden.spec["name"] or not missing.spec["name"]:
            continue  # an empty name cannot be masked out of a message: not comparable
        views = []
        for call in (hidden, missing):
            words = [call.id, str(call.spec["name"])]
            views.append(masked(dict(call.result or {}), words))
        yield require(
            views[0] == views[1],
            f"{hidden.id}/{missing.id}",
            f"the result for hidden tool {hidden.spec['name']!r} ({hidden.id}) must be "
            f"indistinguishable from the one for missing {missing.spec['name']!r} ({missing.id}) "
            f"once the names are masked: {views[0]!r} vs {views[1]!r}",
            # the hidden tool's call (the missing one's lane is its twin)
            call=hidden.id,
            events=[view.position(e) for c in (hidden, missing) for e in c.events[-1:]],
        )


@st.composite
def _hidden_scenarios(draw: st.DrawFn) -> s.Scenario:
    names = draw(st.lists(s.NAMES, min_size=1, max_size=2, unique=True))
    tools = [
        s.tool(name, [{"return": "ran"}], scope=draw(st.sampled_from(["helper", "helper", None])))
        for name in names
    ]
    for tool in tools:
        if tool["scope"] is None:
            del tool["scope"]
        if draw(st.booleans()):
            tool["finalizeContent"] = [{"return": None}]
    agent = draw(st.sampled_from(["main", None]))
    # method 1: a near miss of a registered name (the table of literals) is another name
    misses = [m.value for name in names for m in near_misses(name, family("tool-name").classes)]
    targets = draw(
        st.lists(
            st.one_of(st.sampled_from([*names, "missing_tool", "ghost"]), st.sampled_from(misses)),
            min_size=1,
            max_size=2,
        )
    )
    # Always a missing name beside the others, so hidden-vs-missing pairs are compared.
    targets.insert(
        draw(st.integers(0, len(targets))), draw(st.sampled_from(["missing_tool", "ghost"]))
    )
    fields: dict[str, Any] = {"observers": [s.listener("observer", [])]}
    if draw(st.booleans()):
        fields["preExecute"] = [s.listener("pre", [{"delegate": True}])]
    if draw(st.booleans()):  # method 11: only a wrapper's own failure may stand in for it
        fields["wrappers"] = [s.listener("wrap", [{"observe": "execution"}, {"delegate": True}])]
    return s.scenario(
        "generated/SCOPE-1",
        tools,
        [
            {"call": s.call(f"c{i}", name, {"path": "a"}, agent=agent)}
            for i, name in enumerate(targets)
        ],
        **fields,
    )


focus("SCOPE-1", _hidden_scenarios(), "scopes")


# ------------------------------------------------------------------ SCOPE-2


def expected_direct(view: View, scope: str | None) -> set[str]:
    """Names a model-direct call from ``scope`` can execute, for a static set-up (native/both)."""
    names = {t["name"] for t in view.tool_specs if view.visible_tool(t["name"], scope) is not None}
    if view.mode in ("code", "both"):
        names.add(RUN_CODE)
    return names


def catalog(view: View, scope: str | None) -> set[str]:
    return {t["name"] for t in view.tool_specs if view.catalog_tool(t["name"], scope) is not None}


@rule("SCOPE-2", "One visibility view")
def SCOPE_2(view: View) -> Iterator[Verdict]:
    """schemas(scope) lists exactly what a model-direct call from that scope can execute."""
    # method 6: a nested call or sub-dispatch resolves the calling agent's view too
    yield from disagreements(
        view,
        ("outcome",),
        "lookup and execution resolve through the caller's one visibility view",
        when=lambda direct: direct.returned and not direct.is_error,
    )
    if not view.lifecycle_static:
        return
    for index, action, answer in view.answers("schemas"):
        if "schemas" not in answer:
            continue
        scope = action["schemas"].get("scope")
        listed = {str(e.get("name")) for e in answer["schemas"] if isinstance(e, Mapping)}
        problems: list[str] = []
        named: list[CallView] = []  # the calls that contradict the listing
        if view.mode == "code":
            allowed = [catalog(view, scope), {RUN_CODE}, catalog(view, scope) | {RUN_CODE}]
            if listed not in allowed:
                problems.append(
                    f"lists {sorted(listed)}, neither the catalog nor the presented list"
                )
        else:
            want = expected_direct(view, scope)
            if listed != want:
                problems.append(f"lists {sorted(listed)}, but the scope can run {sorted(want)}")
            for call in view.calls:
                if not call.returned or call.spec.get("agent") != scope:
                    continue
                name = str(call.spec["name"])
                unknown = call.code == UNKNOWN_TOOL
                if name in listed and unknown:
                    problems.append(
                        f"{call.id}: {name!r} is listed but calling it is {UNKNOWN_TOOL}"
                    )
                    named.append(call)
                elif name not in listed and not unknown:
                    problems.append(
                        f"{call.id}: {name!r} is not listed but the call was not {UNKNOWN_TOOL}"
                    )
                    named.append(call)
        yield require(
            not problems,
            f"schemas({scope}) [action {index}]",
            "schemas, lookup and execution must resolve through one visibility view: "
            + "; ".join(problems),
            # the listing, and the first call that contradicts it with every such call's last
            # event
            call=named[0].id if named else None,
            events=[view.position(e) for c in named for e in c.events[-1:]],
            action=index,
        )
    if view.mode != "code":
        return
    for call in view.calls:
        if not call.returned or call.spec["name"] == RUN_CODE:
            continue
        yield require(
            call.code == UNKNOWN_TOOL and not call.body_entered,
            call.id,
            f"under mode code a model-direct call naming {call.spec['name']!r} must be "
            f"{UNKNOWN_TOOL} (code={call.code}, body entered={call.body_entered})",
            # the body that ran (else the call's last event, or its answer)
            **view.at(call, stage="body"),
        )


@st.composite
def _view_scenarios(draw: st.DrawFn) -> s.Scenario:
    names = draw(st.lists(s.NAMES, min_size=1, max_size=3, unique=True))
    tools = []
    for name in names:
        for scope in draw(
            st.lists(st.sampled_from([None, "main", "helper"]), min_size=1, max_size=2, unique=True)
        ):
            tool = s.tool(name, [{"return": f"{name}@{scope}"}])
            if scope is not None:
                tool["scope"] = scope
                tool["key"] = f"{name}@{scope}"
            tools.append(tool)
    scope = draw(s.AGENTS)
    actions: list[dict[str, Any]] = [{"schemas": {"scope": scope} if scope is not None else {}}]
    targets = draw(st.lists(st.sampled_from([*names, "missing_tool"]), min_size=1, max_size=3))
    for i, name in enumerate(targets):
        actions.append(
            {
                "call": s.call(
                    f"c{i}",
                    name,
                    {"path": "a"},
                    agent=draw(st.sampled_from([scope, scope, "helper"])),
                )
            }
        )
    return s.scenario(
        "generated/SCOPE-2",
        tools,
        actions,
        registry={"mode": draw(st.sampled_from(["native", "native", "both", "code"]))},
    )


focus("SCOPE-2", _view_scenarios(), "scopes", "code-mode")
