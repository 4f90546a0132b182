"""Code Mode: the reserved ``run_code`` transport over a pluggable code runtime.

Under mode ``code`` the model may call only ``run_code`` directly; a
model-direct call naming any native tool is ``UNKNOWN_TOOL`` before the policy
pipeline (CODE-1, enforced by the registry's resolution). A program reaches
native tools through the SDK handed to the runtime: every SDK call is a full
pipeline execution whose ``parent`` is the outer ``run_code`` execution's
opaque token (CODE-2). After each sub-call settles, the ``tools/code-dispatch-log``
waterfall may rewrite the *durable log copy* of its content, and nothing else
(CODE-3).

A code runtime is any object with a ``language`` string and
``async run(code, sdk, signal) -> JSON`` that returns the program's result, or
raises :class:`CodeRunFailed`. The registry ships none: whoever builds it
mounts one (the conformance kit mounts its scripted runtime, whose "programs"
are JSON lists of SDK calls).
"""

from __future__ import annotations

from collections.abc import Awaitable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from reference._json import FrozenDict, dumps, thaw
from reference._signal import AbortController, AbortSignal
from reference._types import (
    RUN_CODE,
    ExecutionToken,
    ToolExecutionInput,
    ToolResult,
    ToolSuccess,
    sealed,
)

if TYPE_CHECKING:
    from reference.registry import Registry, ToolRunContext

__all__ = [
    "CodeDispatchLog",
    "CodeRunFailed",
    "CodeRuntime",
    "CodeSdk",
    "ToolCallError",
    "run_code_definition",
]


class ToolCallError(Exception):
    """What a program sees when a tool call fails: the tool's name and a message."""

    def __init__(self, tool_name: str, message: str) -> None:
        super().__init__(f"{tool_name}: {message}")
        self.tool_name = tool_name
        self.message = message


class CodeRunFailed(Exception):
    code = "CODE_RUN_FAILED"


class CodeRuntime(Protocol):
    language: str

    def run(self, code: str, sdk: CodeSdk, signal: AbortSignal) -> Awaitable[Any]: ...


@sealed
@dataclass(frozen=True, slots=True)
class CodeDispatchLog:
    """What a ``tools/code-dispatch-log`` listener receives (CODE-3)."""

    parent: ExecutionToken
    parent_call_id: str
    call_id: str
    name: str
    is_error: bool
    content: tuple[FrozenDict, ...]


class CodeSdk:
    """The bindings a program calls. Each call re-enters the whole pipeline (CODE-2)."""

    def __init__(self, registry: Registry, outer: ToolRunContext, signal: AbortSignal) -> None:
        self._registry = registry
        self._outer = outer
        self._signal = signal
        self._count = 0
        self.logs: list[str] = []

    def log(self, line: str) -> None:
        self.logs.append(str(line))

    async def call(self, name: str, arguments: Any) -> Any:
        self._count += 1
        call_id = f"{self._outer.call_id}:code:{self._count}"
        call = ToolExecutionInput(
            call_id=call_id,
            name=name,
            arguments=arguments,
            signal=self._signal,
            agent=self._outer.agent,
            parent=self._outer.token,  # CODE-2: the outer execution's opaque token
        )
        result = await self._registry.execute(call)
        await self._log(call_id, name, result)
        for message in result.additional_contexts:  # ferried through the outer result
            self._outer.defer_context(message)
        if isinstance(result, ToolSuccess):
            return thaw(result.value)  # the program's own copy of the structured value
        raise ToolCallError(name, result.message)

    async def _log(self, call_id: str, name: str, result: ToolResult) -> None:
        """CODE-3: only the durable log copy may change; a throwing listener falls back."""
        from reference.registry import _content, _settle

        original = result.content
        listeners = self._registry._scoped_entries("tools/code-dispatch-log", self._outer.agent)
        record = CodeDispatchLog(
            self._outer.token, self._outer.call_id, call_id, name, result.is_error, original
        )

        async def step(i: int) -> Any:
            if i == len(listeners):
                return original
            return await _settle(listeners[i](record, lambda: step(i + 1)))

        try:
            content = _content(await step(0), "$.content")
        except Exception:  # CODE-3: fall back to the original content
            content = original
        self._registry.log.append(
            {
                "type": "tool/code-dispatch",
                "id": call_id,
                "parentCallId": self._outer.call_id,
                "name": name,
                "isError": result.is_error,
                "content": thaw(content),
            }
        )


def run_code_definition(registry: Registry) -> Mapping[str, Any]:
    """The built-in ``run_code`` tool (CODE-4 keeps its name reserved)."""

    async def execute(args: Mapping[str, Any], ctx: ToolRunContext) -> Any:
        runtime = registry.code_runtime
        if runtime is None:
            raise CodeRunFailed("Code Mode needs a code runtime; none is mounted")
        run = AbortController()  # follows the outer signal in; fires when the run settles
        remove = ctx.signal.add_callback(run.abort)
        sdk = CodeSdk(registry, ctx, run.signal)
        try:
            result = await runtime.run(args["code"], sdk, run.signal)
        finally:
            remove()
            run.abort("run settled")
        out: dict[str, Any] = {"logs": sdk.logs}
        if result is not None:
            out["result"] = result
        return out

    def render(_args: Any, value: Any) -> list[dict[str, str]]:
        lines = list(value["logs"])
        if "result" in value:
            result = value["result"]
            lines.append(result if isinstance(result, str) else dumps(result))
        text = "\n".join(lines) or f"({RUN_CODE} completed with no output)"
        return [{"type": "text", "text": text}]

    return {
        "name": RUN_CODE,
        "description": "Run a program that calls tools through the generated SDK.",
        "parameters": {
            "type": "object",
            "properties": {"code": {"type": "string"}, "description": {"type": "string"}},
            "required": ["code", "description"],
        },
        "output": {
            "schema": {
                "type": "object",
                "properties": {
                    "logs": {"type": "array", "items": {"type": "string"}},
                    "result": {},
                },
                "required": ["logs"],
            },
            "render": render,
        },
        "execute": execute,
    }
