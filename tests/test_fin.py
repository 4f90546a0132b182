"""FIN-1..4: finalizeContent, the tool's last mile."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from conftest import Counter, asynctest, call, code_of, execute, text_of, tool

from reference import (
    AbortController,
    Registry,
    ToolSuccess,
    accept,
    ask,
    deny,
    thaw,
)

N_OUT = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


@asynctest
async def test_FIN_1_finalizer_snapshotted_at_start() -> None:
    """FIN-1: disposing and replacing the tool mid-call does not change which finalizer runs."""
    old, new = Counter(), Counter()
    r = Registry()
    holder: dict[str, Any] = {}

    def body(a: Any, c: Any) -> str:
        holder["dispose"]()
        r.register(tool("t", finalize_content=new))  # replaced mid-call
        return "ok"

    holder["dispose"] = r.register(tool("t", body, finalize_content=old))
    result = await r.execute(call("t"))
    assert not result.is_error
    assert (old.count, new.count) == (1, 0)


@asynctest
async def test_FIN_1_registering_during_pre_execute_does_not_swap_finalizer() -> None:
    """FIN-1: a replacement registered during pre-execute is not the finalizer of this call."""
    old, new = Counter(), Counter()
    r = Registry()
    holder: dict[str, Any] = {}

    def pre(e: Any, n: Any) -> Any:
        holder["dispose"]()
        r.register(tool("t", finalize_content=new))
        return n()

    holder["dispose"] = r.register(tool("t", finalize_content=old))
    r.on("tools/pre-execute", pre)
    await r.execute(call("t"))
    assert (old.count, new.count) == (1, 0)


def throw(*a: Any) -> Any:
    raise RuntimeError("boom")


def scenario(outcome: str) -> tuple[Registry, dict[str, Any], Counter]:
    """A registry and call kwargs producing ``outcome``; the finalizer is a Counter."""
    fin = Counter()
    kw: dict[str, Any] = {}
    body: Any = lambda a, c: {"n": 1}  # noqa: E731
    controller = AbortController()
    if outcome == "body-error":
        body = throw
    elif outcome == "output-invalid":
        body = lambda a, c: {"n": "x"}  # noqa: E731
    elif outcome == "aborted":

        def body(a: Any, c: Any) -> Any:
            controller.abort()
            return {"n": 1}

    r = Registry()
    r.register(tool("t", body, output_schema=N_OUT, finalize_content=fin))
    if outcome == "deny":
        r.on("tools/pre-execute", lambda e, n: deny("no"))
    elif outcome == "failed-ask":
        r.on("tools/pre-execute", lambda e, n: ask("?"))
    elif outcome == "policy-failure":
        r.on("tools/pre-execute", throw)
    elif outcome == "guard-denial":
        r.guard(lambda e: "guarded")
    elif outcome == "invalid-args":
        kw["arguments"] = {"path": 5}
    elif outcome == "non-lossless-args":
        kw["arguments"] = {"path": float("inf")}
    elif outcome == "wrapper-failure":
        r.on("tools/execute", throw)
    elif outcome == "post-failure":
        r.on("tools/post-execute", throw)
    elif outcome == "aborted-before-dispatch":
        controller.abort()
    kw["signal"] = controller.signal
    return r, kw, fin


OUTCOMES = {
    "success": None,
    "body-error": None,
    "deny": None,
    "failed-ask": None,
    "policy-failure": None,
    "guard-denial": None,
    "invalid-args": "INVALID_ARGS",
    "non-lossless-args": "INVALID_ARGS",
    "wrapper-failure": None,
    "post-failure": None,
    "output-invalid": "INVALID_TOOL_OUTPUT",
    "aborted-before-dispatch": "ABORTED_BEFORE_DISPATCH",
    "aborted": "ABORTED",
}


@pytest.mark.parametrize("outcome", list(OUTCOMES))
def test_FIN_2_finalizer_runs_exactly_once_per_outcome(outcome: str) -> None:
    """FIN-2: finalizeContent is invoked exactly once for every normalized outcome."""
    r, kw, fin = scenario(outcome)
    results: list[Any] = []
    r.on("tools/result", lambda e, res: results.append(res))
    result = execute(r, "t", **kw)
    assert result.is_error == (outcome != "success")
    if OUTCOMES[outcome] is not None:
        assert code_of(result) == OUTCOMES[outcome]
    assert fin.count == 1
    assert fin.calls[0][1].to_json() == result.to_json()
    assert results == [result]


@asynctest
async def test_FIN_2_finalizer_runs_once_on_tool_timeout() -> None:
    """FIN-2: the timeout outcome is finalized exactly once too."""
    fin = Counter()

    async def body(a: Any, c: Any) -> str:
        await asyncio.wait_for(c.signal.wait(), 5)
        return "late"

    r = Registry()
    r.use_timeout_policy()
    r.register(tool("t", body, timeout_ms=1, finalize_content=fin))
    result = await r.execute(call("t"))
    assert code_of(result) == "TOOL_TIMEOUT"
    assert fin.count == 1


def test_FIN_3_receives_immutable_execution_and_complete_result() -> None:
    """FIN-3: the finalizer gets the immutable execution and the complete normalized result."""
    seen: list[Any] = []
    errors: list[str] = []

    def finalize(execution: Any, result: Any) -> None:
        seen.append((execution.call_id, thaw(execution.arguments), result.to_json()))
        for attempt in (
            lambda: setattr(execution, "arguments", {}),
            lambda: execution.arguments.__setitem__("path", "x"),
            lambda: setattr(result, "content", ()),
        ):
            try:
                attempt()
            except (TypeError, AttributeError):
                errors.append("refused")

    def body(a: Any, c: Any) -> Any:
        c.defer_context("ctx")
        c.conclude_turn()
        return {"n": 1}

    r = Registry()
    r.register(tool("t", body, output_schema=N_OUT, finalize_content=finalize))
    execute(r, "t", {"path": "p"}, call_id="call-7")
    ((call_id, args, result_json),) = seen
    assert call_id == "call-7" and args == {"path": "p"}
    assert result_json["additionalContexts"] == ["ctx"]
    assert result_json["concludesTurn"] is True
    assert errors == ["refused"] * 3


def test_FIN_3_invalid_input_reaches_the_finalizer_untyped() -> None:
    """FIN-3: invalid input reaches the finalizer too (not typed arguments)."""
    seen: list[Any] = []
    r = Registry()
    r.register(tool("t", finalize_content=lambda e, res: seen.append(e.arguments)))
    execute(r, "t", {"path": 123})
    execute(r, "t", {"path": float("nan")})
    assert thaw(seen[0]) == {"path": 123}
    assert seen[1] is None  # not lossless: no materialized arguments exist


def test_FIN_3_returning_nothing_keeps_content() -> None:
    """FIN-3: a finalizer returning nothing keeps the content."""
    r = Registry()
    r.register(tool("t", finalize_content=lambda e, res: None))
    assert text_of(execute(r, "t")) == '"ok"'


def test_FIN_3_returning_content_replaces_only_content() -> None:
    """FIN-3: returned content replaces only `content`; every other field stays registry-owned."""

    def body(a: Any, c: Any) -> Any:
        c.defer_context("ctx")
        c.conclude_turn()
        return {"n": 1}

    definition = tool(
        "t",
        body,
        output_schema=N_OUT,
        finalize_content=lambda e, res: [{"type": "text", "text": "capped"}],
    )
    definition["output"]["presentation_meta"] = lambda a, v: {"m": 1}
    r = Registry()
    r.register(definition)
    baseline = Registry()
    baseline.register(definition | {"finalize_content": None})
    got, want = execute(r, "t").to_json(), execute(baseline, "t").to_json()
    assert got["content"] == [{"type": "text", "text": "capped"}]
    del got["content"], want["content"]
    assert got == want


def test_FIN_3_finalizer_cannot_change_error_fields() -> None:
    """FIN-3: on a failure the finalizer changes content only; error and code stay."""
    r = Registry()
    r.register(
        tool("t", throw, finalize_content=lambda e, res: [{"type": "text", "text": "friendly"}])
    )
    result = execute(r, "t")
    assert result.is_error
    assert result.message == "boom"
    assert text_of(result) == "friendly"


@pytest.mark.parametrize("outcome", ["success", "body-error", "deny"])
def test_FIN_4_throwing_finalizer_still_publishes_one_result(outcome: str) -> None:
    """FIN-4: a finalizer that throws anyway: exactly one result is still published."""
    body = throw if outcome == "body-error" else (lambda a, c: {"n": 1})
    r = Registry()
    r.register(tool("t", body, output_schema=N_OUT, finalize_content=throw))
    if outcome == "deny":
        r.on("tools/pre-execute", lambda e, n: deny("no"))
    results: list[Any] = []
    r.on("tools/result", lambda e, res: results.append(res))
    result = execute(r, "t")
    assert results == [result]
    assert result.is_error == (outcome != "success")


def test_FIN_4_malformed_finalizer_content_keeps_the_result() -> None:
    """FIN-4: a finalizer returning junk does not break the single published result."""
    results: list[Any] = []
    r = Registry()
    r.register(tool("t", finalize_content=lambda e, res: 42))
    r.on("tools/result", lambda e, res: results.append(res))
    result = execute(r, "t")
    assert results == [result]
    assert isinstance(result, ToolSuccess)
    assert text_of(result) == '"ok"'


def test_FIN_4_post_execute_sees_pre_finalizer_content() -> None:
    """FIN-4/PIPE-1: finalize runs after post-execute (post sees raw content)."""
    seen: list[str] = []
    r = Registry()
    r.register(tool("t", finalize_content=lambda e, res: [{"type": "text", "text": "final"}]))
    r.on("tools/post-execute", lambda e, res, n: seen.append(text_of(res)) or accept())
    assert text_of(execute(r, "t")) == "final"
    assert seen == ['"ok"']
