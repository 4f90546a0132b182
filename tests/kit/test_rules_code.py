"""CODE predicates can fail: each test runs a realistically broken registry and expects ``fail``."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pytest

import reference.code_mode as code_mode
from reference import Registry, ToolExecution
from reference._json import thaw
from reference._types import RUN_CODE, ToolResult
from reference.registry import _compile, _content, _settle
from tests.kit.support import rule_status as status


class DirectNativeCalls(Registry):
    """Under mode code, still lets the model call native tools directly."""

    def _direct(self, scope: str | None) -> dict[str, Any]:
        transport = {RUN_CODE: self._transport()} if self.mode in ("code", "both") else {}
        return {**self._visible(scope), **transport}


def test_CODE_1_catches_native_calls_reachable_under_code() -> None:
    assert status("CODE-1", DirectNativeCalls) == "fail"


class ProgramsBypassPolicy(Registry):
    """Sub-dispatches from a run_code program skip the pre-execute waterfall."""

    async def _pre_execute(self, execution: ToolExecution) -> Mapping[str, Any]:
        if execution.parent is not None:
            return {"kind": "allow"}
        return await super()._pre_execute(execution)


def test_CODE_2_catches_sub_dispatch_bypassing_policy() -> None:
    assert status("CODE-2", ProgramsBypassPolicy) == "fail"


async def _log_without_fallback(
    self: code_mode.CodeSdk, call_id: str, name: str, result: ToolResult
) -> None:
    """CodeSdk._log with the bug: a throwing listener leaves an empty log copy, not the original."""
    listeners = self._registry._scoped_entries("tools/code-dispatch-log", self._outer.agent)
    record = code_mode.CodeDispatchLog(
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


def test_CODE_3_catches_log_copy_lost_when_listener_throws(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(code_mode.CodeSdk, "_log", _log_without_fallback)
    assert status("CODE-3") == "fail"


class RunCodeShadowable(Registry):
    """Checks the reserved name only in the global layer: an agent may shadow run_code."""

    def register(
        self, definition: Mapping[str, Any], scope: str | None = None
    ) -> Callable[[], None]:
        if scope is None or definition.get("name") != RUN_CODE:
            return super().register(definition, scope)
        tool = _compile(definition)
        layer = self._scoped.setdefault(scope, {})
        layer[tool.name] = tool
        return lambda: layer.pop(tool.name, None) and None


def test_CODE_4_catches_a_shadowable_run_code() -> None:
    assert status("CODE-4", RunCodeShadowable) == "fail"
