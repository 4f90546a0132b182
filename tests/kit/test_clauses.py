"""Rules with named clauses: every verdict of such a rule says which declared clause it
judges, and each clause can fail -- shown by a bundled mutant on a fixture, or, where no
mutant reaches it, by a trace made by hand."""

from __future__ import annotations

import copy
import glob
import logging
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from conformance.adapters.reference import ReferenceAdapter
from conformance.adapters.reference.mutants import CATALOGUE
from conformance.judging.evaluate import evaluate, judge
from conformance.judging.rules import RULES, Verdict
from conformance.scenario import strategies as s
from conformance.scenario.schema import load_json
from conformance.scenario.surface import cell, probe_scenario

BEARING = {rid for rid, r in RULES.items() if r.clauses}

#: Each clause, and a bundled mutant and fixture on which a verdict of that clause fails.
BY_MUTANT: Mapping[tuple[str, str], tuple[str, str]] = {
    ("CANCEL-2", "code"): (
        "cancel.aborted-where-body-never-ran",
        "CANCEL-2/aborted-during-pre-execute",
    ),
    ("CANCEL-2", "stages"): (
        "cancel.pre-aborted-not-ended",
        "CANCEL-2/already-aborted-skips-every-later-stage",
    ),
    ("DEF-2", "copy"): (
        "def.shallow-schema-copies",
        "DEF-2/schemas-are-whitelisted-copies",
    ),
    ("DEF-2", "whitelist"): (
        "def.timeout-in-schemas",
        "DEF-1/three-layers",
    ),
    ("PIPE-3", "arguments"): (
        "pipe.annotates-arguments",
        "PIPE-3/no-stage-rewrites-arguments",
    ),
    ("PIPE-3", "identity"): (
        "pipe.name-leaks",
        "PIPE-3/pre-execute-renames-to-another-tool",
    ),
    ("PRE-4", "answers"): (
        "pre.unavailable-approval-allows",
        "PRE-4/only-allowed-once-proceeds",
    ),
    ("PRE-4", "reasons"): (
        "pre.one-reason-for-every-refusal",
        "PRE-4/only-allowed-once-proceeds",
    ),
    ("RES-1", "once"): (
        "post.swallowed-under-raised",
        "POST-4/throwing-post-listener",
    ),
    ("RES-1", "contained"): (
        "res.observer-exception-stops-others",
        "RES-1/observers-cannot-change-it",
    ),
    ("RES-1", "frozen"): (
        "res.shallow-frozen-results",
        "RES-1/observers-cannot-change-it",
    ),
    ("RES-2", "agree"): (
        "res.returns-unfinalized",
        "FIN-3/caps-content-only",
    ),
    ("RES-2", "frozen"): (
        "res.assignable-after-finalize",
        "RES-1/observer-assigns-top-level-fields",
    ),
}


def _fixtures() -> list[dict[str, Any]]:
    paths = sorted(glob.glob("conformance/fixtures/**/*.json", recursive=True))
    return [load_json(p) for p in paths if "/schema/" not in p and "/interpreter/" not in p]


def _fixture(name: str) -> dict[str, Any]:
    return dict(load_json(f"conformance/fixtures/rules/{name}.json"))


def _clauses(verdicts: Mapping[str, list[Verdict]]) -> Iterator[tuple[str, str | None]]:
    for rid, found in verdicts.items():
        if rid in BEARING:
            for v in found:
                yield rid, v.clause


def _failed(verdicts: Mapping[str, list[Verdict]], rid: str, clause: str) -> bool:
    return any(not v.ok and v.clause == clause for v in verdicts.get(rid, []))


def test_the_rules_with_clauses() -> None:
    assert {"PIPE-3", "PRE-4", "RES-1", "RES-2", "CANCEL-2", "DEF-2"} <= BEARING
    for rid in BEARING:
        assert all(text.strip() for text in RULES[rid].clauses.values())


def test_every_verdict_of_a_rule_with_clauses_names_a_declared_clause() -> None:
    """On every fixture, run by the reference and by each mutant of such a rule (the
    predicates and the fixtures' expect blocks alike)."""
    logging.disable(logging.CRITICAL)
    try:
        runs = [(ReferenceAdapter(), set(RULES))] + [
            (m.build(), set(m.targets)) for m in CATALOGUE.values() if set(m.targets) & BEARING
        ]
        scenarios = _fixtures()
        seen: set[tuple[str, str | None]] = set()
        for adapter, targets in runs:
            for scenario in scenarios:
                if not set(scenario.get("rules", [])) & targets:
                    continue
                evaluation = evaluate(adapter, scenario, rules=sorted(BEARING))
                seen.update(_clauses(evaluation.verdicts))
    finally:
        logging.disable(logging.NOTSET)
    stray = sorted((rid, c) for rid, c in seen if c not in RULES[rid].clauses)
    assert not stray
    assert set(BY_MUTANT) <= seen


