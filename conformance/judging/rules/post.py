"""POST -- ④ tools/post-execute: what it sees, accept, block, failures, contexts."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from hypothesis import strategies as st

from conformance.judging.model import CallView, View
from conformance.judging.rules import focus
from conformance.judging.rules._base import Verdict, require, rule
from conformance.judging.rules._facts import (
    MISSING,
    all_passive,
    arguments_of,
    executed,
    finalizer_may_replace,
    has_special,
    may_abort,
    next_raised,
    project,
    resolved_spec,
    same_json,
    scripted_decision,
    valid_against,
)
from conformance.scenario import strategies as s
from conformance.scenario.methods import empty_values
from conformance.vocab import ErrorCode


def _input_result(call: CallView) -> Any:
    """The result post-execute received, as its first-entered listener observed it."""
    entered = call.entered("post-execute")
    if not entered:
        return MISSING
    first = entered[0].get("id")
    seen = [
        e
        for e in call.events
        if e.get("stage") == "post-execute" and e.get("id") == first and e.get("what") == "result"
    ]
    return seen[0].get("observed") if seen else MISSING


def _content_ok(content: Any) -> bool:
    return isinstance(content, list) and all(
        isinstance(b, Mapping) and isinstance(b.get("type"), str) and not has_special(b)
        for b in content
    )


def _feedback(decision: Mapping[str, Any]) -> list[Any] | None:
    """The content a block's feedback stands for: a text, or content blocks; None if malformed."""
    feedback = decision.get("feedback")
    if isinstance(feedback, str) and feedback:
        return [{"type": "text", "text": feedback}]
    if isinstance(feedback, list) and feedback and _content_ok(feedback):
        return feedback
    return None


# -------------------------------------------------------------------- POST-1


@rule("POST-1", "Post-execute sees dispatch results")
def POST_1(view: View) -> Iterator[Verdict]:
    """Body errors and successes reach post-execute; next() accepts unchanged."""
    for call in view.calls:
        raised = None if call.finalizer_threw() else call.raised_instead()  # FIN-4's, if so
        agent = call.spec.get("agent")
        if (
            raised is not None
            and call.threw("body")
            and not call.threw("wrapper", "post-execute")
            and view.listeners("postExecute", agent)
            and all_passive(view, "wrappers", agent)
        ):
            yield require(  # POST-4 judges a throwing post-execute listener's raise
                False,
                call.id,
                "the body threw: its error must be a result that reaches post-execute; execute "
                f"raised instead: {raised}",
                **view.at(call, stage="body", at="throw"),
            )
            continue
        if not call.returned or not call.body_entered:
            continue
        listeners = view.listeners("postExecute", agent)
        if (
            not listeners
            or not all_passive(view, "wrappers", agent)
            or may_abort(
                view.scenario, call, deadline=True
            )  # a cancelled call may turn ABORTED before post-execute
        ):
            continue
        body = call.entered("body")[0]
        threw = call.threw("body")
        exited = any(e.get("stage") == "body" and e.get("at") == "exit" for e in call.events)
        if not (threw or exited):
            continue
        observed = _input_result(call)
        problems: list[str] = []
        if not call.entered("post-execute"):
            problems.append("post-execute was not entered")
        elif (
            threw
            and observed is not MISSING
            and not (isinstance(observed, Mapping) and observed.get("isError") is True)
        ):
            problems.append(f"it received {observed!r} instead of an error result")
        broken = next_raised(  # method 11: next() answers, it does not raise
            call,
            "post-execute",
            lambda e: (
                not (
                    isinstance(e.get("returned"), Mapping)
                    and e["returned"].get("kind") in ("accept", "block")
                )
            ),
        )
        if broken:
            problems.append(f"next() of {broken} raised although no later listener failed")
        yield require(
            not problems,
            call.id,
            f"the body {body.get('id')} {'threw' if threw else 'returned'}: its normalized result "
            "must reach post-execute: " + "; ".join(problems),
            # what post-execute saw (its entries, observations, next() calls), else the last event
            **view.at(call, stage="post-execute"),
        )
        if (
            all_passive(view, "postExecute", agent)
            and observed is not MISSING
            and not may_abort(view.scenario, call, deadline=True)
        ):
            yield _unchanged(
                view,
                call,
                observed,
                finalizer_may_replace(resolved_spec(view, call, static_only=True)),
            )


