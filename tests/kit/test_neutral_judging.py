"""Neutral judging (issue 11): wording, open value shapes, non-JSON traces, raises.

* No fixture or predicate depends on message wording SPEC section 4 does not fix:
  a registry that decorates body errors passes the body-error fixtures.
* No predicate assumes the shape of a value the spec leaves open (run_code's value,
  decision objects, error ``info``): odd shapes give verdicts, never a kit error.
* A trace holding a non-JSON object is a malformed trace of its scenario; the run
  goes on and its report is written; counterexamples are written safely, bounded.
* Where the spec requires a published result and ``execute`` raised instead, the
  rule that requires the result fails (FIN-4, POST-1, POST-4), with the raised message.
"""

from __future__ import annotations

import copy
import json
import logging
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from conformance.adapters.reference import ReferenceAdapter
from conformance.adapters.reference.mutants import CATALOGUE, VARIANTS
from conformance.judging.evaluate import evaluate, judge
from conformance.judging.rules._programs import program_outcomes
from conformance.reporting.report import write_reports
from conformance.running.runner import run_suite
from conformance.scenario import strategies as s
from conformance.scenario.bounds import counterexample_text, non_json
from conformance.scenario.schema import FIXTURES, load_json
from conformance.vocab import Status

RULE_FIXTURES = sorted((FIXTURES / "rules").glob("*/*.json"))


def fixture(path: str) -> dict[str, Any]:
    document: dict[str, Any] = load_json(FIXTURES / "rules" / path)
    return document


def failures(verdicts: Mapping[str, Any], rule_id: str) -> list[str]:
    return [v.message for v in verdicts.get(rule_id, []) if not v.ok]


# ------------------------------------------------------------------ wording


@pytest.mark.parametrize(
    "path", ["POST-1/body-error-reaches-post.json", "RES-3/failure-shape.json"]
)
def test_a_decorated_body_error_passes_the_body_error_fixtures(path: str) -> None:
    scenario = fixture(path)
    evaluation = evaluate(VARIANTS["decorated-body-errors"].build(), scenario)
    assert evaluation.trace is not None
    message = evaluation.trace["actions"][0]["result"]["error"]["message"]
    assert message == "'write_file' raised RuntimeError: disk full"  # the variant decorates
    bad = {rid: failures(evaluation.verdicts, rid) for rid in evaluation.verdicts}
    assert not any(bad.values()), bad


def test_res_3_still_requires_the_envelope_of_the_message() -> None:
    scenario = fixture("RES-3/failure-shape.json")
    trace = ReferenceAdapter().run(scenario)
    trace["actions"][0]["result"]["content"] = [{"type": "text", "text": "Error: disk full!"}]
    assert failures(judge(scenario, trace, ["RES-3"]), "RES-3")


# ------------------------------------------------------------- value shapes

ODD_SHAPES: list[Any] = [
    "text",
    7,
    None,
    [1, 2],
    [{"ok": 1}, "x"],
    {"returned": {"x": 1}, "calls": 2},
    {"result": "flat"},
    {"result": [1, {"ok": 1}]},
    {"kind": ["allow"]},
    {"kind": "accept", "content": "x", "value": 1},
]


def _reshaped(trace: Mapping[str, Any], odd: Any) -> Iterator[tuple[str, dict[str, Any]]]:
    """Copies of ``trace`` with every open value replaced by ``odd``: results' values and
    error infos (returned and observed), and every value a callable returned."""

    def reshape(result: Any) -> None:
        if isinstance(result, dict):
            if "value" in result:
                result["value"] = odd
            if isinstance(result.get("error"), dict):
                result["error"]["info"] = odd

    shaped = copy.deepcopy(dict(trace))
    for answer in shaped.get("actions", []):
        for result in [answer.get("result"), *(answer.get("results") or [])]:
            reshape(result)
    for event in shaped.get("events", []):
        if isinstance(event.get("observed"), dict) and "isError" in event["observed"]:
            reshape(event["observed"])
    yield "results", shaped
    shaped = copy.deepcopy(dict(trace))
    for event in shaped.get("events", []):
        if "returned" in event:
            event["returned"] = odd
    yield "returned", shaped


@pytest.fixture(scope="module")
def reference_traces() -> list[tuple[dict[str, Any], dict[str, Any]]]:
    logging.disable(logging.CRITICAL)
    try:
        adapter = ReferenceAdapter()
        out = []
        for path in RULE_FIXTURES:
            scenario = load_json(path)
            out.append((scenario, adapter.run(scenario)))
        return out
    finally:
        logging.disable(logging.NOTSET)


