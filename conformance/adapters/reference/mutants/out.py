"""Mutants of the canonical output (OUT-1..5; OUT-4 binds tool authors and has none).

Read beside ``conformance/judging/rules/out.py``.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from typing import Any

from jsonschema.validators import Draft202012Validator

import reference._json as _json
from conformance.adapters.reference.mutants._base import mutant
from reference import Registry, ToolResult, ToolSuccess
from reference._json import FrozenDict, NotLosslessJSON
from reference.registry import Prepared


def _sanitized(value: Any, depth: int = 0) -> Any:
    """The bug shared by two mutants: make a value "JSON-safe" instead of rejecting it."""
    if depth > 20:
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): _sanitized(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_sanitized(v, depth + 1) for v in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return None


@mutant("OUT-1", "output is validated only in development: never here")
class SkipsOutputValidation(Registry):
    """Validation behind a debug flag: in production a body's value is trusted, so programs
    and post-execute policies receive values their declared type does not allow."""

    def _normalize(self, run: Prepared, value: Any) -> ToolResult:
        assert run.tool is not None
        run.tool = dataclasses.replace(run.tool, output_validator=Draft202012Validator(True))
        return super()._normalize(run, value)


@mutant("OUT-2", "a registry-level output cap trims the rendered text")
class CapsRenderedContent(Registry):
    """A global "keep content short" cap applied by the registry: content is no longer the
    tool's render of its value (capping is the finalizer's job, FIN-3)."""

    def _normalize(self, run: Prepared, value: Any) -> ToolResult:
        result = super()._normalize(run, value)
        if isinstance(result, ToolSuccess):
            blocks = tuple(
                type(b)({**b, "text": b["text"][:8]}) if "text" in b else b for b in result.content
            )
            result = dataclasses.replace(result, content=blocks)  # the bug
        return result


@mutant("OUT-3", "presentationMeta is never computed: successes carry no meta")
class DropsMeta(Registry):
    """The presentation projection is forgotten, so a UI card cannot be rebuilt on replay."""

    def _normalize(self, run: Prepared, value: Any) -> ToolResult:
        result = super()._normalize(run, value)
        if isinstance(result, ToolSuccess):
            result = dataclasses.replace(result, meta=None)  # the bug
        return result


@mutant("OUT-5", "non-JSON body values are coerced (NaN -> null, objects -> null)")
class CoercesValues(Registry):
    """Tempting: "Be liberal in what you accept": a NaN or a host object becomes ``null`` and the
    call succeeds, so the durable log disagrees with what ran."""

    def _normalize(self, run: Prepared, value: Any) -> ToolResult:
        return super()._normalize(run, _sanitized(value))  # the bug


@mutant("OUT-5", "non-JSON presentation metadata is coerced instead of rejected")
class CoercesMeta(Registry):
    """The value is checked, but ``meta`` is "made JSON-safe" on the way out: a NaN in a UI
    card silently becomes ``null``."""

    def _normalize(self, run: Prepared, value: Any) -> ToolResult:
        tool = run.tool
        assert tool is not None
        project = tool.presentation_meta
        if project is not None:
            run.tool = dataclasses.replace(
                tool,
                presentation_meta=lambda args, v: _sanitized(project(args, v)),  # the bug
            )
        try:
            return super()._normalize(run, value)
        finally:
            run.tool = tool


_SCALARS = _json._materialize  # the reference's own, for everything but containers


def _materialize_dict_cycles(value: Any, path: str, active: set[int]) -> Any:
    """The bug of :class:`ListCyclesRecurse`: cycle detection written for objects only."""
    if isinstance(value, (dict, FrozenDict)):
        if id(value) in active:
            raise NotLosslessJSON(path, "cycle")
        active.add(id(value))
        try:
            out: dict[str, Any] = {}
            for key, item in value.items():
                if not isinstance(key, str):
                    raise NotLosslessJSON(path, f"non-string key {key!r}")
                out[key] = _materialize_dict_cycles(item, f"{path}.{key}", active)
        finally:
            active.discard(id(value))
        return FrozenDict(out)
    if isinstance(value, (list, tuple)):  # the bug: an array is never marked active
        return tuple(
            _materialize_dict_cycles(item, f"{path}[{i}]", active) for i, item in enumerate(value)
        )
    return _SCALARS(value, path, active)


@mutant(
    "OUT-5",
    "cycle detection covers objects only: an array that contains itself recurses until it raises",
    replaces="reference._json:_materialize",
)
def list_cycles_recurse(value: Any, path: str, active: set[int]) -> Any:
    """Cycle detection is written for the common case, an object that refers to itself; an
    array holding itself is walked until the interpreter's recursion limit, and the
    ``RecursionError`` escapes instead of a clean INVALID_ARGS / INVALID_TOOL_OUTPUT (OUT-5
    fails; on the arguments' side PIPE-2 reports an error: ``execute`` raised)."""
    return _materialize_dict_cycles(value, path, active)


_concrete_materialize = _json._materialize


@mutant(
    "OUT-5",
    "numbers are recognized by numbers.Real, not by type: a Fraction becomes a float",
    replaces="reference._json:_materialize",
)
def real_numbers_coerced(value: Any, path: str, active: set[int]) -> Any:
    """A "duck-typed" JSON check: ``isinstance(value, numbers.Real)`` instead of ``int`` or
    ``float``, then ``float(value)``. It still rejects NaN and infinities, decimals and
    strings, but a ``Fraction(1, 3)`` -- an exact value the encoder cannot write -- is
    silently rounded to ``0.333...`` and published as a success."""
    if type(value) not in (bool, int, float) and isinstance(value, numbers.Real):
        value = float(value)  # the bug: coerced, not rejected
    return _concrete_materialize(value, path, active)


@mutant(
    "OUT-5",
    "a tuple is taken as frozen already: what it holds is never checked",
    replaces="reference._json:_materialize",
)
def tuples_taken_as_frozen(value: Any, path: str, active: set[int]) -> Any:
    """A fast path for "immutable already": the snapshot skips a tuple (the snapshot's own
    array form) instead of walking it. A body that returns ``tuple(rows)`` -- the idiom for
    "an immutable copy" -- publishes whatever is inside unchecked: a NaN passes as a success,
    and a dict inside stays the body's live object."""
    if isinstance(value, tuple):
        return value  # the bug
    return _concrete_materialize(value, path, active)
