"""EXEC-1..5: each predicate catches a realistically broken registry; the reference passes."""

from __future__ import annotations

import asyncio
import types
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import pytest

import reference.registry as registry_module
from reference import Registry, ToolResult, ToolSuccess
from reference._types import DispatchExecution, failure
from reference.registry import Prepared, ToolRunContext
from tests.kit.support import mutant_outcome as outcome


class WritableContext(ToolRunContext):
    """The bug: the body's run context lets it swap its signal."""

    __slots__ = ()

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "signal":
            object.__setattr__(self, "_signal", value)
            return
        super().__setattr__(name, value)


def test_EXEC_1_catches_a_replaceable_body_signal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry_module, "ToolRunContext", WritableContext)
    assert outcome(Registry, "EXEC-1").status == "fail"


def test_EXEC_2_catches_an_unfused_replacement(monkeypatch: pytest.MonkeyPatch) -> None:
    # The bug: the body gets the wrapper's replacement alone, detached from the caller.
    unfused = types.SimpleNamespace(any=lambda *signals: signals[-1])
    monkeypatch.setattr(registry_module, "AbortSignal", unfused)
    assert outcome(Registry, "EXEC-2").status == "fail"


class TrustsAuthoredResults(Registry):
    """Takes a wrapper's own success at its word: no validation, its content kept."""

    def _normalize_authored(self, run: Prepared, result: Any) -> ToolResult:
        if isinstance(result, Mapping) and result.get("isError") is False and "value" in result:
            content = tuple(result.get("content", ()))
            return ToolSuccess(value=result["value"], content=content)
        return super()._normalize_authored(run, result)


def test_EXEC_3_catches_unnormalized_authored_success() -> None:
    assert outcome(TrustsAuthoredResults, "EXEC-3").status == "fail"


class WrapperFailuresReachPost(Registry):
    """Routes a wrapper failure through post-execute like a body error."""

    async def complete(self, run: Prepared) -> ToolResult:
        if run.outcome == "wrapper-failure":
            run.outcome = "dispatched"
        return await super().complete(run)


def test_EXEC_4_catches_wrapper_failure_reaching_post_execute() -> None:
    assert outcome(WrapperFailuresReachPost, "EXEC-4").status == "fail"


async def racing_timeout(
    dispatch: DispatchExecution, next_: Callable[[], Awaitable[ToolResult]]
) -> ToolResult:
    """The bug: races the body and reports the timeout without waiting for it to settle."""
    if dispatch.timeout_ms is None:
        return await next_()
    task = asyncio.ensure_future(next_())
    done, _ = await asyncio.wait({task}, timeout=dispatch.timeout_ms / 1000)
    if task in done:
        return task.result()
    return failure("timed out", "TOOL_TIMEOUT", name="ToolTimeoutError")


class RacingTimeout(Registry):
    def use_timeout_policy(self) -> Callable[[], None]:
        return self.on("tools/execute", racing_timeout, prepend=True)


def test_EXEC_5_catches_a_timeout_that_abandons_the_body() -> None:
    assert outcome(RacingTimeout, "EXEC-5").status == "fail"
