"""OUT-1..5: each predicate catches a realistically broken registry; the reference passes."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping
from typing import Any

from jsonschema.validators import Draft202012Validator

from conformance.adapters.reference import ReferenceAdapter
from conformance.runner import run_suite
from reference import Registry, ToolResult, ToolSuccess
from reference.registry import Prepared

GROUP = ("OUT-1", "OUT-2", "OUT-3", "OUT-5")


def factory(cls: type[Registry]) -> Callable[[Mapping[str, Any]], Registry]:
    return lambda s: cls(mode=s.get("registry", {}).get("mode", "native"))


def outcome(cls: type[Registry], rule_id: str) -> Any:
    result = run_suite(ReferenceAdapter(factory(cls), name="bad"), profile="quick", rules=rule_id)
    assert not result.kit_errors, result.kit_errors
    (found,) = [o for o in result.rules if o.id == rule_id]
    return found


def test_reference_passes_every_OUT_rule() -> None:
    result = run_suite(ReferenceAdapter(), profile="quick", rules="OUT-*")
    assert not result.kit_errors
    statuses = {o.id: (o.status, o.checks) for o in result.rules}
    for rule_id in GROUP:
        assert statuses[rule_id][0] == "pass", (rule_id, statuses[rule_id])
        assert statuses[rule_id][1] > 0
    assert statuses["OUT-4"][0] == "untested"


class SkipsOutputValidation(Registry):
    """Validates output only "in development": never here."""

    def _normalize(self, run: Prepared, value: Any) -> ToolResult:
        assert run.tool is not None
        run.tool = dataclasses.replace(run.tool, output_validator=Draft202012Validator(True))
        return super()._normalize(run, value)


def test_OUT_1_catches_unvalidated_output() -> None:
    assert outcome(SkipsOutputValidation, "OUT-1").status == "fail"


class CapsContent(Registry):
    """Trims rendered text to 8 characters (a registry-level output cap, not the tool's render)."""

    def _normalize(self, run: Prepared, value: Any) -> ToolResult:
        result = super()._normalize(run, value)
        if isinstance(result, ToolSuccess):
            blocks = tuple(
                type(b)({**b, "text": b["text"][:8]}) if "text" in b else b for b in result.content
            )
            result = dataclasses.replace(result, content=blocks)
        return result


def test_OUT_2_catches_content_that_is_not_the_render() -> None:
    assert outcome(CapsContent, "OUT-2").status == "fail"


class DropsMeta(Registry):
    """Forgets presentationMeta."""

    def _normalize(self, run: Prepared, value: Any) -> ToolResult:
        result = super()._normalize(run, value)
        if isinstance(result, ToolSuccess):
            result = dataclasses.replace(result, meta=None)
        return result


def test_OUT_3_catches_missing_meta() -> None:
    assert outcome(DropsMeta, "OUT-3").status == "fail"


def _coerce(value: Any, depth: int = 0) -> Any:
    if depth > 20:
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): _coerce(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_coerce(v, depth + 1) for v in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return None


class CoercesValues(Registry):
    """Silently coerces non-JSON values (NaN -> null, objects -> null) instead of rejecting them."""

    def _normalize(self, run: Prepared, value: Any) -> ToolResult:
        return super()._normalize(run, _coerce(value))


def test_OUT_5_catches_silent_coercion() -> None:
    assert outcome(CoercesValues, "OUT-5").status == "fail"
