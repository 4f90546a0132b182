"""Mutants of Code Mode (CODE-1..4).

Read beside ``conformance/judging/rules/code.py``. Two replace the reference's Code
Mode SDK (``reference.code_mode.CodeSdk``), where a sub-dispatch's log copy is
shaped.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

from conformance.adapters.reference.mutants._base import mutant
from reference import (
    RUN_CODE,
    CodeDispatchLog,
    ErrorCode,
    ExecutionToken,
    Registry,
    ToolExecutionInput,
    ToolResult,
    thaw,
)
from reference.code_mode import CodeSdk
from reference.registry import Prepared, _code_failure, _compile, _content, _settle


def _write_log(sdk: CodeSdk, call_id: str, name: str, result: ToolResult, content: Any) -> None:
    """Append a sub-dispatch's durable log entry as the reference does (CODE-3)."""
    sdk._registry.log.append(
        {
            "type": "tool/code-dispatch",
            "id": call_id,
            "parentCallId": sdk._outer.call_id,
            "name": name,
            "isError": result.is_error,
            "content": thaw(content),
        }
    )


@mutant("CODE-1,SCOPE-2", "under mode code, model-direct calls to native tools still execute")
class DirectNativeCallsUnderCode(Registry):
    """``run_code`` is added to the direct view instead of replacing it: the model can skip
    the program and call native tools directly -- a capability ``schemas()`` does not show."""

    def _direct(self, scope: str | None) -> dict[str, Any]:
        transport = {RUN_CODE: self._transport()} if self.mode in ("code", "both") else {}
        return {**self._visible(scope), **transport}  # the bug: native tools kept under code


@mutant("CODE-1", "a model-direct native call under code is refused only after pre-execute")
class CodeModeRefusedAfterPolicy(Registry):
    """The call is resolved through the scope's catalog and refused at dispatch: pre-execute
    listeners, the approval service and guards all see (and may ask a person about) a call
    that can only fail."""

    def _resolve(self, name: str, scope: str | None, parent: ExecutionToken | None) -> Any:
        tool = super()._resolve(name, scope, parent)
        if tool is None and parent is None and self.mode == "code":
            return self._visible(scope).get(name)  # the bug: resolved for policy ...
        return tool

    async def dispatch(self, run: Prepared) -> None:
        ex = run.execution
        if self.mode == "code" and ex.parent is None and ex.name != RUN_CODE:
            message = f"unknown tool `{ex.name}`: call it from a `{RUN_CODE}` program"
            self._end(run, "unknown-tool", _code_failure(ErrorCode.UNKNOWN_TOOL, message))
            return  # ... and refused only now, after the policy stages
        await super().dispatch(run)


@mutant("CODE-1", "the unknown-tool message under code does not point to run_code")
class UnknownToolWithoutHint(Registry):
    """One not-found message for every case: the model is not told that the tool exists
    behind ``run_code``, and reads it as a broken deployment."""

    async def prepare(self, call: ToolExecutionInput) -> Prepared:
        run = await super().prepare(call)
        if run.outcome == "unknown-tool":
            message = f"unknown tool `{call.name}`"  # the bug: no pointer to run_code
            run.result = _code_failure(ErrorCode.UNKNOWN_TOOL, message)
        return run


@mutant("CODE-2", "calls from a run_code program skip the pre-execute waterfall")
class ProgramsBypassPolicy(Registry):
    """Tempting: "The program was already approved as a whole": each call it makes skips policy, so
    Code Mode becomes a way around every pre-execute listener."""

    async def _pre_execute(self, execution: Any) -> Mapping[str, Any]:
        if execution.parent is not None:
            return {"kind": "allow"}  # the bug
        return await super()._pre_execute(execution)


@mutant("CODE-2", "a sub-dispatch loses its parent token on the way into the pipeline")
class SubDispatchLosesParent(Registry):
    """The call input is rebuilt from its serializable fields and the opaque token is dropped:
    under mode code every program call is then refused as a model-direct call."""

    async def prepare(self, call: ToolExecutionInput) -> Prepared:
        if call.parent is not None:
            call = dataclasses.replace(call, parent=None)  # the bug
        return await super().prepare(call)


@mutant("CODE-2", "under mode both, model-direct native calls are refused as under code")
class BothModeActsLikeCode(Registry):
    """Mode ``both`` implemented as "code, plus the native schemas for show": native tools are
    listed but every direct call to them fails."""

    def _direct(self, scope: str | None) -> dict[str, Any]:
        if self.mode == "both":
            return {RUN_CODE: self._transport()}  # the bug
        return super()._direct(scope)

    def schemas(self, scope: str | None = None) -> list[dict[str, Any]]:
        if self.mode == "both":
            return self.catalog(scope) + super().schemas(scope)
        return super().schemas(scope)


@mutant(
    "CODE-3",
    "a throwing dispatch-log listener leaves an empty log copy, not the original",
    replaces="reference.code_mode:CodeSdk",
)
class LogCopyLostOnListenerFailure(CodeSdk):
    """The fallback is "log nothing" instead of "log the original": the durable record of the
    sub-dispatch is lost whenever a log-shaping plugin breaks."""

    async def _log(self, call_id: str, name: str, result: ToolResult) -> None:
        listeners = self._registry._scoped_entries("tools/code-dispatch-log", self._outer.agent)
        record = CodeDispatchLog(
            self._outer.token, self._outer.call_id, call_id, name, result.is_error, result.content
        )

        async def step(i: int) -> Any:
            if i == len(listeners):
                return result.content
            return await _settle(listeners[i](record, lambda: step(i + 1)))

        try:
            content: Any = _content(await step(0), "$.content")
        except Exception:
            content = ()  # the bug
        _write_log(self, call_id, name, result, content)


