"""EXEC-1..5: tools/execute around-wrappers and the timeout policy."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from conftest import Counter, asynctest, call, code_of, execute, text_of, tool, yield_many

from reference import (
    AbortController,
    AbortSignal,
    Registry,
    ToolSuccess,
    accept,
    allow,
    success,
    thaw,
)

N_OUT = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


def test_EXEC_1_wrappers_surround_the_body_in_registration_order() -> None:
    """EXEC-1: wrappers surround the body; the first registered is outermost."""
    events: list[str] = []
    r = Registry()
    r.register(tool("t", lambda a, c: events.append("body") or "ok"))
    for name in ("outer", "inner"):

        async def wrapper(d: Any, n: Any, name: str = name) -> Any:
            events.append(f"{name}:in")
            result = await n()
            events.append(f"{name}:out")
            return result

        r.on("tools/execute", wrapper)
    execute(r, "t")
    assert events == ["outer:in", "inner:in", "body", "inner:out", "outer:out"]


def test_EXEC_1_next_returns_a_normalized_result() -> None:
    """EXEC-1: next() returns the normalized result (validated value + rendered content)."""
    seen: list[Any] = []
    r = Registry()
    r.register(tool("t", lambda a, c: {"n": 1}, output_schema=N_OUT))

    async def wrapper(d: Any, n: Any) -> Any:
        result = await n()
        seen.append(result)
        return result

    r.on("tools/execute", wrapper)
    final = execute(r, "t")
    (inner,) = seen
    assert isinstance(inner, ToolSuccess)
    assert thaw(inner.value) == {"n": 1}
    assert text_of(inner) == '{"n": 1}'
    assert thaw(final.value) == {"n": 1}


def test_EXEC_1_only_execute_stage_may_replace_the_signal() -> None:
    """EXEC-1: only the tools/execute view may replace the signal; all else read-only."""
    outcomes: dict[str, str] = {}
    replacement = AbortController().signal

    def attempt(where: str, obj: Any) -> None:
        try:
            obj.signal = replacement
        except AttributeError:
            outcomes[where] = "read-only"
        else:
            outcomes[where] = "replaced"

    def body(args: Any, ctx: Any) -> str:
        attempt("body", ctx)
        return "ok"

    def finalize(e: Any, res: Any) -> None:
        attempt("finalize", e)

    async def wrapper(d: Any, n: Any) -> Any:
        attempt("execute", d)
        return await n()

    r = Registry()
    r.register(tool("t", body, finalize_content=finalize))
    r.on("tools/pre-execute", lambda e, n: attempt("pre", e) or n())
    r.guard(lambda e: attempt("guard", e))
    r.on("tools/execute", wrapper)
    r.on("tools/post-execute", lambda e, res, n: attempt("post", e) or n())
    r.on("tools/result", lambda e, res: attempt("result", e))
    assert not execute(r, "t").is_error
    assert outcomes == {
        "pre": "read-only",
        "guard": "read-only",
        "execute": "replaced",
        "body": "read-only",
        "post": "read-only",
        "finalize": "read-only",
        "result": "read-only",
    }


def test_EXEC_1_wrapper_view_identity_fields_are_read_only() -> None:
    """EXEC-1: only the signal is replaceable in the tools/execute view."""
    errors: list[str] = []

    async def wrapper(d: Any, n: Any) -> Any:
        for field in ("name", "call_id", "agent", "arguments", "parent", "timeout_ms"):
            try:
                setattr(d, field, "x")
            except AttributeError:
                errors.append(field)
        return await n()

    r = Registry()
    r.register(tool("t"))
    r.on("tools/execute", wrapper)
    execute(r, "t")
    assert errors == ["name", "call_id", "agent", "arguments", "parent", "timeout_ms"]


def test_EXEC_1_body_signal_cannot_be_aborted_by_the_body() -> None:
    """EXEC-1/CANCEL-1: the body receives a signal, not its controller."""
    seen: list[bool] = []

    def body(args: Any, ctx: Any) -> str:
        seen.append(hasattr(ctx.signal, "abort"))
        return "ok"

    r = Registry()
    r.register(tool("t", body))
    execute(r, "t")
    assert seen == [False]


@asynctest
async def test_EXEC_2_replacement_is_fused_with_the_callers_signal() -> None:
    """EXEC-2: replacing the signal never detaches the caller's cancellation."""
    caller = AbortController()
    observed: list[bool] = []

    async def body(args: Any, ctx: Any) -> str:
        observed.append(ctx.signal.aborted)
        caller.abort("user stop")  # the caller cancels while the body runs
        observed.append(ctx.signal.aborted)
        return "ok"

    async def detaching(d: Any, n: Any) -> Any:
        d.signal = AbortController().signal  # a signal that never aborts
        return await n()

    r = Registry()
    r.register(tool("t", body))
    r.on("tools/execute", detaching)
    result = await r.execute(call("t", signal=caller.signal))
    assert observed == [False, True]
    assert code_of(result) == "ABORTED"


@asynctest
async def test_EXEC_2_replacement_signal_reaches_the_body() -> None:
    """EXEC-2: the fused signal also aborts when the replacement does."""
    own = AbortController()
    observed: list[bool] = []

    async def body(args: Any, ctx: Any) -> str:
        own.abort("wrapper's reason")
        observed.append(ctx.signal.aborted)
        return "ok"

    async def wrapper(d: Any, n: Any) -> Any:
        d.signal = own.signal
        return await n()

    r = Registry()
    r.register(tool("t", body))
    r.on("tools/execute", wrapper)
    await r.execute(call("t"))
    assert observed == [True]


