"""Mutants of ③ tools/execute, the around-wrappers (EXEC-1..5).

Read beside ``conformance/judging/rules/exec_.py``. Some replace a piece of the
reference other than the registry -- the body's run context, signal fusion,
the timeout policy -- because that is where the mistake would be made.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from conformance.adapters.reference.mutants._base import mutant
from reference import (
    AbortController,
    AbortSignal,
    DispatchExecution,
    ErrorCode,
    Registry,
    ToolResult,
    ToolRunContext,
    ToolSuccess,
    failure,
)
from reference.registry import Prepared


@mutant(
    "EXEC-1",
    "the body's run context lets it replace its signal",
    replaces="reference.registry:ToolRunContext",
)
class WritableRunContext(ToolRunContext):
    """The body gets a context whose ``signal`` is a plain attribute: a body can swap in a
    signal nobody will ever abort. Only the tools/execute stage may replace the signal.

    Found in @deepseek-ai/dsh-tools 0.1.0-rc.8: its docs promise a ``readonly exec.signal``,
    but ``readonly`` is a TypeScript annotation; at run time the body can assign it."""

    __slots__ = ()

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "signal":
            object.__setattr__(self, "_signal", value)  # the bug
            return
        super().__setattr__(name, value)


@mutant(
    "EXEC-2",
    "a wrapper's replacement signal detaches the caller's abort",
    replaces="reference.registry:AbortSignal",
)
class UnfusedSignal(AbortSignal):
    """Tempting: "The wrapper knows best": the body receives the wrapper's replacement as it is, not
    fused with the caller's signal, so the caller can no longer cancel the call."""

    __slots__ = ()

    @staticmethod
    def any(*signals: AbortSignal) -> AbortSignal:
        return signals[-1]  # the bug: the newest signal only


@mutant(
    "EXEC-2",
    "the body's signal is written back: later stages see a wrapper's signal, not the caller's",
    replaces="reference.registry:ToolRunContext",
)
class SignalWrittenBack(ToolRunContext):
    """Tempting: "later stages should see the signal the body actually ran under": the fused
    signal replaces the caller's in the execution for good. A wrapper that aborts its own
    signal when its attempt is over (cleaning up its child work) then has post-execute see
    an aborted signal, and a success nobody cancelled is published as ABORTED."""

    __slots__ = ()

    def __init__(self, run: Prepared, signal: AbortSignal) -> None:
        super().__init__(run, signal)
        if signal is not run.execution.signal:
            run.execution = dataclasses.replace(run.execution, signal=signal)  # the bug


@mutant("EXEC-3", "a wrapper's own success is taken at its word: no validation, its content kept")
class TrustsAuthoredResults(Registry):
    """A cache wrapper replays a stored result; the registry passes it through as is, so a
    value the active output schema rejects -- and content not rendered from it -- get out."""

    def _normalize_authored(self, run: Prepared, result: Any) -> ToolResult:
        if isinstance(result, Mapping) and result.get("isError") is False and "value" in result:
            content = tuple(result.get("content", ()))
            return ToolSuccess(value=result["value"], content=content)  # the bug
        return super()._normalize_authored(run, result)


@mutant("EXEC-3", "a success object that already has content is taken as normalized already")
class RenderedSuccessPassedThrough(Registry):
    """Tempting: "it has content, so it was rendered: don't do it twice". A caching wrapper hands
    back the result object of an earlier call (another tool, other arguments): its value is
    never checked against this tool's output schema, and its content and meta are the earlier
    call's."""

    def _normalize_authored(self, run: Prepared, result: Any) -> ToolResult:
        if isinstance(result, ToolSuccess) and result.content:
            return result  # the bug
        return super()._normalize_authored(run, result)


@mutant("EXEC-4", "a wrapper failure is routed through post-execute like a body error")
class WrapperFailureReachesPostExecute(Registry):
    """One route for every dispatch outcome: a throwing wrapper (a pipeline failure) is shown
    to post-execute policies as if the tool had produced it."""

    async def complete(self, run: Prepared) -> ToolResult:
        if run.outcome == "wrapper-failure":
            run.outcome = "dispatched"  # the bug
        return await super().complete(run)


