"""CONC-2's latitude for a pool below one: refuse the batch, or run it as a pool of one --
never hang, never run it unbounded (SPEC CONC-2). And DEF-6's: a spent disposer run again
removes nothing, quietly or with a raise."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

import pytest

import conformance.adapters.reference as reference_adapter
from conformance.adapters.reference import ReferenceAdapter
from conformance.adapters.reference.mutants import CATALOGUE, VARIANTS
from conformance.judging.evaluate import evaluate, judge
from conformance.judging.model import View, refusable
from conformance.scenario.schema import load_json
from reference import Registry, ToolExecutionInput, ToolResult
from reference.scheduler import _pool

POOL = "conformance/fixtures/rules/CONC-2/a-pool-of-zero-stays-bounded.json"


def _conc_2(evaluation: Any) -> list[bool]:
    return [v.ok for v in evaluation.verdicts.get("CONC-2", []) if v.subject.startswith("batch")]


def test_a_refusal_and_a_pool_of_one_both_conform() -> None:
    scenario = load_json(POOL)
    refused = evaluate(ReferenceAdapter(), scenario)
    assert refused.trace is not None and "raised" in refused.trace["actions"][0]
    assert _conc_2(refused) == [True] and not refused.raised
    clamped = evaluate(VARIANTS["pool-clamped-to-one"].build(), scenario)
    assert clamped.trace is not None and "results" in clamped.trace["actions"][0]
    assert _conc_2(clamped) == [True]
    # run as a pool of one, the members are ordinary calls: every rule judges them
    assert {c.id for c in View(scenario, clamped.trace).calls} == {"c0", "c1", "c2"}
    assert {c.id for c in View(scenario, refused.trace).calls} == {"c2"}


def test_an_unbounded_pool_fails() -> None:
    evaluation = evaluate(CATALOGUE["conc.zero-means-unbounded"].build(), load_json(POOL))
    assert _conc_2(evaluation) == [False]


async def _no_slot(
    registry: Registry, calls: Sequence[ToolExecutionInput], *, max_parallel: int = 4
) -> list[ToolResult]:
    """The reference's driver without its check: a pool of zero slots waits forever."""
    return await _pool(registry, calls, max_parallel)


def test_a_hang_fails_it_is_no_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reference_adapter, "ACTION_DEADLINE_S", 0.5)  # one short deadline
    evaluation = evaluate(ReferenceAdapter(batch=_no_slot), load_json(POOL))
    assert evaluation.trace is not None
    assert "deadline" in str(evaluation.trace["actions"][0].get("raised"))
    assert _conc_2(evaluation) == [False]


def test_a_refusal_after_a_call_ran_fails() -> None:
    scenario = load_json(POOL)
    trace = ReferenceAdapter().run(scenario)
    trace["events"].insert(0, {"stage": "pre-execute", "id": "policy", "call": "c0", "at": "enter"})
    verdicts = judge(scenario, trace, ["CONC-2"])["CONC-2"]
    assert [v.ok for v in verdicts if v.subject.startswith("batch")] == [False]


def test_refusable_requests() -> None:
    assert refusable({"batch": [], "maxParallel": 0})
    assert not refusable({"batch": [], "maxParallel": 1})
    assert refusable({"call": {"callId": "c0", "withoutSignal": True}})
    assert refusable({"dispose": "t", "again": True})
    assert not refusable({"dispose": "t"})


def test_a_spent_disposer_may_raise_but_never_remove_a_later_registration() -> None:
    scenario = load_json("conformance/fixtures/rules/DEF-6/a-spent-disposer-removes-nothing.json")
    raising = evaluate(VARIANTS["spent-disposer-raises"].build(), scenario)
    assert raising.trace is not None
    again = next(i for i, a in enumerate(scenario["actions"]) if a.get("again"))
    assert "DisposedTwice" in str(raising.trace["actions"][again].get("raised"))
    assert not raising.raised  # a refusal it may make, not an error
    assert raising.verdicts["DEF-6"] and all(v.ok for v in raising.verdicts["DEF-6"])
    removes = evaluate(CATALOGUE["def.equality-disposer"].build(), copy.deepcopy(scenario))
    assert not all(v.ok for v in removes.verdicts["DEF-6"])
