"""FIN -- ⑤ finalizeContent, the tool's last mile."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from hypothesis import strategies as st

from conformance.judging.model import CallView, View
from conformance.judging.rules import focus
from conformance.judging.rules._base import Verdict, require, rule
from conformance.judging.rules._facts import (
    FINALIZERS,
    MISSING,
    OUTCOMES,
    TEXT,
    content_blocks,
    event_index,
    first_terminal,
    is_content,
    observers_for,
    outcome_scenario,
    resolved_spec,
)
from conformance.judging.rules._paths import disagreements
from conformance.scenario import strategies as s

# ------------------------------------------------------------------ helpers


def without(result: Mapping[str, Any] | None, *keys: str) -> dict[str, Any]:
    return {k: v for k, v in (result or {}).items() if k not in keys}


def finalize_exits(call: CallView) -> list[Mapping[str, Any]]:
    return call.exits("finalize")


# ------------------------------------------------------------- strategies


@st.composite
def outcome_scenarios(
    draw: st.DrawFn, finalizers: st.SearchStrategy[Any] = FINALIZERS
) -> s.Scenario:
    return outcome_scenario(
        draw(st.sampled_from(OUTCOMES)), draw(finalizers), observers=draw(st.integers(1, 2))
    )


# -------------------------------------------------------------------- rules


def _start_candidates(view: View, spec: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [t for t in view.tool_specs if t["name"] == spec["name"] and "finalizeContent" in t]


@rule("FIN-1", "Finalizer snapshot")
def FIN_1(view: View) -> Iterator[Verdict]:
    """Registering, disposing or replacing the tool mid-call keeps the finalizer resolved at the
    start."""
    if view.lifecycle_static:
        return
    for call in view.calls:
        if not call.returned:
            continue
        spec = resolved_spec(view, call)
        if spec is None or "finalizeContent" not in spec:
            continue
        mine = first_terminal(spec["finalizeContent"])
        if mine is None or mine[0] != "return":
            continue
        others = [
            first_terminal(t["finalizeContent"])
            for t in _start_candidates(view, spec)
            if t is not spec
        ]
        if not any(o != mine for o in others):
            continue  # no same-name replacement whose finalizer would be told apart
        returned = [e.get("returned", MISSING) for e in finalize_exits(call)]
        yield require(
            bool(returned) and all(r == mine[1] for r in returned),
            call.id,
            "the finalizer of the definition resolved when the call started must run (returning "
            f"{mine[1]!r}); "
            f"the finalizers that ran returned {returned!r}",
            # the finalizers' returns; none ran: the call's last event
            **view.at(call, finalize_exits(call)),
        )


@rule("FIN-2", "Exactly once per outcome")
def FIN_2(view: View) -> Iterator[Verdict]:
    """A resolved definition's finalizeContent runs exactly once, for every outcome, before
    tools/result."""
    # method 6: a nested call or sub-dispatch is finalized like its model-direct twin
    yield from disagreements(view, ("finalize",), "every execution is finalized exactly once")
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
        yield require(
            len(entered) == 1 and before,
            call.id,
            f"finalizeContent must run exactly once, before tools/result, for every outcome "
            f"(ran {len(entered)} times{'' if before else ', after tools/result'}; "
            f"outcome isError={call.is_error}, code={call.code})",
            # every run of the finalizer and the first notification; none: the last event
            **view.at(call, [*entered, *results[:1]]),
        )


@rule("FIN-3", "Content-only authority")
def FIN_3(view: View) -> Iterator[Verdict]:
    """The finalizer sees the complete result; returning nothing keeps content; content replaces
    only content."""
    for call in view.calls:
        if not call.returned or call.result is None:
            continue
        spec = resolved_spec(view, call)
        if spec is None or "finalizeContent" not in spec:
            continue
        exits = finalize_exits(call)
        if len(exits) != 1 or call.finalizer_threw():
            continue
        returned = exits[0].get("returned")
        if returned is not None and not is_content(returned):
            continue  # neither nothing nor content: a broken finalizer, FIN-4's latitude
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
        yield require(
            not problems,
            call.id,
            "; ".join(problems),
            # what the finalizer received and what it returned
            **view.at(
                call,
                [
                    *exits,
                    *(
                        e
                        for e in call.events
                        if e.get("stage") == "finalize" and e.get("what") == "result"
                    ),
                ],
            ),
        )


@rule("FIN-4", "Total finalizer")
def FIN_4(view: View) -> Iterator[Verdict]:
    """A throwing finalizer still yields exactly one published and returned result."""
    for call in view.calls:
        if not call.finalizer_threw():
            continue
        raised = call.raised_instead()
        if raised is not None:  # execute raised: no result was published or returned
            yield require(
                False,
                call.id,
                "after a throwing finalizer the registry must still publish and return exactly "
                f"one result; execute raised instead: {raised}",
                **view.at(call, stage="finalize", at="throw"),
            )
            continue
        if not call.returned or resolved_spec(view, call) is None:
            continue
        observers = len(observers_for(view, call))
        seen = call.notifications
        yield require(
            seen == observers,
            call.id,
            f"after a throwing finalizer the registry must still publish exactly one result "
            f"({observers} observer(s) should each be notified once; saw {seen} notification(s))",
            # the finalizer's throw and the notifications that followed
            **view.at(
                call,
                (
                    e
                    for e in call.events
                    if (e.get("stage") == "finalize" and e.get("at") == "throw")
                    or (e.get("stage") == "result" and e.get("at") == "enter")
                ),
            ),
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
