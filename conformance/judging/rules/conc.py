"""CONC -- concurrency classification and the batch scheduler."""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping
from typing import Any

from hypothesis import strategies as st

from conformance.judging.model import CallView, View, small_pool
from conformance.judging.rules import focus
from conformance.judging.rules._base import Verdict, require, rule, untested
from conformance.judging.rules._facts import args_valid, arguments_of, event_index, first_terminal
from conformance.scenario import strategies as s
from conformance.scenario.methods import empty_values, family, near_misses, near_misses_of


def _static_before(view: View, index: int) -> bool:
    """Do the set-up registrations alone decide visibility at action ``index``?"""
    if view.lifecycle_static:
        return True
    if any("schemas" not in action for action in view.scenario.get("actions", [])[:index]):
        return False
    keys = [r.get("key") for r in view.trace.get("registrations", [])]
    return len(keys) == len(set(keys))


def expected_mode(view: View, call: Mapping[str, Any]) -> str | None:
    """CONC-1's answer for a model-direct call under a static set-up; None when undecidable."""
    spec = view.visible_tool(str(call["name"]), call.get("agent"))
    if spec is None or "isConcurrencySafe" not in spec:
        return "exclusive"
    valid = args_valid(spec, arguments_of(call))
    if valid is None:
        return None
    if not valid:
        return "exclusive"
    verdict = first_terminal(spec["isConcurrencySafe"], arguments_of(call))
    if verdict is None:
        return None
    kind, value = verdict
    return "parallel" if kind == "return" and value is True else "exclusive"


@rule("CONC-1", "Exclusive by default")
def CONC_1(view: View) -> Iterator[Verdict]:
    """executionMode is parallel only when the visible classifier returns exactly true for valid
    args."""
    for index, action, answer in view.answers("executionMode"):
        if "mode" not in answer or not _static_before(view, index):
            continue
        call = action["executionMode"]
        wanted = expected_mode(view, call)
        if wanted is None:
            continue
        yield require(
            answer["mode"] == wanted,
            f"executionMode({call['callId']})",
            f"executionMode must be {wanted} (parallel only for a visible tool whose "
            "isConcurrencySafe returns "
            f"exactly true on valid arguments), got {answer['mode']}",
            # the query's lane: its classifier's events, or (none) its answer
            call=str(call["callId"]),
            events=[
                i
                for i, e in enumerate(view.trace.get("events", []))
                if e.get("call") == call["callId"]
            ],
        )


def _body_interval(view: View, call: CallView) -> tuple[int, int] | None:
    enter = call.entered("body")
    if not enter:
        return None
    ends = [e for e in call.events if e.get("stage") == "body" and e.get("at") in ("exit", "throw")]
    end = event_index(view, ends[-1]) if ends else len(view.trace.get("events", []))
    return event_index(view, enter[0]), end


_POLICY_STAGES = ("pre-execute", "approval", "guard")


def _policy_span(view: View, call: CallView) -> tuple[int, int] | None:
    """(first, last) trace index of the call's policy events (pre-execute, approval, guards)."""
    found = [event_index(view, e) for e in call.events if e.get("stage") in _POLICY_STAGES]
    return (min(found), max(found)) if found else None


def _overlap_both_ways(view: View, members: list[CallView], modes: list[str | None]) -> list[str]:
    """Method 12, overlap measured both ways: an exclusive member runs alone across its
    whole pipeline -- no event of a member before it after its first event, none of a member
    after it before its last -- and the members' results are published in model order."""
    problems: list[str] = []
    # the pipeline's own events: not a caller's writes before or after it, and not the
    # tools/result observers, which may outlive execute's return (whether execute awaits them
    # is not fixed: no driver controls it)
    own = {
        c.id: [e for e in c.events if e.get("stage") not in ("caller", "result")] for c in members
    }
    spans = {
        c.id: (view.position(own[c.id][0]), view.position(own[c.id][-1]))
        for c in members
        if own[c.id]
    }
    for j, (call, mode) in enumerate(zip(members, modes, strict=True)):
        if mode != "exclusive" or call.id not in spans:
            continue
        first, last = spans[call.id]
        for k, other in enumerate(members):
            if k == j:
                continue
            inside = [e for e in own[other.id] if first < view.position(e) < last]
            if inside:
                side = "before" if k < j else "after"
                problems.append(
                    f"exclusive {call.id} did not run alone: {other.id} (a call {side} it) "
                    f"ran {inside[0].get('stage')} while it ran"
                )
    published = [
        (view.position(c.entered("result")[0]), i)
        for i, c in enumerate(members)
        if c.entered("result")
    ]
    order = [i for _, i in sorted(published)]
    if order != sorted(order):
        problems.append(
            f"results were published in the order {[members[i].id for i in order]}, not model order"
        )
    return problems


