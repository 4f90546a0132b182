"""CANCEL-1..4: cooperative cancellation. No sleeps prove ordering here."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from conftest import Approval, Counter, asynctest, call, code_of, execute, tool, yield_many

from reference import (
    AbortController,
    AbortSignal,
    Registry,
    ToolError,
    ToolExecutionInput,
    allow,
    ask,
    block,
    deny,
    run_batch,
)


def test_CANCEL_1_signal_is_required() -> None:
    """CANCEL-1: every execution has a required, caller-owned signal."""
    with pytest.raises(TypeError):
        ToolExecutionInput("c1", "t", {})  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        ToolExecutionInput("c1", "t", {}, None)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        ToolExecutionInput("c1", "t", {}, AbortController())  # type: ignore[arg-type]


def test_CANCEL_1_body_receives_the_callers_signal_read_only() -> None:
    """CANCEL-1: the body receives the caller's signal, read-only (no abort, no replacement)."""
    controller = AbortController()
    seen: list[Any] = []

    def body(a: Any, c: Any) -> str:
        seen.append(c.signal)
        seen.append(hasattr(c.signal, "abort"))
        try:
            c.signal = AbortSignal()
        except AttributeError:
            seen.append("read-only")
        return "ok"

    r = Registry()
    r.register(tool("t", body))
    execute(r, "t", signal=controller.signal)
    assert seen == [controller.signal, False, "read-only"]


def aborted_registry(entered: list[str], events: list[str], fin: Counter | None = None) -> Registry:
    r = Registry(approval=Approval())
    r.register(tool("t", lambda a, c: entered.append("body") or "ok", finalize_content=fin))
    r.on("tools/pre-execute", lambda e, n: events.append("pre") or ask("?"))
    r.guard(lambda e: events.append("guard"))
    return r


def test_CANCEL_2_already_aborted_entry_skips_policy_and_body() -> None:
    """CANCEL-2: a pre-aborted entry skips every policy stage; exactly one result."""
    controller = AbortController()
    controller.abort()
    entered: list[str] = []
    events: list[str] = []
    fin = Counter()
    r = aborted_registry(entered, events, fin)
    approval = Approval()
    r.approval = approval
    published = Counter()
    r.on("tools/result", published)
    result = execute(r, "t", signal=controller.signal)
    assert code_of(result) == "ABORTED_BEFORE_DISPATCH"
    assert entered == [] and events == [] and approval.requests == []
    assert published.count == 1 and fin.count == 1


@pytest.mark.parametrize("arguments", [{"path": 1}, {"path": float("nan")}], ids=["schema", "nan"])
def test_CANCEL_2_invalid_arguments_win_over_pre_abort(arguments: Any) -> None:
    """CANCEL-2: a pre-aborted entry still materializes arguments (invalid args win)."""
    controller = AbortController()
    controller.abort()
    entered: list[str] = []
    r = aborted_registry(entered, [])
    result = execute(r, "t", arguments, signal=controller.signal)
    assert code_of(result) == "INVALID_ARGS"
    assert entered == []


def test_CANCEL_2_abort_during_pre_execute() -> None:
    """CANCEL-2: cancellation during pre-execute is ABORTED_BEFORE_DISPATCH; the body never runs."""
    controller = AbortController()
    entered: list[str] = []
    guarded: list[str] = []
    r = Registry()
    r.register(tool("t", lambda a, c: entered.append("body") or "ok"))
    r.on("tools/pre-execute", lambda e, n: controller.abort() or allow())
    r.guard(lambda e: guarded.append("guard"))
    result = execute(r, "t", signal=controller.signal)
    assert code_of(result) == "ABORTED_BEFORE_DISPATCH"
    assert entered == [] and guarded == []


def test_CANCEL_2_abort_during_approval() -> None:
    """CANCEL-2: cancellation while the approval is pending: ABORTED_BEFORE_DISPATCH, no body."""
    controller = AbortController()
    entered: list[str] = []

    class AbortingApproval:
        async def request(self, req: Any) -> str:
            controller.abort("user pressed stop")
            return "allowed-once"

    r = Registry(approval=AbortingApproval())
    r.register(tool("t", lambda a, c: entered.append("body") or "ok"))
    r.on("tools/pre-execute", lambda e, n: ask("?"))
    result = execute(r, "t", signal=controller.signal)
    assert code_of(result) == "ABORTED_BEFORE_DISPATCH"
    assert entered == []