def _unchanged(view: View, call: CallView, observed: Any, finalized: bool) -> Verdict:
    result = call.result or {}
    keys = ["isError", "value", "meta", "error"] + ([] if finalized else ["content"])
    differ = [
        k
        for k in keys
        if not same_json(observed.get(k) if isinstance(observed, Mapping) else None, result.get(k))
    ]
    return require(
        not differ,
        call.id,
        f"post-execute listeners that only call next() accept the result unchanged; {differ} "
        f"changed from {observed!r} to {result!r}",
        # what the body returned and what post-execute passed on
        **view.at(
            call,
            (
                e
                for e in call.events
                if e.get("stage") in ("body", "post-execute") and e.get("at") == "exit"
            ),
        ),
    )


# -------------------------------------------------------------------- POST-2


def _decision(view: View, call: CallView, kinds: tuple[str, ...]) -> Mapping[str, Any] | None:
    """The post-execute decision, as scripted, when the listener that made it returned it."""
    decision = scripted_decision(view, call, "post-execute")
    if call.effective_exit("post-execute") is MISSING:
        return None  # the outermost listener threw: no decision was returned
    if isinstance(decision, Mapping) and decision.get("kind") in kinds:
        return decision
    return None


@rule("POST-2", "Replace content or value, not both")
def POST_2(view: View) -> Iterator[Verdict]:
    """accept may replace content (value and meta kept) or value (revalidated, re-rendered)."""
    for call in view.calls:
        if not call.returned or may_abort(view.scenario, call, deadline=True):
            continue
        decision = _decision(view, call, ("accept",))
        before = _input_result(call)
        spec = resolved_spec(view, call, static_only=True)
        if decision is None or not isinstance(before, Mapping) or spec is None:
            continue
        result = call.result or {}
        output = spec.get("output", {})
        args = arguments_of(call)
        finalized = finalizer_may_replace(spec)
        has_content, has_value = "content" in decision, "value" in decision
        if has_content and has_value:
            content, value = decision["content"], decision["value"]
            if same_json(content, before.get("content")) or same_json(value, before.get("value")):
                continue
            both = (
                not call.is_error
                and same_json(result.get("value"), value)
                and (finalized or same_json(result.get("content"), content))
            )
            yield require(
                not both,
                call.id,
                "an accept carrying both content and value must not be applied as given; the "
                f"result carries both: {result!r}",
                # the post-execute decision the result is about
                **view.at(call, stage="post-execute", at="exit"),
            )
        elif has_content:
            if not _content_ok(decision["content"]) or finalized:
                continue
            problems = []
            if not same_json(result.get("content"), decision["content"]):
                problems.append(f"content is {result.get('content')!r}")
            if bool(call.is_error) != bool(before.get("isError")):
                problems.append("isError changed")
            for key in ("value", "meta"):
                if not same_json(result.get(key), before.get(key)):
                    problems.append(
                        f"{key} changed from {before.get(key)!r} to {result.get(key)!r}"
                    )
            yield require(
                not problems,
                call.id,
                "an accept with replacement content must replace the content and keep value "
                "and meta: " + "; ".join(problems),
                # the post-execute decision the result is about
                **view.at(call, stage="post-execute", at="exit"),
            )
        elif has_value:
            if before.get("isError") is not False:
                continue  # what a replacement value does to a failure is open (POST-2)
            value = decision["value"]
            if has_special(value) or not valid_against(output.get("schema", {}), value):
                yield require(
                    call.is_error and call.code == ErrorCode.INVALID_TOOL_OUTPUT,
                    call.id,
                    f"the replacement value {value!r} is not valid output: the result must be "
                    f"INVALID_TOOL_OUTPUT; it is isError={call.is_error}, code={call.code}",
                    # the post-execute decision the result is about
                    **view.at(call, stage="post-execute", at="exit"),
                )
                continue
            problems = []
            if call.is_error:
                problems.append(f"the result is an error ({call.code})")
            else:
                if not same_json(result.get("value"), value):
                    problems.append(f"value is {result.get('value')!r}")
                got = result.get("content")
                rendered = project(output.get("render"), args, value, content=True, got=got)
                if "render" in output and not finalized and rendered is False:
                    problems.append(f"content {got!r} is not re-rendered")
                if "presentationMeta" in output:
                    meta = result.get("meta")
                    if (
                        project(output["presentationMeta"], args, value, content=False, got=meta)
                        is False
                    ):
                        problems.append(f"meta {meta!r} is not recomputed")
            yield require(
                not problems,
                call.id,
                f"an accept with the valid replacement value {value!r} must be revalidated and "
                "re-rendered: " + "; ".join(problems),
                # the post-execute decision the result is about
                **view.at(call, stage="post-execute", at="exit"),
            )


