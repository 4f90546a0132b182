"""docs/tutorial.md runs: its ```sh blocks, extracted verbatim and run in order in an empty
directory, end in a conformant run of the tutorial's own registry (issue 23).

``toolreg-conformance`` is this checkout's (a shim on PATH runs ``python -m conformance``
with the checkout on PYTHONPATH), so the tutorial is checked against the kit beside it.
The run is marked slow (CI's ``-m slow`` step); ``python tests/test_tutorial.py --run``
runs it alone (exit status: the tutorial's), ``python tests/test_tutorial.py`` prints the
script it runs.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TUTORIAL = ROOT / "docs" / "tutorial.md"
FENCE = re.compile(r"^```sh\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def script(markdown: str) -> str:
    """The tutorial's sh blocks, in order, as one shell script that stops at the first
    failing command (a block that expects a failure says so itself, ``|| ...``)."""
    blocks = FENCE.findall(markdown)
    if not blocks:
        raise ValueError(f"{TUTORIAL}: no ```sh block")
    return "set -eu\n" + "\n".join(blocks)


def run_tutorial(where: Path) -> subprocess.CompletedProcess[str]:
    shims = where / "bin"
    shims.mkdir()
    shim = shims / "toolreg-conformance"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m conformance "$@"\n')
    shim.chmod(0o755)
    env = {
        **os.environ,
        "PATH": f"{shims}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    work = where / "work"
    work.mkdir()
    return subprocess.run(
        ["sh", "-c", script(TUTORIAL.read_text(encoding="utf-8"))],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_extraction_sees_every_block_and_fails_on_a_broken_one() -> None:
    text = TUTORIAL.read_text(encoding="utf-8")
    assert len(FENCE.findall(text)) == text.count("```sh\n") >= 5
    broken = "```sh\nfalse\necho never\n```\n"
    done = subprocess.run(["sh", "-c", script(broken)], capture_output=True, text=True)
    assert done.returncode != 0 and "never" not in done.stdout


@pytest.mark.long(7)
@pytest.mark.slow
def test_the_tutorial_ends_in_a_conformant_run(tmp_path: Path) -> None:
    done = run_tutorial(tmp_path)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "doctor exit 2" in done.stdout  # the skeleton's first failure, explained
    assert "every declared capability the probes can see is delivered" in done.stdout
    assert "exactly as expected (8 known defects)" in done.stdout
    assert done.stdout.rstrip().splitlines()[-1].startswith("CONFORMANT")


if __name__ == "__main__":
    if sys.argv[1:] == ["--run"]:
        with tempfile.TemporaryDirectory() as scratch:
            ran = run_tutorial(Path(scratch))
        print(ran.stdout, end="")
        print(ran.stderr, end="", file=sys.stderr)
        sys.exit(ran.returncode)
    print(script(TUTORIAL.read_text(encoding="utf-8")))