@pytest.mark.parametrize("odd", ODD_SHAPES, ids=[json.dumps(o)[:30] for o in ODD_SHAPES])
def test_no_predicate_crashes_on_an_open_value_shape(
    odd: Any, reference_traces: list[tuple[dict[str, Any], dict[str, Any]]]
) -> None:
    for scenario, trace in reference_traces:
        for _, shaped in _reshaped(trace, odd):
            judge(scenario, shaped)  # a KitError fails the test


def test_program_outcomes_are_found_whatever_the_value_s_shape() -> None:
    outcomes = [{"ok": "text"}, {"error": {"toolName": "t", "message": "m"}}]
    assert program_outcomes({"logs": [], "result": outcomes}, 2) == outcomes  # the reference
    assert program_outcomes(outcomes, 2) == outcomes
    assert program_outcomes({"returned": outcomes, "calls": 2}, 2) == outcomes
    assert program_outcomes({"a": {"b": {"c": outcomes}}}, 2) == outcomes
    for other in ("text", None, 3, [1, 2], {"result": "flat"}, outcomes[:1], {"ok": 1}):
        assert program_outcomes(other, 2) is None
    assert program_outcomes([], 0) is None


def test_code_3_judges_the_program_s_value_in_another_shape() -> None:
    scenario = fixture("CODE-3/log-copy-only.json")
    trace = ReferenceAdapter().run(scenario)
    assert not failures(judge(scenario, trace, ["CODE-3"]), "CODE-3")
    result = trace["actions"][0]["result"]
    result["value"] = {"returned": [{"ok": "the log preview"}], "calls": 1}
    found = failures(judge(scenario, trace, ["CODE-3"]), "CODE-3")
    assert found and "the program must see the sub-call's own value" in found[0]


# ----------------------------------------------------------- non-JSON traces


class _RecordsItsOwnObjects(ReferenceAdapter):
    """The reference, behind an adapter that records an implementation object in the
    trace of every POST-1 scenario (as if it kept a decision object as it was)."""

    def run(self, scenario: Mapping[str, Any]) -> dict[str, Any]:
        trace = super().run(scenario)
        if str(scenario.get("id", "")).startswith(("rules/POST-1", "generated/POST-1")):
            trace["events"][0]["observed"] = object()
        return trace


def test_a_non_json_object_in_a_trace_is_a_malformed_trace_and_the_run_reports(
    tmp_path: Path,
) -> None:
    logging.disable(logging.CRITICAL)
    try:
        result = run_suite(
            _RecordsItsOwnObjects(), profile="quick", rules="POST-1", report_dir=tmp_path
        )
    finally:
        logging.disable(logging.NOTSET)
    assert not result.kit_errors
    (outcome,) = result.rules
    assert outcome.status == Status.ERROR
    error = outcome.errors[0]
    assert error.category == "malformed-trace"
    assert "object object at" in error.message and "$.events[0].observed" in error.message
    saved = result.case_file(error)
    assert saved is not None and json.loads(saved.read_text())["rule"] == "POST-1"
    paths = write_reports(result, tmp_path)
    report = json.loads(paths[0].read_text())
    assert {r["id"]: r["status"] for r in report["rules"]}["POST-1"] == "error"


def test_non_json_says_where() -> None:
    assert non_json({"a": [1, 2.5, "x", None, True], "b": {}}) is None
    assert non_json(({"a": 1},)) is None  # tuples and mappings are JSON enough
    found = non_json({"events": [{"observed": object()}]})
    assert found is not None and "$.events[0].observed" in found and "object" in found
    assert non_json({"x": float("nan")}) is not None
    cyclic: dict[str, Any] = {}
    cyclic["self"] = cyclic
    assert non_json(cyclic) == "a cycle at $.self"
    assert non_json({1: "x", "y": object()}) is not None


def test_a_counterexample_keeps_non_json_by_repr_and_stays_bounded() -> None:
    marker = object()
    case = {"rule": "FIN-4", "scenario": {"id": "s"}, "trace": {"events": [{"x": marker}]}}
    written = json.loads(counterexample_text(case))
    assert written["trace"]["events"][0]["x"] == repr(marker)
    huge = {"rule": "FIN-4", "scenario": {"id": "s"}, "trace": {"text": "x" * 5000}}
    written = json.loads(counterexample_text(huge, max_bytes=1000))
    assert written["trace"] is None and "larger than 1000 bytes" in written["traceOmitted"]
    assert written["scenario"] == {"id": "s"}
    assert "traceOmitted" not in json.loads(counterexample_text(huge))