@mutant("EXEC-4", "a wrapper failure skips finalizeContent")
class WrapperFailureNotFinalized(Registry):
    """Tempting: "Pipeline failures bypass the tool": the failure skips post-execute, rightly, and
    the tool's finalizer too, wrongly -- the tool's last invariant on content does not hold."""

    async def complete(self, run: Prepared) -> ToolResult:
        if run.outcome == "wrapper-failure":
            run.finalizer = None  # the bug
        return await super().complete(run)


@mutant(
    "EXEC-5",
    "the timeout policy reports the timeout without waiting for the body to settle",
    replaces="reference.timeout:timeout_wrapper",
)
async def racing_timeout(
    dispatch: DispatchExecution, next_: Callable[[], Awaitable[ToolResult]]
) -> ToolResult:
    """``asyncio.wait(..., timeout=)`` around the body: on the deadline the call reports
    TOOL_TIMEOUT while the uncooperative body keeps running behind it (no abort either)."""
    if dispatch.timeout_ms is None:
        return await next_()
    task = asyncio.ensure_future(next_())
    done, _ = await asyncio.wait({task}, timeout=dispatch.timeout_ms / 1000)
    if task in done:
        return task.result()
    return failure("timed out", ErrorCode.TOOL_TIMEOUT.value, name="ToolTimeoutError")  # the bug


#: How long :func:`timeout_with_a_grace` lets a body wind down after its deadline.
GRACE_S = 0.1


@mutant(
    "EXEC-5",
    "the timeout policy aborts the body, gives it a grace to wind down, then stops waiting",
    replaces="reference.timeout:timeout_wrapper",
)
async def timeout_with_a_grace(
    dispatch: DispatchExecution, next_: Callable[[], Awaitable[ToolResult]]
) -> ToolResult:
    """Tempting: "a cooperative body stops within a tick of its abort; one that does not is not
    worth hanging for". A body that honours its signal settles inside the grace and every
    such test passes; one that ignores it (or sits in work nothing can cancel) is left
    running while the call reports TOOL_TIMEOUT and is published."""
    if dispatch.timeout_ms is None:
        return await next_()
    previous = dispatch.signal
    controller = AbortController()
    dispatch.signal = AbortSignal.any(previous, controller.signal)
    task = asyncio.ensure_future(next_())
    try:
        done, _ = await asyncio.wait({task}, timeout=dispatch.timeout_ms / 1000)
        if not done:
            controller.abort(ErrorCode.TOOL_TIMEOUT.value)
            await asyncio.wait({task}, timeout=GRACE_S)  # the bug: then it stops waiting
    finally:
        dispatch.signal = previous
    if not controller.signal.aborted:
        return task.result()
    message = f"{dispatch.name} timed out after {dispatch.timeout_ms:g} ms"
    return failure(message, ErrorCode.TOOL_TIMEOUT.value, name="ToolTimeoutError")


@mutant(
    "EXEC-5",
    "the timeout policy aborts the body but reports the caller's ABORTED, not TOOL_TIMEOUT",
    replaces="reference.timeout:timeout_wrapper",
)
async def timeout_reported_as_abort(
    dispatch: DispatchExecution, next_: Callable[[], Awaitable[ToolResult]]
) -> ToolResult:
    """A deadline implemented as "abort the call": the body stops, but the model is told the
    call was cancelled rather than that it ran out of time."""
    if dispatch.timeout_ms is None:
        return await next_()
    previous = dispatch.signal
    controller = AbortController()
    dispatch.signal = AbortSignal.any(previous, controller.signal)
    handle = asyncio.get_running_loop().call_later(dispatch.timeout_ms / 1000, controller.abort)
    try:
        result = await next_()
    finally:
        handle.cancel()
        dispatch.signal = previous
    if controller.signal.aborted:  # the bug: the deadline is reported as a cancellation
        return failure("the call was cancelled", ErrorCode.ABORTED.value, name="ToolAbortedError")
    return result


