"""``toolreg-conformance init python DIR`` (issue 23): the files a new implementation starts
from; docs/tutorial.md (tests/test_tutorial.py) fills the skeleton in and runs it."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conformance.cli.main import main
from conformance.scenario.schema import validate


def test_init_writes_the_skeleton_baseline_and_ci_steps(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["init", "python", str(tmp_path / "new"), "--name", "mine"]) == 0
    written = {p.name for p in (tmp_path / "new").iterdir()}
    assert written == {
        "conformance_adapter.py",
        "expect.json",
        "conformance-ci.sh",
        "conformance-ci.yml",
    }
    adapter = (tmp_path / "new" / "conformance_adapter.py").read_text()
    compile(adapter, "conformance_adapter.py", "exec")
    for hook in ("new_controller", "track_caller", "withoutSignal", "again", "caller_writes"):
        assert hook in adapter
    todos = [line for line in adapter.splitlines() if "# TODO" in line]
    rule = re.compile(r"TODO [A-Z]+-\d")  # each hook's TODO names the SPEC rule it serves
    assert len([t for t in todos if rule.search(t)]) >= 15
    assert all(rule.search(t) or "# TODO:" in t for t in todos), todos
    expect = json.loads((tmp_path / "new" / "expect.json").read_text())
    validate(expect, "expect", "expect.json")
    assert expect == {"implementation": "mine", "expected": {}}
    ci = (tmp_path / "new" / "conformance-ci.sh").read_text()
    assert "toolreg-conformance doctor" in ci and "--expect expect.json" in ci
    assert "wrote" in capsys.readouterr().out


def test_init_never_overwrites(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "expect.json").write_text("{}")
    assert main(["init", "python", str(tmp_path)]) == 2
    assert "would overwrite expect.json" in capsys.readouterr().err
    assert (tmp_path / "expect.json").read_text() == "{}"
    assert not (tmp_path / "conformance_adapter.py").exists()


def test_init_js_writes_a_stdio_harness_skeleton(tmp_path: Path) -> None:
    assert main(["init", "js", str(tmp_path), "--name", "mine"]) == 0
    written = {p.name for p in tmp_path.iterdir()}
    assert {"harness.mjs", "binding.mjs", "package.json", "expect.json"} <= written
    binding = (tmp_path / "binding.mjs").read_text()
    for hook in ("trackCaller", "withoutSignal", "again", "callerWrites", "newController"):
        assert hook in binding
    package = json.loads((tmp_path / "package.json").read_text())
    interpreter = package["dependencies"]["@toolreg/interpreter"].removeprefix("file:")
    assert (Path(interpreter) / "stdio.mjs").is_file()
    assert "stdio:node harness.mjs" in (tmp_path / "conformance-ci.sh").read_text()
    if shutil.which("node"):
        for name in ("harness.mjs", "binding.mjs"):
            subprocess.run(["node", "--check", str(tmp_path / name)], check=True)
