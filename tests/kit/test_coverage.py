"""The attack-surface coverage of a run: counted from traces, reported cell by cell."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from jsonschema.validators import Draft202012Validator

from conformance.adapters.reference import ReferenceAdapter
from conformance.reporting.report import report_markdown, result_from_json, write_reports
from conformance.running.runner import run_suite
from conformance.scenario.schema import SCHEMA_DIR
from conformance.scenario.surface import attempted, cells, coverage, probe_scenario
from conformance.seam.adapter import AdapterInfo

REPORT_SCHEMA = json.loads((SCHEMA_DIR / "report.schema.json").read_text(encoding="utf-8"))


class _Blind:
    """The reference, but its traces lose every mutate event (nothing was attempted)."""

    def __init__(self, capabilities: frozenset[str] | None = None) -> None:
        self._inner = ReferenceAdapter()
        info = self._inner.describe()
        self._info = (
            info if capabilities is None else dataclasses.replace(info, capabilities=capabilities)
        )

    def describe(self) -> AdapterInfo:
        return self._info

    def run(self, scenario: Mapping[str, Any]) -> dict[str, Any]:
        trace = self._inner.run(scenario)
        trace["events"] = [e for e in trace["events"] if "mutate" not in e]
        return trace


def test_a_cell_counts_only_in_its_stage_and_with_its_op() -> None:
    cell = next(c for c in cells() if c.id == "guard/execution.arguments/assign")
    scenario = probe_scenario(cell)
    assert scenario is not None
    trace = ReferenceAdapter().run(scenario)
    assert attempted(trace)[cell.id] == 2  # the first call and the later one
    moved = {
        "events": [
            {**e, "stage": "body"} if e.get("stage") == "guard" else e for e in trace["events"]
        ]
    }
    assert attempted(moved)[cell.id] == 0
    assert attempted(moved)["body/execution.arguments/assign"] == 2
    other_op = {"events": [{**e, "op": "delete"} for e in trace["events"] if "mutate" in e]}
    assert attempted(other_op)[cell.id] == 0
    assert not attempted(None) and not attempted({"events": "junk"})


def test_coverage_names_what_was_not_attempted_excluded_or_not_selected() -> None:
    everything = [c for c in cells() if not c.capabilities]
    one = everything[0]
    found = coverage({one.id: 3}, capabilities=[])
    assert found["attemptedCells"] == 1 and found["attempts"] == 3
    assert found["cells"] == len(everything)
    assert one.id not in found["notAttempted"]
    assert set(found["notAttempted"]) == {c.id for c in everything} - {one.id}
    assert {c.id for c in cells() if c.capabilities} == set(found["excluded"])
    assert found["excluded"]["approval/request.reason/assign"] == ["approval", "pre-execute"]
    narrowed = coverage({}, capabilities=[], rules=["CODE-3"])
    assert narrowed["cells"] == 0 and narrowed["notSelected"] == len(everything)
    assert found["gaps"] and all(g["reason"] for g in found["gaps"])


def test_the_reference_run_attempts_every_cell_and_reports_the_matrix(tmp_path: Path) -> None:
    result = run_suite(ReferenceAdapter(), profile="quick", rules="PIPE-3,RES-1,CODE-3,PRE-5")
    assert result.coverage is not None
    assert result.coverage["cells"] > 100
    assert result.coverage["notAttempted"] == []
    assert result.coverage["attemptedCells"] == result.coverage["cells"]
    write_reports(result, tmp_path)
    document = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    Draft202012Validator(REPORT_SCHEMA).validate(document)
    markdown = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "## Attack-surface coverage" in markdown
    assert "| execution.arguments |" in markdown
    again = report_markdown(result_from_json(document))
    assert "## Attack-surface coverage" in again


def test_coverage_comes_from_traces_not_from_scenarios() -> None:
    """An implementation whose traces never show an attempt gets no credit for one."""
    result = run_suite(_Blind(), profile="quick", rules="PIPE-3")
    assert result.coverage is not None
    assert result.coverage["attemptedCells"] == 0
    assert len(result.coverage["notAttempted"]) == result.coverage["cells"] > 0
    markdown = report_markdown(result)
    assert "Not attempted (" in markdown and "`pre-execute/execution.arguments/assign`" in markdown


def test_cells_the_capabilities_exclude_are_listed_as_such() -> None:
    capabilities = ReferenceAdapter().describe().capabilities - {"approval", "code-mode"}
    result = run_suite(_Blind(capabilities), profile="quick", rules="PRE-5,CODE-3")
    assert result.coverage is not None
    excluded = result.coverage["excluded"]
    assert excluded["approval/request.arguments/add"] == ["approval"]
    assert excluded["code-dispatch-log/record.content/assign"] == ["code-mode"]
    assert not any(
        c.startswith(("approval/", "code-dispatch-log/")) for c in result.coverage["notAttempted"]
    )
    assert "Excluded by the implementation's capabilities" in report_markdown(result)
