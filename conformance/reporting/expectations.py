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

A ``difference`` (a rule failing only where the implementation's contract promises nothing,
:mod:`conformance.judging.contract`) never fails the run, listed or not: a listed difference
that vanished or turned into something else, a listed failure that is now a difference, and
a difference nobody listed are notes. A listed difference that is now a *defect* (``fail``)
fails the run like any unlisted failure.

Each entry may document its finding (``requires``, ``does``, ``assessment``, ``evidence``...).
``assessment`` is ``defect`` or ``difference`` (:data:`ASSESSMENTS`); the older words are
read as ``difference`` with a deprecation note (:data:`DEPRECATED_ASSESSMENTS`), and
:func:`check_assessments` says whether a ``defect`` has the evidence one needs.

:func:`updated_expectations` computes the file's next content from a run,
keeping the reasons and links already written.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.judging.contract import Contract
from conformance.judging.rules import RULES
from conformance.running.outcomes import RuleOutcome, RunResult
from conformance.scenario.schema import FixtureError, load_json
from conformance.vocab import FAILING, NOT_RUN, Status

__all__ = [
    "ASSESSMENTS",
    "DEPRECATED_ASSESSMENTS",
    "FAILING_STATUSES",
    "Expectations",
    "apply_expectations",
    "check_assessments",
    "load_expectations",
    "updated_expectations",
    "write_expectations",
]

FAILING_STATUSES = FAILING
# The statuses an expect file lists: the failing ones, and differences (which never fail).
LISTED_STATUSES = (*FAILING, Status.DIFFERENCE)
# The parts of an entry people write; --update-expect keeps them as they are.
DOCUMENTATION_KEYS = (
    "link",
    "tracker",
    "requires",
    "does",
    "assessment",
    "evidence",
    "upstream",
    "note",
    "counterexample",
)

#: A finding's ``assessment``, and what it means.
ASSESSMENTS = {
    "defect": "it breaks what the implementation itself promises (its contract's quote, a "
    "tracker reference or stated intent)",
    "difference": "a difference from DSH (the design SPEC.md describes) where the "
    "implementation promises nothing: not a defect",
}
#: The older words, read as ``difference``: none of them is evidence of a broken promise.
DEPRECATED_ASSESSMENTS = (
    "documented-choice",
    "likely-defect",
    "spec-disagreement",
    "harness-limitation",
)
#: Evidence kinds that ground a ``defect`` without a contract promise.
DEFECT_EVIDENCE = ("tracker", "intent")


@dataclass
class Expectations:
    implementation: str
    expected: dict[str, dict[str, Any]] = field(default_factory=dict)
    source: str = "<memory>"
    deprecations: list[str] = field(default_factory=list)  # notes on old vocabulary read

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
    expected = {rid: dict(entry) for rid, entry in document["expected"].items()}
    old: dict[str, list[str]] = {}  # deprecated word -> the rules written with it
    for rid, entry in expected.items():
        word = entry.get("assessment")
        if word in DEPRECATED_ASSESSMENTS:
            entry["assessment"] = "difference"
            old.setdefault(str(word), []).append(rid)
    deprecations = []
    if old:
        words = "; ".join(f"{w!r}: {', '.join(rids)}" for w, rids in sorted(old.items()))
        deprecations.append(
            f"{path}: deprecated assessments read as 'difference' ({words}); a finding "
            "is a 'defect' only with a contract promise, a tracker reference or stated "
            "intent: write 'defect' or 'difference'"
        )
    return Expectations(
        implementation=document["implementation"],
        expected=expected,
        source=str(path),
        deprecations=deprecations,
    )