@mutant(
    "EXEC-5",
    "the timeout policy reads timeoutMs as seconds minus a second: it fires at once",
    replaces="reference.timeout:timeout_wrapper",
)
async def timeout_armed_at_zero(
    dispatch: DispatchExecution, next_: Callable[[], Awaitable[ToolResult]]
) -> ToolResult:
    """Tempting: "convert to seconds" done wrong: the deadline is armed ``timeoutMs - 1000``
    from now, now or in the past for any deadline up to a second, so a tool that answers in a few
    turns is reported TOOL_TIMEOUT although it finished in time. (Found by cosmic-ray: the
    reference's ``timeout_ms / 1000`` as ``timeout_ms - 1000`` or ``// 1000`` survived.)"""
    if dispatch.timeout_ms is None:
        return await next_()
    previous = dispatch.signal
    controller = AbortController()
    dispatch.signal = AbortSignal.any(previous, controller.signal)
    delay = (dispatch.timeout_ms - 1000) / 1000  # the bug
    handle = asyncio.get_running_loop().call_later(delay, controller.abort)
    try:
        result = await next_()
    finally:
        handle.cancel()
        dispatch.signal = previous
    if controller.signal.aborted:
        return failure("timed out", ErrorCode.TOOL_TIMEOUT.value, name="ToolTimeoutError")
    return result


@mutant("EXEC-4", "a wrapper's own failure is not recognised: it becomes a wrapper failure")
class AuthoredFailureNotRecognised(Registry):
    """Only authored *successes* are looked for: a quota wrapper that answers
    ``{isError: true, error: {message}}`` without calling ``next()`` is taken for a broken
    wrapper, so its failure skips post-execute and loses its own message."""

    def _normalize_authored(self, run: Prepared, result: Any) -> ToolResult:
        if isinstance(result, Mapping) and result.get("isError") is True:
            raise TypeError(f"tools/execute wrapper returned {result!r}, not a result")  # the bug
        return super()._normalize_authored(run, result)


@mutant("EXEC-4", "a wrapper's non-result (42) is passed on unchecked: the call has no result")
class NonResultPassedOn(Registry):
    """The registry trusts a wrapper to return a result and forgets the type check: a wrapper
    answering ``42`` leaves the run without a result, and ``execute`` raises instead of
    publishing one error."""

    def _normalize_authored(self, run: Prepared, result: Any) -> ToolResult:
        if isinstance(result, Mapping) or hasattr(result, "is_error"):
            return super()._normalize_authored(run, result)
        return result  # type: ignore[no-any-return]  # the bug: no TypeError


@mutant(
    "EXEC-4",
    "a wrapper's non-result is taken as the tool's value: the call succeeds",
    name="non-result-is-a-value",
)
class NonResultIsAValue(Registry):
    """A "whatever the wrapper hands back is the output" registry: ``42`` from a broken wrapper is
    normalized as if the body had returned it, and a broken pipeline reports a success."""

    def _normalize_authored(self, run: Prepared, result: Any) -> ToolResult:
        if isinstance(result, Mapping) or hasattr(result, "is_error"):
            return super()._normalize_authored(run, result)
        return self._normalize(run, result)  # the bug


@mutant("EXEC-4", "a wrapper's result is read by the truthiness of isError: 0 or none is a success")
class AuthoredIsErrorTruthy(Registry):
    """``if not result.get("isError"): success`` -- the JavaScript habit of testing a flag by
    truthiness. A wrapper returning ``{"isError": 0, "value": ...}``, ``{"isError": null, ...}``
    or no ``isError`` at all has its mapping published as a success; but only ``false``
    itself is a success's flag (RES-3), and anything else is no result (EXEC-4)."""

    def _normalize_authored(self, run: Prepared, result: Any) -> ToolResult:
        if isinstance(result, Mapping) and not result.get("isError") and "value" in result:
            return self._normalize(run, result["value"])  # the bug
        return super()._normalize_authored(run, result)
