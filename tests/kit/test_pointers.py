"""A failing verdict's pointers (the call, the trace event indices) reach every report.

``Verdict.call`` and ``Verdict.events`` go from ``require()``/``fail()`` through the runner
into each failure (``report.json``, schema-valid), the counterexample case, ``render`` and
the report page's timeline, which marks exactly the events they name -- not what the
message's wording would suggest.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

from conformance.adapters.reference import ReferenceAdapter
from conformance.adapters.reference.mutants import CATALOGUE
from conformance.judging.model import View
from conformance.judging.rules import CHECKERS, RULES, Rule, Verdict
from conformance.judging.rules._base import fail, require
from conformance.reporting.html import load_cases, report_html
from conformance.reporting.report import report_json, result_from_json
from conformance.running.outcomes import Pointer, RunResult
from conformance.running.runner import run_suite
from conformance.scenario import strategies as s
from conformance.scenario.schema import validate
from conformance.seam.adapter import DEFAULT_CLOSED_FORMS
from tests.kit.test_html import parse, self_contained


def test_require_and_fail_carry_pointers() -> None:
    bad = require(False, "c1", "the body ran", "x", call="c1", events=[4, 2, 4])
    assert (bad.call, bad.events, bad.clause, bad.points) == ("c1", (2, 4), "x", True)
    assert require(True, "c1", "unused", call="c1", events=[1]) == Verdict(True, "c1")
    assert fail("c1", "m", events=[0]).events == (0,) and fail("c1", "m").points is False
    assert fail("c2", "m", clause="once", call="c2").clause == "once"
    for wrong in (-1, True, "3"):
        with pytest.raises(ValueError, match="index into trace"):
            fail("c1", "m", events=[wrong])  # type: ignore[list-item]


def _pointing_check(view: View) -> Iterator[Verdict]:
    """A stand-in predicate: every call fails, pointing at its first event by index, with a
    message whose wording names another stage (a guard) than the one pointed at."""
    for call in view.calls:
        first = next(
            (i for i, e in enumerate(view.trace["events"]) if e.get("call") == call.id), None
        )
        events = [] if first is None else [first]
        yield fail(call.id, "guard 'nowhere' objected", call=call.id, events=events)


@pytest.fixture
def pointing_rule(monkeypatch: pytest.MonkeyPatch) -> str:
    rule = RULES["PRE-2"]
    monkeypatch.setitem(RULES, "PRE-2", Rule(rule.id, rule.title, _pointing_check))
    return "PRE-2"


def test_the_runner_keeps_pointers_per_failure_and_in_the_case(
    pointing_rule: str, tmp_path: Path
) -> None:
    result = run_suite(
        ReferenceAdapter(), profile="quick", rules=pointing_rule, report_dir=tmp_path, jobs=1
    )
    (outcome,) = result.rules
    assert outcome.failures, "the stand-in predicate fails every call"
    for failure in outcome.failures:
        assert failure.pointers, failure
        assert all(p.call is not None and len(p.events) <= 1 for p in failure.pointers)
    document = report_json(result)
    validate(document, "report", "report.json")
    failures = document["rules"][0]["failures"]
    assert all(f["pointers"][0].keys() == {"subject", "call", "events"} for f in failures)
    # render reads them back
    again = result_from_json(json.loads(json.dumps(document)))
    assert again.rules[0].failures[0].pointers == outcome.failures[0].pointers
    # the case: one pointer per message of `required`, indexing its own trace
    case = json.loads(Path(str(result.case_file(outcome.failures[0]))).read_text())
    assert len(case["pointers"]) == len(case["required"])
    for pointer in case["pointers"]:
        for index in pointer["events"]:
            assert case["trace"]["events"][index]["call"] == pointer["call"]


def test_a_failure_without_pointers_has_no_pointers_key(tmp_path: Path) -> None:
    result = run_suite(ReferenceAdapter(), profile="quick", rules="PRE-2", jobs=1)
    document = report_json(result)
    assert all("pointers" not in f for r in document["rules"] for f in r["failures"])
    from conformance.running.outcomes import pointers

    assert pointers([Verdict(False, "c1", "m")]) == []
    mixed = pointers([Verdict(False, "c1", "m"), Verdict(False, "c2", "m", None, "c2", (3,))])
    assert mixed == [Pointer("c1"), Pointer("c2", "c2", (3,))]  # aligned with the verdicts


def test_a_schema_refuses_a_malformed_pointer() -> None:
    from conformance.scenario.schema import FixtureError
    from tests.kit.test_report import synthetic

    document = report_json(synthetic())
    failure = document["rules"][1]["failures"][0]
    failure["pointers"] = [{"subject": "c1", "call": "c1", "events": [-1]}]
    with pytest.raises(FixtureError):
        validate(document, "report", "report.json")
    failure["pointers"] = [{"subject": "c1", "call": "c1", "events": [2]}]
    validate(document, "report", "report.json")


def _page(case: dict[str, object], tmp_path: Path, failure: dict[str, object]) -> str:
    from tests.kit.test_report import synthetic

    path = tmp_path / "PRE-2.json"
    path.write_text(json.dumps(case), encoding="utf-8")
    document = report_json(synthetic())
    document["rules"] = [r for r in document["rules"] if r["id"] == "PRE-2"]
    document["rules"][0]["failures"] = [{**failure, "counterexample": str(path)}]
    result = RunResult.from_json(document)
    files = load_cases(result, None, tmp_path, None, tmp_path)
    return report_html(result, None, files.cases, links=files.links)


def _case(pointers: list[dict[str, object]] | None) -> dict[str, object]:
    events = [
        {"stage": "guard", "at": "enter", "call": "c1", "id": "g"},
        {"stage": "guard", "at": "exit", "call": "c1", "id": "g"},
        {"stage": "body", "at": "enter", "call": "c1", "id": "t"},
        {"stage": "body", "at": "exit", "call": "c1", "id": "t"},
        {"stage": "body", "at": "enter", "call": "c2", "id": "t"},
        {"stage": "body", "at": "exit", "call": "c2", "id": "t"},
    ]
    calls = [{"call": {"callId": c, "name": "t", "arguments": {}}} for c in ("c1", "c2")]
    case: dict[str, object] = {
        "rule": "PRE-2",
        "kit": {"name": "toolreg-conformance", "version": "0"},
        "implementation": {"name": "x", "version": "0", "language": "python", "capabilities": []},
        "required": ["guard 'g' objected but the body ran"],
        "scenario": {"id": "generated/PRE-2", "tools": [s.tool("t")], "actions": calls},
        "trace": {
            "registrations": [],
            "actions": [{"result": {}}, {"result": {}}],
            "events": events,
        },
    }
    if pointers is not None:
        case["pointers"] = pointers
    return case


def _marked(page: str) -> tuple[list[tuple[str, str]], list[str]]:
    """(call, event index) of every marked event, and the calls whose answer is marked."""
    tree = parse(page)
    self_contained(tree)
    events, answers = [], []
    for lane in tree.root.all("lane"):
        for node in lane.all("violation"):
            if "event" in node.classes:
                events.append((lane.attrs["data-call"], node.attrs["data-index"]))
            elif "answer" in node.classes:
                answers.append(lane.attrs["data-call"])
    return events, answers


def test_the_timeline_marks_what_the_pointers_name_not_the_wording(tmp_path: Path) -> None:
    failure = {"kind": "fail", "message": "c1: guard 'g' objected but the body ran"}
    failure["scenario"] = "generated/PRE-2"
    # the wording names guard 'g' and the body of c1, but a verdict without a pointer marks
    # nothing (no call's answer either), and the page says so
    page = _page(_case(None), tmp_path, failure)
    assert _marked(page) == ([], [])
    assert "no pointer: 1 violated verdict(s)" in page
    # a pointer at c2's body (index 4) marks exactly that, whatever the message says
    pointed = [{"subject": "c2", "call": "c2", "events": [4]}]
    events, answers = _marked(_page(_case(pointed), tmp_path, failure))
    assert (events, answers) == ([("c2", "4")], [])
    assert 'data-pointed="true"' in _page(_case(pointed), tmp_path, failure)
    # a pointer at a call and no event marks that call's answer
    events, answers = _marked(
        _page(_case([{"subject": "c1", "call": "c1", "events": []}]), tmp_path, failure)
    )
    assert (events, answers) == ([], ["c1"])
    # the report's failure pointers serve when the case has none
    failure_pointed = {**failure, "pointers": [{"subject": "c1", "call": "c1", "events": [3]}]}
    events, _ = _marked(_page(_case(None), tmp_path, failure_pointed))
    assert events == [("c1", "3")]


# -------------------------------------------------- every predicate points (issue 24)


def _lanes(scenario: dict[str, Any]) -> set[str]:
    """The call ids the scenario's actions make (the timeline's lanes of calls)."""
    out: set[str] = set()
    for action in scenario.get("actions", []):
        for kind in ("call", "executionMode"):
            if kind in action:
                out.add(str(action[kind].get("callId")))
        out |= {str(member.get("callId")) for member in action.get("batch", [])}
    return out


def unpointed(
    verdicts: Iterable[Verdict], scenario: dict[str, Any], trace: dict[str, Any]
) -> list[str]:
    """The failing ``verdicts`` that do not point at their trace: one with no pointer at
    all; one about a call of the scenario (its subject names one) without ``call``; one
    naming a call that has events in the trace but pointing at none of them (a call with no
    event is pointed at through its answer, which the timeline marks); an index out of the
    trace. A verdict about an action that is no call (a ``schemas`` listing, a ``register``)
    points at it (``action``), one about a set-up registration at it (``registration``)."""
    events = trace.get("events") or []
    calls = _lanes(scenario)
    with_events = {str(e.get("call")) for e in events}
    out = []
    for verdict in verdicts:
        if verdict.ok:
            continue
        about = set(re.findall(r"[^\s/,()\[\]]+", verdict.subject)) & calls
        if not verdict.points:
            out.append(f"no pointer: {verdict.subject}: {verdict.message}")
        elif verdict.call is None and about:
            out.append(f"no call: {verdict.subject}: {verdict.message}")
        elif not verdict.events and verdict.call in with_events:
            out.append(f"no event: {verdict.subject}: {verdict.message}")
        if any(index >= len(events) for index in verdict.events):
            out.append(f"an index out of the trace: {verdict.subject}: {verdict.events}")
        if verdict.action is not None and verdict.action >= len(scenario.get("actions", [])):
            out.append(f"an action out of the scenario: {verdict.subject}: {verdict.action}")
        if verdict.registration is not None and verdict.registration >= len(
            trace.get("registrations") or []
        ):
            out.append(f"a registration out of the trace: {verdict.subject}")
    return out


def _sweep(name: str, tmp_path: Path) -> list[str]:
    """Run the mutant ``name`` on its target rules (quick profile, one process) and judge
    again, with the rule's own predicate, every violation it kept (its counterexample case):
    the failing verdicts that do not point (:func:`unpointed`)."""
    mutant = CATALOGUE[name]
    adapter = mutant.build()
    try:
        result = run_suite(
            adapter, profile="quick", rules=",".join(mutant.targets), report_dir=tmp_path, jobs=1
        )
    finally:
        close = getattr(adapter, "close", None)
        if callable(close):
            close()
    missing: list[str] = []
    judged = 0
    for outcome in result.rules:
        check = RULES[outcome.id].check
        assert check is not None
        for failure in outcome.failures:
            if failure.category is not None or failure.counterexample is None:
                continue  # an error or a timeout, not a verdict
            file = result.case_file(failure)
            assert file is not None
            case = json.loads(file.read_text(encoding="utf-8"))
            forms = frozenset(case["implementation"].get("closedForms", DEFAULT_CLOSED_FORMS))
            view = View(case["scenario"], case["trace"], forms)
            verdicts = list(check(view))
            # a fixture's expect block judges the call's answer: it points at the call (its
            # answer is marked), never at nothing
            expected = [v for c in CHECKERS for v in c(view).get(outcome.id, []) if not v.ok]
            judged += sum(not v.ok for v in verdicts) + len(expected)
            found = unpointed(verdicts, case["scenario"], case["trace"])
            found += [f"no call: {v.subject}: {v.message}" for v in expected if v.call is None]
            missing += [f"{outcome.id} {case['scenario'].get('id')}: {m}" for m in found]
    assert judged, f"{name}: no violation of {mutant.targets} to judge"
    return missing


def _representatives() -> set[str]:
    """One mutant per rule the catalogue targets (the first by name): the sweep's fast part."""
    chosen: dict[str, str] = {}
    for name, mutant in CATALOGUE.items():
        for rule_id in mutant.targets:
            chosen.setdefault(rule_id, name)
    return set(chosen.values())