def test_EXEC_2_later_stages_see_the_callers_original_signal() -> None:
    """EXEC-2: after dispatch, later stages see the caller's original signal again."""
    caller = AbortController()
    seen: dict[str, AbortSignal] = {}

    async def wrapper(d: Any, n: Any) -> Any:
        d.signal = AbortController().signal
        return await n()  # deliberately does not restore

    r = Registry()
    r.register(tool("t", finalize_content=lambda e, res: seen.__setitem__("finalize", e.signal)))
    r.on("tools/execute", wrapper)
    r.on("tools/post-execute", lambda e, res, n: seen.__setitem__("post", e.signal) or n())
    r.on("tools/result", lambda e, res: seen.__setitem__("result", e.signal))
    execute(r, "t", signal=caller.signal)
    assert seen == {"post": caller.signal, "finalize": caller.signal, "result": caller.signal}


def test_EXEC_3_wrapper_authored_success_is_validated_and_rendered() -> None:
    """EXEC-3: a wrapper's own success is normalized through the output declaration."""
    entered: list[str] = []
    r = Registry()
    r.register(tool("t", lambda a, c: entered.append("body") or {"n": 0}, output_schema=N_OUT))
    r.on("tools/execute", lambda d, n: success({"n": 42}))
    result = execute(r, "t")
    assert not result.is_error
    assert thaw(result.value) == {"n": 42}
    assert text_of(result) == '{"n": 42}'
    assert entered == []


def test_EXEC_3_wrapper_authored_invalid_success_is_an_error() -> None:
    """EXEC-3: a wrapper's success violating output.schema is an error, not a success."""
    r = Registry()
    r.register(tool("t", output_schema=N_OUT))
    r.on("tools/execute", lambda d, n: success({"n": "not an int"}))
    result = execute(r, "t")
    assert result.is_error
    assert code_of(result) == "INVALID_TOOL_OUTPUT"


def test_EXEC_3_wrapper_authored_plain_mapping_success_is_normalized() -> None:
    """EXEC-3: a success in the JSON shape is validated and rendered (content ignored)."""
    r = Registry()
    r.register(tool("t", output_schema=N_OUT))
    r.on(
        "tools/execute",
        lambda d, n: {
            "isError": False,
            "value": {"n": 7},
            "content": [{"type": "text", "text": "lie"}],
        },
    )
    result = execute(r, "t")
    assert thaw(result.value) == {"n": 7}
    assert text_of(result) == '{"n": 7}'


@pytest.mark.parametrize("mode", ["raise-before", "raise-after", "garbage"])
def test_EXEC_4_wrapper_failure_bypasses_post_but_is_finalized(mode: str) -> None:
    """EXEC-4: a throwing wrapper: error, no post-execute, finalize and result once."""
    post: list[str] = []
    fin = Counter()
    observed = Counter()

    async def wrapper(d: Any, n: Any) -> Any:
        if mode == "raise-before":
            raise RuntimeError("wrapper bug")
        await n()
        if mode == "raise-after":
            raise RuntimeError("wrapper bug")
        return object()  # not a result

    r = Registry()
    r.register(tool("t", finalize_content=fin))
    r.on("tools/execute", wrapper)
    r.on("tools/post-execute", lambda e, res, n: post.append("post") or accept())
    r.on("tools/result", observed)
    result = execute(r, "t")
    assert result.is_error
    assert post == []
    assert fin.count == 1
    assert observed.count == 1 and observed.calls[0][1] is result


@asynctest
async def test_EXEC_5_timeout_aborts_signal_and_reports_tool_timeout() -> None:
    """EXEC-5: the timeout wrapper aborts the signal after timeoutMs and reports TOOL_TIMEOUT."""
    observed: list[bool] = []

    async def body(args: Any, ctx: Any) -> str:
        await asyncio.wait_for(ctx.signal.wait(), 5)
        observed.append(ctx.signal.aborted)
        return "finished anyway"

    r = Registry()
    r.use_timeout_policy()
    r.register(tool("slow", body, timeout_ms=1))
    result = await r.execute(call("slow"))
    assert observed == [True]
    assert code_of(result) == "TOOL_TIMEOUT"


@asynctest
async def test_EXEC_5_timeout_waits_for_the_body_to_settle() -> None:
    """EXEC-5: after the deadline fires, the policy still waits for the body to settle."""
    settled: list[str] = []

    async def body(args: Any, ctx: Any) -> str:
        await asyncio.wait_for(ctx.signal.wait(), 5)
        await yield_many(20)  # cleanup that takes a while after the abort
        settled.append("body")
        return "late"

    r = Registry()
    r.use_timeout_policy()
    r.register(tool("slow", body, timeout_ms=1))
    result = await r.execute(call("slow"))
    assert settled == ["body"]
    assert code_of(result) == "TOOL_TIMEOUT"


def test_EXEC_5_fast_body_is_untouched_by_the_timeout_policy() -> None:
    """EXEC-5: a body settling before its deadline keeps its result."""
    r = Registry()
    r.use_timeout_policy()
    r.register(tool("t", lambda a, c: {"n": 1}, output_schema=N_OUT, timeout_ms=60_000))
    result = execute(r, "t")
    assert not result.is_error
    assert thaw(result.value) == {"n": 1}


def test_EXEC_5_timeout_policy_is_a_tools_execute_wrapper() -> None:
    """EXEC-5: the timeout policy is a wrapper: it is disposable like any other."""
    r = Registry()
    dispose = r.use_timeout_policy()
    dispose()

    async def body(args: Any, ctx: Any) -> str:
        await asyncio.sleep(0.02)
        return "ok" if not ctx.signal.aborted else "aborted"

    r.register(tool("t", body, timeout_ms=1))
    r.on("tools/pre-execute", lambda e, n: allow())
    assert execute(r, "t").value == "ok"
