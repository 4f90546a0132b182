"""OUT-1..5: canonical output."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from conftest import asynctest, call, code_of, execute, text_of, tool

from conformance.adapters.reference import code_runtime
from reference import Registry, accept, thaw

STRING_OUT = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


def test_OUT_1_valid_value_is_a_success() -> None:
    """OUT-1: a value that satisfies output.schema is a success carrying that value."""
    r = Registry()
    r.register(tool("t", lambda a, c: {"n": 3}, output_schema=STRING_OUT))
    result = execute(r, "t")
    assert not result.is_error
    assert thaw(result.value) == {"n": 3}


@pytest.mark.parametrize("value", [{"n": "three"}, {}, "n", None, [1]], ids=repr)
def test_OUT_1_schema_violation_becomes_error(value: Any) -> None:
    """OUT-1: a value violating output.schema is an error, never a success."""
    r = Registry()
    r.register(tool("t", lambda a, c: value, output_schema=STRING_OUT))
    result = execute(r, "t")
    assert result.is_error
    assert code_of(result) == "INVALID_TOOL_OUTPUT"
    assert "value" not in result.to_json()


def test_OUT_1_value_is_snapshotted() -> None:
    """OUT-1: the value is snapshotted; later changes to the body's object do nothing."""
    kept: list[Any] = []

    def body(args: Any, ctx: Any) -> Any:
        value = {"items": [1, 2]}
        kept.append(value)
        return value

    r = Registry()
    r.register(tool("t", body))
    result = execute(r, "t")
    kept[0]["items"].append(3)
    kept[0]["new"] = True
    assert thaw(result.value) == {"items": [1, 2]}
    with pytest.raises(TypeError):
        result.value["new"] = True
    with pytest.raises(AttributeError):
        result.value["items"].append(3)


def test_OUT_2_content_is_render_of_args_and_value() -> None:
    """OUT-2: a success's model-visible content is output.render(args, value)."""
    seen: list[Any] = []

    def render(args: Any, value: Any) -> list[dict[str, str]]:
        seen.append((thaw(args), thaw(value)))
        return [{"type": "text", "text": f"{args['path']}={value['n']}"}]

    definition = tool("t", lambda a, c: {"n": 7}, output_schema=STRING_OUT)
    definition["output"]["render"] = render
    r = Registry()
    r.register(definition)
    result = execute(r, "t", {"path": "a.txt"})
    assert text_of(result) == "a.txt=7"
    assert seen == [({"path": "a.txt"}, {"n": 7})]


def test_OUT_2_throwing_render_is_an_error_not_a_success() -> None:
    """OUT-2: a render that fails cannot produce a success."""

    def render(args: Any, value: Any) -> Any:
        raise RuntimeError("boom")

    definition = tool("t")
    definition["output"]["render"] = render
    r = Registry()
    r.register(definition)
    assert execute(r, "t").is_error


def meta_tool(**kw: Any) -> dict[str, Any]:
    definition = tool("t", lambda a, c: {"n": 1}, output_schema=STRING_OUT, **kw)
    definition["output"]["presentation_meta"] = lambda args, value: {
        "diff": f"+{value['n']}",
        "path": args.get("path"),
    }
    return definition


def test_OUT_3_presentation_meta_lands_on_meta() -> None:
    """OUT-3: presentationMeta(args, value) becomes `meta` on a top-level result."""
    r = Registry()
    r.register(meta_tool())
    result = execute(r, "t", {"path": "README.md"})
    assert thaw(result.meta) == {"diff": "+1", "path": "README.md"}
    assert result.to_json()["meta"] == {"diff": "+1", "path": "README.md"}


def test_OUT_3_no_meta_without_presentation_meta() -> None:
    """OUT-3: without presentationMeta a result has no meta."""
    r = Registry()
    r.register(tool("t"))
    assert "meta" not in execute(r, "t").to_json()


@asynctest
async def test_OUT_3_meta_only_for_top_level_calls() -> None:
    """OUT-3: meta is for top-level calls; a nested (run_code) call carries none."""
    seen: list[Any] = []
    r = Registry(mode="code", code_runtime=code_runtime())
    r.register(meta_tool())
    r.on("tools/result", lambda e, res: seen.append((e.parent is not None, res.meta)))
    program = json.dumps({"steps": [{"call": "t", "arguments": {"path": "p"}}]})
    outer = await r.execute(call("run_code", {"code": program, "description": "d"}))
    assert not outer.is_error
    assert (True, None) in seen


