"""SCOPE-1..2: each predicate catches a realistically broken registry; the reference passes."""

from __future__ import annotations

from typing import Any

import reference.registry as regmod
from conformance.adapters.reference import ReferenceAdapter
from conformance.rules import RULES
from conformance.runner import run_suite
from reference import Registry


def _status(registry_cls: type[Registry], rule_id: str) -> str:
    adapter = ReferenceAdapter(
        lambda s: registry_cls(mode=s.get("registry", {}).get("mode", "native")), name="bad"
    )
    result = run_suite(adapter, profile="quick", rules=rule_id)
    (outcome,) = result.rules
    assert not result.kit_errors, result.kit_errors
    return outcome.status


def test_reference_passes_every_scope_rule() -> None:
    result = run_suite(ReferenceAdapter(), profile="quick", rules="SCOPE-*")
    assert not result.kit_errors
    assert {o.id for o in result.rules} == {r for r in RULES if r.startswith("SCOPE-")}
    for outcome in result.rules:
        assert outcome.status == "pass", (outcome.id, [f.message for f in outcome.failures])


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
