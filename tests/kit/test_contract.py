"""Clause selection, contracts and the status ``difference``: judge an implementation by
what it promises.

A rule of this file's own (``TEST-1``, with two named clauses) shows the selection and the
classification without waiting for the predicates' clause tags; the broken registry of
the CLI tests (PRE-3 fails) shows them end to end, through every report format.
"""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conformance.adapters import load_adapter
from conformance.adapters.reference import ReferenceAdapter
from conformance.cli.main import main
from conformance.judging.contract import classify, load_contract
from conformance.judging.evaluate import judge
from conformance.judging.model import View
from conformance.judging.rule_sets import RULE_SETS
from conformance.judging.rules import RULES, Rule, Verdict
from conformance.reporting.classify import reclassified
from conformance.reporting.expectations import (
    Expectations,
    apply_expectations,
    check_against_run,
    check_assessments,
    load_expectations,
)
from conformance.reporting.report import write_reports
from conformance.running.outcomes import RunResult
from conformance.running.plan import select
from conformance.running.runner import run_suite
from conformance.scenario.schema import FixtureError, validate
from conformance.vocab import Status
from tests.kit.support import quiet
from tests.kit.test_html import parse

HERE = Path(__file__).resolve().parent
BROKEN = "python:tests.kit.broken_registry:adapter"  # PRE-3 fails (an ask nobody answers runs)
BROKEN_NAME = "asks-without-service"


# ------------------------------------------------------------- a rule of our own


def _test_1(view: View) -> Iterator[Verdict]:
    """TEST-1: every scenario breaks clause a and clause b, and holds as a whole."""
    yield Verdict(False, "x", "broke a", clause="a")
    yield Verdict(False, "y", "broke b", clause="b")
    yield Verdict(True, "z")


@pytest.fixture
def test_rule(monkeypatch: pytest.MonkeyPatch) -> str:
    rule = Rule("TEST-1", "a rule of the tests", _test_1, clauses={"a": "one", "b": "two"})
    monkeypatch.setitem(RULES, "TEST-1", rule)
    return "TEST-1"


def _contract(path: Path, promises: dict[str, Any], **extra: Any) -> Path:
    evidence = [{"kind": "docs", "quote": "we promise", "source": "README.md"}]
    document = {
        "implementation": extra.pop("implementation", BROKEN_NAME),
        "version": extra.pop("version", "0.1.0"),
        "basis": "its README",
        "promises": {
            rid: {"promise": f"{rid} holds", "evidence": evidence, **entry}
            for rid, entry in promises.items()
        },
        **extra,
    }
    path.write_text(json.dumps(document))
    return path


# ------------------------------------------------------------------- selection


def test_a_selection_names_rules_clauses_globs_and_sets(test_rule: str) -> None:
    assert select("TEST-1:a") == {"TEST-1": frozenset({"a"})}
    assert select("TEST-1:a,TEST-1:b") == {"TEST-1": frozenset({"a", "b"})}
    assert select("TEST-1:a+b") == {"TEST-1": frozenset({"a", "b"})}
    assert select("TEST-1:a,TEST-1") == {"TEST-1": None}  # the whole rule wins
    assert select("PRE-3,TEST-1:b") == {"PRE-3": None, "TEST-1": frozenset({"b"})}
    assert list(select("PRE-*")) == [r for r in RULES if r.startswith("PRE-")]
    assert set(select("portable")) == {r for r in RULE_SETS["portable"] if r in RULES}
    assert list(select(None)) == list(RULES)


@pytest.mark.parametrize(
    ("patterns", "says"),
    [
        ("TEST-1:c", "'c' is not a clause of TEST-1 (it declares: a, b)"),
        ("TEST-*:a", "needs one exact rule ID"),
        ("NOPE-1:a", "needs one exact rule ID"),
        ("TEST-1:", "ID:clause+clause"),
        ("TEST-1:a+", "ID:clause+clause"),
        ("PRE-3:a", "is not a clause of PRE-3"),
        ("NOPE-*", "matches no rule ID"),
        (" , ", "names no rule"),
    ],
)
def test_a_misspelt_selection_is_an_error(test_rule: str, patterns: str, says: str) -> None:
    with pytest.raises(ValueError, match=r".*") as caught:
        select(patterns)
    assert says in str(caught.value)


