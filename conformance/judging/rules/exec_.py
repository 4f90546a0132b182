"""EXEC -- ③ tools/execute: around-wrappers, the signal, authored results, the timeout policy."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from hypothesis import strategies as st

from conformance.judging.model import CallView, View
from conformance.judging.rules import focus
from conformance.judging.rules._base import Verdict, require, rule
from conformance.judging.rules._facts import (
    MISSING,
    all_passive,
    arguments_of,
    content_may_be_replaced,
    executed,
    has_special,
    may_abort,
    next_raised,
    project,
    resolved_spec,
    same_json,
    script_of,
    step_kinds,
    terminal,
    valid_against,
)
from conformance.scenario import strategies as s
from conformance.scenario.methods import almost_results, empties
from conformance.vocab import ErrorCode

_NON_WRAPPER = ("pre-execute", "guard", "body", "post-execute", "finalize", "result")


def _end(call: CallView, stage: str, ident: Any) -> Mapping[str, Any] | None:
    return next(
        (
            e
            for e in call.events
            if e.get("stage") == stage and e.get("id") == ident and e.get("at") in ("exit", "throw")
        ),
        None,
    )


def _is_result(value: Any) -> bool:
    """RES-3's outline: a normalized result, not a raw value."""
    if not isinstance(value, Mapping) or not isinstance(value.get("isError"), bool):
        return False
    if not isinstance(value.get("content"), list):
        return False
    return ("error" in value) if value["isError"] else ("value" in value)


def _signal_observations(
    call: CallView, stage: str, ident: Any, steps: Sequence[Mapping[str, Any]]
) -> Iterator[tuple[int, Mapping[str, Any]]]:
    """(step index, observe event) for each ``observe: signal`` this callable recorded."""
    indices = [i for i, step in enumerate(steps) if step.get("observe") == "signal"]
    events = [
        e
        for e in call.events
        if e.get("stage") == stage
        and e.get("id") == ident
        and e.get("what") == "signal"
        and "observed" in e
    ]
    if len(events) > len(indices):
        return  # the callable ran more than once: PIPE-1's business
    yield from zip(indices, events, strict=False)


# -------------------------------------------------------------------- EXEC-1


@rule("EXEC-1", "Around-wrappers own the signal")
def EXEC_1(view: View) -> Iterator[Verdict]:
    """Wrappers run after guards and surround the body; next() gives a normalized result;
    no other stage can replace the signal."""
    for call in view.calls:
        if not call.returned:
            continue
        wrappers = call.entered("wrapper")
        guards = [e for e in call.events if e.get("stage") == "guard"]
        body = call.entered("body")
        if wrappers:
            first = call.index(wrappers[0])
            after_guards = all(call.index(g) < first for g in guards)
            surround = True
            if body:
                body_end = _end(call, "body", body[0].get("id"))
                b_in = call.index(body[0])
                b_out = call.index(body_end) if body_end else len(call.events)
                for w in wrappers:
                    w_end = _end(call, "wrapper", w.get("id"))
                    w_out = call.index(w_end) if w_end else len(call.events)
                    surround = surround and call.index(w) < b_in and w_out >= b_out
            yield require(
                after_guards and surround,
                call.id,
                "tools/execute wrappers must run after every guard and surround the body "
                f"(guards before wrappers: {after_guards}; wrappers around the body: {surround})",
                # the entries of the guards, the wrappers and the body: their order
                **view.at(
                    call,
                    (
                        e
                        for e in call.events
                        if e.get("stage") in ("guard", "wrapper", "body") and e.get("at") == "enter"
                    ),
                ),
            )
            for w in wrappers:
                steps = script_of(view, call, "wrapper", w.get("id")) or []
                last = terminal(steps)
                w_end = _end(call, "wrapper", w.get("id"))
                if last != {"delegate": True} or w_end is None or w_end.get("at") != "exit":
                    continue
                yield require(
                    _is_result(w_end.get("returned")),
                    call.id,
                    f"next() must give wrapper {w.get('id')} a normalized result; it gave "
                    f"{w_end.get('returned')!r}",
                    **view.at(call, [w_end]),
                )
            # method 11: a raise out of next() is not a wrapper's own failure (an inner
            # wrapper that threw, or returned no whole result, is one: it may propagate)
            broken = next_raised(call, "wrapper", lambda e: not _whole(e.get("returned")))
            yield require(
                not broken,
                call.id,
                f"next() of wrapper(s) {broken} raised although no inner wrapper failed: next() "
                "must give a normalized result (a body's error or an unknown tool included)",
                **view.at(call, stage="wrapper", at="throw"),
            )
        yield from _read_only_signal(view, call)


