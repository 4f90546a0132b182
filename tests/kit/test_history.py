"""DEF-2 and DEF-5 over a history of registry changes: each check can fail.

The reference's trace of a fixture is tampered with in one place -- the answer a
wrong registry would give -- and the rule that owns that answer must fail on it.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from conformance.adapters.reference import ReferenceAdapter
from conformance.judging.evaluate import judge
from conformance.scenario.schema import FIXTURES

STRICTER = FIXTURES / "rules" / "DEF-5" / "shadow-with-stricter-parameters.json"
HISTORY = FIXTURES / "rules" / "DEF-2" / "schemas-across-a-history.json"


def _run(path: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    scenario = json.loads(path.read_text(encoding="utf-8"))
    return scenario, ReferenceAdapter().run(scenario)


def _failed(scenario: dict[str, Any], trace: dict[str, Any], rule: str) -> list[str]:
    return [v.message for v in judge(scenario, trace, [rule])[rule] if not v.ok]


def test_the_reference_passes_both_fixtures() -> None:
    for path in (STRICTER, HISTORY):
        scenario, trace = _run(path)
        assert not _failed(scenario, trace, "DEF-5") and not _failed(scenario, trace, "DEF-2")


def test_another_layers_body_answering_a_refused_call_fails_def_5() -> None:
    scenario, trace = _run(STRICTER)
    index = next(
        i for i, a in enumerate(scenario["actions"]) if a.get("call", {}).get("callId") == "c1"
    )
    wrong = copy.deepcopy(trace)
    wrong["actions"][index] = {
        "result": {
            "isError": False,
            "value": "global read",
            "content": [{"type": "text", "text": '"global read"'}],
        }
    }
    assert any("another layer's body answered it" in m for m in _failed(scenario, wrong, "DEF-5"))


def test_a_shadow_shown_with_the_global_parameters_fails_def_5() -> None:
    scenario, trace = _run(STRICTER)
    wrong = copy.deepcopy(trace)
    entry = wrong["actions"][0]["schemas"][0]  # schemas(main): main's stricter read_file
    entry["parameters"] = {"type": "object"}
    assert any("shows parameters" in m for m in _failed(scenario, wrong, "DEF-5"))


def test_a_stale_read_after_a_registration_fails_def_2() -> None:
    scenario, trace = _run(HISTORY)
    wrong = copy.deepcopy(trace)
    wrong["actions"][2] = copy.deepcopy(wrong["actions"][0])  # the read before the register
    assert any("has description" in m for m in _failed(scenario, wrong, "DEF-2"))
