"""What an implementation promises, and which of its failures are defects.

A *contract* (``fixtures/schema/contract.schema.json``; a publish directory's
``contract.json``) lists the SPEC.md rules -- or some named clauses of them -- that the
implementation's own docs, types, tracker or stated intent promise, each with that
evidence. The runner classifies every failing verdict with it (:func:`classify`):

* a failing verdict of a promised rule and clause, on a scenario the promise does not
  except, is a **defect**: the rule's status is ``fail``;
* any other failing verdict is a **difference** (from DSH, the design SPEC.md describes):
  a rule whose only failures are differences has status ``difference``, which never makes
  a run non-conformant, never gates CI as a failure and is never called a defect.

A verdict that judges the rule as a whole (``clause`` None) is promised only when the
whole rule is: it cannot be said to break a clause the contract names.

Without a contract (``None``), SPEC.md is the contract: every verdict is a defect, as it
always was for the reference and for a user's own registry.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from conformance.judging.rules import RULES
from conformance.scenario.schema import FixtureError, load_json

__all__ = [
    "DEFECT",
    "DIFFERENCE",
    "EVIDENCE_KINDS",
    "Classification",
    "Contract",
    "Evidence",
    "Excepted",
    "NotPromised",
    "Promise",
    "classify",
    "load_contract",
]

DEFECT: Final = "defect"
DIFFERENCE: Final = "difference"
#: Where a promise's words come from (contract.schema.json ``evidence.kind``).
EVIDENCE_KINDS: Final = ("docs", "types", "tracker", "intent", "source")


@dataclass(frozen=True)
class Evidence:
    kind: str
    quote: str
    source: str

    def to_json(self) -> dict[str, str]:
        return {"kind": self.kind, "quote": self.quote, "source": self.source}


@dataclass(frozen=True)
class Excepted:
    """Scenarios (a glob over scenario ids) whose failures of a promised rule are differences."""

    scenarios: str
    why: str

    def matches(self, scenario_id: str) -> bool:
        return fnmatch.fnmatchcase(scenario_id, self.scenarios)


@dataclass(frozen=True)
class Promise:
    rule: str
    promise: str
    evidence: tuple[Evidence, ...]
    clauses: frozenset[str] | None = None  # None: the whole rule
    excepted: tuple[Excepted, ...] = ()


@dataclass(frozen=True)
class NotPromised:
    rule: str
    why: str
    evidence: tuple[Evidence, ...]


@dataclass(frozen=True)
class Classification:
    """A failing verdict's kind: a defect, or a difference and why it is one."""

    kind: str  # DEFECT | DIFFERENCE
    why: str | None = None  # a difference: what makes it one

    @property
    def defect(self) -> bool:
        return self.kind == DEFECT


_DEFECT: Final = Classification(DEFECT)


@dataclass(frozen=True)
class Contract:
    implementation: str
    version: str
    basis: str
    promises: Mapping[str, Promise] = field(default_factory=dict)
    not_promised: Mapping[str, NotPromised] = field(default_factory=dict)
    source: str = "<memory>"

    def promised(self, rule_id: str) -> bool | list[str]:
        """True (the whole rule), the promised clauses, or False (not promised)."""
        promise = self.promises.get(rule_id)
        if promise is None:
            return False
        if promise.clauses is None:
            return True
        return [c for c in RULES[rule_id].clauses if c in promise.clauses]

    def notes_for(self, name: str, version: str) -> list[str]:
        """Say so when the contract is written for another implementation or version."""
        if self.implementation != name:
            return [
                f"{self.source} is written for implementation {self.implementation!r}, "
                f"but the adapter describes itself as {name!r}"
            ]
        if self.version != version:
            return [
                f"{self.source} quotes {self.implementation} {self.version}; this run is of "
                f"{version}: check that its promises still hold"
            ]
        return []

    def summary(self) -> dict[str, str]:
        """What report.json records about the contract a run was judged by."""
        return {
            "file": self.source,
            "implementation": self.implementation,
            "version": self.version,
            "basis": self.basis,
        }


