"""The shape every rule predicate has (as jsonschema's ``_keywords.py`` has one per keyword).

A rule is a function named after its ID (``PRE_3``) with one uniform
signature ``(view) -> Iterator[Verdict]``: the :class:`~conformance.judging.model.View`
of one (scenario, trace), built once per scenario and shared by every predicate
(which therefore never mutates it). It yields one verdict
per instance of its *premise* in the scenario -- a call the rule speaks about,
a query, a registration -- ``ok`` or not, with a message saying what the rule
required and what the trace shows. Zero verdicts means the premise never held:
the rule was not exercised by that scenario.

Predicates compute what the spec requires from the scenario and the events
the kit's own scripted callables recorded -- never by asking an
implementation -- and never depend on message wording, listener bookkeeping or
timing the spec leaves open.

A failing verdict also *points* at what it rests on: the call id it is about (``call``)
and the positions in ``trace["events"]`` that show the violation (``events``). The
runner keeps them per failure (``report.json``, the counterexample case) and the report's
timeline highlights exactly those; a verdict without pointers highlights nothing (issue
24): every predicate fills them (:meth:`~conformance.judging.model.View.at`) except for a
verdict about an action that is no call (a registration, a ``schemas`` listing), which has
no lane to point at.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from conformance.judging.model import View

__all__ = [
    "CHECKERS",
    "RULES",
    "BlockCheck",
    "Check",
    "Rule",
    "Verdict",
    "checker",
    "fail",
    "ok",
    "require",
    "rule",
    "untested",
]

Scenario = Mapping[str, Any]
Trace = Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Verdict:
    ok: bool
    subject: str  # what the premise was about: a call id, "schemas(main)", a registration key
    message: str = ""
    #: Which of the rule's named clauses (``Rule.clauses``) this verdict judges; None: the
    #: rule as a whole. A rule set or a contract may select a rule for some clauses only.
    clause: str | None = None
    #: The call id the verdict is about (a lane of the timeline), when it is about one call.
    call: str | None = None
    #: The indices in ``trace["events"]`` the verdict rests on (what the timeline marks).
    events: tuple[int, ...] = ()
    #: An action that is no call (a ``schemas`` listing, a ``register``) whose answer the
    #: verdict is about: its index in the scenario's actions (the timeline marks its answer).
    action: int | None = None
    #: A set-up registration whose outcome the verdict is about: its index in
    #: ``trace["registrations"]`` (the timeline lists it, marked).
    registration: int | None = None

    @property
    def points(self) -> bool:
        """Whether the verdict carries a pointer (a call, an event index, an action or a
        set-up registration)."""
        return (
            self.call is not None
            or bool(self.events)
            or self.action is not None
            or self.registration is not None
        )


Check = Callable[[View], Iterator[Verdict]]
# A checker that speaks for several rules at once (a fixture's ``expect`` block):
# rule ID -> the verdicts it adds to that rule's own.
BlockCheck = Callable[[View], Mapping[str, list[Verdict]]]


@dataclass(frozen=True)
class Rule:
    id: str
    title: str
    check: Check | None  # None: not black-box checkable (see ``untested``)
    untested: str | None = None  # why it cannot be checked black-box
    #: The rule's named clauses (name -> what it requires), when its verdicts say which one
    #: they judge (``Verdict.clause``); empty: the rule is one clause.
    clauses: Mapping[str, str] = field(default_factory=dict)

    @property
    def group(self) -> str:
        return self.id.split("-")[0]


RULES: dict[str, Rule] = {}
CHECKERS: list[BlockCheck] = []


def rule(
    rule_id: str, title: str, *, clauses: Mapping[str, str] | None = None
) -> Callable[[Check], Check]:
    """Register ``fn`` as the predicate of ``rule_id``. Its name must be the ID.

    ``clauses`` names the parts of the rule its verdicts judge separately (each verdict's
    ``clause`` is one of them), so a rule set or a contract can select some of them.
    """

    def register(fn: Check) -> Check:
        if fn.__name__ != rule_id.replace("-", "_"):
            raise ValueError(f"predicate {fn.__name__} must be named {rule_id.replace('-', '_')}")
        if rule_id in RULES:
            raise ValueError(f"rule {rule_id} registered twice")
        RULES[rule_id] = Rule(rule_id, title, fn, clauses=dict(clauses or {}))
        return fn

    return register


def untested(rule_id: str, title: str, reason: str) -> None:
    """Declare a rule that cannot be checked black-box, with the reason (as the RS TCK does)."""
    RULES[rule_id] = Rule(rule_id, title, None, reason)


def checker(fn: BlockCheck) -> BlockCheck:
    """Register ``fn`` as a checker consulted with every rule predicate (see :data:`BlockCheck`).

    Its verdicts count for the rule IDs it names, when those rules are judged.
    """
    CHECKERS.append(fn)
    return fn


def ok(subject: str) -> Verdict:
    return Verdict(True, subject)


def fail(
    subject: str,
    message: str,
    *,
    clause: str | None = None,
    call: str | None = None,
    events: Iterable[int] = (),
    action: int | None = None,
    registration: int | None = None,
) -> Verdict:
    """A failure saying ``message``, pointing at ``call`` and the trace ``events`` it rests
    on, or at a non-call ``action`` (see :func:`require`)."""
    return Verdict(
        False,
        subject,
        message,
        clause,
        call,
        _indices(events),
        _action(action),
        _action(registration),
    )


def require(
    condition: bool,
    subject: str,
    message: str,
    clause: str | None = None,
    *,
    call: str | None = None,
    events: Iterable[int] = (),
    action: int | None = None,
    registration: int | None = None,
) -> Verdict:
    """One verdict: ok when ``condition`` holds, else a failure saying ``message``; ``clause``
    names the clause of its rule it judges (``Rule.clauses``), None the rule as a whole.

    ``call`` (the call id the verdict is about) and ``events`` (indices in
    ``trace["events"]``: what shows the violation) are the failure's pointers: the report's
    timeline marks exactly them. A verdict about the answer of an action that is no call (a
    ``schemas`` listing, a ``register``) points at it by its index in the scenario's
    ``actions`` (``action``); one about a set-up registration's outcome by its index in
    ``trace["registrations"]`` (``registration``). An ok verdict keeps none.
    """
    if condition:
        return _held(subject, clause)
    return Verdict(
        False,
        subject,
        message,
        clause,
        call,
        _indices(events),
        _action(action),
        _action(registration),
    )


@functools.lru_cache(maxsize=4096)
def _held(subject: str, clause: str | None) -> Verdict:
    """The ok verdict about ``subject`` (of ``clause``): a verdict is immutable and an ok one
    carries nothing else, so one is shared (most verdicts hold; making each anew is a
    measurable part of judging)."""
    return Verdict(True, subject, clause=clause)


def _action(action: int | None) -> int | None:
    """An action (or registration) pointer: an index, or None."""
    if action is not None and (
        isinstance(action, bool) or not isinstance(action, int) or action < 0
    ):
        raise ValueError(f"an action or registration pointer is an index, not {action!r}")
    return action


def _indices(events: Iterable[int]) -> tuple[int, ...]:
    """Event indices, ascending and each once; a negative or non-integer one is a kit bug."""
    given = list(events)
    for index in given:
        if isinstance(index, bool) or not isinstance(index, int) or index < 0:
            raise ValueError(f"an event pointer is an index into trace['events'], not {index!r}")
    return tuple(sorted(set(given)))