def test_CANCEL_2_approval_request_carries_the_signal() -> None:
    """CANCEL-2: the approval service can observe the call's cancellation."""
    controller = AbortController()
    approval = Approval("allowed-once")
    r = Registry(approval=approval)
    r.register(tool("t"))
    r.on("tools/pre-execute", lambda e, n: ask("?"))
    execute(r, "t", signal=controller.signal)
    assert approval.requests[0].signal is controller.signal


def test_CANCEL_2_abort_in_wrapper_before_delegating() -> None:
    """CANCEL-2: a wrapper cancelling before it delegates: ABORTED_BEFORE_DISPATCH, body not run."""
    controller = AbortController()
    entered: list[str] = []

    async def wrapper(d: Any, n: Any) -> Any:
        controller.abort()
        return await n()

    r = Registry()
    r.register(tool("t", lambda a, c: entered.append("body") or "ok"))
    r.on("tools/execute", wrapper)
    result = execute(r, "t", signal=controller.signal)
    assert code_of(result) == "ABORTED_BEFORE_DISPATCH"
    assert entered == []


def test_CANCEL_2_abort_in_wrapper_that_never_delegates() -> None:
    """CANCEL-2: an authored success after a pre-dispatch abort: ABORTED_BEFORE_DISPATCH."""
    controller = AbortController()

    def wrapper(d: Any, n: Any) -> Any:
        controller.abort()
        return {"isError": False, "value": "cached"}

    r = Registry()
    r.register(tool("t"))
    r.on("tools/execute", wrapper)
    assert code_of(execute(r, "t", signal=controller.signal)) == "ABORTED_BEFORE_DISPATCH"


@pytest.mark.parametrize("denial", ["deny", "guard", "refused-approval"])
def test_CANCEL_2_denial_plus_cancellation_either_conforms(denial: str) -> None:
    """CANCEL-2: a denial and a cancellation before dispatch: either outcome, body never runs."""
    controller = AbortController()
    entered: list[str] = []
    r = Registry(approval=Approval("rejected"))
    r.register(tool("t", lambda a, c: entered.append("body") or "ok"))
    if denial == "deny":
        r.on("tools/pre-execute", lambda e, n: controller.abort() or deny("no"))
    elif denial == "guard":
        r.guard(lambda e: controller.abort() or "no")
    else:
        r.on("tools/pre-execute", lambda e, n: controller.abort() or ask("?"))
    result = execute(r, "t", signal=controller.signal)
    assert result.is_error
    assert code_of(result) in (None, "ABORTED_BEFORE_DISPATCH")
    assert entered == []


def test_CANCEL_3_abort_after_body_replaces_success_with_aborted() -> None:
    """CANCEL-3: cancellation after the body was invoked turns a success into ABORTED."""
    controller = AbortController()
    r = Registry()
    r.register(tool("t", lambda a, c: controller.abort() or "ok"))
    result = execute(r, "t", signal=controller.signal)
    assert code_of(result) == "ABORTED"
    assert "value" not in result.to_json()


def test_CANCEL_3_abort_during_post_execute_replaces_success() -> None:
    """CANCEL-3: an abort that lands after the body (in post-execute) still wins over a success."""
    controller = AbortController()
    r = Registry()
    r.register(tool("t"))
    r.on("tools/post-execute", lambda e, res, n: controller.abort() or n())
    assert code_of(execute(r, "t", signal=controller.signal)) == "ABORTED"


def test_CANCEL_3_body_error_stays_more_specific() -> None:
    """CANCEL-3: a body error stays, even if the caller also cancelled."""
    controller = AbortController()

    def body(a: Any, c: Any) -> Any:
        controller.abort()
        raise ToolError("partial write", code="EIO")

    r = Registry()
    r.register(tool("t", body))
    assert code_of(execute(r, "t", signal=controller.signal)) == "EIO"