# The whole catalogue takes about a minute of CPU: one mutant per rule runs by default, the
# rest with `-m slow`.
_SWEEP = [
    pytest.param(name, marks=() if name in _representatives() else pytest.mark.slow)
    for name in CATALOGUE
]


@pytest.mark.parametrize("name", _SWEEP)
def test_every_violation_on_a_mutant_points_at_its_trace(name: str, tmp_path: Path) -> None:
    """Issue 24: a predicate's failure carries the call and the trace events it is about."""
    assert _sweep(name, tmp_path) == []


def test_unpointed_finds_a_failure_that_points_nowhere() -> None:
    """The sweep's judge fails on verdicts that do not point (a check that cannot fail is
    none)."""
    scenario = {"actions": [{"call": {"callId": "c1"}}, {"batch": [{"callId": "c2"}]}]}
    trace: dict[str, Any] = {"events": [{"call": "c1", "stage": "body", "at": "enter"}]}
    assert unpointed([Verdict(False, "c1", "m")], scenario, trace)  # no pointer
    assert unpointed([Verdict(False, "register(t)", "m")], scenario, trace)  # no pointer
    assert unpointed([Verdict(False, "batch@0 c2", "m", action=1)], scenario, trace)  # no call
    assert unpointed([Verdict(False, "schemas", "m", action=2)], scenario, trace)  # no action 2
    assert unpointed([Verdict(False, "register(t)", "m", registration=0)], scenario, trace)
    assert unpointed([Verdict(False, "c1", "m", None, "c1")], scenario, trace)  # no event
    assert unpointed([Verdict(False, "c1", "m", None, "c1", (1,))], scenario, trace)  # past end
    pointed = [
        Verdict(False, "c1", "m", None, "c1", (0,)),
        Verdict(False, "c2", "m", None, "c2"),  # no event of c2: its answer
        Verdict(False, "schemas(main) [action 0]", "m", action=0),  # a non-call action
        Verdict(False, "register(t)", "m", registration=0),  # a set-up registration
        Verdict(True, "c1"),
    ]
    trace["registrations"] = [{"key": "t", "ok": True}]
    assert unpointed(pointed, scenario, trace) == []


