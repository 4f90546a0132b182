"""Attack-surface cells that only the in-place and routing mutants of res.py make effective.

Each probe must make the mutant's target rules fail, the same probe without its
write must not (the write kills the mutant, not the mutant alone), and the
reference must pass the probe. Plus the grouping of ``mutation/cells.py``.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from conformance.adapters.reference import ReferenceAdapter
from conformance.adapters.reference.mutants import CATALOGUE
from conformance.judging.evaluate import judge
from conformance.scenario.surface import cell, probe_scenario

ROOT = Path(__file__).resolve().parents[2]


def _failed(scenario: dict[str, Any], trace: dict[str, Any]) -> set[str]:
    return {rid for rid, vs in judge(scenario, trace).items() if any(not v.ok for v in vs)}


def _probe(cell_id: str) -> dict[str, Any]:
    scenario = probe_scenario(cell(cell_id))
    assert scenario is not None
    return scenario


def _without_writes(node: Any) -> Any:
    """The scenario with every ``mutate`` step removed (the keeper's ``keep`` stays)."""
    if isinstance(node, dict):
        return {k: _without_writes(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_without_writes(v) for v in node if not (isinstance(v, dict) and "mutate" in v)]
    return node


@pytest.mark.parametrize(
    ("name", "cell_id", "rule"),
    [
        ("res.post-execute-edits-in-place", "post-execute/result.value/assign", "OUT-2"),
        ("res.post-execute-edits-in-place", "post-execute/result.isError/assign", "RES-3"),
        ("res.post-execute-edits-in-place", "post-execute/result.content-blocks/splice", "OUT-2"),
        ("res.finalizer-edits-in-place", "finalize/result.content/delete", "FIN-3"),
        ("res.observers-share-one-payload", "result/result.isError/delete", "RES-1"),
        ("res.observers-share-one-payload", "result/result.value/delete", "RES-2"),
        ("res.route-read-from-kept-decision", "body/kept.pre-decision/delete", "POST-1"),
        ("res.route-read-from-kept-decision", "guard/kept.pre-decision/assign", "POST-1"),
    ],
)
def test_the_cell_kills_its_mutant_by_its_write(name: str, cell_id: str, rule: str) -> None:
    scenario = _probe(cell_id)
    mutant = CATALOGUE[name]
    assert rule in mutant.targets
    assert rule in _failed(scenario, mutant.build().run(scenario))
    quiet = _without_writes(scenario)
    assert quiet != scenario
    assert not set(mutant.targets) & _failed(quiet, mutant.build().run(quiet))
    assert not _failed(scenario, ReferenceAdapter().run(scenario))


def _cells_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("surface_cells", ROOT / "mutation" / "cells.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_cells_script_groups_general_mutants_and_reasons() -> None:
    script = _cells_script()
    matrix = {
        "guard/kept.pre-decision/add": [["x.everywhere", ["RES-1"]]],
        "body/kept.pre-decision/assign": [["x.everywhere", ["RES-1"]], ["x.one", ["POST-1"]]],
        "result/result.meta/delete": [],
        "pre-execute/execution.agent/delete": [["x.everywhere", ["RES-1"]]],
    }
    assert script.general(matrix) == {"x.everywhere": 3}
    report = script.markdown(matrix, "python mutation/cells.py")
    assert "| `body/kept.pre-decision/assign` | `x.one` (POST-1) |" in report
    assert "**1 kill at least one specific mutant**" in report
    assert script.reason("guard/kept.pre-decision/add").startswith("Cannot matter")
    assert script.reason("result/result.meta/delete").startswith("Nothing to delete")
    assert script.reason("pre-execute/execution.agent/delete") == script.OPEN
    assert report.index("Nothing to delete") < report.index(script.OPEN)