def _barrier_parties(view: View, name: str) -> set[int]:
    return {
        int(step["barrier"]["parties"])
        for spec in view.tool_specs
        for step in spec.get("execute", [])
        if "barrier" in step and step["barrier"].get("name") == name
    }


@rule("CONC-2", "Scheduler")
def CONC_2(view: View) -> Iterator[Verdict]:
    """Parallel runs overlap (bounded), exclusive calls run alone, policy and results keep model
    order."""
    if not view.lifecycle_static:
        return
    for index, action, answer in view.answers("batch"):
        limit = action.get("maxParallel")
        results = answer.get("results")
        if small_pool(action):  # refused, or run as a pool of one: never a hang, never unbounded
            if view.refused_batch(index):
                yield _refused_pool(view, index, action)
                continue
            if not isinstance(results, list):
                raised = answer.get("raised")
                first = next(c for c in view.every_call if c.action_index == index)
                yield require(
                    False,
                    f"batch@{index}",
                    f"a batch with maxParallel {limit} must be refused or run as a pool of one; "
                    + (
                        f"it got no answer in time ({raised})"
                        if isinstance(raised, str)
                        else "it returned no results"
                    ),
                    # about the batch's answer: its first member, where it stopped
                    **view.at(first),
                )
                continue
            limit = 1
        if not isinstance(results, list):
            continue
        members = [c for c in view.calls if c.action_index == index]
        modes = [expected_mode(view, c.spec) for c in members]
        if any(m is None for m in modes):
            continue
        problems: list[str] = []
        blamed: list[Mapping[str, Any]] = []  # the events the problems are about
        # results in model order: result j is what was published for call j
        for j, call in enumerate(members):
            notified = call.entered("result")
            if notified and j < len(results) and notified[0].get("observed") != results[j]:
                problems.append(f"result {j} is not the result published for {call.id}")
                blamed.append(notified[0])
        # policy in model order: one call's policy stages end before the next call's begin
        spans = [(j, span) for j, c in enumerate(members) if (span := _policy_span(view, c))]
        firsts = sorted((span[0], j) for j, span in spans)
        order = [j for _, j in firsts]
        if order != sorted(order):
            problems.append(
                f"pre-execute ran in the order {[members[j].id for j in order]}, not model order"
            )
            blamed += [e for c in members for e in c.entered("pre-execute")]
        else:
            for (a, span_a), (b, span_b) in itertools.pairwise(spans):
                if span_b[0] < span_a[1]:
                    problems.append(
                        f"the policy stages of {members[b].id} began before those of "
                        f"{members[a].id} settled (only bodies may overlap)"
                    )
                    blamed += [*members[a].events, *members[b].entered("pre-execute")]
        overlaps = _overlap_both_ways(view, members, modes)
        problems += overlaps
        if overlaps:  # the members' pipelines that overlapped: their entries
            blamed += [e for c in members for e in c.events if e.get("at") == "enter"]
        # an exclusive body runs alone
        intervals = {c.id: _body_interval(view, c) for c in members}
        for call, mode in zip(members, modes, strict=True):
            mine = intervals[call.id]
            if mode != "exclusive" or mine is None:
                continue
            overlapping = [
                other
                for other, span in intervals.items()
                if other != call.id and span is not None and span[0] < mine[1] and mine[0] < span[1]
            ]
            if overlapping:
                problems.append(f"exclusive {call.id}'s body overlapped {overlapping}")
                blamed += [
                    e for c in members if c.id in {call.id, *overlapping} for e in c.entered("body")
                ]
        # the pool is bounded: never more than maxParallel bodies at once (one, for a pool
        # below one the driver ran)
        spans_open = [span for span in intervals.values() if span is not None]
        widest = max(
            (sum(1 for o in spans_open if o[0] <= span[0] < o[1]) for span in spans_open),
            default=0,
        )
        if isinstance(limit, int) and widest > limit:
            asked = action.get("maxParallel")
            problems.append(
                f"{widest} bodies ran at once, more than maxParallel {limit}"
                if asked == limit
                else f"asked for a pool of {asked}, the driver ran the batch but not as a pool "
                f"of one: {widest} bodies ran at once"
            )
            blamed += [e for c in members for e in c.entered("body")]
        # consecutive parallel bodies overlap: a barrier sized to the group (<= maxParallel) is met
        group_of: dict[str, int] = {}
        group = 0
        for call, mode in zip(members, modes, strict=True):
            if mode == "parallel":
                group_of[call.id] = group
            else:
                group += 1
        barrier_events = [
            e for e in view.trace.get("events", []) if "barrier" in e and e.get("stage") == "body"
        ]
        for name in sorted(
            {str(e["barrier"]) for e in barrier_events if e.get("call") in group_of}
        ):
            arrivals = [e for e in barrier_events if e["barrier"] == name]
            parties = _barrier_parties(view, name)
            groups = {group_of.get(str(e.get("call")), -1) for e in arrivals}
            if limit is None or len(parties) != 1 or len(groups) != 1 or -1 in groups:
                continue
            (p,) = parties
            if p > limit or len(arrivals) < p:
                continue
            if not all(e.get("met") for e in arrivals):
                problems.append(
                    f"parallel bodies meeting barrier {name!r} ({p} parties, maxParallel {limit}) "
                    "did not overlap"
                )
                blamed += arrivals
        if not problems:
            yield require(True, f"batch@{index}", "")
            continue
        about = next((c for c in members if any(e in blamed for e in c.events)), members[0])
        yield require(
            False,
            f"batch@{index}",
            "; ".join(problems),
            # the first member the problems name (its lane), and every event they are about
            **view.at(about, blamed),
        )


