"""The attack-surface table (fixtures/schema/attack-surface.json) and its loader."""

from __future__ import annotations

import dataclasses
import json
import re
from typing import Any

import pytest
from jsonschema.validators import Draft202012Validator

from conformance.adapters.reference import ReferenceAdapter
from conformance.judging.evaluate import judge
from conformance.scenario import stages
from conformance.scenario.schema import SCHEMA_DIR, validate
from conformance.scenario.steps import STAGES
from conformance.scenario.surface import (
    SURFACE_PATH,
    Cell,
    cells,
    gaps,
    load_surface,
    probe_scenario,
)
from conformance.seam.adapter import PIPELINE_STAGES

SPEC = (SCHEMA_DIR.parents[2] / "SPEC.md").read_text(encoding="utf-8")
RULE_IDS = set(re.findall(r"^### ([A-Z]+-[0-9]+) ", SPEC, flags=re.MULTILINE))
DOCUMENT = json.loads(SURFACE_PATH.read_text(encoding="utf-8"))


def test_the_table_matches_its_schema() -> None:
    schema = json.loads((SCHEMA_DIR / "attack-surface.schema.json").read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    errors = list(Draft202012Validator(schema).iter_errors(DOCUMENT))
    assert not errors, [e.message for e in errors]


def test_every_threatened_rule_is_a_rule_of_the_spec() -> None:
    assert len(RULE_IDS) > 50
    named = {
        r for obj in DOCUMENT["objects"].values() for rs in obj["threatens"].values() for r in rs
    }
    assert named <= RULE_IDS, named - RULE_IDS


def test_cell_ids_are_unique_and_name_stage_object_write() -> None:
    every = cells()
    ids = [cell.id for cell in every]
    assert len(ids) == len(set(ids))
    assert "pre-execute/execution.arguments/assign" in ids
    for cell in every:
        assert cell.id == f"{cell.stage}/{cell.object}/{cell.write}"
        assert cell.write in DOCUMENT["writes"]


def test_a_grouped_object_is_attempted_by_one_probe_per_stage() -> None:
    grouped = [c for c in cells() if c.group]
    assert grouped
    leaders = {(c.stage, c.object) for c in grouped if c.leads}
    assert leaders == {(c.stage, c.object) for c in grouped}
    assert all(probe_scenario(c) is None for c in grouped if not c.leads)
    assert {c.write for c in grouped} >= {"sort", "update", "define", "inplace-add", "popitem"}


def test_every_object_and_write_is_reachable_somewhere() -> None:
    handed = {name for row in stages.rows() for name in row.handed or ()}
    assert handed == set(DOCUMENT["objects"])
    assert {cell.write for cell in cells()} == set(DOCUMENT["writes"])


def test_every_scriptable_stage_is_in_the_table_and_gaps_say_why() -> None:
    assert set(STAGES) <= {row.stage for row in stages.rows() if row.handed is not None}
    for gap in gaps():
        assert gap.reason
    assert {g.stage for g in gaps()} >= {"output.render", "presentCall", "presentResult"}


def test_capabilities_filter_the_cells() -> None:
    assert all(not c.capabilities for c in cells([]))
    # every other stage is a capability (the caller's writes need none)
    assert {c.stage for c in cells([])} == {"body", "caller"}
    pipeline = {c.stage for c in cells(PIPELINE_STAGES)}
    assert {c.stage for c in cells()} - pipeline == {"approval", "code-dispatch-log"}
    with_approval = {c.stage for c in cells([*PIPELINE_STAGES, "approval"])}
    assert with_approval - pipeline == {"approval"}
    # a cell kept by another stage needs that stage too: approval cells need pre-execute's ask
    assert all("pre-execute" in c.capabilities for c in cells() if c.stage == "approval")


def test_a_kept_object_is_kept_by_an_earlier_stage() -> None:
    order = ["pre-execute", "approval", "guard", "wrapper", "body", "post-execute", "finalize"]
    for cell in cells():
        if cell.keeper is not None:
            assert order.index(cell.keeper) < [*order, "result"].index(cell.stage), cell.id
            assert cell.keeper_steps()[0] == {"keep": cell.step["path"][0]}


def test_a_bad_table_is_refused(tmp_path: Any) -> None:
    broken = json.loads(json.dumps(DOCUMENT))
    broken["objects"]["arguments"]["target"] = "nowhere"
    path = tmp_path / "surface.json"
    path.write_text(json.dumps(broken), encoding="utf-8")
    with pytest.raises(ValueError, match="unknown mutate target"):
        load_surface(path)


def _probed() -> list[Any]:
    return [pytest.param(cell, id=cell.id) for cell in cells() if probe_scenario(cell) is not None]


def _mutation_text(cell: Cell) -> str:
    return str(cell.step["target"]) + "".join(f"[{p!r}]" for p in cell.step["path"])


@pytest.mark.parametrize("cell", _probed())
def test_every_cell_is_attempted_and_the_reference_survives_it(cell: Cell) -> None:
    """Each cell's probe scenario is valid, its write is attempted on the reference (the
    mutation event is in the trace, in the cell's stage, for the first call), and the
    reference passes every rule on it."""
    scenario = probe_scenario(cell)
    assert scenario is not None
    validate(scenario, "scenario", cell.id)
    trace = ReferenceAdapter().run(scenario)
    for step in cell.group or (cell.step,):  # a grouped probe attempts every write of its object
        attempted = [
            e
            for e in trace["events"]
            if e.get("mutate") == _mutation_text(dataclasses.replace(cell, step=step))
            and e.get("op", "assign") == step.get("op", "assign")
            and e.get("stage") == cell.stage
            and (e.get("call") in ("c0", None) or str(e.get("call")).startswith("c0:"))
        ]
        assert attempted, (cell.id, step)
    failed = [
        (rid, v.message) for rid, vs in judge(scenario, trace).items() for v in vs if not v.ok
    ]
    assert not failed, failed