# -------------------------------------------------------------------- POST-3


@rule("POST-3", "Block")
def POST_3(view: View) -> Iterator[Verdict]:
    """block(feedback): a failure whose content is the feedback, with no value."""
    for call in view.calls:
        if not call.returned:
            continue
        decision = _decision(view, call, ("block",))
        if decision is None:
            continue
        feedback = decision.get("feedback")
        wanted = _feedback(decision)
        if wanted is None:
            continue
        result = call.result or {}
        problems: list[str] = []
        if not call.is_error:
            problems.append("the result is a success")
        if "value" in result:
            problems.append("it carries a value")
        authored = finalizer_may_replace(resolved_spec(view, call, static_only=True))
        if (
            not authored
            and not call.finalizer_threw()
            and not same_json(result.get("content"), wanted)
        ):
            problems.append(f"its content is {result.get('content')!r}")
        yield require(
            not problems,
            call.id,
            f"block({feedback!r}) must yield a failure whose content is the feedback and that "
            "carries no value: " + "; ".join(problems),
            # the post-execute decision the result is about
            **view.at(call, stage="post-execute", at="exit"),
        )


# -------------------------------------------------------------------- POST-4


@rule("POST-4", "Throwing post-execute listener")
def POST_4(view: View) -> Iterator[Verdict]:
    """A throwing post-execute listener yields an error result, still finalized -- or, where
    the implementation declares it, another closed form (the run raised): never a success."""
    for call in view.calls:
        entered = call.entered("post-execute")
        if not entered:
            continue
        first = entered[0].get("id")
        if not any(
            e.get("stage") == "post-execute" and e.get("id") == first and e.get("at") == "throw"
            for e in call.events
        ):
            continue
        if call.closed_otherwise() is not None:  # a declared closed form: no success came of it
            yield Verdict(True, call.id)
            continue
        raised = None if call.finalizer_threw() else call.raised_instead()  # FIN-4's, if so
        if raised is not None:
            yield require(
                False,
                call.id,
                "a throwing post-execute listener must yield an error result (or a closed form "
                f"the implementation declares); execute raised instead: {raised}",
                **view.at(call, stage="post-execute", at="throw"),
            )
            continue
        if not call.returned:
            continue
        spec = resolved_spec(view, call, static_only=True)
        problems: list[str] = []
        if not call.is_error:
            problems.append("the result is a success")
        if spec is not None and "finalizeContent" in spec and call.finalizer_calls != 1:
            problems.append(f"finalizeContent ran {call.finalizer_calls} times")
        yield require(
            not problems,
            call.id,
            "a throwing post-execute listener must yield an error result that still reaches "
            "finalizeContent: " + "; ".join(problems),
            # the listener's throw and the finalizer's runs after it
            **view.at(
                call,
                (
                    e
                    for e in call.events
                    if (e.get("stage") == "post-execute" and e.get("at") == "throw")
                    or (e.get("stage") == "finalize" and e.get("at") == "enter")
                ),
            ),
        )


# -------------------------------------------------------------------- POST-5


def _body_contexts(view: View, call: CallView) -> list[Any] | None:
    spec = resolved_spec(view, call, static_only=True)
    if spec is None:
        return None
    if not call.body_entered:
        return []
    ran = executed(spec.get("execute", []))
    if any("forward" in step for step in ran):
        return None  # a composite body: what it forwards is CTX-1's and CTX-2's to judge
    contexts = [step["deferContext"] for step in ran if "deferContext" in step]
    return None if has_special(contexts) else contexts