def _read_only_signal(view: View, call: CallView) -> Iterator[Verdict]:
    """After a replacement attempt and the caller's abort, a non-wrapper stage sees aborted."""
    seen: set[tuple[str, Any]] = set()
    for e in call.events:
        stage = e.get("stage")
        if stage not in _NON_WRAPPER or e.get("at") != "enter" or (stage, e.get("id")) in seen:
            continue
        seen.add((str(stage), e.get("id")))
        steps = script_of(view, call, str(stage), e.get("id"))
        if not steps:
            continue
        ran = executed(steps)
        for index, event in _signal_observations(call, str(stage), e.get("id"), steps):
            before = ran[:index]
            replaced = any(step.get("mutate", {}).get("target") == "signal" for step in before)
            aborted = any("abort" in step for step in before)
            if not (replaced and aborted):
                continue
            observed = event.get("observed") or {}
            yield require(
                observed.get("aborted") is True,
                call.id,
                f"the {stage} stage tried to replace its signal and then the caller aborted: its "
                "signal must be read-only and show the abort; it observed aborted="
                f"{observed.get('aborted')}",
                **view.at(call, [event]),
            )


# -------------------------------------------------------------------- EXEC-2


def _replacing(view: View, call: CallView) -> bool:
    """Did an entered wrapper replace the signal before delegating?"""
    for w in call.entered("wrapper"):
        steps = script_of(view, call, "wrapper", w.get("id")) or []
        for step in steps:
            if "replaceSignal" in step:
                return True
            if set(step) & {"delegate", "callNext", "return", "throw"}:
                break
    return False


def _aborts_its_own(view: View, call: CallView) -> list[str]:
    """The entered wrappers whose script aborted the signal it had put in place."""
    out = []
    for w in call.entered("wrapper"):
        kinds = step_kinds(executed(script_of(view, call, "wrapper", w.get("id")) or []))
        if "abortOwnSignal" in kinds and "replaceSignal" in kinds[: kinds.index("abortOwnSignal")]:
            out.append(str(w.get("id")))
    return out


def _restored(view: View, call: CallView) -> Iterator[Verdict]:
    """SPEC EXEC-2: the registry "MUST restore the caller's signal afterwards, so later stages
    see the caller's signal again" -- not the wrapper's, even when the wrapper aborted its own
    (the cleanup of its child work): with a caller that never aborts, no later stage sees an
    aborted signal and the call is not cancelled (CANCEL-3's cancellation is the caller's)."""
    owners = _aborts_its_own(view, call)
    if not owners or may_abort(view.scenario, call, deadline=True, own=False):
        return
    body_end = _end(call, "body", call.entered("body")[0].get("id"))
    seen = [
        e
        for e in call.observations("signal")
        if e.get("stage") in _AFTER_THE_BODY
        and body_end is not None
        and call.index(e) > call.index(body_end)
        and (e.get("observed") or {}).get("aborted") is True
    ]
    problems = [f"{e.get('stage')} {e.get('id')!r} saw an aborted signal" for e in seen]
    if call.code in (ErrorCode.ABORTED, ErrorCode.ABORTED_BEFORE_DISPATCH):
        problems.append(f"the call was reported {call.code}")
    yield require(
        not problems,
        call.id,
        f"wrapper(s) {owners} aborted the signal they put in place, and the caller never "
        "aborted: after the body, later stages must see the caller's signal again (not "
        "aborted), and the call is not cancelled: " + "; ".join(problems),
        **view.at(call, seen),
    )


_AFTER_THE_BODY = ("post-execute", "finalize", "result")


