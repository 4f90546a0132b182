"""docs/implementations/repro.py: every published finding's reproduction, run without the kit.

A throwaway published directory per test (a report.json with its findings, repro/ scripts)
shows each check failing on the input it exists for: a reproduction that exits non-zero,
one that never exits, one that imports the kit, a finding without one (enforced only
beside a contract.json), and for ``.mjs`` a harness whose pinned packages resolve while
a package from outside it is refused.
"""

from __future__ import annotations

import importlib.util
import io
import json
import shutil
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "repro_runner", ROOT / "docs" / "implementations" / "repro.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


repro = _load()

OK = "raise SystemExit(0)\n"
GONE = "import sys\nprint('the behaviour is gone')\nsys.exit(1)\n"
HANGS = "import threading\nthreading.Event().wait()\n"


def published(tmp_path: Path, statuses: dict[str, str], scripts: dict[str, str]) -> Path:
    directory = tmp_path / "impl-1.0"
    (directory / "repro").mkdir(parents=True)
    rules = [{"id": rid, "status": status} for rid, status in statuses.items()]
    report = {"kit": {"name": "toolreg-conformance", "version": "0"}, "rules": rules}
    (directory / "report.json").write_text(json.dumps(report))
    for name, text in scripts.items():
        (directory / "repro" / name).write_text(text)
    return directory


