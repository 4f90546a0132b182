"""The timeout policy: a ``tools/execute`` wrapper, nothing more (EXEC-5, DEF-4).

The registry never enforces ``timeout_ms`` itself (DEF-4). This wrapper does:
it replaces the dispatch signal with one fused from the current signal and a
deadline, aborts it when ``timeout_ms`` elapses, *waits for the body to settle*
(CANCEL-4: nothing same-process is ever abandoned), restores the signal it
replaced, and reports ``TOOL_TIMEOUT`` if its deadline fired. ``TOOL_TIMEOUT``
is more specific than ``ABORTED`` (CANCEL-3).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from reference._signal import AbortController, AbortSignal
from reference._types import DispatchExecution, ErrorCode, ToolResult, failure

__all__ = ["timeout_wrapper"]


async def timeout_wrapper(
    dispatch: DispatchExecution, next_: Callable[[], Awaitable[ToolResult]]
) -> ToolResult:
    timeout_ms = dispatch.timeout_ms
    if timeout_ms is None:  # DEF-4: omitted means no deadline
        return await next_()
    deadline = AbortController()
    fired = False

    def fire() -> None:
        nonlocal fired
        fired = True
        deadline.abort(ErrorCode.TOOL_TIMEOUT.value)

    previous = dispatch.signal
    dispatch.signal = AbortSignal.any(previous, deadline.signal)  # EXEC-1: only here
    handle = asyncio.get_running_loop().call_later(timeout_ms / 1000, fire)
    try:
        result = await next_()  # EXEC-5: waits for the body to settle
    finally:
        handle.cancel()
        dispatch.signal = previous
    if fired:
        message = f"{dispatch.name} timed out after {timeout_ms:g} ms"
        return failure(message, ErrorCode.TOOL_TIMEOUT.value, name="ToolTimeoutError")
    return result