@rule("EXEC-2", "Caller cancellation survives replacement")
def EXEC_2(view: View) -> Iterator[Verdict]:
    """With a replaced signal, the body still sees the caller's abort; later stages see it too,
    and see the caller's signal again (not the wrapper's own, aborted or not)."""
    for call in view.calls:
        if call.returned and call.body_entered:
            yield from _restored(view, call)
    for call in view.calls:
        if not call.returned or not call.body_entered or not _replacing(view, call):
            continue
        body = call.entered("body")[0]
        steps = script_of(view, call, "body", body.get("id")) or []
        ran = executed(steps)
        abort_at = next((i for i, step in enumerate(ran) if "abort" in step), None)
        if abort_at is None:
            continue
        for index, event in _signal_observations(call, "body", body.get("id"), steps):
            if index <= abort_at:
                continue
            observed = event.get("observed") or {}
            yield require(
                observed.get("aborted") is True,
                call.id,
                "a wrapper replaced the signal, then the caller aborted during the body: the "
                "body's signal must be fused with the caller's and show the abort; it observed "
                f"aborted={observed.get('aborted')}",
                **view.at(call, [event]),
            )
        body_end = _end(call, "body", body.get("id"))
        if body_end is None:
            continue
        for event in call.observations("signal"):
            if event.get("stage") != "post-execute" or call.index(event) < call.index(body_end):
                continue
            observed = event.get("observed") or {}
            yield require(
                observed.get("aborted") is True,
                call.id,
                "after the body, post-execute must see the caller's signal again (which the "
                f"caller aborted); it observed aborted={observed.get('aborted')}",
                **view.at(call, [event]),
            )


# -------------------------------------------------------------------- EXEC-3


def _authored(view: View, call: CallView) -> Any:
    """The success the outermost entered wrapper authored itself, or MISSING: a ``return`` of
    its script, or what it kept from an earlier call and handed back (a ``returnKept`` hit: a
    cached result, as its exit recorded it)."""
    entered = call.entered("wrapper")
    if not entered:
        return MISSING
    ident = entered[0].get("id")
    mine = [e for e in call.events if e.get("stage") == "wrapper" and e.get("id") == ident]
    if any(e.get("what") == "returnKept" and e.get("met") is True for e in mine):
        authored = next((e.get("returned") for e in mine if e.get("at") == "exit"), None)
    else:
        steps = script_of(view, call, "wrapper", ident) or []
        last = terminal(steps)
        authored = last.get("return") if last else None
    if isinstance(authored, Mapping) and authored.get("isError") is False and "value" in authored:
        return authored
    return MISSING


@rule("EXEC-3", "Wrapper-authored successes normalized")
def EXEC_3(view: View) -> Iterator[Verdict]:
    """A wrapper's own success is validated against output.schema and rendered."""
    for call in view.calls:
        if not call.returned or may_abort(view.scenario, call, deadline=True):
            continue
        authored = _authored(view, call)
        spec = resolved_spec(view, call, static_only=True)
        if authored is MISSING or spec is None:
            continue
        if call.effective_exit("wrapper") is MISSING:
            continue  # the wrapper did not return (it threw): EXEC-4's business
        agent = call.spec.get("agent")
        if not all_passive(view, "postExecute", agent):
            continue
        value = authored["value"]
        output = spec.get("output", {})
        result = call.result or {}
        if has_special(value) or not valid_against(output.get("schema", {}), value):
            yield require(
                call.is_error and call.code == ErrorCode.INVALID_TOOL_OUTPUT,
                call.id,
                f"a wrapper authored the success value {value!r}, which is not valid output: the "
                "result must be INVALID_TOOL_OUTPUT; it is "
                f"isError={call.is_error}, code={call.code}",
                # the wrapper's return that the failure is about
                **view.at(call, stage="wrapper", at="exit"),
            )
            continue
        args = arguments_of(call)
        problems: list[str] = []
        if call.is_error:
            problems.append(f"it is an error ({call.code})")
        else:
            if not same_json(result.get("value"), value):
                problems.append(f"value {result.get('value')!r} is not the authored {value!r}")
            if "render" in output and not content_may_be_replaced(view, call, spec):
                ok = project(output["render"], args, value, content=True, got=result.get("content"))
                if ok is False:
                    problems.append(
                        f"content {result.get('content')!r} is not the render {output['render']!r}"
                    )
            if "presentationMeta" in output:
                ok = project(
                    output["presentationMeta"], args, value, content=False, got=result.get("meta")
                )
                if ok is False:
                    problems.append(
                        f"meta {result.get('meta')!r} is not the presentationMeta projection"
                    )
        yield require(
            not problems,
            call.id,
            f"a wrapper-authored success of {value!r} must be normalized like a body's value: "
            + "; ".join(problems),
            # the wrapper's return that the failure is about
            **view.at(call, stage="wrapper", at="exit"),
        )


