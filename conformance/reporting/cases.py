"""Reading the cases a report names, for its renderers: :func:`load_cases` finds each one
from the one base its path has (:func:`conformance.scenario.cases.case_path`), validated,
and the page's link to it; a missing or invalid one is listed with why.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from conformance.scenario.cases import case_path, read_case
from conformance.scenario.schema import FixtureError

if TYPE_CHECKING:
    from conformance.running.outcomes import RunResult

__all__ = ["CaseFiles", "link", "load_cases", "named"]


def link(target: str | Path, base: Path) -> str:
    """A relative, percent-encoded link from ``base`` (a directory) to ``target``."""
    relative = Path(os.path.relpath(Path(target).resolve(), base.resolve())).as_posix()
    return quote(relative)


@dataclass
class CaseFiles:
    cases: dict[str, dict[str, Any]] = field(default_factory=dict)  # path as written -> case
    links: dict[str, str] = field(default_factory=dict)  # path as written -> href from the page
    missing: dict[str, str] = field(default_factory=dict)  # path as written -> why not loaded


def _paths(result: RunResult) -> list[str]:
    """The case paths a report names, in order, each once."""
    found: list[str] = []
    for rule in result.rules:
        for _, failure in rule.kept():
            case = failure.counterexample
            if case and case not in found:
                found.append(case)
    return found


def _expected_paths(expect: Mapping[str, Any] | None) -> list[str]:
    """The case paths an expect file's findings name, in order, each once."""
    expected = (expect or {}).get("expected")
    found: list[str] = []
    for entry in expected.values() if isinstance(expected, dict) else []:
        case = entry.get("counterexample") if isinstance(entry, dict) else None
        if isinstance(case, str) and case and case not in found:
            found.append(case)
    return found


def named(result: RunResult, expect: Mapping[str, Any] | None) -> list[str]:
    """Every case path the report and the expect file name, in order, each once."""
    out = _paths(result)
    return out + [p for p in _expected_paths(expect) if p not in out]


def load_cases(
    result: RunResult,
    expect: Mapping[str, Any] | None,
    report_dir: Path,
    expect_dir: Path | None,
    page_dir: Path,
) -> CaseFiles:
    """Load every case the report (and the expect file) names.

    The report's paths are relative to ``report_dir``, the expect file's to ``expect_dir``
    (:func:`case_path`); links are relative to ``page_dir`` (:func:`link`).
    A missing or invalid file is listed in ``missing`` with why, never an error.
    """
    found = CaseFiles()
    named: Iterable[tuple[str, Path]] = [
        *((w, report_dir) for w in _paths(result)),
        *((w, expect_dir or report_dir) for w in _expected_paths(expect)),
    ]
    for written, base in named:
        if written in found.cases or written in found.missing:
            continue
        path = case_path(base, written)
        if not path.is_file():
            found.missing[written] = "not found"
            continue
        try:
            case = read_case(path)
        except FixtureError as e:
            found.missing[written] = f"not a case: {e.path}: {e.message}"
            continue
        found.cases[written] = case
        found.links[written] = link(path, page_dir)
    return found
