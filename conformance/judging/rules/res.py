"""RES -- tools/result: one frozen notification, returned = observed, the result shape."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from hypothesis import strategies as st

from conformance.judging.model import CallView, View
from conformance.judging.rules import focus
from conformance.judging.rules._base import Verdict, require, rule
from conformance.judging.rules._facts import (
    FINALIZERS,
    content_replaced,
    event_index,
    observers_for,
    outcome_scenario,
)
from conformance.judging.rules.pipe import cell_scenarios
from conformance.scenario import strategies as s

OBSERVER_SCRIPTS: st.SearchStrategy[list[dict[str, Any]]] = st.sampled_from(
    [
        [],
        [{"observe": "result"}],
        [
            {"mutate": {"target": "result", "path": ["isError"], "value": True}},
            {"observe": "result"},
        ],
        [{"mutate": {"target": "result", "path": ["content", 0, "text"], "value": "tampered"}}],
        [{"mutate": {"target": "result", "path": ["value"], "value": "tampered"}}],
        [{"mutate": {"target": "execution", "path": ["arguments", "path"], "value": "tampered"}}],
        [{"throw": "observer broke"}],
    ]
)


def _result_observations(call: CallView) -> list[Any]:
    """Every view of the result an observer recorded: on entry, and by ``observe: result``
    -- but not an observer reading back its own write (one that took effect): each observer
    may be handed its own copy, and the write is its own. Whether it leaked is what the
    *other* observers and the caller see."""
    seen = [e.get("observed") for e in call.entered("result")]
    seen += [
        e.get("observed")
        for e in call.events
        if e.get("stage") == "result"
        and e.get("what") == "result"
        and not call.wrote_before(e, "result")
    ]
    return seen


#: RES-1's clauses (SPEC RES-1): the portable set keeps ``once`` only.
RES_1_CLAUSES = {
    "once": "each call is answered once -- a result, or a closed form the implementation "
    "declares -- and, where there is a result, each of its observers hears it once",
    "after-finalization": "the notification comes after finalizeContent finished",
    "frozen": "observers can change neither the result nor the call: every observer and the "
    "caller see the same result, and the call as the caller made it",
    "contained": "an observer's exception changes nothing: the other observers still hear the "
    "result, and the caller still gets it",
}


@rule("RES-1", "One frozen notification", clauses=RES_1_CLAUSES)
def RES_1(view: View) -> Iterator[Verdict]:
    """One tools/result per execution, after finalization; observers can change nothing.

    A call closed in a form the implementation declares (the run raised, or stopped for an
    approval answer) has no result to publish: it is answered, and no observer has to hear
    of it (each may at most once). Only a raise that follows a *published success* breaks a
    clause: an observer's exception that reached the caller (``contained``)."""
    for call in view.calls:
        observers = observers_for(view, call)
        if not observers:
            continue
        threw = call.threw("result")
        if call.result is None and call.closed_otherwise() is not None:
            heard = [e for e in call.entered("result") if _published_success(e)]
            if threw and heard:
                yield require(
                    False,
                    call.id,
                    "observers heard a success, then the run raised: an observer's exception "
                    f"must be contained, not reach the caller ({call.closed_otherwise()})",
                    clause="contained",
                    # the successes heard and the observer's throw
                    **view.at(call, [*heard, *call.exits("result"), *call.broke("result")]),
                )
                continue
            twice = _notified_more_than_once(call, observers)
            yield require(
                not twice,
                call.id,
                f"the call closed ({call.closed_otherwise()}); no observer may hear it more than "
                f"once, but {'; '.join(twice)}",
                clause="once",
                # the notifications (else the call's last event: where it stopped)
                **view.at(call, call.entered("result")),
            )
            continue
        raised = call.raised_instead()
        if raised is not None:
            # exactly one notification per execution: a run that raised published none
            yield require(
                False,
                call.id,
                f"execute raised instead of publishing one result to the observers: {raised}"
                + (" (an observer threw: its exception must be contained)" if threw else ""),
                clause="contained" if threw else "once",
                # an observer's throw, else the notifications or the call's last event
                **view.at(
                    call,
                    [
                        e
                        for e in call.events
                        if e.get("stage") == "result" and e.get("at") == "throw"
                    ]
                    or call.entered("result"),
                ),
            )
            continue
        if not call.returned:
            continue
        once: list[str] = []
        dropped: list[str] = []
        for observer in observers:
            times = len(call.entered("result", str(observer["id"])))
            if times == 0 and threw:
                dropped.append(f"observer {observer['id']!r} was not notified after one threw")
            elif times != 1:
                once.append(f"observer {observer['id']!r} was notified {times} times, not once")
        yield require(
            not once,
            call.id,
            "; ".join(once),
            clause="once",
            # the notifications (else the call's last event: where it stopped)
            **view.at(call, call.entered("result")),
        )
        if threw:
            yield require(
                not dropped,
                call.id,
                "; ".join(dropped),
                clause="contained",
                # the observers' runs: the throw and the notifications that did come
                **view.at(call, stage="result"),
            )
        notified = call.entered("result")
        finals = [e for e in call.events if e.get("stage") == "finalize"]
        if notified and finals:
            yield require(
                event_index(view, finals[-1]) < event_index(view, notified[0]),
                call.id,
                "tools/result was published before finalizeContent finished",
                clause="after-finalization",
                **view.at(call, [finals[-1], notified[0]]),
            )
        frozen: list[str] = []
        seen = _result_observations(call)
        if any(v != seen[0] for v in seen):
            frozen.append(
                "observers saw different results: an observer changed what a later one sees"
            )
        if seen and call.result != seen[0]:
            frozen.append("an observer changed the result the caller got")
        changed = call.identity_changes(("result",))
        if changed:
            frozen.append(
                f"observers must see the call as {call.identity()} (an observer reading back "
                f"its own write aside): {'; '.join(changed)}"
            )
        yield require(
            not frozen,
            call.id,
            "; ".join(frozen),
            clause="frozen",
            # what the observers saw and wrote
            **view.at(
                call,
                (
                    e
                    for e in call.events
                    if e.get("stage") == "result" and ("observed" in e or "mutate" in e)
                ),
            ),
        )


