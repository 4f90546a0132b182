"""The pytest plugin: ``pytest --pyargs conformance --toolreg-adapter=...``, one test per rule."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

# Imported here so pytester's in-process runs share one hypothesis and one kit:
# each run restores sys.modules afterwards, and strategies built under a
# re-imported hypothesis are not SearchStrategy instances of the first one.
import conformance.running.runner  # noqa: F401

pytest_plugins = ["pytester"]

HERE = Path(__file__).resolve().parent
BASE = ("--pyargs", "conformance", "--toolreg-profile=quick", "-p", "no:cacheprovider")


def test_one_test_per_rule_selected_by_rule_id(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest(*BASE, "--toolreg-adapter=reference", "-k", "PRE-3", "-v")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*test_rule?PRE-3? PASSED*"])


def test_underscore_rule_ids_select_too(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest(*BASE, "-k", "PRE_3")
    result.assert_outcomes(passed=1)


def test_a_broken_registry_fails_with_the_rule_messages_and_counterexamples(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(HERE))
    report = pytester.path / "ce"
    result = pytester.runpytest(
        *BASE,
        "--toolreg-adapter=python:broken_registry:adapter",
        f"--toolreg-report={report}",
        "-k",
        "PRE-3",
    )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*PRE-3 (Fail-closed ask): fail*",
            "*ask without an approval service*",
            "*counterexample: *",
        ]
    )
    assert list((report / "counterexamples").glob("PRE-3-*.json"))


def test_an_unknown_adapter_errors_every_test(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest(*BASE, "--toolreg-adapter=nonsense", "-k", "PRE-3")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*--toolreg-adapter: unknown adapter 'nonsense'*"])


def test_the_marker_and_options_are_registered(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--markers")
    result.stdout.fnmatch_lines(["@pytest.mark.rule(id):*"])
    result = pytester.runpytest("--help")
    result.stdout.fnmatch_lines(["*--toolreg-adapter*", "*--toolreg-profile*"])


def test_an_ordinary_test_suite_is_unaffected(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_plain="def test_one():\n    assert 1 + 1 == 2\n")
    result = pytester.runpytest("--strict-markers", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)


def test_the_rule_marker_works_under_strict_markers(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_marked=(
            "import pytest\n\n"
            "@pytest.mark.rule('PRE-3')\n"
            "def test_mine(toolreg_rule):\n"
            "    toolreg_rule('PRE-3')\n"
        )
    )
    result = pytester.runpytest("--strict-markers", "--toolreg-profile=quick", "-k", "PRE_3")
    result.assert_outcomes(passed=1)


@pytest.mark.long(10)
@pytest.mark.slow
def test_it_runs_under_xdist(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess(*BASE, "-n", "2", "-k", "PRE-3")
    result.assert_outcomes(passed=1)


def test_it_drives_a_stdio_harness(pytester: pytest.Pytester) -> None:
    harness = f"stdio:{sys.executable} -m conformance.harness"
    result = pytester.runpytest(
        *BASE, f"--toolreg-adapter={harness}", "--toolreg-validate-protocol", "-k", "PRE-1 or FIN-2"
    )
    result.assert_outcomes(passed=2)
