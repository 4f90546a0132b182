"""The run + judge speed-ups keep their meaning: a fresh loop per scenario, schema checks cached."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from jsonschema.validators import Draft202012Validator

from conformance.adapters.reference import run_in_a_new_loop
from conformance.judging.rules._json import schema_usable


def test_a_new_loop_runs_like_asyncio_run_and_leaves_nothing_behind() -> None:
    seen: dict[str, Any] = {}

    async def forever() -> None:
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            seen["cancelled"] = True
            raise

    async def main() -> int:
        seen["loop"] = asyncio.get_running_loop()
        seen["left"] = asyncio.get_running_loop().create_task(forever())
        await asyncio.sleep(0)
        return 42

    assert run_in_a_new_loop(main()) == 42
    assert seen["cancelled"] and seen["left"].cancelled()  # the task left behind was ended
    assert seen["loop"].is_closed()
    assert run_in_a_new_loop(main()) == 42 and seen["loop"].is_closed()  # a new loop each time

    async def broken() -> None:
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        run_in_a_new_loop(broken())


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object"},
        {"type": "objekt"},
        {"properties": {"a": {"minimum": "1"}}},
        {"type": "string", "minLength": 2},
        [],
        {"type": float("nan")},
        {"enum": [object()]},  # not JSON: checked uncached
    ],
)
def test_schema_usable_is_check_schema(schema: Any) -> None:
    try:
        Draft202012Validator.check_schema(schema)
        expected = True
    except Exception:
        expected = False
    assert schema_usable(schema) is expected
    assert schema_usable(schema) is expected  # and again, from the cache