# ------------------------------------------------ FIN-4's latitude in other rules


def _aborted_in_pre_execute(finalizer: list[dict[str, Any]]) -> dict[str, Any]:
    """The caller aborts while pre-execute runs, which then allows; ``finalizer`` is the
    tool's finalizeContent."""
    return s.scenario(
        "neutral/aborted-in-pre-execute",
        [s.tool("t", finalizeContent=finalizer)],
        [{"call": s.call("c0", "t", {})}],
        preExecute=[s.listener("policy", [{"abort": True}, {"return": {"kind": "allow"}}])],
        observers=[s.listener("log", [])],
    )


_THROWS = [{"throw": "finalizer broke"}]
_TOTAL = [{"return": None}]


def test_cancel_2_leaves_the_error_after_a_throwing_finalizer_to_fin_4() -> None:
    """A call cancelled in pre-execute whose finalizer throws: FIN-4 lets the registry publish
    an error of its own in place of ABORTED_BEFORE_DISPATCH (as dsh-tools does), in the
    pre-dispatch branch of CANCEL-2 as in its already-aborted one."""
    logging.disable(logging.CRITICAL)
    try:
        own_error = evaluate(
            VARIANTS["finalize-or-own-error"].build(), _aborted_in_pre_execute(_THROWS)
        )
    finally:
        logging.disable(logging.NOTSET)
    assert own_error.trace is not None
    result = own_error.trace["actions"][0]["result"]
    assert result["isError"] is True and "info" not in result["error"]  # no code at all
    assert failures(own_error.verdicts, "CANCEL-2") == []


def test_cancel_2_still_fails_its_mutants_around_a_throwing_finalizer() -> None:
    """The exemption excuses the code only: ABORTED where no body ran still fails where the
    finalizer is total, and with a throwing finalizer a body that ran, or a result that is
    no error, still fails."""
    logging.disable(logging.CRITICAL)
    try:
        aborted = evaluate(
            CATALOGUE["cancel.aborted-where-body-never-ran"].build(),
            _aborted_in_pre_execute(_TOTAL),
        )
        ran = evaluate(CATALOGUE["cancel.own-signal"].build(), _aborted_in_pre_execute(_THROWS))
    finally:
        logging.disable(logging.NOTSET)
    assert any("code=ABORTED," in m for m in failures(aborted.verdicts, "CANCEL-2"))
    said = failures(ran.verdicts, "CANCEL-2")
    assert any("the body must not run" in m for m in said), said
    assert any("isError=False" in m for m in said), said


# ---------------------------------------------------------- raised, not published


def test_fin_4_fails_when_execute_raises_after_a_throwing_finalizer() -> None:
    logging.disable(logging.CRITICAL)
    try:
        adapter = CATALOGUE["fin.finalizer-error-propagates"].build()
        result = run_suite(adapter, profile="quick", rules="FIN-4")
    finally:
        logging.disable(logging.NOTSET)
    (outcome,) = result.rules
    assert outcome.status == Status.FAIL
    assert "execute raised instead" in outcome.failures[0].message


def _raised(scenario: Mapping[str, Any], raised: str) -> dict[str, Any]:
    trace = ReferenceAdapter().run(scenario)
    trace["actions"][0] = {"raised": raised}
    return trace


@pytest.mark.parametrize(
    ("path", "rule_id"),
    [
        ("POST-4/throwing-post-listener.json", "POST-4"),
        ("POST-1/body-error-reaches-post.json", "POST-1"),
    ],
)
def test_a_raise_instead_of_the_required_result_fails_the_rule(path: str, rule_id: str) -> None:
    scenario = fixture(path)
    found = failures(judge(scenario, _raised(scenario, "RuntimeError: boom"), [rule_id]), rule_id)
    assert found and "raised instead: RuntimeError: boom" in found[0]
    deadline = _raised(scenario, "deadline of 5 s exceeded")  # a timeout is not an answer
    assert not failures(judge(scenario, deadline, [rule_id]), rule_id)


def test_code_3_fails_when_run_code_raises_after_a_throwing_log_listener() -> None:
    scenario = fixture("CODE-3/throwing-log-listener.json")
    trace = ReferenceAdapter().run(scenario)
    assert any(e.get("stage") == "code-dispatch-log" for e in trace["events"])
    trace["actions"][0] = {"raised": "RuntimeError: log store down"}
    found = failures(judge(scenario, trace, ["CODE-3"]), "CODE-3")
    assert found and "raised instead: RuntimeError: log store down" in found[0]