@pytest.mark.parametrize(("rule_id", "clause"), sorted(BY_MUTANT))
def test_a_clause_fails_on_a_mutant(rule_id: str, clause: str) -> None:
    name, fixture = BY_MUTANT[rule_id, clause]
    logging.disable(logging.CRITICAL)
    try:
        evaluation = evaluate(CATALOGUE[name].build(), _fixture(fixture), rules=[rule_id])
    finally:
        logging.disable(logging.NOTSET)
    assert _failed(evaluation.verdicts, rule_id, clause), evaluation.verdicts.get(rule_id)
    reference = evaluate(ReferenceAdapter(), _fixture(fixture), rules=[rule_id])
    assert all(v.ok for v in reference.verdicts.get(rule_id, []))


def test_every_clause_can_fail() -> None:
    covered = set(BY_MUTANT) | {
        ("CANCEL-2", "body"),  # the tests below
        ("PRE-4", "identity-rewrite"),
        ("RES-1", "after-finalization"),
    }
    assert covered == {(rid, c) for rid in BEARING for c in RULES[rid].clauses}


# ------------------------------------------------------------- clauses no mutant reaches


def test_cancel_2_body_fails_when_a_body_runs_after_an_abort_on_entry() -> None:
    scenario = _fixture("CANCEL-2/already-aborted-skips-every-later-stage")
    trace = ReferenceAdapter().run(scenario)
    assert not _failed(judge(scenario, trace, ["CANCEL-2"]), "CANCEL-2", "body")
    aborted = next(a["call"]["callId"] for a in scenario["actions"] if a["call"].get("abortBefore"))
    ran = copy.deepcopy(trace)
    ran["events"].append({"stage": "body", "id": "x", "call": aborted, "at": "enter"})
    verdicts = judge(scenario, ran, ["CANCEL-2"])
    assert _failed(verdicts, "CANCEL-2", "body")
    # a raise the implementation declares is a closed call: the body clause still judges it
    closed = copy.deepcopy(ran)
    index = next(i for i, a in enumerate(scenario["actions"]) if a["call"].get("abortBefore"))
    closed["actions"][index] = {"raised": "CancelledError: cancelled"}
    forms = frozenset({"error-result", "raised"})
    verdicts = judge(scenario, closed, ["CANCEL-2"], closed_forms=forms)
    assert _failed(verdicts, "CANCEL-2", "body")
    assert all(v.ok for v in verdicts["CANCEL-2"] if v.clause == "code")


def test_pre_4_identity_rewrite_fails_when_the_forged_call_runs() -> None:
    scenario = probe_scenario(cell("approval/request.callId/assign"))
    assert scenario is not None
    rejecting = copy.deepcopy(scenario)
    rejecting["approval"]["steps"][-1] = {"return": "rejected"}
    trace = ReferenceAdapter().run(rejecting)
    for event in trace["events"]:
        if event.get("stage") == "approval" and "mutate" in event:
            event["raised"] = False  # the service's write to its request took effect
    assert not _failed(judge(scenario, trace, ["PRE-4"]), "PRE-4", "identity-rewrite")
    forged = {"call": "forged", "stage": "body", "at": "enter", "id": "probe"}
    trace["events"].append({**forged, "tool": "probe", "agent": "main", "hasParent": False})
    assert _failed(judge(scenario, trace, ["PRE-4"]), "PRE-4", "identity-rewrite")


def test_res_1_after_finalization_fails_when_observers_hear_first() -> None:
    scenario = s.scenario(
        "clauses/after-finalization",
        [s.tool("t", finalizeContent=[{"return": None}])],
        [{"call": s.call("c0", "t", {})}],
        observers=[s.listener("log", [])],
    )
    trace = ReferenceAdapter().run(scenario)
    assert not _failed(judge(scenario, trace, ["RES-1"]), "RES-1", "after-finalization")
    events = trace["events"]
    final = [e for e in events if e.get("stage") == "finalize"]
    early = [e for e in events if e.get("stage") != "finalize"]
    at = next(i for i, e in enumerate(early) if e.get("stage") == "result")
    trace["events"] = early[: at + 1] + final + early[at + 1 :]  # notified, then finalized
    assert _failed(judge(scenario, trace, ["RES-1"]), "RES-1", "after-finalization")
