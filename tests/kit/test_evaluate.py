"""The one evaluation path: evaluate() runs a scenario and judges it, or says why it cannot."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

import pytest

import conformance.judging.evaluate as evaluation
from conformance.adapters.reference import ReferenceAdapter
from conformance.judging.evaluate import evaluate, judge
from conformance.judging.model import View
from conformance.scenario.schema import FIXTURES, conforms, load_json, schema
from conformance.seam.adapter import AdapterInfo, ImplementationFailure, ScenarioSkipped
from conformance.vocab import Status, action_deadline, is_action_timeout

EXAMPLE = sorted((FIXTURES / "examples").glob("*.json"))[0]


class Fixed:
    """An adapter that answers every scenario the same way (a trace or an exception)."""

    def __init__(self, answer: dict[str, Any] | BaseException) -> None:
        self.answer = answer

    def describe(self) -> AdapterInfo:
        return AdapterInfo("fixed", "0")

    def run(self, scenario: Mapping[str, Any]) -> dict[str, Any]:
        if isinstance(self.answer, BaseException):
            raise self.answer
        return copy.deepcopy(self.answer)


def _scenario() -> dict[str, Any]:
    document = load_json(EXAMPLE)
    assert isinstance(document, dict)
    return document


def test_a_trace_is_judged_by_every_rule_and_the_fixture_block() -> None:
    scenario = _scenario()
    found = evaluate(ReferenceAdapter(), scenario)
    assert found.trace is not None and found.no_trace is None
    assert found.verdicts and all(v.ok for vs in found.verdicts.values() for v in vs)
    broken = {**scenario, "expect": {"nope": {"isError": True}}, "rules": ["PRE-1"]}
    verdicts = judge(broken, found.trace, ["PRE-1"])
    assert any(v.subject == "expect[nope]" and not v.ok for v in verdicts["PRE-1"])


def test_one_view_per_scenario(monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[object] = []

    class Counted(View):
        def __init__(
            self, scenario: Mapping[str, Any], trace: Mapping[str, Any], *rest: Any
        ) -> None:
            built.append(self)
            super().__init__(scenario, trace, *rest)

    monkeypatch.setattr(evaluation, "View", Counted)
    scenario = _scenario()
    judge(scenario, ReferenceAdapter().run(scenario))
    assert len(built) == 1


@pytest.mark.parametrize(
    ("answer", "status", "category"),
    [
        (ScenarioSkipped("no approval seam"), Status.NOT_APPLICABLE, "skipped"),
        (ImplementationFailure("timeout", "no answer"), Status.TIMEOUT, "timeout"),
        (ImplementationFailure("crash", "exited"), Status.ERROR, "crash"),
        (RuntimeError("boom"), Status.ERROR, "adapter-raised"),
        ({"actions": "not a list"}, Status.ERROR, "malformed-trace"),
    ],
)
def test_why_there_is_no_trace(
    answer: dict[str, Any] | BaseException, status: Status, category: str
) -> None:
    found = evaluate(Fixed(answer), _scenario())
    assert found.trace is None and not found.verdicts
    assert found.no_trace is not None
    assert (found.no_trace.status, found.no_trace.category) == (status, category)


def test_the_fast_trace_check_agrees_with_the_schema() -> None:
    scenario = _scenario()
    trace = ReferenceAdapter().run(scenario)
    broken = [
        {**trace, "actions": {}},
        {**trace, "events": [{"stage": 3}]},
        {**trace, "registrations": [{"key": 1, "ok": "yes"}]},
        {**trace, "extra": True},
        {k: v for k, v in trace.items() if k != "actions"},
    ]
    for document in [trace, *broken]:
        assert conforms(document, "trace") == schema("trace").is_valid(document), document
    assert not all(schema("trace").is_valid(d) for d in broken)


def test_an_action_deadline_is_a_timeout_and_other_raises_are_errors() -> None:
    assert is_action_timeout(action_deadline(5)) and is_action_timeout(action_deadline(0.5))
    assert not is_action_timeout("the deadline policy broke")
    assert not is_action_timeout(None)