# -------------------------------------------------------------------- EXEC-4


def _outer_return(view: View, call: CallView) -> Any:
    """What the outermost entered wrapper's script returned itself (MISSING: it did not)."""
    entered = call.entered("wrapper")
    if not entered or call.threw("wrapper"):
        return MISSING
    last = terminal(script_of(view, call, "wrapper", entered[0].get("id")) or [])
    return last["return"] if last is not None and "return" in last else MISSING


def _authored_failure(value: Any) -> str | None:
    """The message of a complete wrapper-authored failure (``isError``, ``error``, ``content``).

    A failure without its content is not a whole result: how a registry takes it is open.
    """
    if not isinstance(value, Mapping) or value.get("isError") is not True:
        return None
    if not isinstance(value.get("content"), list):
        return None
    error = value.get("error")
    message = error.get("message") if isinstance(error, Mapping) else None
    return message if isinstance(message, str) and message else None


def _not_a_result(value: Any) -> bool:
    """A wrapper's return that no reading makes a result: a number, a string, a list..."""
    return value is not MISSING and value is not None and not isinstance(value, Mapping)


def _almost(value: Any) -> bool:
    """A mapping a wrapper returned that no reading makes a result (method 10): its
    ``isError`` is not a boolean (``1``, ``"false"``, ``0``, null, absent), or it is a success
    without a value. Like a non-result, it fails the call."""
    if not isinstance(value, Mapping):
        return False
    flag = value.get("isError")
    return not isinstance(flag, bool) or (flag is False and "value" not in value)


def _whole(value: Any) -> bool:
    """A result a registry takes as it is: a success, or a failure with a message."""
    return _is_result(value) and (value["isError"] is False or _authored_failure(value) is not None)


def _published_once(view: View, call: CallView) -> list[str]:
    """Problems with "finalizeContent ran once and every observer was notified once"."""
    problems: list[str] = []
    spec = resolved_spec(view, call, static_only=True)
    if spec is not None and "finalizeContent" in spec and call.finalizer_calls != 1:
        problems.append(f"finalizeContent ran {call.finalizer_calls} times")
    observers = len(view.listeners("observers", call.spec.get("agent")))
    if observers and call.notifications != observers:
        problems.append(f"{call.notifications / observers:g} tools/result notifications")
    return problems


def _returned_failures(view: View, call: CallView) -> Iterator[Verdict]:
    """A wrapper that *returns* instead of throwing: a non-result, or its own failure."""
    returned = _outer_return(view, call)
    message = _authored_failure(returned)
    refused = _not_a_result(returned) or _almost(returned)
    failing = isinstance(returned, Mapping) and returned.get("isError") is True
    if not refused and message is None and not failing:
        return
    if may_abort(view.scenario, call, deadline=True):
        return
    if not refused and message is None:  # a failure that is not whole: an error all the same
        if call.returned:
            yield require(
                call.is_error,
                call.id,
                f"a wrapper returned the failure {returned!r} (not a whole one): however it is "
                "taken, the call is an error, never a success",
                # the wrapper's return that the failure is about
                **view.at(call, stage="wrapper", at="exit"),
            )
        return
    if not call.returned:
        yield require(
            False,
            call.id,
            f"the outermost wrapper returned {returned!r} instead of calling next(): the call "
            f"must still publish one error result, but execute raised: {call.raised}",
            # the wrapper's return that the failure is about
            **view.at(call, stage="wrapper", at="exit"),
        )
        return
    agent = call.spec.get("agent")
    problems: list[str] = []
    if not call.is_error:
        problems.append("the result is a success")
    if message is None:
        problems += _published_once(view, call)
        yield require(
            not problems,
            call.id,
            f"a wrapper returned {returned!r}, not a result: the call must end in exactly one "
            "published error result: " + "; ".join(problems),
            # the wrapper's return that the failure is about
            **view.at(call, stage="wrapper", at="exit"),
        )
        return
    if not all_passive(view, "postExecute", agent):
        return
    if call.is_error and message not in call.message():
        problems.append(f"the message {call.message()!r} does not carry {message!r}")
    if view.listeners("postExecute", agent) and not call.entered("post-execute"):
        problems.append("post-execute was not entered")
    yield require(
        not problems,
        call.id,
        f"a wrapper returned its own failure ({message!r}) as the dispatch result: it is an "
        "error carrying that message, and it reaches post-execute like a body's error: "
        + "; ".join(problems),
        # the wrapper's return that the failure is about
        **view.at(call, stage="wrapper", at="exit"),
    )


