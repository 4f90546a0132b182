"""The stage table (fixtures/schema/stages.json): its format, and that a new stage
capability is one row -- a fake one, put into the loaded table, flows through the
requirements, the not-applicable verdicts, the attack surface and trim."""

from __future__ import annotations

import copy
import dataclasses
import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from conformance.adapters.reference import ReferenceAdapter
from conformance.judging.rule_sets import stages_of
from conformance.judging.rules import FOCUS, RULES
from conformance.running.tally import Tally
from conformance.scenario import stages, surface
from conformance.scenario import strategies as s
from conformance.scenario.schema import FixtureError
from conformance.seam.adapter import (
    CAPABILITIES,
    PIPELINE_STAGES,
    STAGE_CAPABILITIES,
    AdapterInfo,
    requirements,
    trim,
)
from conformance.vocab import Status

FAKE = stages.StageRow(
    stage="audit",
    capability="audit-log",
    description="an audit hook sees every call before its body (scenario auditLog)",
    also=(),
    pipeline=False,
    callable="an audit hook",
    scriptable=False,
    scripted=("scenario", "auditLog"),
    handed=("execution.arguments", "arguments"),
    gap=None,
    trimmed=True,
    ending={"delegate": True},
    expect=("auditCalls",),
    rules=("RES-1",),
)


def _clear() -> None:
    surface._default.cache_clear()
    surface._by_event.cache_clear()


@pytest.fixture
def fake_row(monkeypatch: pytest.MonkeyPatch) -> Iterator[stages.StageRow]:
    """The kit's table with :data:`FAKE` appended (every reader sees it at call time)."""
    table = (*stages.rows(), FAKE)
    monkeypatch.setattr(stages, "rows", lambda: table)
    _clear()
    yield FAKE
    monkeypatch.undo()
    _clear()


class _Lacking:
    """The reference, declaring every capability but ``lacking``; it records what it is sent."""

    def __init__(self, lacking: str) -> None:
        self._inner = ReferenceAdapter()
        info = self._inner.describe()
        self._info = dataclasses.replace(
            info,
            capabilities=(info.capabilities | {FAKE.capability or ""}) - {lacking},
            missing={lacking: f"no {lacking} here"},
        )
        self.sent: list[Mapping[str, Any]] = []

    def describe(self) -> AdapterInfo:
        return self._info

    def run(self, scenario: Mapping[str, Any]) -> dict[str, Any]:
        self.sent.append(copy.deepcopy(scenario))
        return self._inner.run(scenario)


def _audited(steps: list[dict[str, Any]]) -> dict[str, Any]:
    scenario = s.scenario(
        "stage-table/audited",
        [s.tool("t", [{"return": "ran"}])],
        [{"call": s.call("c0", "t", {}, agent="main")}],
        observers=[s.listener("seen", [{"observe": "result"}])],
    )
    scenario["rules"] = ["RES-2"]
    scenario["auditLog"] = [{"id": "audit", "steps": steps}]
    scenario["expect"] = {"c0": {"isError": False, "auditCalls": 1, "stagesEntered": ["audit"]}}
    return scenario


# ------------------------------------------------------------------- the kit's own table


def test_the_table_matches_its_schema_and_a_bad_one_is_refused_by_file_and_path(
    tmp_path: Path,
) -> None:
    assert stages.load_stage_table() == stages.rows()
    document = json.loads(stages.STAGE_TABLE_PATH.read_text(encoding="utf-8"))
    del document["stages"][1]["capability"]
    broken = tmp_path / "stages.json"
    broken.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(FixtureError) as e:
        stages.load_stage_table(broken)
    assert str(broken) in str(e.value) and "stages[1]" in str(e.value)
    document["stages"][1]["capability"] = "pre-execute"
    document["stages"].append(document["stages"][1])
    broken.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(ValueError, match="listed twice"):
        stages.load_stage_table(broken)


