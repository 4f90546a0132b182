"""Issue 11: a stage's write to the call's identity, and late writes through kept values.

PIPE-3 judges every stage's view of ``callId``/``name``/``agent``/``parent``; RES-1 the
observers'; a callable reading back its own write is not a violation. The bundled mutants
that let such writes leak are killed on their attack-surface probes, and the strategies
draw those cells.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from conformance.adapters.reference import ReferenceAdapter
from conformance.adapters.reference.mutants import CATALOGUE, VARIANTS
from conformance.judging.evaluate import judge
from conformance.judging.model import View
from conformance.judging.rules.pipe import cell_scenarios, surface_cells
from conformance.scenario.schema import validate
from conformance.scenario.surface import cell, probe_scenario

_LEAKS = {
    "name": "pipe.name-leaks",
    "callId": "pipe.call-id-leaks",
    "agent": "pipe.agent-leaks",
    "parent": "pipe.parent-leaks",
}


def _failed(scenario: dict[str, Any], trace: dict[str, Any]) -> set[str]:
    return {rid for rid, vs in judge(scenario, trace).items() if any(not v.ok for v in vs)}


def _probe(cell_id: str) -> dict[str, Any]:
    scenario = probe_scenario(cell(cell_id))
    assert scenario is not None
    return scenario


@pytest.mark.parametrize("field", list(_LEAKS))
def test_a_leaking_identity_field_fails_pipe_3_and_the_reference_passes(field: str) -> None:
    scenario = _probe(f"pre-execute/execution.{field}/assign")
    assert "PIPE-3" in _failed(scenario, CATALOGUE[_LEAKS[field]].build().run(scenario))
    assert not _failed(scenario, ReferenceAdapter().run(scenario))


def test_an_observer_write_to_the_identity_that_leaks_fails_res_1() -> None:
    scenario = _probe("pre-execute/execution.agent/assign")
    trace = CATALOGUE["pipe.agent-leaks"].build().run(scenario)
    assert {"PIPE-3", "RES-1"} <= _failed(scenario, trace)


def _event(stage: str, ident: str, **fields: Any) -> dict[str, Any]:
    who = {"stage": stage, "id": ident, "call": "c0", "tool": "t", "agent": "a"}
    return {**who, "hasParent": False, **fields}


def _view(events: list[dict[str, Any]]) -> View:
    scenario = {"actions": [{"call": {"callId": "c0", "name": "t", "agent": "a"}}]}
    return View(scenario, {"actions": [{"result": {"isError": False}}], "events": events})


def _seen(name: str) -> dict[str, Any]:
    return {"callId": "c0", "name": name, "agent": "a", "hasParent": False}


def test_a_callable_reading_back_its_own_identity_write_is_not_a_change() -> None:
    write = {"mutate": "execution['name']", "raised": False}
    own = [
        _event("pre-execute", "p", at="enter"),
        _event("pre-execute", "p", **write),
        _event("pre-execute", "p", what="execution", observed=_seen("renamed")),
    ]
    call = _view(own).calls[0]
    assert call.identity_changes(["pre-execute", "guard"]) == []
    leaked = [*own, _event("guard", "g", what="execution", observed=_seen("renamed"))]
    assert _view(leaked).calls[0].identity_changes(["pre-execute", "guard"]) == [
        "guard 'g' saw name='renamed'"
    ]
    refused = [{**e, "raised": True} if "mutate" in e else e for e in own]
    assert _view(refused).calls[0].identity_changes(["pre-execute"]) == [
        "pre-execute 'p' saw name='renamed'"
    ]
    entered = [_event("body", "t", at="enter", tool="other")]
    assert _view(entered).calls[0].identity_changes(["body"]) == ["body 't' saw name='other'"]


def test_res_1_lets_an_observer_see_its_own_write_but_not_another_one() -> None:
    """The correct variant hands each observer its own assignable copy; the mutant hands the
    observers and the caller one shared assignable result: RES-1 fails only the mutant."""
    witness = dict(VARIANTS["observer-private-copies"].witness)
    assert not _failed(witness, VARIANTS["observer-private-copies"].build().run(witness))
    shared = CATALOGUE["res.assignable-after-finalize"].build().run(witness)
    assert "RES-1" in _failed(witness, shared)


@pytest.mark.parametrize(
    ("name", "cell_id"),
    [
        ("res.body-value-kept-live", "result/kept.body-value/assign"),
        ("res.post-content-kept-live", "result/kept.post-decision/assign"),
        ("res.finalized-content-kept-live", "result/kept.finalized-content/append"),
        ("res.pre-decision-read-at-dispatch", "guard/kept.pre-decision/assign"),
        ("res.interned-approval-requests", "approval/request.arguments/add"),
    ],
)
def test_a_late_write_mutant_fails_its_targets_on_its_cell(name: str, cell_id: str) -> None:
    scenario = _probe(cell_id)
    assert set(CATALOGUE[name].targets) <= _failed(scenario, CATALOGUE[name].build().run(scenario))
    assert not _failed(scenario, ReferenceAdapter().run(scenario))


def test_the_strategy_cells_are_top_level_and_kept_writes() -> None:
    drawn = {c.id for c in surface_cells()}
    for stage in ("pre-execute", "guard", "wrapper", "body", "post-execute", "finalize"):
        for field in _LEAKS:
            assert f"{stage}/execution.{field}/assign" in drawn
    assert {c.object for c in surface_cells()} >= {
        "kept.pre-decision",
        "kept.body-value",
        "kept.wrapper-result",
        "kept.post-decision",
        "kept.finalized-content",
    }
    assert all(c.step["target"] in ("execution", "kept") for c in surface_cells())
    assert {c.stage for c in surface_cells(["result"])} == {"result"}


@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
@given(cell_scenarios())
def test_drawn_cell_scenarios_are_valid_and_attempt_their_write(scenario: dict[str, Any]) -> None:
    validate(scenario, "scenario", scenario["id"])
    stage = scenario["id"].split("/")[1]
    trace = ReferenceAdapter().run(scenario)
    assert any(e.get("stage") == stage and "mutate" in e for e in trace["events"])
    assert not _failed(scenario, trace)