def present_result(args: Any, result: Any) -> dict[str, Any]:
    return {"title": f"read {args['path']}", "body": result["content"][0]["text"]}


def test_OUT_4_presentation_is_never_called_by_the_pipeline() -> None:
    """OUT-4: the registry shows no UI: presentCall/presentResult are left to the UI."""
    calls: list[str] = []
    r = Registry()
    r.register(
        tool(
            "t",
            present_call=lambda a: calls.append("call"),
            present_result=lambda a, res: calls.append("result"),
        )
    )
    execute(r, "t", {"path": "p"})
    assert calls == []


def test_OUT_4_replay_gives_identical_view() -> None:
    """OUT-4: presentResult on the live result and on the replayed log entry gives the same view."""
    r = Registry()
    r.register(tool("t", lambda a, c: {"n": 5}, present_result=present_result))
    args = {"path": "a.txt"}
    result = execute(r, "t", args)
    definition = r.get("t")
    assert definition is not None
    live = definition["present_result"](args, result.to_json())
    replayed_entry = json.loads(json.dumps({"args": args, "result": result.to_json()}))
    replay = definition["present_result"](replayed_entry["args"], replayed_entry["result"])
    assert live == replay


NOT_LOSSLESS = [
    math.nan,
    math.inf,
    -math.inf,
    {"k": math.nan},
    {1: "non-string key"},
    {"s": {1, 2}},
    b"bytes",
    lambda: None,
    object(),
]


@pytest.mark.parametrize("value", NOT_LOSSLESS, ids=lambda v: type(v).__name__ + repr(v)[:12])
def test_OUT_5_body_value_not_lossless_is_rejected(value: Any) -> None:
    """OUT-5: a body value that is not lossless JSON is an error, never passed on."""
    r = Registry()
    r.register(tool("t", lambda a, c: value))
    result = execute(r, "t")
    assert result.is_error
    assert code_of(result) == "INVALID_TOOL_OUTPUT"
    json.dumps(result.to_json(), allow_nan=False)


def test_OUT_5_cyclic_value_is_rejected() -> None:
    """OUT-5: a cyclic value is rejected at the source."""
    cyclic: dict[str, Any] = {}
    cyclic["self"] = cyclic
    r = Registry()
    r.register(tool("t", lambda a, c: cyclic))
    assert code_of(execute(r, "t")) == "INVALID_TOOL_OUTPUT"


def test_OUT_5_integral_float_is_not_coerced() -> None:
    """OUT-5: values are not silently coerced (1.5 stays 1.5, True stays True)."""
    r = Registry()
    r.register(tool("t", lambda a, c: [1.5, True, 0, None, "s"]))
    assert thaw(execute(r, "t").value) == [1.5, True, 0, None, "s"]
    assert thaw(execute(r, "t").value)[1] is True


def test_OUT_5_meta_not_lossless_is_rejected() -> None:
    """OUT-5: meta that is not lossless JSON is an error."""
    definition = tool("t")
    definition["output"]["presentation_meta"] = lambda a, v: {"ratio": math.nan}
    r = Registry()
    r.register(definition)
    result = execute(r, "t")
    assert result.is_error
    assert "meta" not in result.to_json()


def test_OUT_5_replacement_value_not_lossless_is_rejected() -> None:
    """OUT-5: a post-execute replacement value that is not lossless JSON is an error."""
    r = Registry()
    r.register(tool("t"))
    r.on("tools/post-execute", lambda e, res, n: accept(value=math.inf))
    result = execute(r, "t")
    assert result.is_error
    json.dumps(result.to_json(), allow_nan=False)


def test_OUT_5_deferred_context_not_lossless_is_rejected() -> None:
    """OUT-5: a deferred context that is not lossless JSON is rejected where it is made."""

    def body(args: Any, ctx: Any) -> str:
        ctx.defer_context({"bad": math.nan})
        return "ok"

    r = Registry()
    r.register(tool("t", body))
    result = execute(r, "t")
    assert result.is_error
    json.dumps(result.to_json(), allow_nan=False)