@rule("POST-5", "Context ordering on accept and block")
def POST_5(view: View) -> Iterator[Verdict]:
    """accept: the body's deferred contexts, then the decision's; block: only the decision's."""
    for call in view.calls:
        if not call.returned:
            continue
        decision = _decision(view, call, ("accept", "block"))
        if decision is None:
            continue
        agent = call.spec.get("agent")
        if not all_passive(view, "wrappers", agent) or view.scenario.get("timeoutPolicy"):
            continue
        body = _body_contexts(view, call)
        if body is None:
            continue
        extra = decision.get("additionalContexts", [])
        if not isinstance(extra, list) or has_special(extra):
            continue
        if "content" in decision and "value" in decision:
            continue  # not applied as given (POST-2): what survives of it is open
        if decision["kind"] == "block" and not _feedback(decision):
            continue  # a malformed block
        if decision["kind"] == "accept":
            if call.is_error and (
                call.code == ErrorCode.INVALID_TOOL_OUTPUT or _raised_at_post(call)
            ):
                continue  # the accept was not applied (an invalid replacement value)
            if "value" in decision and _received_failure(call):
                continue  # a replacement value on a failure: open (POST-2)
            wanted = body + extra
        else:
            wanted = list(extra)
        got = (call.result or {}).get("additionalContexts", [])
        yield require(
            same_json(got, wanted),
            call.id,
            f"on {decision['kind']}, additionalContexts must be {wanted!r} "
            f"({'body then decision' if decision['kind'] == 'accept' else 'only the decision'}); "
            f"they are {got!r}",
            # the post-execute decision the result is about
            **view.at(call, stage="post-execute", at="exit"),
        )


def _received_failure(call: CallView) -> bool:
    """Was the result post-execute received a failure? (Observed, else from the body.)"""
    received = _input_result(call)
    if isinstance(received, Mapping):
        return received.get("isError") is True
    body_threw = call.threw("body")
    return body_threw or not call.body_entered


def _raised_at_post(call: CallView) -> bool:
    return call.threw("post-execute")


# ---------------------------------------------------------------- strategies

_BODIES: st.SearchStrategy[list[dict[str, Any]]] = st.sampled_from(
    [
        [{"return": "ok"}],
        [{"return": {"n": 1}}],
        [{"throw": "body failed"}],
        [{"deferContext": "from body"}, {"throw": "body failed after deferring"}],
        [{"observe": "arguments"}, {"return": 2}],
    ]
)


@st.composite
def _sees_scenarios(draw: st.DrawFn) -> dict[str, Any]:
    name = draw(s.NAMES)
    post = [s.listener("post", [{"observe": "result"}, {"delegate": True}])]
    if draw(st.booleans()):
        post.append(s.listener("post-2", [{"observe": "result"}, {"delegate": True}]))
    fields: dict[str, Any] = {"postExecute": post, "observers": [s.listener("observer", [])]}
    if draw(st.booleans()):
        fields["wrappers"] = [s.listener("wrap", [{"delegate": True}])]
    tool = s.tool(name, draw(_BODIES))
    if draw(st.booleans()):
        tool["finalizeContent"] = [{"return": None}]
    return s.scenario(
        "generated/POST-1", [tool], [{"call": s.call("c0", name, draw(s.arguments()))}], **fields
    )


focus("POST-1", _sees_scenarios())

_REPLACEMENT = [{"type": "text", "text": "replaced"}]


@st.composite
def _accept_scenarios(draw: st.DrawFn) -> dict[str, Any]:
    name = draw(s.NAMES)
    value = draw(
        st.one_of(
            st.sampled_from(["short", 7, {"n": 2}, {"n": "x"}]),
            empty_values(),  # method 2: an empty replacement value replaces
            s.special(),
        )
    )
    content = draw(st.sampled_from([_REPLACEMENT, _REPLACEMENT, []]))  # [] is content too
    decision = draw(
        st.sampled_from(
            [
                {"kind": "accept", "content": content},
                {"kind": "accept", "value": value},
                {"kind": "accept", "content": _REPLACEMENT, "value": value},
            ]
        )
    )
    steps: list[dict[str, Any]] = [{"observe": "result"}, {"return": decision}]
    if draw(st.booleans()):
        steps = [{"observe": "result"}, {"callNext": True}, {"return": decision}]
    output: dict[str, Any] = {
        "schema": draw(
            st.sampled_from([{}, {"type": "object", "properties": {"n": {"type": "integer"}}}])
        ),
        "render": draw(st.sampled_from(["json", "call", "value"])),
    }
    if draw(st.booleans()):
        output["presentationMeta"] = "value"
    body: Any = draw(
        st.sampled_from(
            [[{"return": {"n": 1}}], [{"return": {"n": 5}}], [{"throw": "body failed"}]]
        )
    )
    fields: dict[str, Any] = {
        "postExecute": [s.listener("post", steps)],
        "observers": [s.listener("observer", [])],
    }
    tool = s.tool(name, body, output=output)
    return s.scenario(
        "generated/POST-2", [tool], [{"call": s.call("c0", name, draw(s.arguments()))}], **fields
    )


