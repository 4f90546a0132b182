"""OUT -- canonical output: validated values, rendered content, projected meta."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from hypothesis import strategies as st

from conformance.judging.model import STAGES, CallView, View
from conformance.judging.rules import focus
from conformance.judging.rules._base import Verdict, require, rule, untested
from conformance.judging.rules._facts import (
    MISSING,
    all_passive,
    arguments_of,
    content_may_be_replaced,
    has_special,
    project,
    resolved_spec,
    same_json,
    scripted_decision,
    terminal,
    valid_against,
)
from conformance.scenario import strategies as s
from conformance.scenario.methods import empty_values
from conformance.vocab import ErrorCode


def body_value(view: View, call: CallView) -> Any:
    """The value the body's script returns (scenario JSON), or MISSING if it does not return."""
    spec = resolved_spec(view, call, static_only=True)
    if spec is None or not call.body_entered:
        return MISSING
    last = terminal(spec.get("execute", []))
    if last is None or "return" not in last:
        return MISSING
    return last["return"]


def undisturbed(view: View, call: CallView) -> bool:
    """Only the body decides the dispatch result: no acting wrapper or post-execute listener."""
    agent = call.spec.get("agent")
    return (
        all_passive(view, "wrappers", agent)
        and all_passive(view, "postExecute", agent)
        and not view.scenario.get("timeoutPolicy")
    )


def content_replaced(view: View, call: CallView, spec: Mapping[str, Any]) -> bool:
    """May a content authority (post-execute, finalizeContent) have replaced the content?"""
    agent = call.spec.get("agent")
    if any(
        "return" in step and step["return"] is not None for step in spec.get("finalizeContent", [])
    ):
        return True
    for entry in view.listeners("postExecute", agent):
        for step in entry["steps"]:
            decision = step.get("return")
            if isinstance(decision, Mapping) and ("content" in decision or "feedback" in decision):
                return True
    return False


# --------------------------------------------------------------------- OUT-1


@rule("OUT-1", "Canonical value, validated on every success")
def OUT_1(view: View) -> Iterator[Verdict]:
    """A success's value validates against output.schema; an invalid body value is an error."""
    for call in view.calls:
        if not call.returned:
            continue
        spec = resolved_spec(view, call, static_only=True)
        if spec is None or "schema" not in spec.get("output", {}):
            continue
        schema = spec["output"]["schema"]
        result = call.result or {}
        if not call.is_error:
            value = result.get("value")
            yield require(
                not has_special(value) and valid_against(schema, value),
                call.id,
                f"a success must carry a value valid against {spec['name']}'s output.schema; "
                f"it carries {value!r}",
                # about the result: the body's return (else the call's last event)
                **view.at(call, stage="body", at="exit"),
            )
            body = body_value(view, call)
            if (
                body is not MISSING
                and not has_special(body)
                and undisturbed(view, call)
                # a call a stage renamed ran another definition: that is PIPE-3's
                and not call.identity_changes(STAGES)
            ):
                # the snapshot is of the body's value: an empty one ("", 0, false, [], {},
                # null) is a value too, never replaced by another
                yield require(
                    "value" in result and same_json(value, body),
                    call.id,
                    f"the body returned {body!r}: the success must carry exactly that value "
                    f"(a snapshot of it); it carries {result.get('value', '(no value)')!r}",
                    # about the result: the body's return (else the call's last event)
                    **view.at(call, stage="body", at="exit"),
                )
            continue
        value = body_value(view, call)
        if value is MISSING or has_special(value) or valid_against(schema, value):
            continue
        if not undisturbed(view, call) or call.finalizer_threw():
            continue
        yield require(
            call.code == ErrorCode.INVALID_TOOL_OUTPUT,
            call.id,
            f"the body returned {value!r}, which violates output.schema: the result must be "
            f"INVALID_TOOL_OUTPUT; it is an error with code {call.code}",
            # about the result: the body's return (else the call's last event)
            **view.at(call, stage="body", at="exit"),
        )


# --------------------------------------------------------------------- OUT-2