def run(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    code = repro.main(list(args), out)
    return code, out.getvalue()


FINDINGS = {"PRE-3": "fail", "PIPE-5": "difference", "DEF-2": "expected-fail", "PRE-2": "pass"}


def test_a_passing_a_failing_and_a_missing_reproduction(tmp_path: Path) -> None:
    directory = published(tmp_path, FINDINGS, {"PRE-3.py": OK, "PIPE-5.py": GONE})
    (directory / "contract.json").write_text("{}")  # strict: every finding needs one
    code, out = run(str(directory))
    assert code == 1
    assert "ok       PRE-3  repro/PRE-3.py: reproduces" in out
    assert "FAILED   PIPE-5  repro/PIPE-5.py (the published difference): exited 1" in out
    assert "| the behaviour is gone" in out
    assert "MISSING  DEF-2  the published expected-fail: no reproduction" in out
    assert "PRE-2" not in out  # a passing rule needs none
    summary = out.split("not proven without the kit:")[1]
    assert "impl-1.0 PIPE-5" in summary and "impl-1.0 DEF-2" in summary
    assert "impl-1.0 PRE-3" not in summary


def test_jobs_run_reproductions_side_by_side_with_the_same_verdicts(tmp_path: Path) -> None:
    # two scripts that each wait for the other to start: only run side by side do both end
    meet = tmp_path / "meet"
    meet.mkdir()
    waits = (
        "import os, sys, time\n"
        f"here = {str(meet)!r}\n"
        "open(os.path.join(here, os.path.basename(sys.argv[0])), 'w').close()\n"
        "deadline = time.monotonic() + 20\n"
        "while len(os.listdir(here)) < 2:\n"
        "    if time.monotonic() > deadline: sys.exit(3)\n"
        "    time.sleep(0.01)\n"
    )
    directory = published(tmp_path, FINDINGS, {"PRE-3.py": waits, "PIPE-5.py": waits})
    code, out = run(str(directory), "--jobs", "2", "--timeout", "30")
    assert code == 0, out
    assert "ok       PRE-3" in out and "ok       PIPE-5" in out
    assert out.index("PIPE-5") < out.index("PRE-3")  # reported in the script order, as with one
    with pytest.raises(SystemExit) as usage:
        run(str(directory), "--jobs", "0")
    assert usage.value.code == 2


def test_a_directory_named_relative_to_the_current_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # each script runs from an empty scratch directory: a DIR named relative to the current
    # one (as CI's discovery names them) must still find its scripts
    directory = published(tmp_path, {"PRE-3": "fail"}, {"PRE-3.py": OK})
    monkeypatch.chdir(tmp_path)
    code, out = run(directory.name)
    assert code == 0, out
    assert "ok       PRE-3  repro/PRE-3.py: reproduces" in out


def test_without_a_contract_a_missing_reproduction_is_a_note(tmp_path: Path) -> None:
    directory = published(tmp_path, FINDINGS, {"PRE-3.py": OK})
    code, out = run(str(directory))
    assert code == 0
    assert "not enforced until the directory has a contract.json: PIPE-5, DEF-2" in out
    # what exists still runs, and still fails when it no longer reproduces
    (directory / "repro" / "PRE-3.py").write_text(GONE)
    assert run(str(directory))[0] == 1


def test_no_repro_directory_at_all(tmp_path: Path) -> None:
    directory = published(tmp_path, FINDINGS, {})
    shutil.rmtree(directory / "repro")
    assert run(str(directory))[0] == 0
    (directory / "contract.json").write_text("{}")
    code, out = run(str(directory))
    assert code == 1 and out.count("MISSING") == 3


def test_a_reproduction_that_never_exits_times_out(tmp_path: Path) -> None:
    directory = published(tmp_path, {"PRE-3": "fail"}, {"PRE-3.py": HANGS})
    code, out = run(str(directory), "--timeout", "0.5")
    assert code == 1 and "TIMEOUT: no exit within 0.5 s" in out


def test_a_reproduction_that_imports_the_kit_is_refused(tmp_path: Path) -> None:
    script = "from conformance.running.runner import run_suite\n" + OK
    directory = published(tmp_path, {"PRE-3": "fail"}, {"PRE-3.py": script})
    code, out = run(str(directory))
    assert code == 1 and "imports the kit (conformance)" in out


def test_badly_named_twice_written_and_orphan_reproductions(tmp_path: Path) -> None:
    scripts = {"notes.py": OK, "PRE-3.py": OK, "PRE-3.mjs": "", "PRE-4.py": OK}
    directory = published(tmp_path, {"PRE-3": "fail"}, scripts)
    code, out = run(str(directory))
    assert code == 1
    assert "not named after a rule ID" in out and "two reproductions" in out
    assert "PRE-4.py reproduces no published finding" in out  # a note, not a failure
    assert "impl-1.0 PRE-4" not in out.split("not proven without the kit:")[1]


def test_a_named_directory_without_a_report_is_a_usage_error(tmp_path: Path) -> None:
    assert run(str(tmp_path))[0] == 2


def test_every_published_directory_here_is_discovered() -> None:
    found = {p.relative_to(repro.HERE).as_posix() for p in repro.discover(repro.HERE)}
    assert "pydantic-ai-2.68.0/inline" in found and "dsh-tools-0.1.0-rc.8" in found


# ------------------------------------------------------------------- .mjs


def _package(directory: Path, name: str, body: str) -> None:
    package = directory / "node_modules" / name
    package.mkdir(parents=True)
    manifest = {"name": name, "version": "1.0.0", "type": "module", "exports": "./index.mjs"}
    (package / "package.json").write_text(json.dumps(manifest))
    (package / "index.mjs").write_text(body)


@pytest.fixture
def harness_root(tmp_path: Path) -> Path:
    """A repository root with a harness (pinned ``pinned``) and a release under it that
    pins ``pinned`` at another version but lacks ``elsewhere`` (found only in the parent)."""
    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    root = tmp_path / "root"
    harness = root / "harnesses" / "fake"
    harness.mkdir(parents=True)
    (harness / "package.json").write_text('{"name": "fake-harness", "private": true}')
    _package(harness, "pinned", "export const version = 'current'\n")
    _package(harness, "elsewhere", "export const here = true\n")
    release = harness / "versions" / "r1"
    release.mkdir(parents=True)
    (release / "package.json").write_text('{"name": "fake-r1", "private": true}')
    _package(release, "pinned", "export const version = 'r1'\n")
    return root


def _mjs(tmp_path: Path, harness: str | None, body: str) -> Path:
    directory = published(tmp_path, {"PIPE-5": "difference"}, {"PIPE-5.mjs": body})
    if harness is not None:
        (directory / "repro" / "HARNESS").write_text(f"# the npm harness\n{harness}\n")
    return directory


EXPECT = "import {{ version }} from 'pinned'\nprocess.exit(version === '{v}' ? 0 : 1)\n"


def test_an_mjs_reproduction_imports_the_packages_its_harness_pins(
    tmp_path: Path, harness_root: Path
) -> None:
    directory = _mjs(tmp_path, "harnesses/fake", EXPECT.format(v="current"))
    assert run(str(directory), "--root", str(harness_root))[0] == 0
    release = _mjs(tmp_path / "r", "harnesses/fake/versions/r1", EXPECT.format(v="r1"))
    assert run(str(release), "--root", str(harness_root))[0] == 0
    wrong = _mjs(tmp_path / "w", "harnesses/fake/versions/r1", EXPECT.format(v="current"))
    assert run(str(wrong), "--root", str(harness_root))[0] == 1


def test_a_package_outside_the_harness_cannot_stand_in(tmp_path: Path, harness_root: Path) -> None:
    body = "import { here } from 'elsewhere'\nprocess.exit(here ? 0 : 1)\n"
    assert run(str(_mjs(tmp_path, "harnesses/fake", body)), "--root", str(harness_root))[0] == 0
    release = _mjs(tmp_path / "r", "harnesses/fake/versions/r1", body)
    code, out = run(str(release), "--root", str(harness_root))
    assert code == 1 and "outside the harness" in out


def test_an_mjs_reproduction_needs_an_installed_harness(tmp_path: Path, harness_root: Path) -> None:
    code, out = run(str(_mjs(tmp_path, None, EXPECT)), "--root", str(harness_root))
    assert code == 1 and "HARNESS is missing" in out
    code, out = run(
        str(_mjs(tmp_path / "n", "harnesses/none", EXPECT)), "--root", str(harness_root)
    )
    assert code == 1 and "holds no package.json" in out
    shutil.rmtree(harness_root / "harnesses" / "fake" / "node_modules")
    code, out = run(
        str(_mjs(tmp_path / "m", "harnesses/fake", EXPECT)), "--root", str(harness_root)
    )
    assert code == 1 and "npm ci --prefix harnesses/fake" in out
    script = "import { x } from '@toolreg/interpreter'\n"
    code, out = run(
        str(_mjs(tmp_path / "k", "harnesses/fake", script)), "--root", str(harness_root)
    )
    assert code == 1 and "imports the kit (@toolreg/interpreter)" in out
