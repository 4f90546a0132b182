"""The ``toolreg-conformance`` command line: run, replay, rules, exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.cli.main import main

HERE = Path(__file__).resolve().parent
BROKEN = "python:broken_registry:adapter"


@pytest.fixture
def broken(monkeypatch: pytest.MonkeyPatch) -> str:
    """The adapter spec of a registry that lets ``ask`` through without an approval service."""
    monkeypatch.syspath_prepend(str(HERE))
    return BROKEN


def run(*args: str) -> int:
    return main(["run", "--profile", "quick", "--rules", "PRE-3", *args])


def test_run_against_the_reference_passes_and_writes_the_reports(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run("--report", str(tmp_path), "--progress") == 0
    out, err = capsys.readouterr()
    assert "CONFORMANT" in out and "NOT CONFORMANT" not in out
    assert "PRE" in out.splitlines()[1]  # the per-group table
    assert "property PRE-3" in err  # progress goes to stderr (asked for: not a terminal)
    for name in ("report.json", "report.md", "junit.xml", "report.html"):
        assert (tmp_path / name).is_file()


def test_a_broken_registry_fails_and_its_counterexample_replays(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], broken: str
) -> None:
    assert run("--adapter", broken, "--report", str(tmp_path), "-q") == 1
    out, _ = capsys.readouterr()
    line = next(line for line in out.splitlines() if line.startswith("PRE-3"))
    assert " fail " in line and "counterexamples" in line
    cases = sorted((tmp_path / "counterexamples").glob("PRE-3-*.json"))
    assert cases
    case = json.loads(cases[0].read_text())
    assert case["rule"] == "PRE-3" and case["implementation"]["name"] == "asks-without-service"

    assert main(["replay", str(cases[0]), "--adapter", broken]) == 1
    assert "still FAILING" in capsys.readouterr().out
    assert main(["replay", str(cases[0]), "--adapter", "reference"]) == 0
    assert "FIXED" in capsys.readouterr().out


def test_replay_of_a_plain_scenario_judges_every_rule(capsys: pytest.CaptureFixture[str]) -> None:
    fixture = Path(__file__).resolve().parents[2] / "fixtures/rules/PRE-3"
    path = sorted(fixture.glob("*.json"))[0]
    assert main(["replay", str(path)]) == 0
    assert "FIXED: every rule" in capsys.readouterr().out


def test_replay_of_a_plain_scenario_fails_on_a_broken_registry(
    capsys: pytest.CaptureFixture[str], broken: str
) -> None:
    fixture = Path(__file__).resolve().parents[2] / "fixtures/rules/PRE-3"
    path = sorted(fixture.glob("*.json"))[0]
    assert main(["replay", str(path), "--adapter", broken]) == 1
    out = capsys.readouterr().out
    assert "still FAILING" in out and "PRE-3 c1" in out


@pytest.mark.parametrize(
    ("document", "where"),
    [
        (
            {
                "rule": "PRE-3",
                "kit": {},
                "implementation": {},
                "required": [],
                "scenario": {"id": "x", "tools": [{"nme": "t"}], "actions": []},
                "trace": None,
            },
            "$.scenario.tools[0]",
        ),
        ({"id": "x", "tools": [{"nme": "t"}], "actions": []}, "$.tools[0]"),
        ({"id": "x", "tools": [], "actions": [], "bogus": 1}, "$"),
        ({"rule": "NOPE-1", "scenario": {}}, "$.rule"),
    ],
)
def test_replay_of_a_malformed_file_exits_2_naming_the_json_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], document: object, where: str
) -> None:
    path = tmp_path / "case.json"
    path.write_text(json.dumps(document))
    assert main(["replay", str(path)]) == 2
    err = capsys.readouterr().err
    assert str(path) in err and f"at {where}:" in err


def test_replay_of_a_file_that_is_not_json_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "case.json"
    path.write_text("{not json")
    assert main(["replay", str(path)]) == 2
    assert "line 1" in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["frobnicate"],
        ["run", "--profile", "sometimes"],
        ["run", "--rules", "NOPE-*"],
        ["run", "--adapter", "nonsense"],
        ["run", "--adapter", "python:no_such_module_here:make"],
        ["run", "--update-expect"],
        ["replay"],
        ["rules", "--rules", "NOPE-*"],
    ],
)
def test_usage_and_adapter_errors_exit_2(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    assert capsys.readouterr().err.strip()


def test_rules_lists_each_rule_with_its_kind_and_tests(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules"]) == 0
    out = capsys.readouterr().out
    line = next(line for line in out.splitlines() if line.startswith("PRE-3 "))
    assert "Fail-closed ask" in line and "predicate" in line
    assert "fixtures" in line and "property" in line


def test_python_dash_m_conformance_works() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "conformance", "rules", "--rules", "PRE-3"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "PRE-3" in done.stdout
