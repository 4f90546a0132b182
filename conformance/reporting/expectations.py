"""Regression gating: compare a run's outcomes with an implementation's known failures.

An *expect file* (``fixtures/schema/expect.schema.json``) lists the rules an
implementation is known to break, with the category it breaks them in::

    {"implementation": "my-registry",
     "expected": {"PRE-3": {"status": "fail", "reason": "no approval seam yet", "link": "..."}}}

After a run, :func:`apply_expectations` rewrites the outcomes:

* a listed rule with exactly the listed status becomes ``expected-fail`` (not a failure);
* a listed rule that passes becomes ``unexpected-pass`` (fails the run: the entry is stale);
* a listed rule failing in another category (``error`` instead of ``fail``...) keeps its
  real status and fails the run, with a hint;
* an unlisted failing rule fails the run as usual.

:func:`updated_expectations` computes the file's next content from a run,
keeping the reasons and links already written.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.core.rules import RULES
from conformance.core.runner import RuleOutcome, RunResult
from conformance.core.scenario import FixtureError, load_json
from conformance.vocab import FAILING, NOT_RUN

__all__ = [
    "FAILING_STATUSES",
    "Expectations",
    "apply_expectations",
    "load_expectations",
    "updated_expectations",
    "write_expectations",
]

FAILING_STATUSES = FAILING
# The parts of an entry people write; --update-expect keeps them as they are.
DOCUMENTATION_KEYS = (
    "link",
    "tracker",
    "requires",
    "does",
    "assessment",
    "evidence",
    "counterexample",
)


@dataclass
class Expectations:
    implementation: str
    expected: dict[str, dict[str, Any]] = field(default_factory=dict)
    source: str = "<memory>"

    def to_json(self) -> dict[str, Any]:
        return {
            "implementation": self.implementation,
            "expected": {rid: dict(self.expected[rid]) for rid in sorted(self.expected)},
        }


def load_expectations(path: str | Path) -> Expectations:
    """Read and validate an expect file; a malformed one raises FixtureError (exit code 2)."""
    document = load_json(path, "expect")
    for rid in document["expected"]:
        if rid not in RULES:  # a misspelt ID would silently gate nothing
            raise FixtureError(
                str(path), f"$.expected.{rid}", f"{rid!r} is not a rule ID of this kit"
            )
    return Expectations(
        implementation=document["implementation"],
        expected={rid: dict(entry) for rid, entry in document["expected"].items()},
        source=str(path),
    )


def _first_message(outcome: RuleOutcome) -> str | None:
    problems = outcome.problems()
    return problems[0].message if problems else outcome.reason


def apply_expectations(result: RunResult, expectations: Expectations) -> list[str]:
    """Turn the run's outcomes into expected-fail / unexpected-pass; return the hints added."""
    hints: list[str] = []
    source = expectations.source
    name = result.implementation.name
    if expectations.implementation != name:
        hints.append(
            f"{source} is written for implementation {expectations.implementation!r}, "
            f"but the adapter describes itself as {name!r}"
        )
    for outcome in result.rules:
        entry = expectations.expected.get(outcome.id)
        if entry is None:
            continue
        outcome.expected = dict(entry)
        want = entry["status"]
        seen = _categories(outcome)
        if outcome.status == want and entry.get("category") and seen != {entry["category"]}:
            hint = (
                f"listed in {source} as an expected {want} of category {entry['category']}, "
                f"but its {want} is of category {', '.join(sorted(seen)) or 'none'}: "
                "a changed failure category (fix the entry, or rerun with --update-expect)"
            )
            outcome.reason = hint
            hints.append(f"{outcome.id}: {hint}")
        elif outcome.status == want:
            outcome.status = "expected-fail"
            if entry.get("reason"):
                outcome.reason = entry["reason"]
        elif outcome.status == "pass":
            outcome.status = "unexpected-pass"
            outcome.reason = (
                f"listed in {source} as an expected {want}, but it passed: "
                "remove the entry (or rerun with --update-expect)"
            )
            hints.append(f"{outcome.id}: {outcome.reason}")
        elif outcome.status in FAILING_STATUSES:
            hint = (
                f"listed in {source} as an expected {want}, but it ended in {outcome.status}: "
                "fix the entry's status (or rerun with --update-expect)"
            )
            outcome.reason = hint
            hints.append(f"{outcome.id}: {hint}")
        else:
            hints.append(
                f"{outcome.id}: listed in {source} as an expected {want}, "
                f"but it was {outcome.status} in this run; the entry was not confirmed"
            )
    known = {r.id for r in result.rules}
    for rid in sorted(set(expectations.expected) - known):
        hints.append(f"{rid}: listed in {source} but not part of this run")
    result.notes.extend(hints)
    return hints


def _categories(outcome: RuleOutcome) -> set[str]:
    """The failure categories of a rule's errors and timeouts (``fail`` has none)."""
    return {f.category for f in (*outcome.errors, *outcome.timeouts) if f.category}


def actual_status(outcome: RuleOutcome) -> str:
    """The status a rule really ended in, before --expect relabelled it."""
    if outcome.status == "expected-fail" and outcome.expected is not None:
        return str(outcome.expected["status"])
    if outcome.status == "unexpected-pass":
        return "pass"
    return outcome.status


def updated_expectations(result: RunResult, previous: Expectations | None) -> Expectations:
    """The expect file matching this run's outcomes, keeping existing reasons and links."""
    old = previous.expected if previous is not None else {}
    expected: dict[str, dict[str, Any]] = {}
    for outcome in result.rules:
        status = actual_status(outcome)
        before: Mapping[str, Any] = old.get(outcome.id, {})
        if status in FAILING_STATUSES:
            entry: dict[str, Any] = {"status": status}
            reason = before.get("reason") or _first_message(outcome)
            if reason:
                entry["reason"] = reason if len(reason) <= 300 else reason[:297] + "..."
            seen = _categories(outcome)
            if status != "fail" and len(seen) == 1:
                entry["category"] = next(iter(seen))
            for key in DOCUMENTATION_KEYS:  # written by people: never dropped
                if key in before:
                    entry[key] = before[key]
            expected[outcome.id] = entry
        elif before and status in NOT_RUN:
            expected[outcome.id] = dict(before)  # not confirmed either way: keep it
    return Expectations(result.implementation.name, expected, previous.source if previous else "")


def write_expectations(path: str | Path, expectations: Expectations) -> None:
    text = json.dumps(expectations.to_json(), indent=2, ensure_ascii=False) + "\n"
    Path(path).write_text(text, encoding="utf-8")