focus("POST-2", _accept_scenarios(), "presentation")


@st.composite
def _block_scenarios(draw: st.DrawFn) -> dict[str, Any]:
    name = draw(s.NAMES)
    feedback: Any = draw(
        st.sampled_from(["do not read secrets", [{"type": "text", "text": "blocked: too large"}]])
    )
    decision: dict[str, Any] = {"kind": "block", "feedback": feedback}
    if draw(st.booleans()):
        decision["additionalContexts"] = ["from block"]
    post = [s.listener("post", [{"observe": "result"}, {"return": decision}])]
    if draw(st.booleans()):
        post.insert(0, s.listener("outer", [{"delegate": True}]))
    fields: dict[str, Any] = {"postExecute": post, "observers": [s.listener("observer", [])]}
    tool = s.tool(
        name, draw(_BODIES), output={"schema": {}, "render": "json", "presentationMeta": "value"}
    )
    return s.scenario(
        "generated/POST-3", [tool], [{"call": s.call("c0", name, draw(s.arguments()))}], **fields
    )


focus("POST-3", _block_scenarios(), "presentation")


@st.composite
def _throwing_post(draw: st.DrawFn) -> dict[str, Any]:
    name = draw(s.NAMES)
    steps: Any = draw(
        st.sampled_from(
            [
                [{"throw": "policy crashed"}],
                [{"callNext": True}, {"throw": "policy crashed after next"}],
                [{"observe": "result"}, {"throw": "x"}],
            ]
        )
    )
    post = [s.listener("broken", steps)]
    if draw(st.booleans()):
        post.insert(0, s.listener("outer", [{"delegate": True}]))
    fields: dict[str, Any] = {"postExecute": post, "observers": [s.listener("observer", [])]}
    tool = s.tool(name, draw(_BODIES), finalizeContent=[{"return": None}])
    calls = [{"call": s.call("c0", name, draw(s.arguments()))}]
    if draw(st.booleans()):  # a throw leaves nothing behind: the next call meets the same stage
        calls.append({"call": s.call("c1", name, draw(s.arguments()))})
    return s.scenario("generated/POST-4", [tool], calls, **fields)


focus("POST-4", _throwing_post())


@st.composite
def _context_scenarios(draw: st.DrawFn) -> dict[str, Any]:
    name = draw(s.NAMES)
    deferred = [{"deferContext": f"body {i}"} for i in range(draw(st.integers(0, 2)))]
    tail: Any = draw(st.sampled_from([{"return": "ok"}, {"throw": "body failed"}]))
    extra = [f"decision {i}" for i in range(draw(st.integers(0, 2)))]
    kind = draw(st.sampled_from(["accept", "block", "accept-content"]))
    if kind == "block":
        decision: dict[str, Any] = {"kind": "block", "feedback": "blocked"}
    elif kind == "accept-content":
        decision = {"kind": "accept", "content": _REPLACEMENT}
    else:
        decision = {"kind": "accept"}
    if extra:
        decision["additionalContexts"] = extra
    fields: dict[str, Any] = {
        "postExecute": [s.listener("post", [{"return": decision}])],
        "observers": [s.listener("observer", [])],
    }
    tool = s.tool(name, [*deferred, tail])
    return s.scenario(
        "generated/POST-5", [tool], [{"call": s.call("c0", name, draw(s.arguments()))}], **fields
    )


focus("POST-5", _context_scenarios())
