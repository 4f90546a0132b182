"""Broken ADAPTERS of the correct reference registry (issue 23), for the doctor's tests.

Each is the reference adapter with one plausible mistake a new adapter author makes,
the registry untouched (the mutant catalogue holds broken registries; these are not
registries). Each is reachable as ``python:tests.kit.broken_adapters:FACTORY``.
"""

from __future__ import annotations

import copy
import types
from collections.abc import Mapping
from typing import Any

from conformance.adapters.reference import ReferenceAdapter, ReferenceBinding
from conformance.interpreter.session import Binding, Session

__all__ = [
    "copies_execution",
    "disposes_by_name",
    "ignores_without_signal",
    "no_track_caller",
    "orphans_nested_calls",
    "shows_caller_arguments",
]


class _Forgetful(Session):
    """A session whose adapter never hands it the caller's input objects (the README never
    mentioned ``track_caller``)."""

    def track_caller(self, call_id: str, call_input: Any) -> Any:
        return call_input


class _Rewritten(ReferenceAdapter):
    """The reference adapter, run on a scenario the adapter misread (``misread``)."""

    def __init__(self, misread: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._misread = misread

    def run(self, scenario: Mapping[str, Any]) -> dict[str, Any]:
        return super().run(self._misread(copy.deepcopy(dict(scenario))))


def _drop_without_signal(scenario: dict[str, Any]) -> dict[str, Any]:
    """The adapter always passes the caller's signal: it never reads ``withoutSignal``."""
    for action in scenario.get("actions", []):
        for call in [action.get("call"), *action.get("batch", [])]:
            if isinstance(call, dict):
                call.pop("withoutSignal", None)
    return scenario


def _drop_again(scenario: dict[str, Any]) -> dict[str, Any]:
    """The adapter disposes by name: ``dispose again`` runs the live registration's disposer."""
    for action in scenario.get("actions", []):
        action.pop("again", None)
    return scenario


class _CopyingBinding(ReferenceBinding):
    """Hands every write a mutable copy of the object (its fields in a namespace): the write
    never reaches the implementation's own object."""

    def write(self, obj: Any, key: str | int, value: Any) -> None:
        super().write(_copy(self, obj), key, value)


def _copy(binding: Binding, obj: Any) -> Any:
    if isinstance(obj, (dict, list)):
        return copy.copy(obj)
    fields = {binding.attribute(k): binding.get(obj, k) for k in binding.keys(obj)}
    return types.SimpleNamespace(**fields)


def no_track_caller() -> ReferenceAdapter:
    return ReferenceAdapter(name="no-track-caller", session=_Forgetful)


def ignores_without_signal() -> ReferenceAdapter:
    return _Rewritten(_drop_without_signal, name="ignores-without-signal")


def disposes_by_name() -> ReferenceAdapter:
    return _Rewritten(_drop_again, name="disposes-by-name")


def copies_execution() -> ReferenceAdapter:
    return ReferenceAdapter(name="copies-execution", binding=_CopyingBinding())


class _ShowsCallerArguments(ReferenceBinding):
    """Reports what the caller sent as what the approver saw, whatever the request holds."""

    def request_arguments(self, request: Any) -> Any:
        return {"x": 1}


class _Orphan:
    """A body's run context whose token the adapter dropped: nested calls get no parent."""

    token = None

    def __init__(self, ctx: Any) -> None:
        self._ctx = ctx

    def __getattr__(self, key: str) -> Any:
        return getattr(self._ctx, key)


class _Orphaning(Session):
    """Runs nested calls outside the body's execution (their parent lost)."""

    @property
    def nested_call(self) -> Any:
        return self._nested

    @nested_call.setter
    def nested_call(self, run: Any) -> None:
        self._nested = lambda ctx, call_id, name, args: run(_Orphan(ctx), call_id, name, args)


def shows_caller_arguments() -> ReferenceAdapter:
    return ReferenceAdapter(name="shows-caller-arguments", binding=_ShowsCallerArguments())


def orphans_nested_calls() -> ReferenceAdapter:
    return ReferenceAdapter(name="orphans-nested-calls", session=_Orphaning)
