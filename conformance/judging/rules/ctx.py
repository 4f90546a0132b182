"""CTX -- two cross-call mechanisms: deferred context and concluding the turn."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from hypothesis import strategies as st

from conformance.judging.model import CallView, View, scripted_throw
from conformance.judging.rules import focus
from conformance.judging.rules._base import Verdict, require, rule
from conformance.judging.rules._facts import (
    all_passive,
    content_blocks,
    executed,
    has_special,
    resolved_spec,
    step_kinds,
)
from conformance.scenario import strategies as s
from conformance.scenario.methods import empty_values
from conformance.vocab import RUN_CODE


def _body_settled(call: CallView) -> bool:
    return any(e.get("stage") == "body" and e.get("at") in ("exit", "throw") for e in call.events)


def _post_blocked_or_failed(call: CallView) -> bool:
    for e in call.events:
        if e.get("stage") != "post-execute":
            continue
        if scripted_throw(e):  # its own throw (method 11)
            return True
        returned = e.get("returned")
        if (
            e.get("at") == "exit"
            and isinstance(returned, Mapping)
            and returned.get("kind") == "block"
        ):
            return True
    return False


def _nested_deferred(view: View, call: CallView) -> list[Any] | None:
    """What the nested calls of a ``run_code`` call deferred, in order (None: not judged).

    The nested calls are the sub-dispatches (body events with a parent) of the scenario's only
    model-direct call; each one's deferred contexts are those its body ran before settling.
    """
    if call.spec["name"] != RUN_CODE or len(view.calls) != 1 or not call.returned:
        return None
    agent = call.spec.get("agent")
    if not all_passive(view, "postExecute", agent) or call.finalizer_threw():
        return None
    deferred: list[Any] = []
    for event in view.trace.get("events", []):
        if event.get("stage") != "body" or event.get("at") not in ("exit", "throw"):
            continue
        if event.get("hasParent") is not True:
            continue
        spec = view.catalog_tool(str(event.get("tool")), agent)
        if spec is None:
            return None
        steps = executed(spec["execute"], special_defer_raises=False)
        if "forward" in step_kinds(steps):
            return None
        deferred += [step["deferContext"] for step in steps if "deferContext" in step]
    return None if has_special(deferred) else deferred


def _in_order(wanted: list[Any], got: list[Any]) -> bool:
    """``wanted`` is a subsequence of ``got``."""
    rest = iter(got)
    return all(any(item == have for have in rest) for item in wanted)


def _nested_contexts(view: View) -> Iterator[Verdict]:
    """Contexts deferred by a run_code program's sub-dispatches ride the run_code result."""
    if view.mode == "native":
        return
    for call in view.calls:
        deferred = _nested_deferred(view, call)
        if not deferred:
            continue
        got = (call.result or {}).get("additionalContexts", [])
        yield require(
            isinstance(got, list) and _in_order(deferred, got),
            call.id,
            f"the program's sub-dispatches deferred {deferred!r}; they must ride the run_code "
            f"result's additionalContexts in order (isError={call.is_error}), got {got!r}",
            # about the result: the run_code body that ran the program
            **view.at(call, stage="body"),
        )


def _body_effects(call: CallView, spec: Mapping[str, Any]) -> tuple[list[Any], bool] | None:
    """What the body's run context received: the deferred contexts in order, and whether the
    turn was concluded -- its own ``deferContext`` / ``concludeTurn`` steps, and the contexts
    and mark of each nested result a ``forward`` step forwarded (as its event recorded it).
    None when a ``forward`` step left no event (its nested call raised)."""
    forwards = iter(e for e in call.events if e.get("stage") == "body" and "forward" in e)
    deferred: list[Any] = []
    concluded = False
    for step in executed(spec["execute"], special_defer_raises=False):
        if "deferContext" in step:
            deferred.append(step["deferContext"])
        elif "concludeTurn" in step:
            concluded = True
        elif "forward" in step:
            event = next(forwards, None)
            if event is None:
                return None
            nested = event.get("result")
            if not isinstance(nested, Mapping):
                return None
            contexts = nested.get("additionalContexts", [])
            deferred += contexts if isinstance(contexts, list) else []
            concluded |= nested.get("isError") is False and nested.get("concludesTurn") is True
    return deferred, concluded


