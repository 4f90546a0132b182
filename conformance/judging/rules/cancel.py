"""CANCEL -- cooperative cancellation."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from hypothesis import strategies as st

from conformance.judging.model import CallView, View
from conformance.judging.rules import focus
from conformance.judging.rules._base import Verdict, require, rule
from conformance.judging.rules._facts import (
    ABORTED_BEFORE_DISPATCH,
    SAFE_STEPS,
    SYNC_SAFE_STEPS,
    args_valid,
    arguments_of,
    has_special,
    is_content,
    may_abort,
    observers_for,
    resolved_spec,
    script_of,
    step_kinds,
    valid_against,
)
from conformance.scenario import strategies as s
from conformance.vocab import ErrorCode

ABORTED = ErrorCode.ABORTED


def _abort_flags(steps: Sequence[Mapping[str, Any]]) -> list[bool | None]:
    """Per ``observe: signal`` step, in order: did an ``abort`` step of its script run before?

    A recorded observation means every earlier step of its script ran. None: undecidable
    (a wrapper replaced its signal first, so it observes its own).
    """
    flags: list[bool | None] = []
    aborted, replaced = False, False
    for kind, step in zip(step_kinds(steps), steps, strict=True):
        if kind == "replaceSignal":
            replaced = True
        elif kind == "abort":
            aborted = True
        elif kind == "observe" and step["observe"] == "signal":
            flags.append(None if replaced else aborted)
    return flags


@rule("CANCEL-1", "Required caller-owned signal")
def CANCEL_1(view: View) -> Iterator[Verdict]:
    """Stages and the body see the caller's signal: it shows the caller's abort, and nothing else
    aborts it."""
    for call in view.unsignalled:  # a caller that forgot the signal: refused, untouched
        refused = call.is_error or (call.result is None and call.raised_instead() is not None)
        stages = sorted({str(e.get("stage")) for e in call.events if e.get("at") == "enter"})
        yield require(
            refused and not stages,
            call.id,
            "a call without a signal must be refused before any stage (an error or a raise), "
            f"but it {'was not refused' if not refused else 'was refused'}"
            + (f" after reaching {stages}" if stages else ""),
            # the stages it reached; none: its last event, or (no event) its answer
            **view.at(call, (e for e in call.events if e.get("at") == "enter")),
        )
    quiet = not may_abort(view.scenario, deadline=True)
    for call in view.calls:
        if not call.returned or call.spec.get("abortBefore"):
            continue
        problems: list[str] = []
        wrong: list[Mapping[str, Any]] = []  # the observations that showed the wrong signal
        checked = False
        seen: dict[tuple[str, str], int] = {}
        for e in call.observations("signal"):
            stage, ident = str(e.get("stage")), str(e.get("id"))
            nth = seen[(stage, ident)] = seen.get((stage, ident), -1) + 1
            if call.wrote_before(e, "signal"):
                continue  # it sees the signal it put there itself: EXEC-1 judges that write
            observed = e.get("observed")
            aborted = isinstance(observed, Mapping) and observed.get("aborted") is True
            if quiet:
                checked = True
                if aborted:
                    problems.append(
                        f"{stage} {ident!r} saw an aborted signal though nobody aborted"
                    )
                    wrong.append(e)
                continue
            # None for approval requests and log records: they need not carry a signal.
            steps = script_of(view, call, stage, ident, static_only=False)
            flags = _abort_flags(steps) if steps is not None else []
            if nth < len(flags) and flags[nth]:
                checked = True
                if not aborted:
                    problems.append(
                        f"{stage} {ident!r} aborted the caller's signal but its signal did not "
                        "show it"
                    )
                    wrong.append(e)
        if checked:
            yield require(
                not problems,
                call.id,
                "; ".join(problems) + " (the signal must be the caller's)",
                **view.at(call, wrong),
            )


def _reached_abort(steps: Sequence[Mapping[str, Any]], safe: frozenset[str]) -> int | None:
    """Index of the first ``abort`` step when only safe steps precede it."""
    for i, kind in enumerate(step_kinds(steps)):
        if kind == "abort":
            return i
        if kind not in safe:
            return None
    return None


def _denial_happened(view: View, call: CallView) -> bool:
    """Did a denial-class outcome (deny, refused ask, guard, fail-closed failure) happen before
    dispatch?"""
    if call.threw("pre-execute", "guard", "approval"):  # its own throw (method 11)
        return True
    if call.entered("pre-execute"):
        decision = call.decision()
        if not (isinstance(decision, Mapping) and decision.get("kind") == "allow"):
            if not (isinstance(decision, Mapping) and decision.get("kind") == "ask"):
                return True
            answers = [
                e for e in call.events if e.get("stage") == "approval" and e.get("at") == "answer"
            ]
            if not answers or answers[-1].get("returned") != "allowed-once":
                return True
    return any(e.get("returned") is not None for e in call.exits("guard"))


def _aborted_before_body(view: View, call: CallView) -> str | None:
    """Where a scripted abort certainly ran before the body could start, or None."""
    agent = call.spec.get("agent")
    for stage, key, safe in (
        ("pre-execute", "preExecute", SAFE_STEPS),
        ("guard", "guards", SYNC_SAFE_STEPS - {"abort"}),
    ):
        for listener in view.listeners(key, agent):
            if (
                call.entered(stage, str(listener["id"]))
                and _reached_abort(listener["steps"], safe) is not None
            ):
                return f"{stage} {listener['id']!r}"
    if "approval" in view.scenario and any(e.get("stage") == "approval" for e in call.events):
        approval = view.scenario["approval"]
        steps = approval.get("byCall", {}).get(call.id, approval["steps"])
        if _reached_abort(steps, SAFE_STEPS) is not None:
            return "the approval service"
    for listener in view.listeners("wrappers", agent):
        steps = listener["steps"]
        at = _reached_abort(steps, SAFE_STEPS)
        if at is None or not call.entered("wrapper", str(listener["id"])):
            continue
        rest = step_kinds(steps[at + 1 :])
        delegates = next((k for k in rest if k not in SAFE_STEPS | {"abort"}), None)
        if delegates in ("delegate", "callNext"):
            return f"wrapper {listener['id']!r} (before delegating)"
    return None


#: CANCEL-2's clauses (SPEC CANCEL-2): the portable set keeps ``body``.
CANCEL_2_CLAUSES = {
    "body": "a call cancelled before its body was invoked never runs the body",
    "code": "it is an error result ABORTED_BEFORE_DISPATCH (or the denial or INVALID_ARGS "
    "that also happened), published once -- or a closed form the implementation declares",
    "stages": "an entry already aborted reaches no stage before finalizeContent: no policy "
    "stage, no wrapper, no post-execute",
}


@rule("CANCEL-2", "Cancellation before dispatch", clauses=CANCEL_2_CLAUSES)
def CANCEL_2(view: View) -> Iterator[Verdict]:
    """Cancelled before the body: ABORTED_BEFORE_DISPATCH (or the denial / invalid args), no body,
    one result."""
    for call in view.calls:
        if not call.answered:
            continue
        spec = resolved_spec(view, call)
        if spec is None:
            continue
        observers = len(observers_for(view, call))
        args = arguments_of(call.spec)
        valid = args_valid(spec, args)
        if call.spec.get("abortBefore"):
            if valid is None:
                continue
            yield require(
                not call.body_entered,
                call.id,
                "already aborted on entry: the body must not run",
                clause="body",
                **view.at(call, stage="body"),
            )
            skipped = {"pre-execute", "approval", "guard", "wrapper", "post-execute"}
            reached = [e for e in call.events if e.get("stage") in skipped]
            stages = sorted({str(e.get("stage")) for e in reached})
            yield require(
                not stages,
                call.id,
                "already aborted on entry: the call must skip every stage up to finalizeContent "
                f"(policy, wrappers, the body, post-execute); entered {stages}",
                clause="stages",
                **view.at(call, reached),
            )
            if not call.returned:  # a declared closed form: closed, with no result to code
                yield require(True, call.id, "", clause="code")
                continue
            allowed = (
                {ErrorCode.INVALID_ARGS}
                if has_special(args)
                else {ABORTED_BEFORE_DISPATCH}
                if valid
                else {ABORTED_BEFORE_DISPATCH, ErrorCode.INVALID_ARGS}
            )
            problems = []
            # FIN-4: when finalizeContent threw, which error is published is the registry's choice.
            if call.code not in allowed and not call.finalizer_threw():
                problems.append(f"code must be one of {sorted(allowed)}, got {call.code}")
            if call.notifications != observers:
                problems.append(
                    f"exactly one result must be published ({call.notifications} notifications)"
                )
            yield require(
                not problems,
                call.id,
                "already aborted on entry: " + "; ".join(problems),
                clause="code",
                # about the answer: the notifications that published it, else the last event
                **view.at(call, call.entered("result")),
            )
            continue
        if not valid:
            continue
        where = _aborted_before_body(view, call)
        if where is None:
            continue
        yield require(
            not call.body_entered,
            call.id,
            f"cancelled in {where} before dispatch: the body must not run",
            clause="body",
            **view.at(call, stage="body"),
        )
        if not call.returned:  # a declared closed form: closed, with no result to code
            yield require(True, call.id, "", clause="code")
            continue
        # FIN-4: when finalizeContent threw, which error is published is the registry's choice
        # (it must still be an error, published once).
        ok_codes = (
            call.code == ABORTED_BEFORE_DISPATCH
            or call.finalizer_threw()
            or (call.is_error and _denial_happened(view, call) and call.code != ABORTED)
        )
        yield require(
            call.is_error and ok_codes and call.notifications == observers,
            call.id,
            f"cancelled in {where} before dispatch: the result must be ABORTED_BEFORE_DISPATCH "
            "(or the denial that also happened; any error when finalizeContent threw), "
            f"published once; got isError={call.is_error}, code={call.code}, "
            f"notifications={call.notifications}",
            # the abort before dispatch (the body that ran, when it did), else the last event
            # the body that ran and the notifications that published the result, else the
            # call's last event (what it did instead)
            **view.at(call, [*call.entered("body"), *call.entered("result")]),
            clause="code",
        )


def _simple_pipeline(view: View, call: CallView) -> bool:
    """No post-execute, no timeout policy, wrappers that only delegate: the body's outcome
    stands."""
    agent = call.spec.get("agent")
    if view.scenario.get("timeoutPolicy") or view.listeners("postExecute", agent):
        return False
    return all(
        set(step_kinds(w["steps"])) <= {"delegate"} for w in view.listeners("wrappers", agent)
    )


def _would_succeed(spec: Mapping[str, Any], value: Any) -> bool:
    output = spec.get("output", {})
    if has_special(value) or any(
        has_special(output.get(k)) for k in ("render", "presentationMeta")
    ):
        return False
    render = output.get("render")
    if isinstance(render, Mapping) and not is_content(render.get("const")):
        return False
    return valid_against(output.get("schema", {}), value)


@rule("CANCEL-3", "Cancellation after dispatch")
def CANCEL_3(view: View) -> Iterator[Verdict]:
    """Aborted after the body started: a success becomes ABORTED; a body error stays the body
    error."""
    for call in view.calls:
        if not call.returned or not call.body_entered or call.spec.get("abortBefore"):
            continue
        spec = resolved_spec(view, call)
        if spec is None or not _simple_pipeline(view, call):
            continue
        steps = spec["execute"]
        at = _reached_abort(steps, SAFE_STEPS | {"deferContext", "concludeTurn"})
        if at is None:
            continue
        end = next((st_ for st_ in steps[at:] if "return" in st_ or "throw" in st_), None)
        if (
            end is None
            or has_special(steps[: steps.index(end)])
            or any(
                k not in SAFE_STEPS | {"deferContext", "concludeTurn", "abort", "waitForAbort"}
                for k in step_kinds(steps[at : steps.index(end)])
            )
        ):
            continue
        if call.finalizer_threw():  # FIN-4: which error is published is the registry's choice
            yield require(
                call.is_error,
                call.id,
                "the caller aborted after the body started and the finalizer threw: the result "
                "must still be an error",
                **view.at(call, stage="finalize", at="throw"),
            )
        elif "throw" in end:
            yield require(
                call.is_error and call.code not in (ABORTED, ABORTED_BEFORE_DISPATCH),
                call.id,
                "the body threw after the abort: the body error is more specific and must stay "
                f"(got code {call.code})",
                **view.at(call, stage="body", at="throw"),
            )
        elif _would_succeed(spec, end["return"]):
            yield require(
                call.is_error and call.code == ABORTED,
                call.id,
                "the caller aborted after the body started and the body succeeded: the result "
                "must be ABORTED "
                f"(got isError={call.is_error}, code={call.code})",
                **view.at(call, stage="body", at="exit"),
            )


@rule("CANCEL-4", "No hard kill, no abandonment")
def CANCEL_4(view: View) -> Iterator[Verdict]:
    """execute returns only after the body settled: its exit precedes finalization, publication and
    later actions."""
    for call in view.calls:
        if not call.returned or not call.body_entered:
            continue
        settled = [
            e for e in call.events if e.get("stage") == "body" and e.get("at") in ("exit", "throw")
        ]
        later = [e for e in call.events if e.get("stage") in ("finalize", "result", "post-execute")]
        next_action = view.first_event_after(call.action_index)
        if next_action is not None:
            later.append(next_action)
        if not settled:
            yield require(
                False,
                call.id,
                "the call returned but its body never settled: the registry abandoned it",
                # the body's entry that never closed
                **view.at(call, stage="body"),
            )
            continue
        end = view.position(settled[-1])
        early = sorted({str(e.get("stage")) for e in later if view.position(e) < end})
        yield require(
            not early,
            call.id,
            "the registry must wait for the started body to settle, however long it ignores the "
            "abort; "
            f"{early} happened before the body settled",
            call=call.id,
            events=[end, *(view.position(e) for e in later if view.position(e) < end)],
        )


# --------------------------------------------------------------- focus


@st.composite
def _signal_scenarios(draw: st.DrawFn) -> s.Scenario:
    where = draw(
        st.sampled_from(
            ["body", "pre-execute", "guard", "wrapper", "post-execute", "finalize", "none"]
        )
    )
    observe = {"observe": "signal"}
    body: list[dict[str, Any]] = [observe, {"return": "ok"}]
    extra: dict[str, Any] = {
        "preExecute": [s.listener("policy", [observe, {"delegate": True}])],
        "guards": [s.listener("guard", [observe, {"return": None}])],
        "wrappers": [s.listener("wrap", [observe, {"delegate": True}])],
        "postExecute": [s.listener("post", [observe, {"delegate": True}])],
        "observers": [s.listener("observer", [observe])],
    }
    finalizer = [observe, {"return": None}]
    if where == "body":
        body = [{"abort": True}, observe, {"return": "ok"}]
    elif where == "finalize":
        finalizer = [{"abort": True}, observe, {"return": None}]
    elif where != "none":
        key = {
            "pre-execute": "preExecute",
            "guard": "guards",
            "wrapper": "wrappers",
            "post-execute": "postExecute",
        }[where]
        steps = extra[key][0]["steps"]
        extra[key][0]["steps"] = [{"abort": True}, *steps]
    tool = s.tool("t", body, finalizeContent=finalizer)
    actions: list[dict[str, Any]] = [{"call": s.call("c0", "t", {}, agent=draw(s.AGENTS))}]
    if draw(st.integers(0, 3)) == 0:  # a caller that forgets the signal, before or after
        forgetful = {**s.call("c-nosignal", "t", {}, agent=draw(s.AGENTS)), "withoutSignal": True}
        actions.insert(draw(st.integers(0, 1)), {"call": forgetful})
    return s.scenario("generated/CANCEL-1", [tool], actions, **extra)


@st.composite
def _before_scenarios(draw: st.DrawFn) -> s.Scenario:
    where = draw(st.sampled_from(["entry", "pre-execute", "approval", "guard", "wrapper"]))
    tool = s.tool("t", [{"return": "ok"}], finalizeContent=[{"return": None}])
    call = s.call(
        "c0",
        "t",
        draw(st.sampled_from([{}, {"path": "a"}, {"n": {"$special": "nan"}}])),
        agent="main",
    )
    if draw(st.booleans()):
        tool["parameters"] = {"type": "object", "required": ["path"]}
    extra: dict[str, Any] = {"observers": [s.listener("observer", [])]}
    decision: dict[str, Any] = draw(
        st.sampled_from(
            [
                {"delegate": True},
                {"return": {"kind": "allow"}},
                {"return": {"kind": "deny", "reason": "no"}},
            ]
        )
    )
    if where == "entry":
        call["abortBefore"] = True
        extra["preExecute"] = [s.listener("policy", [decision])]
        extra["guards"] = [s.listener("guard", [{"return": None}])]
        # the later stages too: none of them may run for an already-aborted entry
        extra["wrappers"] = [s.listener("wrap", [{"observe": "signal"}, {"delegate": True}])]
        extra["postExecute"] = [s.listener("post", [{"observe": "result"}, {"delegate": True}])]
    elif where == "pre-execute":
        extra["preExecute"] = [s.listener("policy", [{"abort": True}, decision])]
    elif where == "approval":
        extra["preExecute"] = [
            s.listener("policy", [{"return": {"kind": "ask", "reason": "check"}}])
        ]
        answer = draw(st.sampled_from(["allowed-once", "rejected"]))
        extra["approval"] = {"steps": [{"abort": True}, {"return": answer}]}
    elif where == "guard":
        extra["guards"] = [
            s.listener(
                "guard", [{"abort": True}, {"return": draw(st.sampled_from([None, "guarded"]))}]
            )
        ]
    else:
        extra["wrappers"] = [s.listener("wrap", [{"abort": True}, {"delegate": True}])]
        if draw(st.booleans()):
            extra["wrappers"].insert(0, s.listener("outer", [{"delegate": True}]))
    return s.scenario("generated/CANCEL-2", [tool], [{"call": call}], **extra)


@st.composite
def _after_scenarios(draw: st.DrawFn, slow: bool) -> s.Scenario:
    ending = draw(st.sampled_from([{"return": "ok"}, {"return": "ok"}, {"throw": "body failed"}]))
    body: list[dict[str, Any]] = [{"abort": True}]
    if slow:
        body.append({"yield": draw(st.sampled_from([5, 50, 200]))})
    elif draw(st.booleans()):
        body.append({"waitForAbort": True})
    body.append(ending)
    tool = s.tool("t", body, finalizeContent=[{"return": None}])
    extra: dict[str, Any] = {"observers": [s.listener("observer", [])]}
    if draw(st.booleans()):
        extra["wrappers"] = [s.listener("wrap", [{"delegate": True}])]
    if slow and draw(st.booleans()):
        extra["postExecute"] = [s.listener("post", [{"delegate": True}])]
    actions = [{"call": s.call("c0", "t", {}, agent=draw(s.AGENTS))}]
    if slow:
        actions.append({"call": s.call("c1", "t", {})})
    return s.scenario("generated/CANCEL", [tool], actions, **extra)


focus("CANCEL-1", _signal_scenarios())
focus("CANCEL-2", _before_scenarios())
focus("CANCEL-3", _after_scenarios(False))
focus("CANCEL-4", _after_scenarios(True))