@rule("OUT-2", "Content is a pure render")
def OUT_2(view: View) -> Iterator[Verdict]:
    """A success's content is output.render(args, value), identical for identical inputs."""
    seen: dict[str, tuple[str, Any]] = {}
    for call in view.calls:
        if not call.returned or call.is_error:
            continue
        spec = resolved_spec(view, call, static_only=True)
        if spec is None or "render" not in spec.get("output", {}):
            continue
        if content_may_be_replaced(view, call, spec):
            continue
        result = call.result or {}
        args = arguments_of(call)
        kind = spec["output"]["render"]
        matches = project(kind, args, result.get("value"), content=True, got=result.get("content"))
        if matches is not None:
            yield require(
                matches,
                call.id,
                f"the content of a success must be the render {kind!r} of (args, value) = "
                f"({args!r}, {result.get('value')!r}); it is {result.get('content')!r}",
                # about the result: the body's return (else the call's last event)
                **view.at(call, stage="body", at="exit"),
            )
        key = repr((spec["name"], call.spec.get("agent"), args, result.get("value")))
        if key in seen:
            other, content = seen[key]
            yield require(
                same_json(content, result.get("content")),
                call.id,
                f"replaying the same (args, value) must render the same content as {other}: "
                f"{content!r} vs {result.get('content')!r}",
                # about the result: the body's return (else the call's last event)
                **view.at(call, stage="body", at="exit"),
            )
        else:
            seen[key] = (call.id, result.get("content"))


# --------------------------------------------------------------------- OUT-3


@rule("OUT-3", "Presentation metadata is a pure projection")
def OUT_3(view: View) -> Iterator[Verdict]:
    """A top-level success of a tool with presentationMeta carries meta = the projection."""
    for call in view.calls:
        if not call.returned or call.is_error:
            continue
        spec = resolved_spec(view, call, static_only=True)
        if spec is None or "presentationMeta" not in spec.get("output", {}):
            continue
        result = call.result or {}
        kind = spec["output"]["presentationMeta"]
        args = arguments_of(call)
        got = result.get("meta")
        matches = project(kind, args, result.get("value"), content=False, got=got)
        if matches is None:
            continue
        yield require(
            matches,
            call.id,
            f"a top-level success must carry meta = presentationMeta {kind!r} of (args, value) = "
            f"({args!r}, {result.get('value')!r}); it carries {got!r}",
            # about the result: the body's return (else the call's last event)
            **view.at(call, stage="body", at="exit"),
        )


# --------------------------------------------------------------------- OUT-4

untested(
    "OUT-4",
    "Replay-stable presenters",
    "presentCall and presentResult are called by UIs, never by the registry: their purity is an "
    "obligation on tool authors (SPEC section 7) that no registry trace can show.",
)

# --------------------------------------------------------------------- OUT-5


def _special_sources(view: View, call: CallView, spec: Mapping[str, Any]) -> list[str]:
    """Where a non-lossless value entered this call's normalization, per the scenario."""
    out = spec.get("output", {})
    found: list[str] = []
    for key in ("render", "presentationMeta"):
        kind = out.get(key)
        if isinstance(kind, Mapping) and has_special(kind.get("const")):
            found.append(f"output.{key}")
    decision = scripted_decision(view, call, "post-execute")
    if (
        isinstance(decision, Mapping)
        and decision.get("kind") == "accept"
        and has_special(decision.get("value"))
    ):
        found.append("the post-execute replacement value")
    return found


@rule("OUT-5", "Non-lossless values rejected at the source")
def OUT_5(view: View) -> Iterator[Verdict]:
    """A non-lossless body value, meta or replacement value is an error, never a success."""
    for call in view.calls:
        if not call.returned:
            continue
        result = call.result or {}
        if not call.is_error and (
            has_special(result.get("value")) or has_special(result.get("meta"))
        ):
            yield require(
                False,
                call.id,
                "a success carries a non-lossless value or meta",
                # about the result: the body's return (else the call's last event)
                **view.at(call, stage="body", at="exit"),
            )
            continue
        spec = resolved_spec(view, call, static_only=True)
        if spec is None:
            continue
        value = body_value(view, call)
        if value is not MISSING and has_special(value) and undisturbed(view, call):
            yield require(
                call.is_error and call.code == ErrorCode.INVALID_TOOL_OUTPUT,
                call.id,
                f"the body returned the non-lossless value {value!r}: the result must be "
                f"INVALID_TOOL_OUTPUT; it is isError={call.is_error}, code={call.code}",
                # about the result: the body's return (else the call's last event)
                **view.at(call, stage="body", at="exit"),
            )
            continue
        if not (call.body_entered or call.entered("wrapper")):
            continue
        sources = _special_sources(view, call, spec)
        if sources:
            yield require(
                call.is_error,
                call.id,
                f"{', '.join(sources)} is not lossless JSON: the call must not succeed; "
                f"it returned a success {result!r}",
                # the bodies and wrappers that returned the value
                **view.at(
                    call,
                    (
                        e
                        for e in call.events
                        if e.get("stage") in ("body", "wrapper") and e.get("at") == "exit"
                    ),
                ),
            )


