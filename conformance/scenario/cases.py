"""The counterexample case format: ``fixtures/schema/case.schema.json``, one way to name a
case file, one way to write and to read one.

A case is what a run writes to ``DIR/counterexamples/``, ``publish`` to
``cases/<RULE>.json`` and the executable spec beside each rule's page; ``replay`` re-runs
it. It is validated where it is written (:func:`case_text`) and where it is read
(:func:`read_case`), a bad one named by file and JSON path.

A report or an expect file names a case by a path relative to its own directory: that
directory is the one base (:func:`case_path`). One explicit rule keeps the reports of
earlier runners readable: they wrote the path as the runner saw it (relative to its cwd,
or absolute), always ``<report dir>/counterexamples/<name>``; such a path -- a
``counterexamples`` segment that is not its first -- is read from that segment on.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import Any, Final

from conformance.scenario.bounds import counterexample_text
from conformance.scenario.schema import load_json, validate

__all__ = ["CASES_DIR", "case_path", "case_text", "read_case"]

#: Where a run writes its counterexamples, inside its report directory.
CASES_DIR: Final = "counterexamples"


def case_path(base: Path, written: str) -> Path:
    """The file a report (or expect file) in directory ``base`` names by ``written``."""
    parts = PurePosixPath(written.replace("\\", "/")).parts
    if CASES_DIR in parts[1:]:  # an earlier runner's path: <its report dir>/counterexamples/…
        last = len(parts) - 1 - parts[::-1].index(CASES_DIR)
        return base.joinpath(*parts[last:])
    return base / written


def case_text(case: Mapping[str, Any], source: str) -> str:
    """A case as the bounded JSON text to write (``counterexample_text``), checked against
    the case schema (FixtureError naming ``source`` and the JSON path if it breaks it)."""
    text = counterexample_text(case)
    validate(json.loads(text), "case", source)
    return text


def read_case(path: str | Path) -> dict[str, Any]:
    """A case file, validated (FixtureError naming the file and JSON path)."""
    document: dict[str, Any] = load_json(path, "case")
    return document
