"""The shape every rule predicate has (as jsonschema's ``_keywords.py`` has one per keyword).

A rule is a function named after its ID (``PRE_3``) with one uniform
signature ``(scenario, trace) -> Iterator[Verdict]``. It yields one verdict
per instance of its *premise* in the scenario -- a call the rule speaks about,
a query, a registration -- ``ok`` or not, with a message saying what the rule
required and what the trace shows. Zero verdicts means the premise never held:
the rule was not exercised by that scenario.

Predicates compute what the spec requires from the scenario and the events
the kit's own scripted callables recorded -- never by asking an
implementation -- and never depend on message wording, listener bookkeeping or
timing the spec leaves open.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["RULES", "Rule", "Verdict", "rule", "untested"]

Scenario = Mapping[str, Any]
Trace = Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Verdict:
    ok: bool
    subject: str  # what the premise was about: a call id, "schemas(main)", a registration key
    message: str = ""


Check = Callable[[Scenario, Trace], Iterator[Verdict]]


@dataclass(frozen=True)
class Rule:
    id: str
    title: str
    check: Check | None  # None: not black-box checkable (see ``untested``)
    untested: str | None = None  # why it cannot be checked black-box

    @property
    def group(self) -> str:
        return self.id.split("-")[0]


RULES: dict[str, Rule] = {}


def rule(rule_id: str, title: str) -> Callable[[Check], Check]:
    """Register ``fn`` as the predicate of ``rule_id``. Its name must be the ID."""

    def register(fn: Check) -> Check:
        if fn.__name__ != rule_id.replace("-", "_"):
            raise ValueError(f"predicate {fn.__name__} must be named {rule_id.replace('-', '_')}")
        if rule_id in RULES:
            raise ValueError(f"rule {rule_id} registered twice")
        RULES[rule_id] = Rule(rule_id, title, fn)
        return fn

    return register


def untested(rule_id: str, title: str, reason: str) -> None:
    """Declare a rule that cannot be checked black-box, with the reason (as the RS TCK does)."""
    RULES[rule_id] = Rule(rule_id, title, None, reason)


def ok(subject: str) -> Verdict:
    return Verdict(True, subject)


def fail(subject: str, message: str) -> Verdict:
    return Verdict(False, subject, message)


def expect(condition: bool, subject: str, message: str) -> Verdict:
    """One verdict: ok when ``condition`` holds, else a failure saying ``message``."""
    return Verdict(True, subject) if condition else Verdict(False, subject, message)
