"""report.json (validated against its schema), report.md and junit.xml."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from conformance.cli.main import main
from conformance.reporting.report import write_reports
from conformance.running.outcomes import Failure, RuleOutcome, RunResult
from conformance.scenario.schema import validate
from conformance.seam.adapter import AdapterInfo

HERE = Path(__file__).resolve().parent


def junit_cases(path: Path) -> dict[str, ET.Element]:
    root = ET.parse(path).getroot()
    return {case.get("name", ""): case for case in root.iter("testcase")}


def test_a_reference_run_writes_a_report_matching_its_schema(tmp_path: Path) -> None:
    assert (
        main(["run", "--profile", "quick", "--rules", "PRE-3", "-q", "--report", str(tmp_path)])
        == 0
    )
    report = json.loads((tmp_path / "report.json").read_text())
    validate(report, "report", "report.json")
    assert report["conformant"] is True and report["kitErrors"] == []
    assert report["implementation"]["name"] == "reference"
    (rule,) = report["rules"]
    assert rule["id"] == "PRE-3" and rule["status"] == "pass" and rule["checks"] > 0
    case = junit_cases(tmp_path / "junit.xml")["PRE-3"]
    assert case.get("classname") == "PRE" and list(case) == []
    assert "## PRE" in (tmp_path / "report.md").read_text()


def test_a_failing_run_reports_failures_with_counterexample_paths(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(HERE))
    argv = ["run", "--profile", "quick", "--rules", "PRE-3", "-q", "--report", str(tmp_path)]
    assert main([*argv, "--adapter", "python:broken_registry:adapter"]) == 1
    report = json.loads((tmp_path / "report.json").read_text())
    validate(report, "report", "report.json")
    (rule,) = report["rules"]
    assert rule["status"] == "fail"
    paths = [f["counterexample"] for f in rule["failures"]]
    # relative to the report directory, the one base a report's case paths have
    assert paths and all(not Path(p).is_absolute() and (tmp_path / p).is_file() for p in paths)
    failure = junit_cases(tmp_path / "junit.xml")["PRE-3"].find("failure")
    assert failure is not None and paths[0] in (failure.text or "")
    markdown = (tmp_path / "report.md").read_text()
    assert "NOT CONFORMANT" in markdown and paths[0] in markdown


def synthetic() -> RunResult:
    def outcome(rid: str, status: str, **kw: object) -> RuleOutcome:
        o = RuleOutcome(rid, f"title of {rid}", rid.split("-")[0], status=status)
        for key, value in kw.items():
            setattr(o, key, value)
        return o

    failure = Failure("c1: the body ran", "generated/X", "out/counterexamples/X.json")
    return RunResult(
        implementation=AdapterInfo("impl", "1.2", "rust", frozenset({"approval"})),
        profile="ci",
        seed=7,
        rules=[
            outcome("PRE-1", "pass", checks=4),
            outcome("PRE-2", "fail", checks=2, failures=[failure]),
            outcome("PRE-3", "error", errors=[Failure("an action raised: boom", "s", None)]),
            outcome("FIN-1", "timeout", timeouts=[failure]),
            outcome("FIN-2", "not-applicable", reason="needs capability scopes"),
            outcome("FIN-3", "untested", reason="an obligation on tool authors"),
            outcome("FIN-4", "not-exercised", reason="no scenario met the rule's premise"),
            outcome(
                "RES-1",
                "expected-fail",
                failures=[failure],
                expected={"status": "fail", "reason": "known"},
                reason="known",
            ),
            outcome(
                "RES-2",
                "unexpected-pass",
                checks=3,
                expected={"status": "fail"},
                reason="listed but passed",
            ),
        ],
        kit_errors=["predicate RES-3 crashed on scenario 'x': KeyError: 'y'"],
        duration_s=1.5,
        scenarios=12,
    )


def test_every_status_maps_onto_the_schema_markdown_and_junit(tmp_path: Path) -> None:
    result = synthetic()
    write_reports(result, tmp_path, expect_file="expect.json")
    report = json.loads((tmp_path / "report.json").read_text())
    validate(report, "report", "report.json")
    assert report["expectFile"] == "expect.json" and report["conformant"] is False
    assert report["kitErrors"] == result.kit_errors

    cases = junit_cases(tmp_path / "junit.xml")
    kinds = {name: [child.tag for child in case] for name, case in cases.items()}
    assert kinds["PRE-1"] == []
    assert kinds["PRE-2"] == ["failure"]
    assert kinds["PRE-3"] == ["error"] and kinds["FIN-1"] == ["error"]
    assert kinds["FIN-2"] == ["skipped"] and kinds["FIN-3"] == ["skipped"]
    assert "tool authors" in (cases["FIN-3"].find("skipped").get("message") or "")  # type: ignore[union-attr]
    assert kinds["FIN-4"] == ["failure"]  # not exercised under ci fails the run
    assert kinds["RES-2"] == ["failure"]
    assert kinds["kit-errors"] == ["error"]
    assert cases["PRE-2"].get("classname") == "PRE"

    markdown = (tmp_path / "report.md").read_text()
    for heading in ("## PRE", "## FIN", "## RES", "## Kit errors"):
        assert heading in markdown
    assert "out/counterexamples/X.json" in markdown
    assert "KeyError" in markdown.split("## Kit errors")[1]


def test_a_report_with_an_unknown_status_does_not_validate() -> None:
    from conformance.scenario.schema import FixtureError

    report = synthetic().to_json()
    report["rules"][0]["status"] = "flaky"
    with pytest.raises(FixtureError, match=r"\$\.rules\[0\]\.status"):
        validate(report, "report")


def test_render_rebuilds_report_md_from_report_json_and_adds_findings(tmp_path: Path) -> None:
    report = tmp_path / "report"
    main(["run", "--profile", "quick", "--rules", "PRE-1,PRE-2", "-q", "--report", str(report)])
    rendered = tmp_path / "rendered.md"
    assert main(["render", str(report / "report.json"), "-o", str(rendered)]) == 0
    assert rendered.read_text() == (report / "report.md").read_text()

    cases = tmp_path / "impl"
    cases.mkdir()
    expect = cases / "expect.json"
    entry = {
        "status": "fail",
        "requires": "what the spec says",
        "does": "what it does",
        "assessment": "documented-choice",
        "evidence": {"quote": "We do it on purpose.", "source": "README.md"},
        "counterexample": "cases/PRE-1.json",
    }
    expect.write_text(json.dumps({"implementation": "x", "expected": {"PRE-1": entry}}))
    assert (
        main(["render", str(report / "report.json"), "--expect", str(expect), "-o", str(rendered)])
        == 0
    )
    text = rendered.read_text()
    assert "## Findings" in text and "> We do it on purpose." in text
    assert "replay impl/cases/PRE-1.json" in text  # relative to the output file


def test_the_markdown_groups_findings_by_root_cause_as_the_page_does(tmp_path: Path) -> None:
    from conformance.reporting.cases import load_cases
    from conformance.reporting.html import finding_anchors
    from conformance.reporting.report import (
        all_failures,
        report_json,
        report_markdown,
        root_causes_markdown,
    )
    from tests.kit.test_cases import _case

    result = synthetic()
    for outcome in result.rules:  # the runner's form: relative to the report directory
        for _, failure in all_failures(outcome):
            if failure.counterexample:
                failure.counterexample = "counterexamples/X.json"
    (tmp_path / "counterexamples").mkdir()
    (tmp_path / "counterexamples" / "X.json").write_text(json.dumps(_case()))
    result.report_dir = tmp_path
    lines = root_causes_markdown(result)
    loaded = RunResult.from_json(report_json(result))  # report.json -> the same model
    cases = load_cases(loaded, None, tmp_path, None, tmp_path).cases
    anchors = finding_anchors(loaded, None, cases)
    by_card: dict[str, list[str]] = {}
    for rid, names in anchors.items():
        for name in names:
            by_card.setdefault(name, []).append(rid)
    shared = by_card[anchors["PRE-2"][0]]
    assert {"FIN-1", "PRE-2"} <= set(shared)  # one counterexample: one root cause
    line = next(line for line in lines if "PRE-2" in line)
    assert " + ".join(shared) in line and "scenario `generated/PRE-2`" in line
    assert lines[0] == "## Defects by root cause"
    assert len([x for x in lines if x[:1].isdigit()]) == len(by_card)
    assert "\n".join(lines) in report_markdown(result)
    result.report_dir = None  # without the cases: the same file still joins them
    assert any("PRE-2" in x and "FIN-1" in x for x in root_causes_markdown(result))


def test_every_published_report_json_is_the_model_it_loads_into() -> None:
    """report.json -> RunResult (the one loader) -> report.json gives back every key."""
    reports = sorted((Path(__file__).resolve().parents[2] / "docs").glob("**/report.json"))
    assert len(reports) >= 10
    for path in reports:
        document = json.loads(path.read_text(encoding="utf-8"))
        assert RunResult.read(path).to_json() == document, path
