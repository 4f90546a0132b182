"""One closed-form vocabulary for every rule: where an adapter declares ``raised`` (or
``interrupted``), a run that raised (or stopped for approval) is a closed call -- for
POST-4 and RES-1 as for PRE-3/PRE-6/GUARD-2 -- and no rule demands an observer
notification from a run that has no result. Each rule still fails on a registry that turns
the raising run into a success, and stays strict where the form is not declared."""

from __future__ import annotations

import copy
import logging
from collections.abc import Iterator
from typing import Any

import pytest

from conformance.adapters.reference import ReferenceAdapter
from conformance.adapters.reference.mutants import CATALOGUE, VARIANTS
from conformance.judging.evaluate import evaluate, judge
from conformance.scenario import strategies as s
from conformance.scenario.schema import load_json

RAISED = frozenset({"error-result", "raised"})


@pytest.fixture(autouse=True)
def _quiet() -> Iterator[None]:
    logging.disable(logging.CRITICAL)  # the registries log the exceptions they contain
    yield
    logging.disable(logging.NOTSET)


def _throwing_post() -> dict[str, Any]:
    return dict(load_json("conformance/fixtures/rules/POST-4/throwing-post-listener.json"))


def _raised_instead(scenario: dict[str, Any]) -> dict[str, Any]:
    """The reference's trace of ``scenario`` as a framework that ends the run by raising
    would record it: no result, no finalizer run, no observer notified."""
    trace = ReferenceAdapter().run(scenario)
    trace["actions"] = [{"raised": "RuntimeError: scanner crashed"} for _ in trace["actions"]]
    trace["events"] = [e for e in trace["events"] if e.get("stage") not in ("finalize", "result")]
    return trace


def _oks(verdicts: dict[str, list[Any]], rule_id: str) -> list[bool]:
    return [v.ok for v in verdicts.get(rule_id, [])]


def test_post_4_and_res_1_accept_a_declared_raise_and_demand_no_notification() -> None:
    scenario = _throwing_post()
    trace = _raised_instead(scenario)
    declared = judge(scenario, trace, ["POST-4", "RES-1"], closed_forms=RAISED)
    for rid in ("POST-4", "RES-1"):  # the predicates and the fixture's expect block
        assert _oks(declared, rid) and all(_oks(declared, rid)), rid
    strict = judge(scenario, trace, ["POST-4", "RES-1"])  # raising is not this adapter's form
    assert _oks(strict, "POST-4") == [False]
    assert _oks(strict, "RES-1") == [False]


def test_the_expect_block_asks_no_notification_or_finalizer_of_a_closed_call() -> None:
    scenario = _throwing_post()
    assert {"resultNotifications", "finalizerCalls"} <= set(scenario["expect"]["c1"])
    verdicts = judge(scenario, _raised_instead(scenario), closed_forms=RAISED)
    assert not [(rid, v) for rid, found in verdicts.items() for v in found if not v.ok]


def test_a_declared_raise_after_observers_heard_twice_still_fails_res_1() -> None:
    scenario = _throwing_post()
    trace = ReferenceAdapter().run(scenario)
    trace["actions"] = [{"raised": "RuntimeError: late"}]
    heard = [e for e in trace["events"] if e.get("stage") == "result"]
    trace["events"] += copy.deepcopy(heard)
    verdicts = judge(scenario, trace, ["RES-1"], closed_forms=RAISED)
    assert [(v.ok, v.clause) for v in verdicts["RES-1"]] == [(False, "once")]


def test_an_observer_exception_that_ends_a_published_success_is_not_contained() -> None:
    scenario = s.scenario(
        "closed/observer-raises",
        [s.tool("t")],
        [{"call": s.call("c0", "t", {})}],
        observers=[s.listener("crash", [{"throw": "observer bug"}])],
    )
    trace = ReferenceAdapter().run(scenario)
    trace["actions"] = [{"raised": "RuntimeError: observer bug"}]
    verdicts = judge(scenario, trace, ["RES-1"], closed_forms=RAISED)
    assert [(v.ok, v.clause) for v in verdicts["RES-1"]] == [(False, "contained")]


def test_a_registry_that_turns_the_raising_run_into_a_success_still_fails() -> None:
    """Declared ``raised``, yet the throwing post-execute hook is swallowed: the caller gets
    the unchecked success, and no observer hears it (mutant post.swallowed-under-raised)."""
    mutant = CATALOGUE["post.swallowed-under-raised"]
    assert mutant.build().describe().closed_forms == RAISED
    evaluation = evaluate(mutant.build(), _throwing_post(), rules=["POST-4", "RES-1"])
    assert False in _oks(evaluation.verdicts, "POST-4")
    assert any(not v.ok and v.clause == "once" for v in evaluation.verdicts["RES-1"])


def test_the_raising_variant_closes_a_throwing_post_execute_hook_by_raising() -> None:
    variant = VARIANTS["closed-by-raising"]
    evaluation = evaluate(variant.build(), _throwing_post(), rules=["POST-4", "RES-1"])
    assert evaluation.trace is not None
    assert str(evaluation.trace["actions"][0].get("raised", "")).startswith("CallRefused")
    assert not [e for e in evaluation.trace["events"] if e.get("stage") == "result"]
    assert all(_oks(evaluation.verdicts, "POST-4")) and _oks(evaluation.verdicts, "POST-4")
    assert all(_oks(evaluation.verdicts, "RES-1")) and _oks(evaluation.verdicts, "RES-1")
    assert not evaluation.raised  # an answer in the declared form, not an error


def test_an_interruption_is_closed_for_res_1_too() -> None:
    scenario = s.scenario(
        "closed/interrupted",
        [s.tool("t")],
        [{"call": s.call("c0", "t", {}, agent="main")}],
        preExecute=[s.listener("policy", [{"return": {"kind": "ask", "reason": "why"}}])],
        observers=[s.listener("log", [])],
    )
    evaluation = evaluate(VARIANTS["closed-by-interruption"].build(), scenario)
    assert evaluation.trace is not None and "interrupted" in evaluation.trace["actions"][0]
    for rid in ("PRE-3", "RES-1"):
        assert _oks(evaluation.verdicts, rid) and all(_oks(evaluation.verdicts, rid)), rid