untested(
    "CONC-3",
    "Concurrent-safety obligations",
    "an obligation on tool authors (no mutation of parent-owned state, race tolerance); "
    "the registry's part is CONC-1 and CONC-2",
)


# --------------------------------------------------------------- focus

_NAME_MISSES = [m.value for m in near_misses("read_file", family("tool-name").classes)]

CLASSIFIERS: st.SearchStrategy[list[dict[str, Any]] | None] = st.one_of(
    st.sampled_from(
        [
            None,
            [{"return": True}],
            [{"return": True}],
            [{"return": {}}],
            [{"return": False}],
            [{"return": None}],
            [{"throw": "classifier broke"}],
            [{"observe": "arguments"}, {"return": True}],
        ]
    ),
    # method 1: every near miss of true (the table of literals) is exclusive
    near_misses_of("classifier-verdict").map(lambda verdict: [{"return": verdict}]),
    empty_values().map(lambda verdict: [{"return": verdict}]),  # method 2
)


@st.composite
def _mode_scenarios(draw: st.DrawFn) -> s.Scenario:
    tool = s.tool("read_file", [{"return": "ok"}])
    # method 5: one classifier answering each query by its own arguments (per-call verdicts)
    classifier = draw(st.one_of(CLASSIFIERS, st.just([{"pick": ["safe"]}])))
    if classifier is not None:
        tool["isConcurrencySafe"] = classifier
    if draw(st.booleans()):
        tool["parameters"] = {
            "type": "object",
            "required": ["path"],
            "properties": {"path": {"type": "string"}},
        }
    extra: dict[str, Any] = {}
    if draw(st.integers(0, 4)) == 0:
        tool["scope"] = draw(st.sampled_from(["main", "helper"]))
    if draw(st.integers(0, 5)) == 0:
        extra["registry"] = {"mode": draw(st.sampled_from(["code", "both"]))}
    queries = draw(
        st.lists(
            st.tuples(
                st.one_of(
                    st.sampled_from(["read_file", "read_file", "missing"]),
                    st.sampled_from(_NAME_MISSES),  # method 1: a near miss is another name
                ),
                st.sampled_from(
                    [
                        {},
                        {"path": "a"},
                        {"path": 1},
                        {"path": {"$special": "nan"}},
                        {"path": "a", "safe": True},
                        {"path": "b", "safe": False},
                        {"path": "c", "safe": 1},
                    ]
                ),
                s.AGENTS,
            ),
            min_size=1,
            max_size=3,
        )
    )
    tools = [tool]
    if "scope" not in tool and draw(st.integers(0, 2)) == 0:
        # another layer's definition of the name: it classifies its own calls, whatever the
        # other answered for the same arguments (a verdict is not a fact about name and args)
        shadow = s.tool("read_file", [{"return": "mine"}], key="read_file#main", scope="main")
        own = draw(CLASSIFIERS)
        if own is not None:
            shadow["isConcurrencySafe"] = own
        tools.append(shadow)
        same = draw(st.sampled_from([{"path": "a", "safe": True}, {"path": "b", "safe": False}]))
        pair = [("read_file", same, None), ("read_file", same, "main")]
        queries = [*queries, *(pair if draw(st.booleans()) else pair[::-1])]
    actions = [
        {"executionMode": s.call(f"q{i}", name, args, **({"agent": agent} if agent else {}))}
        for i, (name, args, agent) in enumerate(queries)
    ]
    return s.scenario("generated/CONC-1", tools, actions, **extra)


