"""PIPE-1..4: each predicate catches a realistically broken registry; the reference passes."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

import pytest
from jsonschema.validators import Draft202012Validator

import reference.registry as registry_module
from reference import Registry, ToolExecutionInput
from reference.registry import Prepared, _finalize
from tests.kit.support import mutant_outcome as outcome


class FinalizesEarly(Registry):
    """Runs finalizeContent on the dispatch result, before post-execute (then skips it)."""

    async def complete(self, run: Prepared) -> Any:
        if run.finalizer is not None and run.result is not None and run.outcome == "dispatched":
            run.result = _finalize(run.finalizer, run.execution, run.result)
            run.finalizer = None
        return await super().complete(run)


def test_PIPE_1_catches_finalizing_before_post_execute() -> None:
    assert outcome(FinalizesEarly, "PIPE-1").status == "fail"


def _lenient_materialize(value: Any, path: str = "$") -> Any:
    """The bug: the caller's arguments are used as given -- no snapshot, no freeze, no check."""
    if path == "$.arguments":
        return value
    return registry_module_materialize(value, path)


registry_module_materialize = registry_module.materialize


def test_PIPE_2_catches_arguments_used_without_snapshot(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry_module, "materialize", _lenient_materialize)
    assert outcome(Registry, "PIPE-2").status == "fail"


def _checked_but_shared(value: Any, path: str = "$") -> Any:
    """The bug: arguments are checked for losslessness, then used by reference (no snapshot)."""
    checked = registry_module_materialize(value, path)
    return value if path == "$.arguments" else checked


def test_PIPE_2_catches_a_checked_but_unsnapshotted_object(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry_module, "materialize", _checked_but_shared)
    found = outcome(Registry, "PIPE-2")
    assert found.status == "fail"
    assert "non-lossless" not in found.failures[0].message


class AnnotatesArguments(Registry):
    """Rewrites the arguments on the way in (adds the call id for tracing)."""

    async def prepare(self, call: ToolExecutionInput) -> Prepared:
        if isinstance(call.arguments, dict):
            call = dataclasses.replace(call, arguments={**call.arguments, "_callId": call.call_id})
        return await super().prepare(call)


def test_PIPE_3_catches_rewritten_arguments() -> None:
    assert outcome(AnnotatesArguments, "PIPE-3").status == "fail"


class SkipsParameterValidation(Registry):
    """Validation switched off: every tool accepts any arguments."""

    def register(
        self, definition: Mapping[str, Any], scope: str | None = None
    ) -> Callable[[], None]:
        dispose = super().register(definition, scope)
        layer = self._global if scope is None else self._scoped[scope]
        tool = layer[definition["name"]]
        layer[tool.name] = dataclasses.replace(tool, params_validator=Draft202012Validator(True))
        return dispose


def test_PIPE_4_catches_unvalidated_arguments() -> None:
    assert outcome(SkipsParameterValidation, "PIPE-4").status == "fail"