@mutant(
    "CODE-3",
    "a throwing dispatch-log listener fails the sub-dispatch (no fallback at all)",
    replaces="reference.code_mode:CodeSdk",
)
class LogListenerFailureFailsDispatch(CodeSdk):
    """Log shaping without a safety net: a broken log plugin's exception escapes into the
    program, so a logging concern changes what the program (and the model) sees."""

    async def _log(self, call_id: str, name: str, result: ToolResult) -> None:
        listeners = self._registry._scoped_entries("tools/code-dispatch-log", self._outer.agent)
        record = CodeDispatchLog(
            self._outer.token, self._outer.call_id, call_id, name, result.is_error, result.content
        )

        async def step(i: int) -> Any:
            if i == len(listeners):
                return result.content
            return await _settle(listeners[i](record, lambda: step(i + 1)))

        content = _content(await step(0), "$.content")  # the bug: no try, no fallback
        _write_log(self, call_id, name, result, content)


@mutant("CODE-4", "run_code is reserved in the global layer only: an agent may shadow it")
class RunCodeShadowable(Registry):
    """The reserved-name check sits next to the duplicate check of the global layer, so an
    agent-scoped ``run_code`` replaces the transport for that agent."""

    def register(
        self, definition: Mapping[str, Any], scope: str | None = None
    ) -> Callable[[], None]:
        if scope is None or definition.get("name") != RUN_CODE:
            return super().register(definition, scope)
        tool = _compile(definition)  # the bug: no reserved-name check for scoped layers
        layer = self._scoped.setdefault(scope, {})
        layer[tool.name] = tool

        def dispose() -> None:
            layer.pop(tool.name, None)

        return dispose


@mutant("CODE-4", "run_code is reserved only while the registry runs in a code mode")
class RunCodeReservedOnlyInCodeMode(Registry):
    """Tempting: "Under native there is no transport to protect": but any agent may select a code
    mode, and then the plugin's ``run_code`` intercepts every program."""

    def register(
        self, definition: Mapping[str, Any], scope: str | None = None
    ) -> Callable[[], None]:
        if self.mode != "native" or definition.get("name") != RUN_CODE:
            return super().register(definition, scope)
        tool = _compile(definition)  # the bug: not reserved under native
        layer = self._global if scope is None else self._scoped.setdefault(scope, {})
        layer[tool.name] = tool

        def dispose() -> None:
            layer.pop(tool.name, None)

        return dispose


@mutant(
    "CODE-3",
    "the dispatch-log waterfall fails before any listener runs: every replacement is dropped",
    replaces="reference.code_mode:CodeSdk",
)
class LogReplacementNeverReached(CodeSdk):
    """Blind spot B9 (benchmarks/mutation.md): the record handed to the listeners is never
    built, so calling the first listener raises before it starts; the fallback then writes
    the original content. Every failure looks like a throwing listener, and a log-shaping
    plugin (a redaction, a preview) silently never applies -- while no listener event ever
    shows it was skipped."""

    async def _log(self, call_id: str, name: str, result: ToolResult) -> None:
        listeners = self._registry._scoped_entries("tools/code-dispatch-log", self._outer.agent)

        async def step(i: int) -> Any:
            if i == len(listeners):
                return result.content
            raise NameError("record")  # the bug: the listener's argument was never built

        try:
            content: Any = _content(await step(0), "$.content")
        except Exception:
            content = result.content  # CODE-3's fallback, reached every time
        _write_log(self, call_id, name, result, content)


@mutant(
    "CODE-3",
    "the dispatch-log chain's end raises (an index past the last listener) instead of answering",
    replaces="reference.code_mode:CodeSdk",
)
class LogChainEndRaises(CodeSdk):
    """``listeners[i]`` with ``i == len(listeners)``: the last listener's ``next()`` raises
    ``IndexError`` instead of answering with the original content, and the "throwing
    listener" fallback logs the original -- so a listener that calls ``next()`` and then
    shapes the content never gets to. A kit that forgives "the listener threw" passes it;
    but no listener threw its own error: ``next()`` raised (method 11)."""

    async def _log(self, call_id: str, name: str, result: ToolResult) -> None:
        listeners = self._registry._scoped_entries("tools/code-dispatch-log", self._outer.agent)
        record = CodeDispatchLog(
            self._outer.token, self._outer.call_id, call_id, name, result.is_error, result.content
        )

        async def step(i: int) -> Any:
            return await _settle(listeners[i](record, lambda: step(i + 1)))  # the bug

        try:
            content: Any = _content(await step(0), "$.content") if listeners else result.content
        except Exception:
            content = result.content
        _write_log(self, call_id, name, result, content)


@mutant(
    "CODE-3",
    "a sub-dispatch's durable log entry is never written",
    replaces="reference.code_mode:CodeSdk",
)
class UnloggedDispatch(CodeSdk):
    """Tempting: "the log is the listeners' business": the SDK dispatches a program's call and
    hands back its result, but never asks the dispatch-log chain nor writes the entry, so
    the durable record of what the program did is empty. (Found by cosmic-ray: the
    reference's ``await self._log(...)`` deleted survived the quick corpus.)"""

    async def _log(self, call_id: str, name: str, result: ToolResult) -> None:
        return None  # the bug
