"""``toolreg-conformance init python|js DIR``: everything to start checking your own registry.

Writes into DIR (refusing to overwrite a file): an adapter skeleton with every binding
hook, each with a TODO naming the SPEC rule it serves (python: ``conformance_adapter.py``;
js: a stdio harness, ``harness.mjs`` + ``binding.mjs`` + ``package.json`` depending on
the kit's ``harnesses/js``); a baseline ``expect.json``; ``conformance-ci.sh`` (the
doctor, then the run, as a plain shell step) and ``conformance-ci.yml`` (the same as a
GitHub Actions job). ``docs/tutorial.md`` walks through it on a small registry it builds.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any, TextIO

from conformance.cli.common import EXIT_OK, UsageError

__all__ = ["add_command", "main", "write_files"]

TEMPLATES = Path(__file__).resolve().parent / "templates"
#: The --adapter spec of each language's skeleton, run from DIR.
ADAPTER_SPECS = {
    "python": "python:conformance_adapter:make_adapter",
    "js": "'stdio:node harness.mjs'",
}
#: The kit's JavaScript interpreter package (a js skeleton's dependency).
JS_INTERPRETER = Path(__file__).resolve().parents[2] / "harnesses" / "js"

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
    init.add_argument("language", choices=sorted(ADAPTER_SPECS), help="your registry's language")
    init.add_argument("dir", metavar="DIR", help="where to write (created if absent)")
    init.add_argument("--name", default="my-registry", help="your implementation's name")


def _template(file_name: str, name: str) -> str:
    return (TEMPLATES / file_name).read_text(encoding="utf-8").format(name=name)


def write_files(directory: Path, name: str, language: str = "python") -> list[Path]:
    """The files of a new implementation's check, written into ``directory``."""
    if language == "python":
        files = {"conformance_adapter.py": _template("python_adapter.py.txt", name)}
    else:
        package = {
            "name": f"{name}-conformance-harness",
            "private": True,
            "type": "module",
            "dependencies": {"@toolreg/interpreter": f"file:{JS_INTERPRETER.as_posix()}"},
        }
        files = {
            "harness.mjs": _template("js_harness.mjs.txt", name),
            "binding.mjs": _template("js_binding.mjs.txt", name),
            "package.json": json.dumps(package, indent=2) + "\n",
        }
    files |= {
        "expect.json": json.dumps({"implementation": name, "expected": {}}, indent=2) + "\n",
        "conformance-ci.sh": CI_SH.format(spec=ADAPTER_SPECS[language]),
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
    for path in write_files(directory, args.name, args.language):
        print(f"wrote {path}", file=out)
    first = "conformance_adapter.py" if args.language == "python" else "npm install; binding.mjs"
    print(
        f"next: in {directory}, {first}: fill in the TODOs, then "
        f"toolreg-conformance doctor --adapter {ADAPTER_SPECS[args.language]} "
        "(it names the hook behind each first failure); docs/tutorial.md walks through it",
        file=out,
    )
    return EXIT_OK
