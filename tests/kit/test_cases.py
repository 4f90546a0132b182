"""The counterexample case format (fixtures/schema/case.schema.json): validated where a
case is written and read, named by a path relative to the report (or expect file) that
names it, every published case valid and every published report's cases found."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance.cli.main import load_case
from conformance.reporting.cases import load_cases
from conformance.reporting.expectations import load_expectations
from conformance.running.outcomes import Failure, RuleOutcome, RunResult
from conformance.scenario import strategies as s
from conformance.scenario.cases import case_path, case_text, read_case
from conformance.scenario.schema import SCHEMA_DIR, FixtureError
from conformance.seam.adapter import AdapterInfo

DOCS = SCHEMA_DIR.parents[2] / "docs"
PUBLISHED = sorted(p.parent for p in (DOCS / "implementations").glob("**/report.json"))


def _case() -> dict[str, object]:
    return {
        "rule": "PRE-2",
        "kit": {"name": "toolreg-conformance", "version": "0"},
        "implementation": {"name": "x", "version": "1", "language": "python", "capabilities": []},
        "required": ["c0: the body ran"],
        "scenario": s.scenario(
            "generated/PRE-2", [s.tool("t")], [{"call": s.call("c0", "t", {}, agent="main")}]
        ),
        "trace": {"registrations": [], "actions": [], "events": []},
    }


def test_a_case_path_has_one_base_and_an_earlier_runners_path_one_explicit_rule() -> None:
    base = Path("/reports/run")
    assert case_path(base, "cases/PRE-2.json") == base / "cases/PRE-2.json"
    assert case_path(base, "counterexamples/X.json") == base / "counterexamples/X.json"
    # an earlier runner wrote <its report dir>/counterexamples/<name> as its cwd saw it
    assert case_path(base, "out/counterexamples/X.json") == base / "counterexamples/X.json"
    assert case_path(base, "/tmp/o/counterexamples/X.json") == base / "counterexamples/X.json"
    assert case_path(base, "elsewhere/X.json") == base / "elsewhere/X.json"  # no guessing


def test_a_case_is_checked_where_it_is_written_and_read(tmp_path: Path) -> None:
    good = _case()
    path = tmp_path / "PRE-2.json"
    path.write_text(case_text(good, str(path)), encoding="utf-8")
    assert read_case(path)["rule"] == "PRE-2"
    broken = {k: v for k, v in good.items() if k != "kit"}
    with pytest.raises(FixtureError) as e:
        case_text(broken, str(path))
    assert str(path) in str(e.value) and "kit" in str(e.value)
    bad_pointer = {**good, "pointers": [{"subject": "c0", "call": None, "events": [-1]}]}
    path.write_text(json.dumps(bad_pointer), encoding="utf-8")
    with pytest.raises(FixtureError) as e:
        read_case(path)
    assert e.value.path == "$.pointers[0].events[0]"
    with pytest.raises(FixtureError):  # replay reads the same format
        load_case(str(path))


def test_load_cases_reads_the_reports_paths_from_its_directory_and_lists_bad_ones(
    tmp_path: Path,
) -> None:
    report_dir, expect_dir = tmp_path / "report", tmp_path / "expect"
    (report_dir / "counterexamples").mkdir(parents=True)
    (expect_dir / "cases").mkdir(parents=True)
    (report_dir / "counterexamples" / "A.json").write_text(json.dumps(_case()))
    (report_dir / "counterexamples" / "B.json").write_text(json.dumps({"rule": "PRE-2"}))
    (expect_dir / "cases" / "C.json").write_text(json.dumps(_case()))
    failures = [Failure("m", "s", f"counterexamples/{n}.json") for n in "AB"]
    rule = RuleOutcome("PRE-2", "t", "PRE", status="fail", failures=failures)
    info = AdapterInfo("x", "1", "python", frozenset())
    result = RunResult(info, "ci", None, [rule], [], 0.0, 1)
    expect = {"expected": {"PRE-2": {"counterexample": "cases/C.json"}}}
    files = load_cases(result, expect, report_dir, expect_dir, tmp_path)
    assert list(files.cases) == ["counterexamples/A.json", "cases/C.json"]
    assert files.links["cases/C.json"] == "expect/cases/C.json"
    assert files.missing["counterexamples/B.json"].startswith("not a case: $: ")
    # each path has its one base: from another directory none of them is found
    moved = load_cases(result, expect, tmp_path, tmp_path, tmp_path)
    assert not moved.cases and len(moved.missing) == 3


def test_every_published_case_is_valid() -> None:
    files = [*DOCS.glob("implementations/**/cases/*.json"), *DOCS.glob("spec/*/*.json")]
    assert len(files) > 100
    for path in files:
        read_case(path)


@pytest.mark.parametrize("directory", PUBLISHED, ids=lambda p: p.name)
def test_every_published_reports_cases_resolve(directory: Path) -> None:
    result = RunResult.read(directory / "report.json")
    expect_path = directory / "expect.json"
    expect = load_expectations(str(expect_path)).to_json() if expect_path.exists() else None
    files = load_cases(result, expect, directory, directory, directory)
    assert files.cases and not files.missing, files.missing
