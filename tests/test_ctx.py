"""CTX-1..2: deferred contexts and concluding the turn."""

from __future__ import annotations

import asyncio
from typing import Any

from conftest import asynctest, call, code_of, execute, tool

from reference import AbortController, Registry, block, run_batch


def test_CTX_1_deferred_messages_ride_the_result_in_call_order() -> None:
    """CTX-1: deferContext messages ride this execution's result, in call order."""

    def body(a: Any, c: Any) -> str:
        c.defer_context("first")
        c.defer_context({"role": "note", "text": "second"})
        return "ok"

    r = Registry()
    r.register(tool("t", body))
    result = execute(r, "t")
    assert result.to_json()["additionalContexts"] == ["first", {"role": "note", "text": "second"}]


@asynctest
async def test_CTX_1_nothing_injected_while_the_call_is_open() -> None:
    """CTX-1: nothing is injected while the call is open; only its own result carries it."""
    deferred = asyncio.Event()
    release = asyncio.Event()
    published: list[Any] = []

    async def body(a: Any, c: Any) -> str:
        c.defer_context("remember this")
        deferred.set()
        await asyncio.wait_for(release.wait(), 5)
        return "ok"

    r = Registry()
    r.register(tool("t", body, is_concurrency_safe=lambda a: True))
    r.register(tool("other", is_concurrency_safe=lambda a: True))
    r.on("tools/result", lambda e, res: published.append((e.call_id, res)))
    task = asyncio.create_task(
        run_batch(r, [call("t", call_id="a"), call("other", call_id="b")], max_parallel=2)
    )
    await asyncio.wait_for(deferred.wait(), 5)
    assert published == []  # the call is open: no result, no injection
    release.set()
    first, second = await asyncio.wait_for(task, 5)
    assert list(first.additional_contexts) == ["remember this"]
    assert list(second.additional_contexts) == []


def test_CTX_1_contexts_survive_a_throwing_body() -> None:
    """CTX-1: the deferred message rides the result also when the body later throws."""

    def body(a: Any, c: Any) -> str:
        c.defer_context("partial progress")
        raise RuntimeError("then it failed")

    r = Registry()
    r.register(tool("t", body))
    result = execute(r, "t")
    assert result.is_error
    assert result.to_json()["additionalContexts"] == ["partial progress"]


def test_CTX_1_contexts_survive_cancellation() -> None:
    """CTX-1: the deferred message rides the result also when cancellation wins."""
    controller = AbortController()

    def body(a: Any, c: Any) -> str:
        c.defer_context("before the abort")
        controller.abort()
        return "ok"

    r = Registry()
    r.register(tool("t", body))
    result = execute(r, "t", signal=controller.signal)
    assert code_of(result) == "ABORTED"
    assert result.to_json()["additionalContexts"] == ["before the abort"]


def concluding(a: Any, c: Any) -> str:
    c.conclude_turn()
    return "done"


def test_CTX_2_conclude_turn_marks_a_success() -> None:
    """CTX-2: concludeTurn() marks a successful result concludesTurn."""
    r = Registry()
    r.register(tool("t", concluding))
    result = execute(r, "t")
    assert result.to_json()["concludesTurn"] is True
    r.register(tool("plain"))
    assert "concludesTurn" not in execute(r, "plain").to_json()


def test_CTX_2_a_failure_never_carries_the_mark() -> None:
    """CTX-2: a failure never carries the mark (body throws after concluding)."""

    def body(a: Any, c: Any) -> str:
        c.conclude_turn()
        raise RuntimeError("fail")

    r = Registry()
    r.register(tool("t", body))
    out = execute(r, "t").to_json()
    assert out["isError"] is True and "concludesTurn" not in out


def test_CTX_2_blocked_success_loses_the_mark() -> None:
    """CTX-2: a post-execute block turns the concluding success into a failure without the mark."""
    r = Registry()
    r.register(tool("t", concluding))
    r.on("tools/post-execute", lambda e, res, n: block("not yet"))
    out = execute(r, "t").to_json()
    assert out["isError"] is True and "concludesTurn" not in out


def composite_registry(nested_blocked: bool) -> Registry:
    r = Registry()
    r.register(tool("finish", concluding))

    async def composite(a: Any, c: Any) -> str:
        nested = await r.execute(call("finish", call_id=f"{c.call_id}/1", signal=c.signal))
        c.forward(nested)
        return "composite done"

    r.register(tool("composite", composite))
    if nested_blocked:
        r.on("tools/post-execute", lambda e, res, n: block("no") if e.name == "finish" else n())
    return r


def test_CTX_2_composite_forwards_nested_success_mark() -> None:
    """CTX-2: a composite tool forwards the mark from an authoritative nested success."""
    assert execute(composite_registry(False), "composite").to_json()["concludesTurn"] is True


def test_CTX_2_composite_does_not_conclude_on_nested_failure() -> None:
    """CTX-2: only an authoritative nested success ends the outer run."""
    out = execute(composite_registry(True), "composite").to_json()
    assert out["isError"] is False
    assert "concludesTurn" not in out