@rule("EXEC-4", "Wrapper failures bypass post-execute")
def EXEC_4(view: View) -> Iterator[Verdict]:
    """A throwing wrapper: an error, no post-execute, finalizeContent once, one notification.

    A wrapper that returns a non-result fails the call the same way (post-execute is then the
    registry's choice); a failure it returns as its result is the dispatch result: its message
    stands and post-execute sees it.
    """
    for call in view.calls:
        yield from _returned_failures(view, call)
        if not call.returned:
            continue
        if not call.threw("wrapper"):
            continue
        problems: list[str] = []
        if not call.is_error:
            problems.append("the result is a success")
        if call.entered("post-execute"):
            problems.append("post-execute was entered")
        problems += _published_once(view, call)
        yield require(
            not problems,
            call.id,
            "a throwing wrapper must yield an error result that bypasses post-execute and still "
            "reaches finalizeContent (once) and tools/result (once): " + "; ".join(problems),
            # the wrapper's throw and what followed it (post-execute, finalization, results)
            **view.at(
                call,
                (
                    e
                    for e in call.events
                    if (e.get("stage") == "wrapper" and e.get("at") == "throw")
                    or (
                        e.get("stage") in ("post-execute", "finalize", "result")
                        and e.get("at") == "enter"
                    )
                ),
            ),
        )


# -------------------------------------------------------------------- EXEC-5


def _timeout_ms(spec: Mapping[str, Any]) -> float | None:
    """The tool's ``timeoutMs`` when it is a number (None: absent, or not a number)."""
    timeout = spec.get("timeoutMs")
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
        return None
    return timeout


def _deadline(spec: Mapping[str, Any]) -> bool:
    timeout = _timeout_ms(spec)
    return timeout is not None and 0 < timeout <= 100


#: A ``timeoutMs`` no quick body comes near: a body of at most :data:`QUICK_YIELDS` turns that
#: returns is done long before it, on any clock (the kit's counted turns, a harness's real time).
GENEROUS_MS = 1000
QUICK_YIELDS = 10


def _quick(spec: Mapping[str, Any]) -> bool:
    """A body of a few ``yield`` steps and a ``return``, under a generous ``timeoutMs``."""
    timeout, body = _timeout_ms(spec), spec["execute"]
    if timeout is None or timeout < GENEROUS_MS or not body or "return" not in body[-1]:
        return False
    steps = body[:-1]
    return all(set(step) == {"yield"} for step in steps) and (
        sum(int(step["yield"]) for step in steps) <= QUICK_YIELDS
    )


def _not_early(view: View, call: CallView, spec: Mapping[str, Any]) -> Iterator[Verdict]:
    """SPEC EXEC-5: the wrapper aborts the body's signal *after* ``timeoutMs``: a quick body
    under a generous ``timeoutMs`` is never reported TOOL_TIMEOUT (a policy that fires early
    fails tools that finished in time)."""
    agent = call.spec.get("agent")
    if may_abort(view.scenario, call) or not all_passive(view, "wrappers", agent):
        return
    yield require(
        call.code != ErrorCode.TOOL_TIMEOUT,
        call.id,
        f"timeoutMs={spec['timeoutMs']} with a body that returns after a few turns: the timeout "
        "fired early (the wrapper must abort the body's signal only after timeoutMs)",
        **view.at(call, stage="body"),
    )


_SETTLING = ("body", "finalize", "result")


def _settled_first(call: CallView, body_end: Mapping[str, Any] | None) -> bool:
    """Did the body settle before finalization and ``tools/result``?"""
    later = [e for e in call.events if e.get("stage") in ("finalize", "result")]
    return body_end is not None and not (later and call.index(later[0]) < call.index(body_end))


