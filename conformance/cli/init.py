"""``toolreg-conformance init python DIR``: everything to start checking your own registry.

Writes into DIR (refusing to overwrite a file): ``conformance_adapter.py``, an adapter
skeleton with every binding hook, each with a TODO naming the SPEC rule it serves; a
baseline ``expect.json``; ``conformance-ci.sh`` (the doctor, then the run, as a plain shell
step) and ``conformance-ci.yml`` (the same as a GitHub Actions job). ``docs/tutorial.md``
walks through it on a small registry the tutorial builds.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any, TextIO

from conformance.cli.common import EXIT_OK, UsageError

__all__ = ["add_command", "main", "write_files"]

TEMPLATES = Path(__file__).resolve().parent / "templates"
ADAPTER_SPEC = "python:conformance_adapter:make_adapter"

CI_SH = """#!/bin/sh
# toolreg-conformance in CI (written by `toolreg-conformance init`): run from this directory.
set -eu
# 1. the adapter delivers what it declares (exit 2 names the hook to fix)
toolreg-conformance doctor --adapter {spec}
# 2. the rules: fails on a new defect, or on a known one that went away (expect.json)
toolreg-conformance run --adapter {spec} --profile ci --expect expect.json \\
  --report conformance-report
"""

CI_YML = """# A GitHub Actions job (written by `toolreg-conformance init`): paste under `jobs:`.
conformance:
  runs-on: ubuntu-latest
  steps:
    - uses: actions/checkout@v4
    - uses: actions/setup-python@v5
      with:
        python-version: "3.11"
    - run: pip install toolreg-conformance -e .
    - run: sh {dir}/conformance-ci.sh
      working-directory: .
"""


def add_command(sub: Any) -> None:
    init = sub.add_parser(
        "init", help="write an adapter skeleton, a baseline expect.json and a CI step into DIR"
    )
    init.add_argument("language", choices=["python"], help="the language of your registry")
    init.add_argument("dir", metavar="DIR", help="where to write (created if absent)")
    init.add_argument("--name", default="my-registry", help="your implementation's name")


def write_files(directory: Path, name: str) -> list[Path]:
    """The files of a new implementation's check, written into ``directory``."""
    files = {
        "conformance_adapter.py": (TEMPLATES / "python_adapter.py.txt")
        .read_text(encoding="utf-8")
        .format(name=name),
        "expect.json": json.dumps({"implementation": name, "expected": {}}, indent=2) + "\n",
        "conformance-ci.sh": CI_SH.format(spec=ADAPTER_SPEC),
        "conformance-ci.yml": CI_YML.format(dir=directory.as_posix()),
    }
    existing = [n for n in files if (directory / n).exists()]
    if existing:
        raise UsageError(f"{directory}: would overwrite {', '.join(existing)}")
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for file_name, text in files.items():
        (directory / file_name).write_text(text, encoding="utf-8")
        written.append(directory / file_name)
    return written


def main(args: argparse.Namespace, out: TextIO) -> int:
    directory = Path(args.dir)
    for path in write_files(directory, args.name):
        print(f"wrote {path}", file=out)
    print(
        f"next: fill in the TODOs of {directory / 'conformance_adapter.py'}, then, in "
        f"{directory}: toolreg-conformance doctor --adapter {ADAPTER_SPEC} "
        "(it names the hook behind each first failure); docs/tutorial.md walks through it",
        file=out,
    )
    return EXIT_OK