@rule("CTX-1", "Deferred context")
def CTX_1(view: View) -> Iterator[Verdict]:
    """Deferred contexts ride the execution's own result, in call order -- even after a throw or
    abort; those of nested calls ride the outer result."""
    yield from _nested_contexts(view)
    for call in view.calls:
        if not call.returned or not call.body_entered or not _body_settled(call):
            continue
        spec = resolved_spec(view, call)
        if spec is None:
            continue
        effects = _body_effects(call, spec)
        if effects is None:
            continue
        deferred = effects[0]
        if not deferred or has_special(deferred) or _post_blocked_or_failed(call):
            continue
        if call.finalizer_threw():  # FIN-4: what is published then is the registry's choice
            continue
        got = (call.result or {}).get("additionalContexts", [])
        yield require(
            isinstance(got, list) and got[: len(deferred)] == deferred,
            call.id,
            f"the body deferred {deferred!r}; they must ride this result's additionalContexts in "
            "call order "
            f"(isError={call.is_error}, code={call.code}), got {got!r}",
            # about the result: the body that deferred or concluded (else the last event)
            **view.at(call, stage="body"),
        )


@rule("CTX-2", "Concluding the turn")
def CTX_2(view: View) -> Iterator[Verdict]:
    """concludeTurn marks a success concludesTurn: true; a failure never carries the mark."""
    for call in view.calls:
        if not call.returned or call.result is None:
            continue
        spec = resolved_spec(view, call)
        if spec is None:
            continue
        # a body that never ran concluded nothing: a wrapper's own result (a cached one, say)
        # cannot bring a mark of its own
        effects = _body_effects(call, spec) if call.body_entered else ([], False)
        if effects is None:
            continue
        result = call.result
        if not effects[1]:
            ran = "never called" if call.body_entered else "never ran, so never called"
            yield require(
                result.get("concludesTurn") is not True,
                call.id,
                f"the body {ran} concludeTurn (nor forwarded a nested success that concluded): "
                f"the result must not carry concludesTurn, whoever built it "
                f"(isError={call.is_error})",
                # about the result: the body that deferred or concluded (else the last event)
                **view.at(call, stage="body"),
            )
            continue
        if call.is_error:
            yield require(
                "concludesTurn" not in result,
                call.id,
                f"a failure (code={call.code}) must never carry concludesTurn, even though the "
                "body concluded",
                # about the result: the body that deferred or concluded (else the last event)
                **view.at(call, stage="body"),
            )
            continue
        returned = any(e.get("stage") == "body" and e.get("at") == "exit" for e in call.events)
        if not returned or _authored(view, call):
            continue  # the success may not be the body's own
        yield require(
            result.get("concludesTurn") is True,
            call.id,
            "the body called concludeTurn (or forwarded a nested success that concluded) and the "
            "call succeeded: the result must carry concludesTurn: true",
            # about the result: the body that deferred or concluded (else the last event)
            **view.at(call, stage="body"),
        )


def _authored(view: View, call: CallView) -> bool:
    """A wrapper of this call may return a result of its own (the body's may not stand)."""
    wrappers = view.listeners("wrappers", call.spec.get("agent"))
    return any("return" in step for w in wrappers for step in w["steps"])


# --------------------------------------------------------------- focus

TEXTS = st.lists(st.sampled_from(["first", "second", "third"]), min_size=1, max_size=3)
CONTEXTS: st.SearchStrategy[list[dict[str, Any]]] = st.one_of(
    TEXTS.map(lambda texts: [{"deferContext": {"role": "user", "content": t}} for t in texts]),
    # method 2: an empty context ("", 0, false, [], {}, null) is a context too
    st.lists(empty_values(), min_size=1, max_size=2).map(
        lambda values: [{"deferContext": v} for v in values]
    ),
)
ENDINGS: st.SearchStrategy[list[dict[str, Any]]] = st.sampled_from(
    [
        [{"return": "ok"}],
        [{"throw": "body failed"}],
        [{"abort": True}, {"return": "ok"}],
        [{"abort": True}, {"throw": "body failed"}],
        [{"return": 1}],  # violates a string output schema when drawn with one
    ]
)
POST: st.SearchStrategy[list[dict[str, Any]] | None] = st.sampled_from(
    [
        None,
        [{"delegate": True}],
        [
            {
                "return": {
                    "kind": "accept",
                    "additionalContexts": [{"role": "user", "content": "post"}],
                }
            }
        ],
        [{"return": {"kind": "accept", "content": content_blocks("replaced")}}],
        [{"return": {"kind": "block", "feedback": content_blocks("blocked")}}],
    ]
)
#: A success a wrapper authors that says it concludes the turn: a cached result, say (the
#: body's mark is not its to give; only the body's own concludeTurn or a forwarded one is).
MARKED: dict[str, Any] = {"isError": False, "value": "cached", "concludesTurn": True}
WRAPPERS: st.SearchStrategy[list[dict[str, Any]] | None] = st.sampled_from(
    [
        None,
        [{"delegate": True}],
        [{"callNext": True}, {"throw": "wrapper failed"}],
        [{"return": MARKED}],  # a cache hit: the body never runs
        [{"callNext": True}, {"return": MARKED}],
    ]
)