def _timed_out_after_settling(
    view: View, call: CallView, body_end: Mapping[str, Any] | None
) -> Iterator[Verdict]:
    """SPEC EXEC-5: the wrapper "MUST wait for the body to settle before its result is
    returned": a TOOL_TIMEOUT comes after the body's exit, however long the body ignores its
    abort (a grace after which the wrapper stops waiting is abandonment all the same)."""
    yield require(
        _settled_first(call, body_end),
        call.id,
        "the call reported TOOL_TIMEOUT before its body settled: the timeout wrapper must "
        "wait for the body, however long it ignores the abort",
        # the body (its settling) and what came after it
        **view.at(call, (e for e in call.events if e.get("stage") in _SETTLING)),
    )


@rule("EXEC-5", "Timeout policy is a wrapper")
def EXEC_5(view: View) -> Iterator[Verdict]:
    """A body waiting on its signal past timeoutMs: TOOL_TIMEOUT, once the body settled; a
    quick body under a generous timeoutMs: no TOOL_TIMEOUT."""
    if not view.scenario.get("timeoutPolicy"):
        return
    for call in view.calls:
        if not call.returned or not call.body_entered:
            continue
        spec = resolved_spec(view, call, static_only=True)
        if spec is not None and _quick(spec):
            yield from _not_early(view, call, spec)
            continue
        if spec is None or not _deadline(spec):
            continue
        agent = call.spec.get("agent")
        if call.spec.get("abortBefore") or any("abort" in step for step in spec["execute"]):
            continue
        if not (all_passive(view, "wrappers", agent) and all_passive(view, "postExecute", agent)):
            continue
        body = call.entered("body")[0]
        body_end = _end(call, "body", body.get("id"))
        first = next((step for step in spec["execute"] if "yield" not in step), None)
        if first != {"waitForAbort": True}:
            if call.code == ErrorCode.TOOL_TIMEOUT:  # whatever the body did meanwhile
                yield from _timed_out_after_settling(view, call, body_end)
            continue
        waits = [
            e for e in call.events if e.get("stage") == "body" and e.get("what") == "waitForAbort"
        ]
        problems: list[str] = []
        if call.code != ErrorCode.TOOL_TIMEOUT:
            problems.append(f"the result is isError={call.is_error}, code={call.code}")
        if not waits or waits[0].get("met") is not True:
            problems.append("the body's signal never aborted")
        if body_end is None:
            problems.append("the body never settled before the run ended")
        elif not _settled_first(call, body_end):
            problems.append("finalization or tools/result came before the body settled")
        yield require(
            not problems,
            call.id,
            f"timeoutMs={spec['timeoutMs']} with a body that waits on its signal: the timeout "
            "wrapper must abort the body's signal, wait for it to settle and report TOOL_TIMEOUT: "
            + "; ".join(problems),
            # the body (its signal, its settling) and what came after it
            **view.at(call, (e for e in call.events if e.get("stage") in ("body", "finalize"))),
        )


# ---------------------------------------------------------------- strategies


@st.composite
def _signal_scenarios(draw: st.DrawFn) -> dict[str, Any]:
    name = draw(s.NAMES)
    replace: dict[str, Any] = {"mutate": {"target": "signal", "path": [], "value": None}}
    body: Any = draw(
        st.sampled_from(
            [
                [replace, {"abort": True}, {"observe": "signal"}, {"return": "ok"}],
                [
                    {"observe": "signal"},
                    replace,
                    {"abort": True},
                    {"observe": "signal"},
                    {"return": "ok"},
                ],
                [{"abort": True}, replace, {"observe": "signal"}, {"throw": "late"}],
                [{"return": "ok"}],
            ]
        )
    )
    fields: dict[str, Any] = {"observers": [s.listener("observer", [])]}
    wrappers = [s.listener("wrap", [{"observe": "signal"}, {"delegate": True}])]
    if draw(st.booleans()):
        wrappers.append(s.listener("inner", [{"callNext": True}, {"returnNext": True}]))
    fields["wrappers"] = wrappers
    if draw(st.booleans()):
        fields["guards"] = [s.listener("guard", [{"observe": "signal"}, {"return": None}])]
    if draw(st.booleans()):
        fields["postExecute"] = [
            s.listener(
                "post", [replace, {"abort": True}, {"observe": "signal"}, {"delegate": True}]
            )
        ]
    if draw(st.booleans()):
        fields["preExecute"] = [
            s.listener("pre", [replace, {"observe": "signal"}, {"delegate": True}])
        ]
    tool = s.tool(name, body, finalizeContent=[replace, {"observe": "signal"}, {"return": None}])
    return s.scenario(
        "generated/EXEC-1", [tool], [{"call": s.call("c0", name, draw(s.arguments()))}], **fields
    )