def test_a_rule_set_naming_a_clause_its_rule_lacks_is_an_error(
    test_rule: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(RULE_SETS, "odd", {"TEST-1": frozenset({"nope"})})  # type: ignore[index]
    with pytest.raises(ValueError, match="rule set 'odd': 'nope' is not a clause of TEST-1"):
        select("odd")


def test_every_named_set_names_clauses_its_rules_declare() -> None:
    for name, selection in RULE_SETS.items():
        for rid, clauses in selection.items():
            if rid in RULES and clauses is not None:
                assert clauses <= set(RULES[rid].clauses), (name, rid)


def test_judge_keeps_only_the_selected_clauses_and_the_whole_rule(test_rule: str) -> None:
    scenario = {"id": "x", "tools": [], "actions": []}
    trace: dict[str, Any] = {"registrations": [], "events": [], "actions": []}
    every = judge(scenario, trace, ["TEST-1"])["TEST-1"]
    assert [v.clause for v in every] == ["a", "b", None]
    only_b = judge(scenario, trace, {"TEST-1": frozenset({"b"})})["TEST-1"]
    assert [v.clause for v in only_b] == ["b", None]
    whole = judge(scenario, trace, {"TEST-1": None})["TEST-1"]
    assert whole == every


def test_the_runner_counts_only_the_selected_clauses(test_rule: str) -> None:
    with quiet():
        both = run_suite(ReferenceAdapter(), profile="quick", rules="TEST-1")
        only_b = run_suite(ReferenceAdapter(), profile="quick", rules="TEST-1:b")
    (whole,) = both.rules
    (part,) = only_b.rules
    assert whole.status == part.status == Status.FAIL
    assert whole.checks == 3 * both.scenarios and part.checks == 2 * only_b.scenarios
    assert {f.clause for f in whole.failures} == {"a", "b"}
    assert {f.clause for f in part.failures} == {"b"}
    assert all("broke b" in f.message and "broke a" not in f.message for f in part.failures)
    assert whole.clauses == ["a", "b"] and part.clauses == ["b"]
    assert part.to_json()["clauses"] == ["b"]
    assert part.to_json()["failures"][0]["clause"] == "b"
    validate(only_b.to_json(), "report")


# -------------------------------------------------------------------- contracts


def test_a_contract_classifies_by_rule_clause_and_scenario(tmp_path: Path, test_rule: str) -> None:
    contract = load_contract(
        _contract(
            tmp_path / "c.json",
            {
                "TEST-1": {"clauses": ["a"]},
                "PRE-3": {"except": [{"scenarios": "rules/PRE-3/*", "why": "odd fixture"}]},
            },
            notPromised={
                "PRE-2": {
                    "why": "it never denies",
                    "evidence": [{"kind": "docs", "quote": "no deny", "source": "x"}],
                }
            },
        )
    )
    assert classify(None, "PRE-2", None, "s").defect  # no contract: SPEC.md promises all
    assert classify(contract, "TEST-1", "a", "s").defect
    b = classify(contract, "TEST-1", "b", "s")
    assert not b.defect and b.why is not None and "clause 'b' of TEST-1 is not promised" in b.why
    whole = classify(contract, "TEST-1", None, "s")
    assert not whole.defect and whole.why is not None and "as a whole" in whole.why
    assert classify(contract, "PRE-3", None, "generated/PRE-3").defect
    excepted = classify(contract, "PRE-3", None, "rules/PRE-3/ask-without-approval-service")
    assert excepted.why is not None and "odd fixture" in excepted.why and not excepted.defect
    refused = classify(contract, "PRE-2", None, "s")
    assert refused.why == "PRE-2 is not promised by the contract: it never denies"
    assert not classify(contract, "PRE-4", None, "s").defect
    assert contract.promised("TEST-1") == ["a"] and contract.promised("PRE-3") is True
    assert contract.promised("PRE-4") is False


def _bad(tmp_path: Path, change: Any) -> Path:
    path = _contract(tmp_path / "c.json", {"PRE-3": {}})
    document = json.loads(path.read_text())
    change(document)
    path.write_text(json.dumps(document))
    return path


@pytest.mark.parametrize(
    ("change", "where", "says"),
    [
        (lambda d: d["promises"]["PRE-3"].update(evidence=[]), "$.promises.PRE-3.evidence", ""),
        (lambda d: d["promises"]["PRE-3"].pop("evidence"), "$.promises.PRE-3", "evidence"),
        (
            lambda d: d["promises"]["PRE-3"]["evidence"][0].update(kind="hearsay"),
            "$.promises.PRE-3.evidence[0].kind",
            "",
        ),
        (
            lambda d: d["promises"].update({"NOPE-1": d["promises"]["PRE-3"]}),
            "$.promises.NOPE-1",
            "not a rule ID",
        ),
        (
            lambda d: d["promises"]["PRE-3"].update(clauses=["frozen"]),
            "$.promises.PRE-3.clauses[0]",
            "'frozen' is not a clause of PRE-3",
        ),
        (
            lambda d: d.update(
                notPromised={"PRE-3": {"why": "w", "evidence": d["promises"]["PRE-3"]["evidence"]}}
            ),
            "$.notPromised.PRE-3",
            "promised as a whole",
        ),
        (lambda d: d.update(basis="two\nlines"), "$.basis", ""),
        (lambda d: d.pop("version"), "$", "version"),
        (
            lambda d: d["promises"]["PRE-3"].update(**{"except": [{"scenarios": "x"}]}),
            "$.promises.PRE-3.except[0]",
            "why",
        ),
    ],
)
def test_a_malformed_contract_names_the_file_and_the_json_path(
    tmp_path: Path, change: Any, where: str, says: str
) -> None:
    path = _bad(tmp_path, change)
    with pytest.raises(FixtureError) as caught:
        load_contract(path)
    assert caught.value.source == str(path) and caught.value.path == where
    assert says in caught.value.message


def test_run_refuses_a_malformed_contract_with_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _bad(tmp_path, lambda d: d["promises"]["PRE-3"].update(evidence=[]))
    assert main(["run", "--rules", "PRE-3", "-q", "--contract", str(path)]) == 2
    err = capsys.readouterr().err
    assert str(path) in err and "$.promises.PRE-3.evidence" in err
    write_reports(_result("fail"), tmp_path / "out")
    fixture = Path(RULES["PRE-3"].check.__code__.co_filename).parents[2] / "fixtures" / "rules"
    case = next((fixture / "PRE-3").glob("*.json"))
    for command in (["replay", str(case)], ["render", str(tmp_path / "out" / "report.json")]):
        assert main([*command, "--contract", str(tmp_path / "missing.json")]) == 2
        assert "missing.json" in capsys.readouterr().err


# ------------------------------------------------------- difference, end to end


def _run(tmp_path: Path, contract: Path | None, *extra: str) -> tuple[int, Path]:
    report = tmp_path / "report"
    argv = ["run", "--adapter", BROKEN, "--profile", "quick", "--rules", "PRE-3", "-q"]
    argv += ["--report", str(report), "-j", "1", *extra]
    if contract is not None:
        argv += ["--contract", str(contract)]
    return main(argv), report


def test_an_unpromised_failure_is_a_difference_in_every_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    contract = _contract(tmp_path / "c.json", {"PRE-2": {}})
    code, report = _run(tmp_path, contract)
    out = capsys.readouterr().out
    assert code == 0  # a difference never makes the run non-conformant
    assert (
        "PRE-3  difference (not a defect)" in out and "1 difference from DSH, not a defect" in out
    )
    document = json.loads((report / "report.json").read_text())
    validate(document, "report")
    assert document["conformant"] is True
    assert document["contract"]["file"] == str(contract)
    (rule,) = document["rules"]
    assert rule["status"] == "difference" and rule["promised"] is False
    kinds = {f["kind"] for f in rule["failures"]}
    assert kinds == {"difference"}
    assert all(f["why"] == "PRE-3 is not promised by the contract" for f in rule["failures"])
    # the property hunts differences of a rule nothing is promised of: shown shrunk too
    assert "generated/PRE-3" in {f["scenario"] for f in rule["failures"]}

    markdown = (report / "report.md").read_text()
    section = markdown.split("## Differences from DSH")[1]
    assert "### PRE-3 (difference)" in section and "not a defect" in section
    assert "### PRE-3 (" not in markdown.split("## Differences from DSH")[0]
    assert "| PRE | 0 | 0 | 1 | 0 |" in markdown

    (case,) = [c for c in ET.parse(report / "junit.xml").getroot().iter("testcase")]
    assert [child.tag for child in case] == ["system-out"]  # passed, not a <failure>
    assert (case.findtext("system-out") or "").startswith("difference from DSH, not a defect")

    tree = parse((report / "report.html").read_text())
    assert not tree.root.all("finding")
    (card,) = tree.root.all("difference")
    assert card.attrs["data-rules"] == "PRE-3" and card.all("timeline")
    page = (report / "report.html").read_text()
    assert "defect" not in "".join(n.text for n in card.every()).replace("not a defect", "")
    assert page.index("<h2>Defects</h2>") < page.index('id="differences"')
    assert f"<title>Conformance report: {BROKEN_NAME} " in page
    (row,) = tree.root.all("rule")
    assert row.attrs["data-status"] == "difference" and row.attrs["data-failing"] == "true"


def test_a_promised_failure_is_a_defect_and_fails_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    contract = _contract(tmp_path / "c.json", {"PRE-3": {}})
    code, report = _run(tmp_path, contract)
    assert code == 1
    (rule,) = json.loads((report / "report.json").read_text())["rules"]
    assert rule["status"] == "fail" and rule["promised"] is True
    assert {f["kind"] for f in rule["failures"]} == {"fail"}
    tree = parse((report / "report.html").read_text())
    assert [c.attrs["data-rules"] for c in tree.root.all("finding")] == ["PRE-3"]
    assert not tree.root.all("difference")
    capsys.readouterr()


def test_an_excepted_scenario_is_a_difference_while_the_rest_stays_a_defect(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    excepted = {"except": [{"scenarios": "rules/*", "why": "the fixtures ask what it lacks"}]}
    contract = _contract(tmp_path / "c.json", {"PRE-3": excepted})
    code, report = _run(tmp_path, contract)
    assert code == 1  # the generated scenarios still break the promise
    (rule,) = json.loads((report / "report.json").read_text())["rules"]
    assert rule["status"] == "fail"
    by_kind = {(f["kind"], f["scenario"].split("/")[0]) for f in rule["failures"]}
    assert ("fail", "generated") in by_kind and ("difference", "rules") in by_kind
    assert ("fail", "rules") not in by_kind
    markdown = (report / "report.md").read_text()
    assert "the fixtures ask what it lacks" in markdown.split("## Differences from DSH")[1]
    tree = parse((report / "report.html").read_text())
    assert len(tree.root.all("finding")) == len(tree.root.all("difference")) == 1
    capsys.readouterr()


def test_a_parallel_run_classifies_as_one_process_does(tmp_path: Path) -> None:
    from tests.kit.broken_registry import adapter as broken

    contract = load_contract(_contract(tmp_path / "c.json", {"PRE-2": {}}))
    results = []
    for jobs in (1, 2):
        with quiet():
            results.append(
                run_suite(
                    broken(),
                    profile="quick",
                    rules="PRE-3",
                    jobs=jobs,
                    adapter_spec=BROKEN,
                    load=load_adapter,
                    contract=contract,
                )
            )
    assert results[1].jobs == 2
    one, two = ([r.to_json() for r in result.rules] for result in results)
    assert two == one and one[0]["status"] == "difference"


def test_without_a_contract_nothing_changes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, report = _run(tmp_path, None)
    assert code == 1
    document = json.loads((report / "report.json").read_text())
    assert "contract" not in document
    (rule,) = document["rules"]
    assert rule["status"] == "fail" and "promised" not in rule
    assert {f["kind"] for f in rule["failures"]} == {"fail"}
    markdown = (report / "report.md").read_text()
    assert "None: no contract was given" in markdown.split("## Differences from DSH")[1]
    capsys.readouterr()


def test_an_error_stays_an_error_under_a_contract(tmp_path: Path) -> None:
    """An implementation that crashes is not a difference."""
    harness = HERE.parent / "transport" / "fake_harness.py"
    crashing = f"stdio:{sys.executable} {harness} crash-always"
    contract = _contract(tmp_path / "c.json", {"PRE-2": {}}, implementation="fake")
    code, report = _run(tmp_path, contract, "--adapter", crashing)
    assert code == 1
    (rule,) = json.loads((report / "report.json").read_text())["rules"]
    assert rule["status"] in ("error", "timeout")


# ------------------------------------------------------------ render, compare


def test_render_and_compare_classify_an_old_report_by_a_contract(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, report = _run(tmp_path, None)
    assert code == 1
    document = json.loads((report / "report.json").read_text())
    contract_path = _contract(tmp_path / "c.json", {"PRE-2": {}})
    again = reclassified(document, load_contract(contract_path))
    validate(again, "report")
    assert again["conformant"] is True and again["rules"][0]["status"] == "difference"
    assert document["rules"][0]["status"] == "fail"  # a copy: the report is untouched

    out = tmp_path / "r.md"
    argv = ["render", str(report / "report.json"), "--contract", str(contract_path)]
    assert main([*argv, "-o", str(out)]) == 0
    assert "### PRE-3 (difference)" in out.read_text()
    assert main([*argv, "--html", "-o", str(tmp_path / "r.html")]) == 0
    assert parse((tmp_path / "r.html").read_text()).root.all("difference")

    md = tmp_path / "cmp.md"
    assert main(["compare", str(report), "-o", str(md)]) == 0
    assert "**[defect](" in md.read_text()
    assert main(["compare", str(report), "-o", str(md), "--contract", str(contract_path)]) == 0
    text = md.read_text()
    assert "[difference](" in text and "**[difference]" not in text and "defect](" not in text
    html = tmp_path / "cmp.html"
    argv = ["compare", str(report), "--html", str(html), "--contract", str(contract_path)]
    assert main([*argv, "-o", str(md)]) == 0
    cells = [n for n in parse(html.read_text()).root.every() if "cell" in n.classes]
    assert [c.attrs["data-status"] for c in cells] == ["difference"]
    capsys.readouterr()


def test_compare_lists_a_difference_coming_and_going_apart(tmp_path: Path) -> None:
    from conformance.reporting.compare import compare
    from tests.kit.test_compare import fail, outcome, report

    one = report(tmp_path / "v1", "1", [outcome("PRE-1", "pass"), outcome("PRE-2", "pass")])
    difference = outcome("PRE-1", "difference", differences=[fail()])
    defect = outcome("PRE-2", "fail", failures=[fail()])
    two = report(tmp_path / "v2", "2", [difference, defect])
    ((_, _, changes),) = compare([str(one), str(two)]).changes
    assert {c.rule: c.kind for c in changes} == {
        "PRE-1": "difference-changed",
        "PRE-2": "regressed",
    }


# ------------------------------------------------------------------- --expect


def _result(status: str, **kw: Any) -> RunResult:
    from conformance.seam.adapter import AdapterInfo
    from tests.kit.test_compare import fail, outcome

    failures = [fail()]
    rule = outcome("PRE-3", status, **kw)
    if status == "difference":
        rule.differences = failures
    elif status == "fail":
        rule.failures = failures
    return RunResult(
        implementation=AdapterInfo("impl", "1", "python", frozenset()),
        profile="ci",
        seed=None,
        rules=[rule],
        kit_errors=[],
        duration_s=0.0,
        scenarios=1,
    )


@pytest.mark.parametrize(
    ("listed", "status", "conformant", "note"),
    [
        ("difference", "difference", True, None),  # as listed
        (None, "difference", True, "a difference not listed"),  # new: a note
        ("difference", "pass", True, "passes now"),  # vanished: a note
        ("fail", "difference", True, "now a difference"),  # a defect became one: a note
        ("difference", "fail", False, "a defect"),  # a new defect still fails
        ("difference", "error", False, "ended in error"),
    ],
)
def test_expect_never_fails_on_a_difference_but_on_a_new_defect(
    listed: str | None, status: str, conformant: bool, note: str | None
) -> None:
    result = _result(status)
    expected = {"PRE-3": {"status": listed}} if listed else {}
    hints = apply_expectations(result, Expectations("impl", expected, "expect.json"))
    assert result.conformant is conformant
    if note is None:
        assert hints == []
    else:
        (hint,) = hints
        assert note in hint


def test_update_expect_lists_differences(tmp_path: Path) -> None:
    from conformance.reporting.expectations import updated_expectations

    written = updated_expectations(_result("difference"), None)
    assert written.expected["PRE-3"]["status"] == "difference"
    validate(written.to_json(), "expect")


def test_old_assessment_words_are_read_as_difference_with_a_note(tmp_path: Path) -> None:
    path = tmp_path / "expect.json"
    entries = {
        "PRE-3": {"status": "fail", "assessment": "likely-defect"},
        "PRE-2": {"status": "fail", "assessment": "documented-choice"},
        "PRE-4": {"status": "fail", "assessment": "defect", "tracker": "https://t/1"},
    }
    path.write_text(json.dumps({"implementation": "impl", "expected": entries}))
    loaded = load_expectations(path)
    assert loaded.expected["PRE-3"]["assessment"] == "difference"
    assert loaded.expected["PRE-2"]["assessment"] == "difference"
    assert loaded.expected["PRE-4"]["assessment"] == "defect"
    (note,) = loaded.deprecations
    assert "'likely-defect': PRE-3" in note and "'documented-choice': PRE-2" in note
    result = _result("fail")
    apply_expectations(result, loaded)
    assert note in result.notes


def _entries(**entry: Any) -> Expectations:
    return Expectations("impl", {"PRE-3": {"status": "fail", **entry}}, "expect.json")


def test_a_defect_needs_a_contract_quote_a_tracker_or_stated_intent(tmp_path: Path) -> None:
    quote = {"quote": "q", "source": "s"}
    with pytest.raises(FixtureError, match="needs evidence") as caught:
        check_assessments(_entries(assessment="defect", evidence=quote), None)
    assert caught.value.path == "$.expected.PRE-3.assessment"
    with pytest.raises(FixtureError, match="needs evidence"):
        check_assessments(_entries(assessment="defect", evidence={**quote, "kind": "docs"}), None)
    check_assessments(_entries(assessment="defect", tracker="https://t/1"), None)
    check_assessments(_entries(assessment="defect", evidence={**quote, "kind": "tracker"}), None)
    check_assessments(_entries(assessment="defect", evidence={**quote, "kind": "intent"}), None)
    check_assessments(_entries(assessment="difference"), None)  # a difference needs nothing

    promising = load_contract(_contract(tmp_path / "c.json", {"PRE-3": {}}))
    check_assessments(_entries(assessment="defect"), promising)  # the contract quote
    silent = load_contract(_contract(tmp_path / "d.json", {"PRE-2": {}}))
    with pytest.raises(FixtureError, match="never called a defect"):
        check_assessments(_entries(assessment="defect", tracker="https://t/1"), silent)


def test_a_defect_on_a_rule_the_run_found_a_difference_is_refused() -> None:
    with pytest.raises(FixtureError, match="is a difference in this run"):
        check_against_run(_entries(assessment="defect"), _result("difference"))
    assert check_against_run(_entries(assessment="defect"), _result("fail")) == []
    assert check_against_run(_entries(assessment="difference"), _result("difference")) == []
    judged = _result("fail")
    judged.contract = {"file": "c.json", "implementation": "impl", "version": "1", "basis": "b"}
    (note,) = check_against_run(_entries(assessment="difference"), judged)
    assert "assessed 'difference'" in note and "a defect by that contract" in note


# ---------------------------------------------------------------------- publish


def test_publish_classifies_by_dir_contract_json_and_keeps_what_people_wrote(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "impl"
    out.mkdir()
    _contract(out / "contract.json", {"PRE-2": {}})
    written = {
        "status": "difference",
        "requires": "an ask nobody can answer is a denial",
        "does": "runs the call",
        "assessment": "difference",
        "upstream": "worth raising upstream",
        "note": "it runs a call nobody approved",
    }
    (out / "expect.json").write_text(
        json.dumps({"implementation": BROKEN_NAME, "expected": {"PRE-3": written}})
    )
    argv = ["publish", "--adapter", BROKEN, "--dir", str(out), "--profile", "quick"]
    assert main([*argv, "--rules", "PRE-3", "-q"]) == 0
    printed = capsys.readouterr().out
    assert "differences from DSH (not defects): PRE-3" in printed
    report = json.loads((out / "report.json").read_text())
    validate(report, "report")
    assert report["contract"]["file"] == "contract.json"
    assert report["rules"][0]["status"] == "difference"
    expect = json.loads((out / "expect.json").read_text())
    validate(expect, "expect")
    entry = expect["expected"]["PRE-3"]
    assert entry["status"] == "difference" and entry["counterexample"] == "cases/PRE-3.json"
    assert {k: entry[k] for k in written} == written  # kept across republishing
    assert (out / "cases" / "PRE-3.json").is_file()
    readme = (out / "README.md").read_text()
    differing = readme.split("## Findings: differences from DSH")[1]
    assert "### PRE-3" in differing and "Worth raising upstream:** it runs a call" in differing
    assert "--contract" in readme  # the gate command judges by the same contract
    page = parse((out / "report.html").read_text())
    (card,) = page.root.all("difference")
    assert "Worth raising upstream" in "".join(n.text for n in card.every())

    # the gate: a later run with the same contract and expect file
    gate = ["run", "--adapter", BROKEN, "--profile", "quick", "--rules", "PRE-3", "-q"]
    gate += ["--contract", str(out / "contract.json"), "--expect", str(out / "expect.json")]
    assert main(gate) == 0
    # a replay still reproduces, and says it is a difference
    capsys.readouterr()
    replay = ["replay", str(out / "cases" / "PRE-3.json"), "--adapter", BROKEN]
    assert main([*replay, "--contract", str(out / "contract.json"), "--expect-fail"]) == 0
    assert "still DIFFERS from DSH (not a defect)" in capsys.readouterr().out

    # a defect written on it is refused before the run, and nothing is rewritten
    entry["assessment"] = "defect"
    (out / "expect.json").write_text(json.dumps(expect))
    assert main([*argv, "--rules", "PRE-3", "-q"]) == 2
    assert "never called a defect" in capsys.readouterr().err
    assert json.loads((out / "expect.json").read_text()) == expect


def test_a_replayed_case_keeps_the_clauses_it_was_judged_on(
    tmp_path: Path, test_rule: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with quiet():
        result = run_suite(
            ReferenceAdapter(), profile="quick", rules="TEST-1:b", report_dir=tmp_path
        )
    case = result.case_file(result.rules[0].failures[0])
    assert case is not None
    assert json.loads(case.read_text())["clauses"] == ["b"]
    assert main(["replay", str(case)]) == 1
    shown = capsys.readouterr().out
    assert "TEST-1, clauses b" in shown and "broke b" in shown and "broke a" not in shown


def test_write_reports_of_a_synthetic_difference_validate(tmp_path: Path) -> None:
    result = _result("difference")
    result.contract = {"file": "c.json", "implementation": "impl", "version": "1", "basis": "b"}
    write_reports(result, tmp_path)
    validate(json.loads((tmp_path / "report.json").read_text()), "report")


def test_rules_lists_the_clauses_a_selection_may_name(
    test_rule: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["rules", "--rules", "TEST-1:a"]) == 0
    out = capsys.readouterr().out
    assert "  TEST-1:a  one\n" in out and "  TEST-1:b  two (not selected)\n" in out
    assert main(["rules", "--rules", "TEST-1:zz"]) == 2
