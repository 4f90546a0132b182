"""OUT-1..5: each predicate catches a realistically broken registry; the reference passes."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from jsonschema.validators import Draft202012Validator

from reference import Registry, ToolResult, ToolSuccess
from reference.registry import Prepared
from tests.kit.support import mutant_outcome as outcome


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