def _published_success(event: Mapping[str, Any]) -> bool:
    observed = event.get("observed")
    return isinstance(observed, Mapping) and observed.get("isError") is False


def _notified_more_than_once(call: CallView, observers: list[Mapping[str, Any]]) -> list[str]:
    out = []
    for observer in observers:
        times = len(call.entered("result", str(observer["id"])))
        if times > 1:
            out.append(f"observer {observer['id']!r} was notified {times} times")
    return out


#: RES-2's clauses: the portable set keeps ``agree``.
RES_2_CLAUSES = {
    "agree": "where no observer writes, the result execute returns equals the one every "
    "observer received",
    "frozen": "an observer's write changes neither: the caller gets the result every observer "
    "was handed",
}


@rule("RES-2", "Returned = observed", clauses=RES_2_CLAUSES)
def RES_2(view: View) -> Iterator[Verdict]:
    """The result execute returns equals the one every observer received."""
    for call in view.calls:
        if not call.returned:
            continue
        notified = call.entered("result")
        if not notified:
            continue
        wrote = any(e.get("stage") == "result" and "mutate" in e for e in call.events)
        different = [e.get("id") for e in notified if e.get("observed") != call.result]
        yield require(
            not different,
            call.id,
            f"the returned result must equal what observers received; observer(s) {different} saw "
            f"{notified[0].get('observed')!r}, the caller got {call.result!r}"
            + (" (after an observer's write)" if wrote else ""),
            clause="frozen" if wrote else "agree",
            # the notifications whose result differs, and the observers' writes
            **view.at(
                call,
                (
                    e
                    for e in call.events
                    if e.get("stage") == "result"
                    and ("mutate" in e or (e in notified and e.get("id") in different))
                ),
            ),
        )


@rule("RES-3", "Result shape")
def RES_3(view: View) -> Iterator[Verdict]:
    """Success {value, content}; failure {error.message, content} without value; content `Error:
    <message>`."""
    for call in view.calls:
        result = call.result
        if result is None:
            continue
        problems: list[str] = []
        content = result.get("content")
        if not isinstance(content, list):
            problems.append("content must be a list of blocks")
        if result.get("isError") is False:
            if "value" not in result:
                problems.append("a success must carry value")
            if "error" in result:
                problems.append("a success must not carry error")
            if "concludesTurn" in result and result["concludesTurn"] is not True:
                problems.append("concludesTurn, when present, is true")
        elif result.get("isError") is True:
            error = result.get("error")
            message = error.get("message") if isinstance(error, Mapping) else None
            if not isinstance(message, str):
                problems.append("a failure must carry error.message (a string)")
            info = error.get("info") if isinstance(error, Mapping) else None
            if info is not None and not (
                isinstance(info, Mapping)
                and isinstance(info.get("name"), str)
                and isinstance(info.get("code"), str)
            ):
                problems.append("error.info, when present, is {name, code}")
            if "value" in result:
                problems.append("a failure must not carry value")
            if "concludesTurn" in result:
                problems.append("a failure must not carry concludesTurn")
            wanted = [{"type": "text", "text": f"Error: {message}"}]
            if isinstance(message, str) and content != wanted and not content_replaced(view, call):
                problems.append(
                    f"a failure's content must be {wanted!r} (no content authority replaced it), "
                    f"got {content!r}"
                )
        else:
            problems.append("isError must be true or false")
        yield require(
            not problems,
            call.id,
            "; ".join(problems),
            # about the result's shape: its notifications, else the call's last event
            **view.at(call, call.entered("result")),
        )


# --------------------------------------------------------------- focus

_OUTCOMES = st.sampled_from(
    [
        "success",
        "body-error",
        "body-error-unsaid",
        "deny",
        "ask-no-service",
        "guard",
        "invalid-args",
        "non-lossless-args",
        "wrapper-throws",
        "post-throws",
        "output-invalid",
        "abort-before",
        "abort-in-body",
        "post-block",
        "post-value",
        "defer-and-throw",
        "conclude",
        "malformed-decision",
    ]
)


@st.composite
def _observed_scenarios(draw: st.DrawFn) -> s.Scenario:
    finalizer: list[dict[str, Any]] | None = draw(st.one_of(st.none(), FINALIZERS))
    out = outcome_scenario(draw(_OUTCOMES), finalizer, observers=0)
    scripts = draw(st.lists(OBSERVER_SCRIPTS, min_size=1, max_size=3))
    out["observers"] = [s.listener(f"observer-{i}", steps) for i, steps in enumerate(scripts)]
    if draw(st.booleans()):
        out["actions"].append({"call": s.call("c1", "missing", {})})
    return out


focus(
    "RES-1",
    st.one_of(_observed_scenarios(), cell_scenarios(("post-execute", "finalize", "result"))),
)
focus("RES-2", _observed_scenarios())
focus("RES-3", _observed_scenarios())