def _refused_pool(view: View, index: int, action: Mapping[str, Any]) -> Verdict:
    """A batch asked for a pool of fewer than one, refused: before any call of it ran."""
    members = [c for c in view.every_call if c.action_index == index]
    reached = sorted({c.id for c in members if any(e.get("at") == "enter" for e in c.events)})
    return require(
        not reached,
        f"batch [action {index}]",
        f"a batch with maxParallel {action.get('maxParallel')} that the driver refuses must be "
        f"refused before any call of it runs, but {reached} reached a stage",
        # the stages the members reached
        call=reached[0] if reached else members[0].id,
        events=[view.position(e) for c in members for e in c.events if e.get("at") == "enter"],
    )


@st.composite
def _batch_scenarios(draw: st.DrawFn) -> s.Scenario:
    before, size, after = draw(st.integers(0, 2)), draw(st.integers(1, 3)), draw(st.integers(0, 2))
    limit = draw(st.integers(1, 4))
    parties = max(1, min(size, limit))
    barrier = {"barrier": {"name": "group", "parties": parties}}
    safe = s.tool(
        "safe",
        [{"yield": 2}, barrier, {"yield": 3}, {"return": "parallel"}],
        isConcurrencySafe=[{"return": True}],
    )
    # parallel too, but done sooner after the barrier: completion order differs from model order
    quick = s.tool(
        "quick", [{"yield": 2}, barrier, {"return": "quick"}], isConcurrencySafe=[{"return": True}]
    )
    serial = s.tool(
        "serial",
        [{"yield": 3}, {"return": "exclusive"}],
        isConcurrencySafe=draw(
            st.sampled_from([[{"return": 1}], [{"return": False}], [{"throw": "no"}]])
        ),
    )
    group = draw(st.lists(st.sampled_from(["safe", "quick"]), min_size=size, max_size=size))
    names = ["serial"] * before + group + ["serial"] * after
    batch = [s.call(f"c{i}", name, {"path": str(i)}) for i, name in enumerate(names)]
    if draw(st.integers(0, 3)) == 0:  # method 5: one tool, a per-call verdict for each member
        answers = [name != "serial" for name in names]
        batch = [
            s.call(f"c{i}", "either", {"path": str(i), "safe": answer})
            for i, answer in enumerate(answers)
        ]
    if draw(st.integers(0, 7)) == 0:
        limit = 0  # a pool of zero: refused, or run as a pool of one (never hung, never unbounded)
    # no barrier: its exclusive members would wait at it alone; yields interleave overlap
    either = s.tool(
        "either",
        [{"yield": 3}, {"yield": 3}, {"pick": ["path"]}],
        isConcurrencySafe=[{"pick": ["safe"]}],
    )
    # method 12: the completion stages take turns too, so an exclusive call's barrier
    # released before its post-execute, finalizer and observers ran would show
    fields: dict[str, Any] = {
        "preExecute": [s.listener("policy", [{"delegate": True}])],
        "observers": [s.listener("observer", draw(st.sampled_from([[], [{"yield": 3}]])))],
    }
    if draw(st.booleans()):
        fields["postExecute"] = [s.listener("post", [{"yield": 3}, {"delegate": True}])]
    return s.scenario(
        "generated/CONC-2",
        [safe, quick, serial, either],
        [{"batch": batch, "maxParallel": limit}],
        **fields,
    )


focus("CONC-1", _mode_scenarios())
focus("CONC-2", _batch_scenarios(), "scheduler")
