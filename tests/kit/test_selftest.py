"""``toolreg-conformance selftest``: what counts as a kill, and that a bad catalogue fails it."""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conformance.adapters.reference import ReferenceAdapter
from conformance.adapters.reference.mutants import CATALOGUE, Mutant
from conformance.cli.main import main
from conformance.judging.rules import RULES, Rule
from conformance.selftest import (
    Row,
    SelftestResult,
    format_markdown,
    format_table,
    run_selftest,
    select_mutants,
)
from reference import Registry, ToolExecutionInput
from reference.registry import Prepared

ASK = CATALOGUE["pre.ask-without-service-allows"]  # a real mutant, killed by PRE-3


def fake(name: str, build: Any, targets: tuple[str, ...] = ("PRE-3",)) -> Mutant:
    return Mutant(name, targets, f"{name} (a test entry)", "a test entry", "tests/kit", build)


def table(result: SelftestResult) -> str:
    out = io.StringIO()
    format_table(result, out)
    return out.getvalue()


def only(**mutants: Mutant) -> SelftestResult:
    return run_selftest(mutants=mutants, baseline=False, coverage=False)


# ------------------------------------------------------------- what counts as killed


def test_a_real_mutant_is_killed_by_its_target_rule() -> None:
    result = only(ask=ASK)
    (row,) = result.mutants
    assert row.killed and result.ok
    assert row.failed == ["PRE-3"] and row.statuses == {"PRE-3": "fail"}
    assert re.search(r"pre\.ask-without-service-allows\s+PRE-3\s+yes\s+PRE-3\s+\d", table(result))


def test_a_mutant_that_breaks_nothing_survives_and_fails_the_selftest() -> None:
    result = only(harmless=fake("test.harmless", ReferenceAdapter))
    (row,) = result.mutants
    assert not row.killed and not result.ok
    assert row.statuses == {"PRE-3": "pass"}
    text = table(result)
    assert "SURVIVED test.harmless: target rule(s) did not fail: PRE-3 pass" in text
    assert "SELFTEST FAILED" in text and "0 of 1 killed" in text


def test_every_declared_target_must_fail() -> None:
    both = fake("test.half-right", ASK.build, ("PRE-3", "PRE-1"))
    (row,) = only(both=both).mutants
    assert row.statuses["PRE-3"] == "fail" and row.statuses["PRE-1"] == "pass"
    assert not row.killed
    assert "PRE-1 pass" in row.why()


class CrashingRegistry(Registry):
    """Not a mutant at all: every call raises, so the target rule can only *error*."""

    async def prepare(self, call: ToolExecutionInput) -> Prepared:
        raise RuntimeError("registry crashed")


def test_a_target_that_errors_is_not_a_kill() -> None:
    crash = fake("test.crash", lambda: ReferenceAdapter(lambda s: CrashingRegistry()))
    (row,) = only(crash=crash).mutants
    assert row.statuses["PRE-3"] == "error"
    assert not row.killed
    assert "PRE-3 error" in row.why() and "registry crashed" in row.why()


@pytest.fixture
def crashing_predicate(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    def PRE_3(view: Any) -> Iterator[Any]:
        raise KeyError("oops")
        yield

    monkeypatch.setitem(RULES, "PRE-3", Rule("PRE-3", RULES["PRE-3"].title, PRE_3))
    yield


def test_a_kit_error_is_not_a_kill_and_is_shown(crashing_predicate: None) -> None:
    result = only(ask=ASK)
    (row,) = result.mutants
    assert row.kit_errors and not row.killed and not result.ok
    assert "kit error: predicate PRE-3 crashed" in table(result)


# ---------------------------------------------------------- baseline and coverage


def test_a_failing_baseline_run_is_a_false_positive() -> None:
    good = Row("reference", "reference", "the reference", conformant=True, seconds=1.0)
    bad = Row(
        "variant",
        "overfit",
        "a correct variant",
        failing=["PRE-4"],
        statuses={"PRE-4": "fail"},
        detail="PRE-4 fail: denials must carry distinct reasons",
        seconds=1.0,
    )
    result = SelftestResult("quick", False, 1, [], [good, bad], [], 2.0)
    assert result.false_positives == [bad] and not result.ok
    text = table(result)
    assert "FALSE POSITIVE overfit: rules PRE-4 failed: PRE-4 fail: denials" in text
    assert "baseline: 1 of 2 conformant" in text


def test_coverage_names_every_rule_without_a_mutant() -> None:
    result = run_selftest(mutants={"ask": ASK}, baseline=False, coverage=True)
    assert result.mutants[0].killed and not result.ok
    checked = [rid for rid, r in RULES.items() if r.check is not None]
    assert result.uncovered == [rid for rid in checked if rid != "PRE-3"]
    assert "coverage: no mutant targets CANCEL-1" in table(result)


# ------------------------------------------------------------------------ the CLI


def test_the_cli_exits_1_when_a_catalogue_mutant_survives(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(CATALOGUE, "test.harmless", fake("test.harmless", ReferenceAdapter))
    assert main(["selftest", "--mutants", "test.*,pre.ask-*", "--no-baseline", "-q"]) == 1
    out = capsys.readouterr().out
    assert "SURVIVED test.harmless" in out
    assert out.index("pre.ask-without-service-allows") < out.index("test.harmless")


def test_the_cli_passes_a_killed_selection_with_jobs_and_writes_markdown(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    md = tmp_path / "selftest.md"
    argv = ["selftest", "--mutants", "PRE-3,pre.deny-*", "--no-baseline", "-q"]
    assert main([*argv, "-j", "2", "--markdown", str(md)]) == 0
    parallel = capsys.readouterr().out
    assert main(argv) == 0
    serial = capsys.readouterr().out

    def untimed(text: str) -> str:
        return re.sub(r"\d+\.\d+ s", "T", re.sub(r"\d+ job\(s\)", "J", text))

    assert untimed(parallel) == untimed(serial)  # deterministic, ordered by name
    names = re.findall(r"^(pre\.\S+)", serial, re.M)
    assert names == sorted(names) and len(names) == 4
    assert "| `pre.deny-drops-reason` | PRE-2 | yes |" in md.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "argv", [["--jobs", "0"], ["--mutants", "nothing-matches"], ["--profile", "fast"]]
)
def test_selftest_usage_errors_exit_2(argv: list[str]) -> None:
    assert main(["selftest", *argv]) == 2


def test_mutants_are_selected_by_name_glob_or_target_rule() -> None:
    assert select_mutants("PRE-3") == ["pre.ask-without-service-allows", "pre.nested-ask-not-asked"]
    assert select_mutants("fin.*") == [n for n in CATALOGUE if n.startswith("fin.")]
    assert select_mutants(None) == list(CATALOGUE)
    with pytest.raises(ValueError):
        select_mutants("no-such-mutant")


def test_markdown_lists_the_bug_of_every_mutant() -> None:
    out = io.StringIO()
    format_markdown(only(ask=ASK), out)
    assert "ask is allowed when no approval service is mounted" in out.getvalue()
