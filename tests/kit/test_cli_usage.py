"""Exit codes and usage errors: only a verdict on the implementation exits 1.

Every mistake a user can make on the command line, in a file they hand the kit,
or in the adapter they point it at, is caught before the run starts and exits 2
with one line naming it; a crash of the kit itself exits 2 too.
"""

from __future__ import annotations

import json
import os
import sys
import textwrap
from pathlib import Path

import pytest

from conformance.cli import main
from conformance.cli.common import EXIT_USAGE, capture_logs

QUICK = ["--profile", "quick", "-q"]


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(argv)
    return code, capsys.readouterr().err


@pytest.mark.parametrize(
    ("rules", "says"),
    [
        ("PRE-99", "'PRE-99' matches no rule ID"),
        ("PRE-1,XX-*", "'XX-*' matches no rule ID"),
        ("", "names no rule"),
        (" , ", "names no rule"),
    ],
)
def test_a_rule_selection_that_names_nothing_is_a_usage_error(
    rules: str, says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = _run(["run", "--rules", rules, *QUICK], capsys)
    assert code == EXIT_USAGE
    assert says in err


@pytest.mark.parametrize("deadline", ["0", "-1", "nan", "inf"])
def test_a_deadline_must_be_positive_and_finite(
    deadline: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["run", "--adapter", f"stdio:{sys.executable} -c pass", "--deadline", deadline]
    code, err = _run([*argv, *QUICK], capsys)
    assert code == EXIT_USAGE
    assert "--deadline must be a positive number of seconds" in err


@pytest.mark.parametrize(
    ("source", "says"),
    [
        ("def make():\n    raise RuntimeError('boom')\n", "raised RuntimeError: boom"),
        ("raise RuntimeError('at import')\n", "RuntimeError: at import"),
        ("def make():\n    return 3\n", "did not return an Adapter"),
        ("", "AttributeError"),
    ],
)
def test_an_adapter_that_cannot_be_loaded_exits_2(
    source: str,
    says: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    module = f"broken_adapter_{abs(hash(source))}"
    (tmp_path / f"{module}.py").write_text(source)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    code, err = _run(["run", "--adapter", f"python:{module}:make", *QUICK], capsys)
    assert code == EXIT_USAGE
    assert says in err


def test_an_unwritable_report_directory_is_refused_before_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    code, err = _run(["run", "--rules", "PRE-1", "--report", str(blocker / "out"), *QUICK], capsys)
    assert code == EXIT_USAGE
    assert "cannot write there" in err


def test_a_non_utf8_fixture_names_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    case = tmp_path / "case.json"
    case.write_bytes(b'{"id": "\xff\xfe"}')
    code, err = _run(["replay", str(case)], capsys)
    assert code == EXIT_USAGE
    assert str(case) in err and "not UTF-8" in err


def test_an_expect_file_naming_an_unknown_rule_is_malformed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    expect = tmp_path / "expect.json"
    expect.write_text(
        json.dumps({"implementation": "reference", "expected": {"PRE-33": {"status": "fail"}}})
    )
    code, err = _run(["run", "--rules", "PRE-1", "--expect", str(expect), *QUICK], capsys)
    assert code == EXIT_USAGE
    assert "$.expected.PRE-33" in err and "not a rule ID" in err


def test_a_kit_crash_is_one_line_and_exit_2(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import importlib

    cli = importlib.import_module("conformance.cli.main")

    def crash(*args: object, **kwargs: object) -> int:
        raise ZeroDivisionError("a bug in the kit")

    monkeypatch.setattr(cli, "_rules", crash)
    monkeypatch.delenv("TOOLREG_CONFORMANCE_DEBUG", raising=False)
    code, err = _run(["rules"], capsys)
    assert code == EXIT_USAGE
    assert err.count("\n") == 1
    assert err.startswith("kit error: ZeroDivisionError: a bug in the kit")
    assert "Traceback" not in err


def test_the_implementations_log_records_stay_off_the_terminal(tmp_path: Path) -> None:
    import logging

    with capture_logs(tmp_path) as captured:
        logging.getLogger("reference.registry").error("a finalizer failed")
        logging.getLogger("someone.else").warning("noise")
    assert captured.count == 2
    assert "a finalizer failed" in (tmp_path / "implementation.log").read_text()
    summary = captured.summary()
    assert summary is not None and "2 records" in summary


def test_a_default_run_prints_no_traceback_and_leaves_nothing_in_the_cwd(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TOOLREG_CONFORMANCE_CACHE", str(tmp_path / "cache"))
    # the FIN rules make the reference log its deliberately failing finalizers
    code = main(["run", "--rules", "FIN-*,RES-*", "--profile", "quick"])
    captured = capsys.readouterr()
    assert code == 0, captured.out
    assert "Traceback" not in captured.err + captured.out
    assert sorted(os.listdir(tmp_path)) == ["cache"] or os.listdir(tmp_path) == []


def test_the_readme_adapter_example_is_copyable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """README: copy the reference adapter, swap the API calls, point --adapter at it."""
    import conformance.adapters.reference as example

    source = Path(example.__file__).read_text(encoding="utf-8")
    (tmp_path / "my_adapter.py").write_text(source)
    monkeypatch.chdir(tmp_path)
    code, err = _run(
        ["run", "--adapter", "python:my_adapter:ReferenceAdapter", *QUICK, "--rules", "PRE-1"],
        capsys,
    )
    assert code == 0, err
    assert textwrap.dedent(err).strip() == "" or "Traceback" not in err