def classify(
    contract: Contract | None, rule_id: str, clause: str | None, scenario_id: str
) -> Classification:
    """Is a failing verdict of ``rule_id`` (judging ``clause``, on ``scenario_id``) a defect?"""
    if contract is None:
        return _DEFECT
    promise = contract.promises.get(rule_id)
    if promise is None:
        why = f"{rule_id} is not promised by the contract"
        refusal = contract.not_promised.get(rule_id)
        return Classification(DIFFERENCE, f"{why}: {refusal.why}" if refusal else why)
    if promise.clauses is not None:
        named = ", ".join(repr(c) for c in sorted(promise.clauses))
        if clause is None:
            why = (
                f"the contract promises {rule_id} for clause(s) {named} only, and this verdict "
                "judges the rule as a whole"
            )
            return Classification(DIFFERENCE, why)
        if clause not in promise.clauses:
            why = f"clause {clause!r} of {rule_id} is not promised (the contract promises {named})"
            return Classification(DIFFERENCE, why)
    for excepted in promise.excepted:
        if excepted.matches(scenario_id):
            why = (
                f"the contract excepts scenarios {excepted.scenarios!r} from {rule_id}: "
                f"{excepted.why}"
            )
            return Classification(DIFFERENCE, why)
    return _DEFECT


def _evidence(items: list[dict[str, Any]]) -> tuple[Evidence, ...]:
    return tuple(Evidence(e["kind"], e["quote"], e["source"]) for e in items)


def _check_rule(source: str, where: str, rule_id: str) -> None:
    if rule_id not in RULES:
        raise FixtureError(
            source, where, f"{rule_id!r} is not a rule ID of this kit (toolreg-conformance rules)"
        )


def load_contract(path: str | Path) -> Contract:
    """Read and validate a contract; a malformed one raises FixtureError (exit code 2),
    naming the file and the JSON path: a schema violation, an unknown rule ID, a clause its
    rule does not declare, or a rule both promised as a whole and listed as not promised."""
    source = str(path)
    document = load_json(path, "contract")
    promises: dict[str, Promise] = {}
    for rule_id, entry in document["promises"].items():
        where = f"$.promises.{rule_id}"
        _check_rule(source, where, rule_id)
        clauses: frozenset[str] | None = None
        if "clauses" in entry:
            declared = RULES[rule_id].clauses
            for index, clause in enumerate(entry["clauses"]):
                if clause not in declared:
                    known = ", ".join(declared) or "none"
                    raise FixtureError(
                        source,
                        f"{where}.clauses[{index}]",
                        f"{clause!r} is not a clause of {rule_id} (it declares: {known})",
                    )
            clauses = frozenset(entry["clauses"])
        excepted = tuple(Excepted(e["scenarios"], e["why"]) for e in entry.get("except", []))
        promises[rule_id] = Promise(
            rule_id, entry["promise"], _evidence(entry["evidence"]), clauses, excepted
        )
    not_promised: dict[str, NotPromised] = {}
    for rule_id, entry in document.get("notPromised", {}).items():
        where = f"$.notPromised.{rule_id}"
        _check_rule(source, where, rule_id)
        promise = promises.get(rule_id)
        if promise is not None and promise.clauses is None:
            raise FixtureError(
                source,
                where,
                f"{rule_id} is promised as a whole in $.promises.{rule_id}: it cannot also be "
                "not promised (promise some of its clauses, or drop one of the entries)",
            )
        not_promised[rule_id] = NotPromised(rule_id, entry["why"], _evidence(entry["evidence"]))
    return Contract(
        implementation=document["implementation"],
        version=document["version"],
        basis=document["basis"],
        promises=promises,
        not_promised=not_promised,
        source=source,
    )