def test_the_stage_capabilities_and_their_descriptions_are_the_tables() -> None:
    assert stages.capabilities() == STAGE_CAPABILITIES
    assert PIPELINE_STAGES < STAGE_CAPABILITIES
    assert stages.capabilities() - PIPELINE_STAGES == {"approval", "code-mode", "timeout-policy"}
    for row in stages.rows():
        if row.capability is not None:
            assert CAPABILITIES[row.capability] == row.description


def test_the_rules_column_is_the_one_home_of_what_a_rule_is_about() -> None:
    assert stages_of("PRE-2") == {"pre-execute"}
    assert stages_of("PRE-4") == {"pre-execute", "approval"}  # its group's, and its own
    assert stages_of("EXEC-5") == {"wrappers", "timeout-policy"}
    assert stages_of("RES-3") == frozenset() and stages_of("DEF-2") == frozenset()
    named = {r for row in stages.rows() for r in row.rules}
    groups = {rule.group for rule in RULES.values()}
    assert named <= set(RULES) | groups, named - set(RULES) - groups
    for rid, focus in FOCUS.items():  # a property needs every stage its rule is about
        assert stages_of(rid) <= focus.needs, rid


# ------------------------------------------------------------------- a new row flows through


def test_a_fake_capability_row_is_a_requirement_and_a_stage(fake_row: stages.StageRow) -> None:
    assert "audit-log" in stages.capabilities()
    assert "audit-log" in requirements(_audited([{"observe": "arguments"}, {"delegate": True}]))
    assert "audit-log" not in requirements(_audited([]) | {"auditLog": []})
    assert stages_of("RES-1") == {"observers", "audit-log"}
    assert "audit-log" in FOCUS["RES-1"].needs


def test_a_scenario_needing_the_fake_capability_is_not_sent_to_an_adapter_lacking_it(
    fake_row: stages.StageRow,
) -> None:
    acting = _audited([{"return": {"kind": "deny", "reason": "audited"}}])
    adapter = _Lacking("audit-log")
    tally = Tally(["RES-1", "RES-2"], adapter, None)
    tally.run_fixture(acting)
    assert not adapter.sent
    outcomes = {o.id: o for o in tally.finish()}
    for rid in ("RES-1", "RES-2"):  # RES-1 is about the stage; RES-2's scenario needs it
        assert outcomes[rid].status == Status.NOT_APPLICABLE, outcomes[rid]
        assert outcomes[rid].reason == "needs capability audit-log (no audit-log here)"
    # broken: without the row the same scenario is sent (the check can fail)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(stages, "rows", stages.load_stage_table)
        assert "audit-log" not in requirements(acting)


def test_the_attack_surface_offers_the_fake_stages_cells(fake_row: stages.StageRow) -> None:
    offered = {c.id for c in surface.cells([*STAGE_CAPABILITIES, "audit-log"])}
    assert "audit/execution.arguments/assign" in offered
    assert "audit/arguments/append" in offered
    assert not any(c.startswith("audit/") for c in {c.id for c in surface.cells([])})
    cell = surface.cell("audit/arguments/assign")
    assert cell.capabilities == {"audit-log"} and cell.rules == ("PIPE-2", "PIPE-3")
    _clear()
    with pytest.MonkeyPatch.context() as m:  # broken: without the row, no audit cells
        m.setattr(stages, "rows", stages.load_stage_table)
        assert not any(c.stage == "audit" for c in surface.cells())
    _clear()


def test_trim_drops_the_fake_stages_onlookers_and_keeps_one_that_acts(
    fake_row: stages.StageRow,
) -> None:
    everything = frozenset({*STAGE_CAPABILITIES, "audit-log"})
    looking = _audited([{"observe": "arguments"}, {"delegate": True}])
    assert trim(looking, everything) is looking
    trimmed = trim(looking, everything - {"audit-log"})
    assert "auditLog" not in trimmed and trimmed["observers"] == looking["observers"]
    assert trimmed["expect"]["c0"] == {"isError": False, "stagesEntered": []}
    assert "audit-log" not in requirements(trimmed)
    acting = _audited([{"return": {"kind": "deny", "reason": "audited"}}])
    assert trim(acting, everything - {"audit-log"}) is acting
    assert "audit-log" in requirements(acting)
