"""A fixture's ``expect`` block speaks for the rule that owns each key, never for every rule
the fixture lists (conformance/judging/fixture_checks.py: OWNED_KEYS, KEY_CLAUSES)."""

from __future__ import annotations

import copy
import glob
import json
from pathlib import Path
from typing import Any

from conformance.adapters.reference import ReferenceAdapter
from conformance.judging.evaluate import judge
from conformance.judging.fixture_checks import OWNED_KEYS, fixture_block, own_rule, owners
from conformance.judging.model import View
from conformance.judging.rules import RULES
from conformance.scenario.schema import load_json


def _fixture(name: str) -> dict[str, Any]:
    return dict(load_json(f"conformance/fixtures/rules/{name}.json"))


def _failing(found: dict[str, list[Any]]) -> set[str]:
    return {rid for rid, verdicts in found.items() if any(not v.ok for v in verdicts)}


def test_the_own_rule_of_a_fixture() -> None:
    assert own_rule({"id": "rules/RES-1/x", "rules": ["RES-2", "RES-1"]}) == "RES-1"
    assert own_rule({"id": "examples/seed-step-08-read-file", "rules": ["PIPE-1", "RES-1"]}) == (
        "PIPE-1"
    )
    assert own_rule({"id": "regressions/x", "rules": []}) is None


def test_owned_keys_speak_for_their_owner_generic_keys_for_the_fixtures_rule() -> None:
    fixture = {"id": "rules/POST-5/x", "rules": ["POST-5", "CTX-1", "RES-2"]}
    assert owners(fixture, "resultNotifications", None) == [("RES-1", "once")]
    assert owners(fixture, "finalizerCalls", None) == [("FIN-2", None)]
    assert owners(fixture, "concludesTurn", None) == [("CTX-2", None)]
    assert owners(fixture, "additionalContexts", None) == [("POST-5", None)]
    assert owners({"id": "rules/CANCEL-3/x"}, "additionalContexts", None) == [("CTX-1", None)]
    assert owners(fixture, "isError", None) == [("POST-5", None)]
    assert owners(fixture, "value", ["POST-2"]) == [("POST-2", None)]
    assert owners(fixture, "finalizerCalls", ["POST-2"]) == [("FIN-2", None)]  # still its own
    cancel = {"id": "rules/CANCEL-2/x"}
    assert owners(cancel, "bodyEntered", None) == [("CANCEL-2", "body")]
    assert owners(cancel, "code", None) == [("CANCEL-2", "code")]
    assert owners(cancel, "stagesNotEntered", None) == [("CANCEL-2", "stages")]
    assert owners({"id": "rules/PIPE-3/x"}, "value", ["PIPE-3:identity"]) == [
        ("PIPE-3", "identity")
    ]
    assert set(OWNED_KEYS) == {
        "resultNotifications",
        "finalizerCalls",
        "concludesTurn",
        "additionalContexts",
    }


def test_every_fixture_names_rules_and_clauses_that_exist() -> None:
    for path in glob.glob("conformance/fixtures/**/*.json", recursive=True):
        if "/schema/" in path or "/interpreter/" in path:
            continue
        fixture = json.loads(Path(path).read_text(encoding="utf-8"))
        for want in (fixture.get("expect") or {}).values():
            for key in want:
                for rule_id, clause in owners(fixture, key, want.get("rules")):
                    assert rule_id in RULES, (path, key, rule_id)
                    rule = RULES[rule_id]
                    assert (clause is None) == (not rule.clauses), (path, key, rule_id, clause)
                    assert clause is None or clause in rule.clauses, (path, key, clause)


def test_a_res_1_fixture_no_longer_fails_res_2_through_its_expect_block() -> None:
    """The audit's case: an observer that throws makes a run end without a result; the
    fixture's expectation of a success is RES-1's (its own rule), not RES-2's."""
    scenario = _fixture("RES-1/observers-cannot-change-it")
    assert scenario["rules"] == ["RES-1", "RES-2"]
    trace = ReferenceAdapter().run(scenario)
    tampered = copy.deepcopy(trace)
    tampered["actions"][0]["result"]["isError"] = True  # the caller got another result
    found = fixture_block(View(scenario, tampered))
    assert _failing(found) == {"RES-1"}
    assert {v.clause for v in found["RES-1"]} <= {"frozen", "once"}
    assert "RES-2" not in found


def test_one_behaviour_is_one_finding() -> None:
    """A body that swaps its own signal (dsh-tools): EXEC-1's finding, not CANCEL-1's too."""
    case = json.loads(
        Path("docs/implementations/dsh-tools-0.1.0-rc.8/cases/EXEC-1.json").read_text("utf-8")
    )
    verdicts = judge(case["scenario"], case["trace"], ["CANCEL-1", "EXEC-1", "CANCEL-3"])
    assert _failing(verdicts) == {"EXEC-1"}


def test_a_key_owned_elsewhere_fails_only_its_owner() -> None:
    scenario = _fixture("PRE-3/ask-without-approval-service")
    trace = ReferenceAdapter().run(scenario)
    for key, owner in (("finalizerCalls", "FIN-2"), ("resultNotifications", "RES-1")):
        bent = copy.deepcopy(scenario)
        call = next(iter(bent["expect"]))
        bent["expect"][call][key] = 7
        assert _failing(fixture_block(View(bent, trace))) == {owner}, key
    bent = copy.deepcopy(scenario)
    bent["expect"][next(iter(bent["expect"]))]["bodyEntered"] = True
    assert _failing(fixture_block(View(bent, trace))) == {"PRE-3"}