def _evidence_items(entry: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    evidence = entry.get("evidence")
    if isinstance(evidence, Mapping):
        return [evidence]
    return []


def check_assessments(expectations: Expectations, contract: Contract | None) -> None:
    """Refuse (FixtureError, exit code 2) a ``defect`` without the evidence one needs.

    A ``defect`` must break what the implementation promises: the contract's promise of
    its rule (the contract quote), a tracker reference (``tracker``, or ``evidence`` of kind
    ``tracker``) or stated intent (``evidence`` of kind ``intent``). With a contract, a
    defect of a rule the contract does not promise at all is refused too: such a failure
    can only be a difference, and a difference is never called a defect.
    """
    source = expectations.source
    for rid, entry in sorted(expectations.expected.items()):
        if entry.get("assessment") != "defect":
            continue
        where = f"$.expected.{rid}.assessment"
        if contract is not None:
            if rid not in contract.promises:
                raise FixtureError(
                    source,
                    where,
                    f"'defect', but {contract.source} does not promise {rid}: its failures "
                    "are differences, and a difference is never called a defect (add the "
                    "promise, with its evidence, to the contract, or assess it 'difference')",
                )
            continue
        grounded = bool(entry.get("tracker")) or any(
            e.get("kind") in DEFECT_EVIDENCE for e in _evidence_items(entry)
        )
        if not grounded:
            raise FixtureError(
                source,
                where,
                "'defect' needs evidence that the implementation promises otherwise: a "
                "contract quote (--contract FILE, or DIR/contract.json), a tracker "
                "reference ('tracker', or evidence of kind 'tracker') or stated intent "
                "(evidence of kind 'intent'); without one it is a 'difference'",
            )


def check_against_run(expectations: Expectations, result: RunResult) -> list[str]:
    """Refuse (FixtureError) a ``defect`` on a rule the run found to be a difference; return
    a note for each ``difference`` on a rule a contract promises and the run found broken
    (a defect by that contract: fix the assessment, or the contract)."""
    notes = []
    for outcome in result.rules:
        entry = expectations.expected.get(outcome.id)
        if entry is None:
            continue
        if (
            entry.get("assessment") == "difference"
            and result.contract is not None
            and actual_status(outcome) == Status.FAIL
        ):
            notes.append(
                f"{outcome.id}: assessed 'difference' in {expectations.source}, but "
                f"{result.contract['file']} promises it and it failed: a defect by that "
                "contract (fix the assessment, or the contract)"
            )
        if entry.get("assessment") != "defect":
            continue
        if actual_status(outcome) == Status.DIFFERENCE:
            why = next((f.why for f in outcome.differences if f.why), "not promised")
            raise FixtureError(
                expectations.source,
                f"$.expected.{outcome.id}.assessment",
                f"'defect', but {outcome.id} is a difference in this run ({why}): a "
                "difference is never called a defect",
            )
    return notes


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
    hints += expectations.deprecations
    for outcome in result.rules:
        entry = expectations.expected.get(outcome.id)
        if entry is None:
            if outcome.status == Status.DIFFERENCE:
                hints.append(
                    f"{outcome.id}: a difference not listed in {source} (not a defect, "
                    "not a failure)"
                )
            continue
        outcome.expected = dict(entry)
        want = entry["status"]
        if want == Status.DIFFERENCE or outcome.status == Status.DIFFERENCE:
            hint = _difference_hint(outcome, want, source)
            if hint is not None:
                outcome.reason = hint
                hints.append(f"{outcome.id}: {hint}")
            continue
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


def _difference_hint(outcome: RuleOutcome, want: str, source: str) -> str | None:
    """The note for a rule listed as a difference, or ending in one (None: as listed).

    Only a listed difference that is now a defect, an error or a timeout keeps a failing
    status (and fails the run); every other change is a note.
    """
    status = outcome.status
    if want == status:
        return None
    if want == Status.DIFFERENCE:
        if status == Status.PASS:
            return (
                f"listed in {source} as a difference, but it passes now: remove the entry "
                "(or rerun with --update-expect); a note, not a failure"
            )
        if status in FAILING_STATUSES:
            return f"listed in {source} as a difference, but it ended in {status}" + (
                ": a defect (the contract promises it)" if status == Status.FAIL else ""
            )
        return (
            f"listed in {source} as a difference, but it was {status} in this run; "
            "the entry was not confirmed"
        )
    return (
        f"listed in {source} as an expected {want}, but it is now a difference (the "
        "contract does not promise what fails): fix the entry (or rerun with "
        "--update-expect); a note, not a failure"
    )


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
        if status in LISTED_STATUSES:
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
