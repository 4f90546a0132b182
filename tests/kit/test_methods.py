"""The methods tables (fixtures/schema/methods.json), their sweeps and what they promise."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from jsonschema.validators import Draft202012Validator

from conformance.adapters.reference import ReferenceAdapter
from conformance.interpreter.binding import decode
from conformance.judging.evaluate import judge
from conformance.scenario.methods import METHODS_PATH, family, host_kinds, near_misses, table
from conformance.scenario.schema import FIXTURES, SCHEMA_DIR, load_json, validate
from conformance.scenario.sweeps import stale, sweeps
from conformance.vocab import ErrorCode
from reference import Registry

SWEEPS = FIXTURES / "rules"


def test_the_table_matches_its_schema() -> None:
    schema = json.loads((SCHEMA_DIR / "methods.schema.json").read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    document = json.loads(METHODS_PATH.read_text(encoding="utf-8"))
    errors = list(Draft202012Validator(schema).iter_errors(document))
    assert not errors, [e.message for e in errors]


def test_the_sweep_fixtures_are_what_the_tables_make() -> None:
    """``python -m conformance.scenario.sweeps --write`` regenerates them after a table changes."""
    assert not stale(), "run python -m conformance.scenario.sweeps --write"
    for item in sweeps():
        validate(item.scenario(), "scenario", str(item.path))


@pytest.mark.parametrize("name", sorted(table()["literals"]["families"]))
def test_every_family_has_near_misses_of_every_class_it_names(name: str) -> None:
    literals = family(name)
    misses = literals.near_misses()
    assert misses
    assert {m.kind for m in misses} == set(literals.classes), name
    for miss in misses:
        assert not any(type(miss.value) is type(v) and miss.value == v for v in literals.values)
    classes = set(table()["literals"]["nearMisses"])
    assert set(literals.classes) <= classes


def test_a_full_width_name_is_a_lookalike_nfkc_folds_back() -> None:
    import unicodedata

    folded = [
        m.value
        for m in near_misses("bash", ["lookalike"])
        if unicodedata.normalize("NFKC", m.value) == "bash"
    ]
    assert folded


def test_the_error_code_family_is_every_code_of_the_spec() -> None:
    codes = {v for k, v in vars(ErrorCode).items() if k.isupper()}
    assert set(family("error-code").values) == codes


def test_a_near_miss_of_an_error_code_fails_the_rule_that_requires_the_code() -> None:
    """Predicates compare codes exactly: a registry that emits a near miss of one fails."""
    scenario: dict[str, Any] = {
        "id": "near-miss-code",
        "tools": [
            {
                "name": "t",
                "parameters": {"type": "object", "required": ["x"]},
                "output": {"schema": {}, "render": "json"},
                "execute": [{"return": "ran"}],
            }
        ],
        "actions": [{"call": {"callId": "c0", "name": "t", "arguments": {}}}],
    }
    for miss in near_misses("INVALID_ARGS", family("error-code").classes):
        error = {"message": "bad", "info": {"name": "E", "code": miss.value}}
        result = {
            "isError": True,
            "error": error,
            "content": [{"type": "text", "text": "Error: bad"}],
        }
        trace = {
            "actions": [{"result": result}],
            "events": [],
            "registrations": [{"key": "t", "ok": True}],
        }
        verdicts = judge(scenario, trace)["PIPE-4"]
        assert verdicts and not all(v.ok for v in verdicts), miss


@pytest.mark.parametrize("kind", host_kinds(None))
def test_every_host_value_kind_decodes_and_only_the_latitude_is_json(kind: str) -> None:
    """The standard encoder writes a may-accept kind exactly as JSON, and refuses the rest."""
    value = decode({"$special": kind})
    if table()["hostValues"]["kinds"][kind]["verdict"] == "may-accept":
        assert json.loads(json.dumps(value)) in ("a", 1)
    else:
        with pytest.raises((TypeError, ValueError)):
            json.dumps(value, allow_nan=False)


class _AsyncExecute(Registry):
    """An ``async def execute`` that snapshots first thing: the natural Python form."""

    async def execute(self, call: Any) -> Any:  # type: ignore[override]
        return await super().execute(call)


class _AwaitsBeforeSnapshot(Registry):
    """The bug of method 8: an await before the snapshot (a lock, a lookup...)."""

    async def execute(self, call: Any) -> Any:  # type: ignore[override]
        await asyncio.sleep(0)
        return await super().execute(call)


@pytest.mark.parametrize(
    ("registry", "holds"), [(_AsyncExecute, True), (_AwaitsBeforeSnapshot, False)]
)
def test_the_caller_writes_once_the_call_first_waits(registry: type[Registry], holds: bool) -> None:
    """Method 8's afterInvoke moment: a Python coroutine is scheduled and run to its first
    wait before the caller writes, so an async execute that snapshots first thing passes
    PIPE-2 and one that awaits before its snapshot fails it."""
    scenario = load_json(SWEEPS / "PIPE-2" / "method-caller-moments.json", "scenario")
    adapter = ReferenceAdapter(lambda s: registry())
    verdicts = judge(scenario, adapter.run(scenario), ["PIPE-2"])["PIPE-2"]
    assert verdicts
    assert all(v.ok for v in verdicts) is holds, [v.message for v in verdicts if not v.ok]