def test_CANCEL_3_wrapper_failure_stays_more_specific() -> None:
    """CANCEL-3: a wrapper failure after the body stays, even if the caller cancelled."""
    controller = AbortController()

    async def wrapper(d: Any, n: Any) -> Any:
        await n()
        raise ToolError("wrapper broke", code="WRAP")

    r = Registry()
    r.register(tool("t", lambda a, c: controller.abort() or "ok"))
    r.on("tools/execute", wrapper)
    assert code_of(execute(r, "t", signal=controller.signal)) == "WRAP"


def test_CANCEL_3_post_block_stays_more_specific() -> None:
    """CANCEL-3: a post-execute block stays, even if the caller cancelled."""
    controller = AbortController()
    r = Registry()
    r.register(tool("t", lambda a, c: controller.abort() or "ok"))
    r.on("tools/post-execute", lambda e, res, n: block("blocked by policy"))
    result = execute(r, "t", signal=controller.signal)
    assert result.is_error and code_of(result) != "ABORTED"
    assert result.message == "blocked by policy"


@asynctest
async def test_CANCEL_3_timeout_stays_more_specific() -> None:
    """CANCEL-3: TOOL_TIMEOUT stays even when the caller also aborts afterwards."""
    controller = AbortController()

    async def body(a: Any, c: Any) -> str:
        await asyncio.wait_for(c.signal.wait(), 5)  # the deadline fires
        controller.abort("and then the user stops too")
        return "late"

    r = Registry()
    r.use_timeout_policy()
    r.register(tool("t", body, timeout_ms=1))
    result = await r.execute(call("t", signal=controller.signal))
    assert code_of(result) == "TOOL_TIMEOUT"


@asynctest
async def test_CANCEL_4_uncooperative_body_is_awaited() -> None:
    """CANCEL-4: a started body is never abandoned; execute returns after it settled."""
    controller = AbortController()
    started = asyncio.Event()
    release = asyncio.Event()
    settled: list[str] = []

    async def stubborn(a: Any, c: Any) -> str:
        started.set()
        await release.wait()  # ignores the signal entirely
        settled.append("body")
        return "ok"

    r = Registry()
    r.register(tool("t", stubborn))
    task = asyncio.create_task(r.execute(call("t", signal=controller.signal)))
    await asyncio.wait_for(started.wait(), 5)
    controller.abort()
    await yield_many(20)
    assert not task.done()  # not raced, not abandoned
    assert settled == []
    release.set()
    result = await asyncio.wait_for(task, 5)
    assert settled == ["body"]
    assert code_of(result) == "ABORTED"


@asynctest
async def test_CANCEL_4_timeout_policy_does_not_abandon_the_body() -> None:
    """CANCEL-4: even past its deadline, a body that ignores the signal is awaited."""
    started = asyncio.Event()
    release = asyncio.Event()
    settled: list[str] = []
    fired = asyncio.Event()

    async def stubborn(a: Any, c: Any) -> str:
        started.set()
        await c.signal.wait()  # the deadline fired...
        fired.set()
        await release.wait()  # ...but the body keeps going
        settled.append("body")
        return "ok"

    r = Registry()
    r.use_timeout_policy()
    r.register(tool("t", stubborn, timeout_ms=1))
    task = asyncio.create_task(r.execute(call("t")))
    await asyncio.wait_for(started.wait(), 5)
    await asyncio.wait_for(fired.wait(), 5)
    await yield_many(20)
    assert not task.done()
    release.set()
    result = await asyncio.wait_for(task, 5)
    assert settled == ["body"] and code_of(result) == "TOOL_TIMEOUT"


@asynctest
async def test_CANCEL_4_batch_waits_for_started_bodies() -> None:
    """CANCEL-4: the scheduler does not return while a started parallel body is still running."""
    controller = AbortController()
    started = asyncio.Event()
    release = asyncio.Event()

    async def stubborn(a: Any, c: Any) -> str:
        started.set()
        await release.wait()
        return "ok"

    r = Registry()
    r.register(tool("p", stubborn, is_concurrency_safe=lambda a: True))
    calls = [call("p", call_id=str(i), signal=controller.signal) for i in range(2)]
    task = asyncio.create_task(run_batch(r, calls, max_parallel=2))
    await asyncio.wait_for(started.wait(), 5)
    controller.abort()
    await yield_many(20)
    assert not task.done()
    release.set()
    results = await asyncio.wait_for(task, 5)
    assert [code_of(x) for x in results] == ["ABORTED", "ABORTED"]
