"""POST-1..5: tools/post-execute."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import Approval, Counter, code_of, execute, text_of, tool

from reference import Registry, ToolError, accept, ask, block, thaw

N_OUT = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


def post_registry(body: Any = None, **kw: Any) -> tuple[Registry, list[Any]]:
    seen: list[Any] = []
    r = Registry(**kw)
    definition = tool("t", body or (lambda a, c: {"n": 1}), output_schema=N_OUT)
    definition["output"]["presentation_meta"] = lambda a, v: {"n": v["n"]}
    r.register(definition)
    r.on("tools/post-execute", lambda e, res, n: seen.append(res) or n())
    return r, seen


def test_POST_1_receives_the_normalized_success() -> None:
    """POST-1: post-execute receives the normalized dispatch result; next() accepts it unchanged."""
    r, seen = post_registry()
    result = execute(r, "t")
    (received,) = seen
    assert thaw(received.value) == {"n": 1}
    assert result.to_json() == received.to_json()


def test_POST_1_receives_a_throwing_bodys_error() -> None:
    """POST-1: a throwing body reaches post-execute as an error result."""

    def body(a: Any, c: Any) -> Any:
        raise ToolError("disk full", code="ENOSPC")

    r, seen = post_registry(body)
    result = execute(r, "t")
    (received,) = seen
    assert received.is_error and received.message == "disk full"
    assert code_of(received) == "ENOSPC"
    assert result.is_error and result.message == "disk full"


def test_POST_1_receives_output_validation_failure() -> None:
    """POST-1: a body value failing output.schema reaches post-execute as an error."""
    r, seen = post_registry(lambda a, c: {"n": "x"})
    execute(r, "t")
    assert [code_of(x) for x in seen] == ["INVALID_TOOL_OUTPUT"]


def throwing(*a: Any) -> Any:
    raise RuntimeError("pipeline bug")


@pytest.mark.parametrize(
    "failure",
    [
        "invalid-args",
        "non-lossless-args",
        "throwing-pre-listener",
        "throwing-guard",
        "throwing-approval",
        "wrapper-failure",
    ],
)
def test_POST_1_pipeline_failures_bypass_post_execute(failure: str) -> None:
    """POST-1: pipeline failures are final and bypass post-execute."""
    r, seen = post_registry(approval=Approval(raises=RuntimeError("down")))
    args: Any = {}
    if failure == "invalid-args":
        args = {"path": 1}
    elif failure == "non-lossless-args":
        args = {"path": float("nan")}
    elif failure == "throwing-pre-listener":
        r.on("tools/pre-execute", throwing)
    elif failure == "throwing-guard":
        r.guard(throwing)
    elif failure == "throwing-approval":
        r.on("tools/pre-execute", lambda e, n: ask("?"))
    elif failure == "wrapper-failure":
        r.on("tools/execute", throwing)
    result = execute(r, "t", args)
    assert result.is_error
    assert seen == []


def test_POST_2_replace_content_keeps_value_and_meta() -> None:
    """POST-2: a replacement content keeps value and meta."""
    r, _ = post_registry()
    r.on(
        "tools/post-execute", lambda e, res, n: accept(content=[{"type": "text", "text": "short"}])
    )
    result = execute(r, "t")
    assert text_of(result) == "short"
    assert thaw(result.value) == {"n": 1}
    assert thaw(result.meta) == {"n": 1}


def test_POST_2_replace_value_is_revalidated_and_rerendered() -> None:
    """POST-2: a replacement value is revalidated against output.schema and re-rendered."""
    r, _ = post_registry()
    r.on("tools/post-execute", lambda e, res, n: accept(value={"n": 99}))
    result = execute(r, "t")
    assert thaw(result.value) == {"n": 99}
    assert text_of(result) == '{"n": 99}'
    assert thaw(result.meta) == {"n": 99}


def test_POST_2_invalid_replacement_value_is_an_error() -> None:
    """POST-2: a replacement value violating output.schema never yields a success."""
    r, _ = post_registry()
    r.on("tools/post-execute", lambda e, res, n: accept(value={"n": "nope"}))
    result = execute(r, "t")
    assert result.is_error
    assert "value" not in result.to_json()


def test_POST_2_replacing_both_is_an_error() -> None:
    """POST-2: accept may replace content or value, never both."""
    r, _ = post_registry()
    r.on(
        "tools/post-execute",
        lambda e, res, n: accept(value={"n": 2}, content=[{"type": "text", "text": "x"}]),
    )
    assert execute(r, "t").is_error


def test_POST_3_block_turns_result_into_feedback_error_without_value() -> None:
    """POST-3: block(feedback) is an error whose content is the feedback; no value."""
    r, _ = post_registry()
    r.on("tools/post-execute", lambda e, res, n: block("lint failed: fix imports"))
    result = execute(r, "t")
    assert result.is_error
    assert text_of(result) == "lint failed: fix imports"
    assert not hasattr(result, "value")
    assert "value" not in result.to_json()


def test_POST_3_block_with_content_blocks() -> None:
    """POST-3: block accepts content blocks as feedback."""
    r, _ = post_registry()
    feedback = [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]
    r.on("tools/post-execute", lambda e, res, n: block(feedback))
    result = execute(r, "t")
    assert result.is_error
    assert thaw(result.content) == feedback


def test_POST_4_throwing_listener_is_an_error_result() -> None:
    """POST-4: a post-execute listener that throws yields an error result (still finalized once)."""
    fin = Counter()
    r = Registry()
    r.register(tool("t", finalize_content=fin))
    r.on("tools/post-execute", throwing)
    result = execute(r, "t")
    assert result.is_error
    assert "value" not in result.to_json()
    assert fin.count == 1


@pytest.mark.parametrize("decision", [None, "accept", {"kind": "allow"}, {"kind": "weird"}])
def test_POST_4_malformed_decision_is_an_error_result(decision: Any) -> None:
    """POST-4: a malformed post-execute decision is an error, never a silent accept."""
    r = Registry()
    r.register(tool("t"))
    r.on("tools/post-execute", lambda e, res, n: decision)
    assert execute(r, "t").is_error


def ctx_body(a: Any, c: Any) -> Any:
    c.defer_context("body-1")
    c.defer_context("body-2")
    return {"n": 1}


def test_POST_5_accept_keeps_body_contexts_then_decisions() -> None:
    """POST-5: accept keeps the body's deferred contexts, then the decision's."""
    r, _ = post_registry(ctx_body)
    r.on("tools/post-execute", lambda e, res, n: accept(additional_contexts=["post-1"]))
    result = execute(r, "t")
    assert list(result.additional_contexts) == ["body-1", "body-2", "post-1"]


def test_POST_5_block_drops_body_contexts() -> None:
    """POST-5: block drops the body's deferred contexts and keeps only the decision's."""
    r, _ = post_registry(ctx_body)
    r.on("tools/post-execute", lambda e, res, n: block("no", additional_contexts=["post-1"]))
    result = execute(r, "t")
    assert list(result.additional_contexts) == ["post-1"]


def test_POST_5_block_without_contexts_carries_none() -> None:
    """POST-5: a block that supplies no contexts leaves none."""
    r, _ = post_registry(ctx_body)
    r.on("tools/post-execute", lambda e, res, n: block("no"))
    result = execute(r, "t")
    assert list(result.additional_contexts) == []
    assert "additionalContexts" not in result.to_json()