focus("EXEC-1", _signal_scenarios())


#: Wrappers that abort the signal they put in place, after next() or before it.
_OWN_ABORTS: list[list[dict[str, Any]]] = [
    [{"replaceSignal": True}, {"callNext": True}, {"abortOwnSignal": True}, {"returnNext": True}],
    [{"replaceSignal": True}, {"abortOwnSignal": True}, {"delegate": True}],
]


@st.composite
def _fuse_scenarios(draw: st.DrawFn) -> dict[str, Any]:
    name = draw(s.NAMES)
    tail: Any = draw(st.sampled_from([{"return": "ok"}, {"throw": "stopped"}]))
    body = [{"observe": "signal"}, {"abort": True}, {"observe": "signal"}, tail]
    wrapper: Any = draw(
        st.sampled_from(
            [
                [{"replaceSignal": True}, {"delegate": True}],
                [
                    {"replaceSignal": True},
                    {"callNext": True},
                    {"observe": "signal"},
                    {"returnNext": True},
                ],
            ]
        )
    )
    if draw(st.booleans()):  # the wrapper aborts its own signal (its child work's cleanup)
        body = [{"observe": "signal"}, tail]
        wrapper = draw(st.sampled_from(_OWN_ABORTS))
    wrappers = [s.listener("timeout-like", wrapper)]
    if draw(st.booleans()):
        wrappers.insert(0, s.listener("outer", [{"delegate": True}]))
    fields: dict[str, Any] = {
        "wrappers": wrappers,
        "postExecute": [s.listener("post", [{"observe": "signal"}, {"delegate": True}])],
        "observers": [s.listener("observer", [])],
    }
    return s.scenario(
        "generated/EXEC-2",
        [s.tool(name, body)],
        [{"call": s.call("c0", name, draw(s.arguments()))}],
        **fields,
    )


focus("EXEC-2", _fuse_scenarios())


@st.composite
def _outputs(draw: st.DrawFn) -> dict[str, Any]:
    """An output declaration an authored value may or may not satisfy."""
    schema = draw(
        st.sampled_from(
            [{}, {"type": "string"}, {"type": "object", "properties": {"n": {"type": "integer"}}}]
        )
    )
    output: dict[str, Any] = {
        "schema": schema,
        "render": draw(st.sampled_from(["json", "text", "call"])),
    }
    if draw(st.booleans()):
        output["presentationMeta"] = "value"
    return output


_OUTPUTS = _outputs()


@st.composite
def _authored_scenarios(draw: st.DrawFn) -> dict[str, Any]:
    name = draw(s.NAMES)
    value = draw(st.one_of(st.sampled_from(["cached", 3, {"n": 1}, {"n": "x"}, None]), s.special()))
    authored: dict[str, Any] = {"isError": False, "value": value}
    if draw(st.booleans()):
        authored["content"] = [{"type": "text", "text": "stale content"}]
    steps: Any = draw(
        st.sampled_from(
            [
                [{"return": authored}],
                [{"observe": "arguments"}, {"return": authored}],
                [{"callNext": True}, {"return": authored}],
            ]
        )
    )
    output = draw(_OUTPUTS)
    fields: dict[str, Any] = {
        "wrappers": [s.listener("cache", steps)],
        "observers": [s.listener("observer", [])],
    }
    if draw(st.booleans()):
        fields["postExecute"] = [s.listener("post", [{"observe": "result"}, {"delegate": True}])]
    tool = s.tool(name, [{"return": "fresh"}], output=output)
    return s.scenario(
        "generated/EXEC-3", [tool], [{"call": s.call("c0", name, draw(s.arguments()))}], **fields
    )


#: A caching wrapper: the first call's result is kept, and every later call is answered with it
#: (a cache keyed too loosely: another tool, other arguments) without calling next().
CACHE: list[dict[str, Any]] = [{"returnKept": "cache"}, {"keep": "cache"}, {"delegate": True}]


