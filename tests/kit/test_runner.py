"""The Python adapters' one action runner and its toolkit (conformance.adapters.runner)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from conformance.adapters import reference, runner
from conformance.adapters.runner import Driver, Stage, run_actions, well_formed
from conformance.interpreter.session import JSON
from conformance.scenario.methods import near_miss_values
from conformance.seam.adapter import ScenarioSkipped
from conformance.vocab import action_deadline, is_action_timeout

#: The edges, shared with the JavaScript runner's test (harnesses/js/test/runner.test.mjs).
SHAPES = json.loads(
    (Path(__file__).parents[2] / "harnesses/js/test/decision-shapes.json").read_text("utf-8")
)
WELL_FORMED = [(case["stage"], case["decision"]) for case in SHAPES["wellFormed"]]
MALFORMED = [(case["stage"], case["decision"]) for case in SHAPES["malformed"]]


@pytest.mark.parametrize(("stage", "decision"), WELL_FORMED)
def test_well_formed_decisions(stage: Stage, decision: Any) -> None:
    assert well_formed(decision, stage)


@pytest.mark.parametrize(("stage", "decision"), MALFORMED)
def test_malformed_decisions(stage: Stage, decision: Any) -> None:
    assert not well_formed(decision, stage)


@pytest.mark.parametrize("miss", near_miss_values("pre-decision-kind"))
def test_every_near_miss_of_a_kind_is_no_decision(miss: Any) -> None:
    """fixtures/schema/methods.json: each near miss of allow / deny / ask, with a reason."""
    assert not well_formed({"kind": miss}, "pre-execute")
    assert not well_formed({"kind": miss, "reason": "r"}, "pre-execute")


def test_the_reference_adapter_uses_the_one_shape_test() -> None:
    assert reference.well_formed is runner.well_formed  # it hands decisions on as they are


@pytest.mark.parametrize("name", ["pydantic_ai", "openai_agents", "google_adk", "langgraph"])
def test_every_framework_adapter_uses_the_one_shape_test(name: str) -> None:
    # each imports its framework (the extra [frameworks]); it reads a decision's kind
    module = pytest.importorskip(f"conformance.adapters.{name}", exc_type=ImportError)
    assert module.kind_of is runner.kind_of
    if hasattr(module, "well_formed"):
        assert module.well_formed is runner.well_formed


@pytest.mark.parametrize(("stage", "decision"), WELL_FORMED + MALFORMED)
def test_kind_of_is_the_kind_of_a_well_formed_decision_only(stage: Stage, decision: Any) -> None:
    expected = decision["kind"] if well_formed(decision, stage) else None
    assert runner.kind_of(decision, stage) == expected


class _Slow(Driver):
    async def call(self, call: Mapping[str, Any]) -> JSON:
        await asyncio.Event().wait()  # never set: the call hangs
        return {}


def test_a_hanging_call_is_answered_with_the_deadline_message() -> None:
    scenario = {"actions": [{"call": {"callId": "c0", "name": "t", "arguments": {}}}]}
    (answer,) = asyncio.run(run_actions(scenario, _Slow(), deadline=0.05))
    assert answer == {"raised": action_deadline(0.05)}
    assert is_action_timeout(answer["raised"])


class _Failing(Driver):
    async def call(self, call: Mapping[str, Any]) -> JSON:
        raise ValueError("boom")


def test_a_raise_is_the_answer_unless_the_driver_lets_it_leave() -> None:
    scenario = {"actions": [{"call": {"callId": "c0", "name": "t", "arguments": {}}}]}
    assert asyncio.run(run_actions(scenario, _Failing())) == [{"raised": "ValueError: boom"}]
    leaves = _Failing()
    leaves.answers_raises = False
    with pytest.raises(ValueError, match="boom"):
        asyncio.run(run_actions(scenario, leaves))


def test_an_action_without_a_counterpart_skips_the_scenario() -> None:
    with pytest.raises(ScenarioSkipped, match="executionMode"):
        asyncio.run(run_actions({"actions": [{"executionMode": {"name": "t"}}]}, Driver()))


class _Listed(Driver):
    def __init__(self) -> None:
        self.entries = [{"name": "t", "parameters": {"type": "object"}}]

    def schemas(self, scope: str | None) -> list[dict[str, Any]]:
        return self.entries  # the live list: a write goes through


def test_a_schemas_write_is_made_and_read_again() -> None:
    action = {"schemas": {}, "mutate": {"path": [0, "parameters", "type"], "value": "x"}}
    (answer,) = asyncio.run(run_actions({"actions": [action]}, _Listed()))
    assert answer["schemas"][0]["parameters"] == {"type": "object"}
    assert answer["after"][0]["parameters"] == {"type": "x"}
