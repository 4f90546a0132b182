"""toolreg-conformance compare: rules x reports, the changes between releases first."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance.cli.main import main
from conformance.reporting.compare import CHANGES, KIND_ORDER, compare, comparison_markdown
from conformance.reporting.report import write_reports
from conformance.running.outcomes import Failure, RuleOutcome, RunResult
from conformance.scenario.schema import FixtureError, validate
from conformance.seam.adapter import AdapterInfo


def outcome(rid: str, status: str, **kw: object) -> RuleOutcome:
    o = RuleOutcome(rid, f"title of {rid}", rid.split("-")[0], status=status)
    for key, value in kw.items():
        setattr(o, key, value)
    return o


def fail(case: str | None = "cases/X.json", category: str | None = None) -> Failure:
    return Failure("c0: it broke", "generated/X", case, category)


def report(directory: Path, version: str, rules: list[RuleOutcome], name: str = "impl") -> Path:
    result = RunResult(
        implementation=AdapterInfo(name, version, "typescript", frozenset()),
        profile="ci",
        seed=1,
        rules=rules,
        kit_errors=[],
        duration_s=1.0,
        scenarios=10,
    )
    write_reports(result, directory)
    validate(json.loads((directory / "report.json").read_text()), "report", "report.json")
    return directory


def releases(tmp_path: Path) -> list[str]:
    """Two releases: every kind of change once, and rules that do not change."""
    one = report(
        tmp_path / "v1",
        "1",
        [
            outcome("PRE-1", "fail", failures=[fail()]),  # fixed
            outcome("PRE-2", "pass"),  # regressed
            outcome("PRE-3", "fail", failures=[fail()]),  # fail -> error
            outcome("PRE-4", "error", errors=[fail(None, "adapter-raised")]),  # category changed
            outcome("PRE-5", "pass"),  # no longer judged
            outcome("PRE-6", "not-applicable", reason="needs scopes"),  # now judged
            outcome("PRE-7", "pass"),  # the later run did not select it
            outcome("PRE-8", "fail", failures=[fail()]),  # unchanged, but expected later
            outcome("GUARD-1", "untested", reason="an obligation"),  # unchanged
        ],
    )
    two = report(
        tmp_path / "v2",
        "2",
        [
            outcome("PRE-1", "pass"),
            outcome("PRE-2", "fail", failures=[fail()]),
            outcome("PRE-3", "error", errors=[fail(None, "crash")]),
            outcome("PRE-4", "error", errors=[fail(None, "malformed-trace")]),
            outcome("PRE-5", "not-applicable", reason="needs approval"),
            outcome("PRE-6", "pass"),
            outcome(
                "PRE-8",
                "expected-fail",
                failures=[fail()],
                expected={"status": "fail", "reason": "known"},
            ),
            outcome("GUARD-1", "untested", reason="an obligation"),
            outcome("GUARD-2", "pass"),  # new to the later run
        ],
    )
    return [str(one), str(two)]


def test_every_kind_of_change_between_releases_is_classified(tmp_path: Path) -> None:
    comparison = compare(releases(tmp_path))
    ((before, after, changes),) = comparison.changes
    assert (before.version, after.version) == ("1", "2")
    kinds = {c.rule: c.kind for c in changes}
    assert kinds == {
        "PRE-1": "fixed",
        "PRE-2": "regressed",
        "PRE-3": "category-changed",
        "PRE-4": "category-changed",
        "PRE-5": "no-longer-judged",
        "PRE-6": "now-judged",
        "PRE-7": "no-longer-judged",
        "GUARD-2": "now-judged",
    }
    # listed in the order a user upgrading needs them: regressions first
    assert [c.kind for c in changes] == sorted((c.kind for c in changes), key=KIND_ORDER.index)
    assert changes[0].rule == "PRE-2"


def test_an_expected_failure_is_the_failure_it_expected_and_no_change(tmp_path: Path) -> None:
    comparison = compare(releases(tmp_path))
    first, second = comparison.columns
    assert first.cells["PRE-8"].status == second.cells["PRE-8"].status == "fail"
    assert all(c.rule != "PRE-8" for c in comparison.changes[0][2])
    passed = report(
        tmp_path / "v3",
        "3",
        [outcome("PRE-8", "unexpected-pass", expected={"status": "fail"}, reason="listed")],
    )
    ((_, _, later),) = compare([str(tmp_path / "v2"), str(passed)]).changes
    assert [(c.rule, c.kind) for c in later if c.rule == "PRE-8"] == [("PRE-8", "fixed")]


def test_the_change_table_covers_every_pair_of_verdict_classes() -> None:
    classes = ("pass", "failing", "difference", "not-run", "None")
    assert set(CHANGES) == {(a, b) for a in classes for b in classes if a != b}
    assert set(CHANGES.values()) <= set(KIND_ORDER)


def test_different_implementations_get_a_matrix_but_no_changes(tmp_path: Path) -> None:
    a = report(tmp_path / "a", "1", [outcome("PRE-1", "pass")], name="one")
    b = report(tmp_path / "b", "1", [outcome("PRE-1", "fail", failures=[fail()])], name="two")
    comparison = compare([str(a), str(b)])
    assert comparison.changes == []
    text = comparison_markdown(comparison, tmp_path)
    assert "Changes between releases" not in text
    assert "| PRE-1 title of PRE-1 | pass | **[defect](b/cases/X.json)** |" in text


def test_the_markdown_lists_changes_first_and_marks_unjudged_cells(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    text = comparison_markdown(compare(releases(tmp_path)), out)
    assert text.index("## Changes between releases") < text.index("## Rules x implementations")
    assert "  - PRE-2: pass -> defect" in text
    assert "  - PRE-4: error (adapter-raised) -> error (malformed-trace)" in text
    assert "  - PRE-5: pass -> not-applicable -- now: needs approval" in text
    assert "  - PRE-6: not-applicable -> pass -- before: needs scopes" in text
    assert "| PRE-7 title of PRE-7 | pass | — |" in text
    assert "[report.json](../v1/report.json)" in text


def test_the_same_implementation_twice_is_told_apart_by_its_directory(tmp_path: Path) -> None:
    a = report(tmp_path / "resume", "1", [outcome("PRE-1", "pass")])
    b = report(tmp_path / "inline", "1", [outcome("PRE-1", "pass")])
    comparison = compare([str(a), str(b)])
    assert [c.label for c in comparison.columns] == ["impl 1 (resume)", "impl 1 (inline)"]
    assert comparison.changes == []  # two flavours of one release, not two releases


def test_the_cli_writes_markdown_and_json(tmp_path: Path) -> None:
    md, js = tmp_path / "c.md", tmp_path / "c.json"
    assert main(["compare", *releases(tmp_path), "-o", str(md), "--json", str(js)]) == 0
    assert "## Changes between releases" in md.read_text()
    data = json.loads(js.read_text())
    assert [c["version"] for c in data["columns"]] == ["1", "2"]
    kinds = {c["rule"]: c["kind"] for c in data["changes"][0]["changes"]}
    assert kinds["PRE-2"] == "regressed"


def test_a_malformed_report_names_the_file_and_the_json_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = releases(tmp_path)[0]
    bad = tmp_path / "bad.json"
    document = json.loads((Path(good) / "report.json").read_text())
    document["rules"][1]["status"] = "sort-of"
    bad.write_text(json.dumps(document))
    with pytest.raises(FixtureError) as caught:
        compare([good, str(bad)])
    assert caught.value.source == str(bad) and caught.value.path.startswith("$.rules[1]")
    assert main(["compare", good, str(tmp_path / "nowhere")]) == 2
    assert "nowhere" in capsys.readouterr().err


def test_check_says_whether_the_committed_comparison_is_current(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    committed = tmp_path / "releases.md"
    argv = ["compare", *releases(tmp_path), "-o", str(committed), "--title", "Releases"]
    assert main([*argv, "--check"]) == 1  # nothing committed yet
    assert main(argv) == 0 and committed.read_text().startswith("# Releases\n")
    assert main([*argv, "--check"]) == 0
    committed.write_text(committed.read_text().replace("regressed", "fine"))
    capsys.readouterr()
    assert main([*argv, "--check"]) == 1
    shown = capsys.readouterr().out
    assert "+  - PRE-2: pass -> defect" not in shown and "out of date" in shown
    assert main(["compare", *releases(tmp_path), "--check"]) == 2  # --check needs -o
