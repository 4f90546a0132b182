"""SCOPE-1..2: each predicate catches a realistically broken registry; the reference passes."""

from __future__ import annotations

from typing import Any

import reference.registry as regmod
from reference import Registry
from tests.kit.support import mutant_status as _status


class _LeakyNotFound(Registry):
    """A hidden tool says so: "not available to this agent" instead of plain unknown."""

    async def prepare(self, call: Any) -> Any:
        run = await super().prepare(call)
        hidden = any(call.name in layer for layer in self._scoped.values())
        if run.outcome == "unknown-tool" and hidden:
            message = f"tool `{call.name}` is not available to agent {call.agent!r}"
            run.result = regmod.failure(message, "UNKNOWN_TOOL", name="ToolNotFoundError")
        return run


def test_SCOPE_1_catches_hidden_tool_leak() -> None:
    assert _status(_LeakyNotFound, "SCOPE-1") == "fail"


class _SchemasIgnoreScope(Registry):
    """schemas() lists every registered tool, whatever the scope: shown but not runnable."""

    def schemas(self, scope: str | None = None) -> list[dict[str, Any]]:
        tools = dict(self._global)
        for layer in self._scoped.values():
            tools.update(layer)
        if self.mode == "code":
            return super().schemas(scope)
        return [regmod._schema(t) for t in tools.values()] + (
            [regmod._schema(self._transport())] if self.mode == "both" else []
        )


def test_SCOPE_2_catches_schemas_ignoring_scope() -> None:
    assert _status(_SchemasIgnoreScope, "SCOPE-2") == "fail"


class _CodeModeRunsNative(Registry):
    """Under mode code, model-direct calls to native tools still execute."""

    def _direct(self, scope: str | None) -> dict[str, Any]:
        return {**self._visible(scope), **super()._direct(scope)}


def test_SCOPE_2_catches_code_mode_direct_calls() -> None:
    assert _status(_CodeModeRunsNative, "SCOPE-2") == "fail"