def test_an_action_or_registration_pointer_marks_that_answer(tmp_path: Path) -> None:
    """A verdict about a schemas listing (an action that is no call) or a set-up
    registration points at it; the page marks it and nothing else, and the schema takes it."""
    case = _case(None)
    scenario, trace = case["scenario"], case["trace"]
    assert isinstance(scenario, dict) and isinstance(trace, dict)
    scenario["actions"].append({"schemas": {"scope": "main"}})
    trace["actions"].append({"schemas": [{"name": "t", "x-secret": 1}]})
    trace["registrations"] = [{"key": "t", "ok": True}]
    case["required"] = ["a listing leaks a field", "run_code is reserved"]  # one per pointer
    given: list[dict[str, Any]] = [
        {"subject": "schemas(main) [action 2]", "call": None, "events": [], "action": 2},
        {"subject": "register(t)", "call": None, "events": [], "registration": 0},
    ]
    case["pointers"] = given
    failure: dict[str, object] = {"kind": "fail", "message": "x", "scenario": "generated/PRE-2"}
    tree = parse(_page(case, tmp_path, failure))
    marked = [(n.tag, n.attrs.get("data-index")) for n in tree.root.all("violation")]
    assert sorted(marked) == [("li", "0"), ("li", "2")]
    assert [n.attrs["data-index"] for n in tree.root.all("registration")] == ["0"]
    assert _marked(_page(case, tmp_path, failure)) == ([], [])  # no lane is marked
    # report.json keeps them (and only when set), and its schema takes them
    from tests.kit.test_report import synthetic

    document = report_json(synthetic())
    document["rules"][1]["failures"][0]["pointers"] = given
    validate(document, "report", "report.json")
    kept = [Pointer.from_json(p) for p in given]
    assert [p.to_json() for p in kept] == given
    assert Pointer("c1", "c1", (1,)).to_json().keys() == {"subject", "call", "events"}
    document["rules"][1]["failures"][0]["pointers"][0]["action"] = -1
    from conformance.scenario.schema import FixtureError

    with pytest.raises(FixtureError):
        validate(document, "report", "report.json")