@st.composite
def _context_scenarios(draw: st.DrawFn, conclude: bool) -> s.Scenario:
    body: list[dict[str, Any]] = list(draw(CONTEXTS))
    if conclude:
        body.insert(draw(st.integers(0, len(body))), {"concludeTurn": True})
    body += draw(ENDINGS)
    tool = s.tool("t", body)
    if draw(st.booleans()):
        tool["output"] = {"schema": {"type": "string"}, "render": "text"}
    extra: dict[str, Any] = {"observers": [s.listener("observer", [])]}
    post, wrapper = draw(POST), draw(WRAPPERS)
    if post is not None:
        extra["postExecute"] = [s.listener("post", post)]
    if wrapper is not None:
        extra["wrappers"] = [s.listener("wrap", wrapper)]
    calls = [{"call": s.call("c0", "t", {}, agent=draw(s.AGENTS))}]
    if draw(st.booleans()):
        calls.append({"call": s.call("c1", "t", {"path": "b"})})
    return s.scenario("generated/CTX", [tool], calls, **extra)


@st.composite
def _program_scenarios(draw: st.DrawFn) -> s.Scenario:
    """Code Mode: a run_code program calls tools whose bodies defer contexts (nested calls)."""
    endings: list[list[dict[str, Any]]] = [[{"return": {}}], [{"return": "ok"}], [{"throw": "no"}]]
    ending = draw(st.sampled_from(endings))
    tools = [s.tool("note", [*draw(CONTEXTS), *ending]), s.tool("plain", [{"return": "ok"}])]
    names = draw(st.lists(st.sampled_from(["note", "plain"]), min_size=1, max_size=3))
    code = json.dumps({"steps": [{"call": name, "arguments": {}} for name in names]})
    extra: dict[str, Any] = {
        "observers": [s.listener("observer", [])],
        "registry": {"mode": "code"},
    }
    if draw(st.booleans()):
        extra["postExecute"] = [s.listener("post", [{"delegate": True}])]
    call = s.call("c0", RUN_CODE, {"code": code, "description": "a program"}, agent=draw(s.AGENTS))
    return s.scenario("generated/CTX-nested", tools, [{"call": call}], **extra)


@st.composite
def _composite_scenarios(draw: st.DrawFn) -> s.Scenario:
    """A composite tool: its body forwards a nested call of ``inner`` (which may defer contexts,
    conclude the turn, fail), around steps of its own."""
    inner: list[dict[str, Any]] = list(draw(st.one_of(st.just([]), CONTEXTS)))
    if draw(st.booleans()):
        inner.append({"concludeTurn": True})
    inner += draw(st.sampled_from([[{"return": "ok"}], [{"throw": "inner failed"}]]))
    outer: list[dict[str, Any]] = [{"forward": {"name": "inner", "arguments": {"path": "a"}}}]
    if draw(st.booleans()):
        outer.insert(0, {"deferContext": {"role": "user", "content": "outer"}})
    if draw(st.booleans()):
        outer.append({"concludeTurn": True})
    outer += draw(ENDINGS)
    tools = [s.tool("outer", outer), s.tool("inner", inner)]
    # No post-execute listener: POST-5 reads a body's contexts from its own deferContext steps
    # only, so it cannot judge a composite's yet (forwarded contexts are not among them).
    extra: dict[str, Any] = {"observers": [s.listener("observer", [])]}
    call = s.call("c0", "outer", {}, agent=draw(s.AGENTS))
    return s.scenario("generated/CTX-composite", tools, [{"call": call}], **extra)


focus("CTX-1", st.one_of(_context_scenarios(False), _program_scenarios(), _composite_scenarios()))
focus("CTX-2", st.one_of(_context_scenarios(True), _composite_scenarios()))