@st.composite
def _cached_scenarios(draw: st.DrawFn) -> dict[str, Any]:
    """The success a wrapper hands back is another call's result object, already rendered: it is
    normalized all the same, through the output declaration of the tool of *this* call."""
    first, second = draw(st.lists(s.NAMES, min_size=2, max_size=2, unique=True))
    value = draw(st.sampled_from(["fresh", 3, {"n": 1}, {"n": "x"}]))
    output = draw(_OUTPUTS)
    tools = [
        s.tool(first, [{"return": value}]),
        s.tool(second, [{"return": "second"}], output=output),
    ]
    target = draw(st.sampled_from([first, second]))  # the same tool again, or another one
    calls = [
        {"call": s.call("c0", first, {"path": "a"})},
        {"call": s.call("c1", target, {"path": "b"})},
    ]
    fields: dict[str, Any] = {
        "wrappers": [s.listener("cache", CACHE)],
        "observers": [s.listener("observer", [])],
    }
    return s.scenario("generated/EXEC-3-cached", tools, calls, **fields)


focus("EXEC-3", st.one_of(_authored_scenarios(), _cached_scenarios()), "presentation")


AUTHORED_FAILURE: Mapping[str, Any] = {
    "isError": True,
    "error": {"message": "quota exceeded"},
    "content": [{"type": "text", "text": "quota exceeded"}],
}


@st.composite
def _throwing_scenarios(draw: st.DrawFn) -> dict[str, Any]:
    name = draw(s.NAMES)
    steps: Any = draw(
        st.sampled_from(
            [
                [{"throw": "wrapper broke"}],
                [{"callNext": True}, {"throw": "wrapper broke after next"}],
                [{"observe": "signal"}, {"throw": "wrapper broke"}],
                # returning instead of throwing: a non-result, or the wrapper's own failure
                [{"return": 42}],
                [{"callNext": True}, {"return": 42}],
                [{"callNext": True}, {"return": ["not", "a", "result"]}],
                [{"return": AUTHORED_FAILURE}],
                [{"observe": "arguments"}, {"return": AUTHORED_FAILURE}],
                [{"callNext": True}, {"return": AUTHORED_FAILURE}],
                # method 2: an empty value is no result either
                *([{"return": v}] for v in empties() if v is not None),
                # method 10: mappings that almost are a result
                *([{"return": row}] for row, _ in almost_results()),
                *([{"callNext": True}, {"return": row}] for row, _ in almost_results()),
            ]
        )
    )
    wrappers = [s.listener("broken", steps)]
    if draw(st.booleans()):
        wrappers.insert(0, s.listener("outer", [{"delegate": True}]))
    fields: dict[str, Any] = {
        "wrappers": wrappers,
        "postExecute": [
            s.listener("post", [{"observe": "result"}, {"return": draw(s.post_decisions())}])
        ],
        "observers": [s.listener("observer", [])],
    }
    tool = s.tool(name, draw(s.body_scripts()), finalizeContent=[{"return": None}])
    return s.scenario(
        "generated/EXEC-4", [tool], [{"call": s.call("c0", name, draw(s.arguments()))}], **fields
    )


focus("EXEC-4", _throwing_scenarios())


@st.composite
def _timeout_scenarios(draw: st.DrawFn) -> dict[str, Any]:
    name = draw(s.NAMES)
    tail: Any = draw(st.sampled_from([{"return": "late"}, {"throw": "interrupted"}]))
    body = [
        *draw(st.sampled_from([[], [{"yield": 2}]])),
        {"waitForAbort": True},
        {"yield": 3},
        tail,
    ]
    timeout_ms = draw(st.sampled_from([1, 5, 10]))
    if draw(st.booleans()):  # a quick body under a generous deadline: it must not time out
        body = [{"yield": draw(st.integers(1, QUICK_YIELDS))}, {"return": "in time"}]
        timeout_ms = draw(st.sampled_from([GENEROUS_MS, 2 * GENEROUS_MS]))
    tool = s.tool(name, body, timeoutMs=timeout_ms, finalizeContent=[{"return": None}])
    fields: dict[str, Any] = {"timeoutPolicy": True, "observers": [s.listener("observer", [])]}
    if draw(st.booleans()):
        fields["postExecute"] = [s.listener("post", [{"observe": "result"}, {"delegate": True}])]
    if draw(st.booleans()):
        fields["wrappers"] = [s.listener("metrics", [{"delegate": True}])]
    return s.scenario(
        "generated/EXEC-5", [tool], [{"call": s.call("c0", name, draw(s.arguments()))}], **fields
    )


focus("EXEC-5", _timeout_scenarios(), "timeout-policy")