# ---------------------------------------------------------------- strategies

_SCHEMAS = st.sampled_from(
    [
        {},
        {"type": "string"},
        {"type": "integer"},
        {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
        {"type": "array", "items": {"type": "string"}},
    ]
)
_RENDERS = st.sampled_from(
    ["json", "text", "args", "value", "call", {"const": [{"type": "text", "text": "fixed"}]}]
)
_META = st.one_of(
    st.sampled_from(["json", "text", "args", "value", "call", {"const": {"card": "diff"}}]),
    empty_values().map(lambda v: {"const": v}),  # method 2: empty metadata is metadata
)
_VALUES = st.one_of(
    s.json_values(1),
    empty_values(),  # method 2: an empty value is a value
    st.integers(-3, 3),
    st.sampled_from(["a", "é x"]),
    st.fixed_dictionaries({"n": st.integers(0, 3)}),
)


@st.composite
def _output_scenarios(draw: st.DrawFn, *, rule_id: str, meta: bool = False) -> dict[str, Any]:
    name = draw(s.NAMES)
    prefix = draw(st.sampled_from([[], [{"observe": "arguments"}], [{"deferContext": "ctx"}]]))
    output: dict[str, Any] = {"schema": draw(_SCHEMAS), "render": draw(_RENDERS)}
    if meta:
        output["presentationMeta"] = draw(_META)
    tool = s.tool(name, [*prefix, {"return": draw(_VALUES)}], output=output)
    fields: dict[str, Any] = {"observers": [s.listener("observer", [])]}
    if draw(st.booleans()):
        fields["postExecute"] = [s.listener("post", [{"observe": "result"}, {"delegate": True}])]
    if draw(st.integers(0, 3)) == 0:
        fields["wrappers"] = [s.listener("wrap", [{"delegate": True}])]
    args = draw(s.arguments())
    calls = [{"call": s.call("c0", name, args)}]
    if draw(st.booleans()):
        calls.append({"call": s.call("c1", name, args)})
    return s.scenario(f"generated/{rule_id}", [tool], calls, **fields)


focus("OUT-1", _output_scenarios(rule_id="OUT-1"))
focus("OUT-2", _output_scenarios(rule_id="OUT-2"))
focus("OUT-3", _output_scenarios(rule_id="OUT-3", meta=True), "presentation")


@st.composite
def _lossless_scenarios(draw: st.DrawFn) -> dict[str, Any]:
    name = draw(s.NAMES)
    where = draw(st.sampled_from(["body", "nested", "meta", "render", "post"]))
    special = draw(s.special())
    value: Any = "ok"
    output: dict[str, Any] = {"schema": {}, "render": "json"}
    fields: dict[str, Any] = {"observers": [s.listener("observer", [])]}
    if where == "body":
        value = special
    elif where == "nested":
        value = {"n": [1, special]}
    elif where == "meta":
        output["presentationMeta"] = {"const": {"diff": special}}
    elif where == "render":
        output["render"] = {"const": [{"type": "text", "text": special}]}
    else:
        decision = {"kind": "accept", "value": special}
        fields["postExecute"] = [s.listener("post", [{"observe": "result"}, {"return": decision}])]
    tool = s.tool(name, [{"return": value}], output=output)
    if draw(st.booleans()):
        tool["finalizeContent"] = [{"return": None}]
    return s.scenario(
        "generated/OUT-5", [tool], [{"call": s.call("c0", name, draw(s.arguments()))}], **fields
    )


focus("OUT-5", _lossless_scenarios(), "presentation")
