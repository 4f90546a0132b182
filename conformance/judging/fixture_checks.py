"""The ``expect`` block of a fixture, judged generically: a checker of the rule table.

Fixtures carry an explicit ``expect`` block so other-language projects can
use ``fixtures/`` without Python. The Python kit checks it too, as one more
entry of the rule table (:func:`~conformance.judging.rules.checker`), beside the
predicates' verdicts. (Not to be confused with ``--expect``, the regression
gating of :mod:`conformance.reporting.expectations`.)

Each key of a call's expectation speaks for the rule that owns it, never for
every rule the fixture lists (one behaviour is one finding):

* a key one rule owns (:data:`OWNED_KEYS`) speaks for that rule, whatever the
  fixture is for: ``resultNotifications`` for RES-1, ``finalizerCalls`` for
  FIN-2, ``concludesTurn`` for CTX-2, ``additionalContexts`` for the
  fixture's own rule when that rule judges contexts (CTX-1, POST-5), else for
  CTX-1;
* every other key (``isError``, ``code``, ``value``, ``content``,
  ``bodyEntered``, ``stagesEntered``...) speaks for the fixture's own rule:
  the rule of its directory (``fixtures/rules/<ID>/``), or the first rule an
  example or regression lists -- unless the call's expectation names
  ``rules`` explicitly, then for those.

A verdict for a rule with named clauses says which clause it judges: the one
an explicit ``"ID:clause"`` names, else the clause :data:`KEY_CLAUSES` gives
the key. A call closed in a form the implementation declares (the run raised,
or stopped for an approval answer) is judged only on what such a call can
show: no key that only a result has (:data:`RESULT_ONLY`), and no observer
notification or finalizer run is demanded of it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from conformance.judging.model import CallView, View
from conformance.judging.rules import Verdict, checker
from conformance.judging.rules._base import require

__all__ = [
    "CONTEXT_RULES",
    "KEY_CLAUSES",
    "OWNED_KEYS",
    "RESULT_ONLY",
    "fixture_block",
    "own_rule",
    "owners",
]

#: Keys of a call's expectation that one rule owns, with the clause they judge.
OWNED_KEYS: Final[Mapping[str, tuple[str, str | None]]] = {
    "resultNotifications": ("RES-1", "once"),
    "finalizerCalls": ("FIN-2", None),
    "concludesTurn": ("CTX-2", None),
    "additionalContexts": ("CTX-1", None),  # or the fixture's own rule, in CONTEXT_RULES
}

#: The rules that judge a result's ``additionalContexts``: a fixture of one of them has its
#: contexts judged by it (POST-5's ordering on accept and block), any other by CTX-1.
CONTEXT_RULES: Final = frozenset({"CTX-1", "POST-5"})

#: The clause each key judges, for a rule with named clauses ("*": every other key).
KEY_CLAUSES: Final[Mapping[str, Mapping[str, str]]] = {
    "CANCEL-2": {
        "bodyEntered": "body",
        "stagesEntered": "stages",
        "stagesNotEntered": "stages",
        "*": "code",
    },
    "DEF-2": {"*": "copy"},
    "PIPE-3": {"*": "arguments"},
    "PRE-4": {"*": "answers"},
    "RES-1": {"resultNotifications": "once", "*": "frozen"},
    "RES-2": {"*": "agree"},
}

#: What only an error *result* can show: a call closed in another declared form (the run
#: raised, or stopped for approval) is not judged on these. No rule demands an observer
#: notification, or a finalizer run, from a call that has no result.
RESULT_ONLY: Final = frozenset(
    {
        "code",
        "codeOneOf",
        "value",
        "content",
        "concludesTurn",
        "additionalContexts",
        "resultNotifications",
        "finalizerCalls",
    }
)

Owner = tuple[str, str | None]  # (rule ID, clause)


def own_rule(fixture: Mapping[str, Any]) -> str | None:
    """The rule a fixture is for: its directory's (``rules/<ID>/...``), else the first it
    lists (an example, a regression)."""
    parts = str(fixture.get("id", "")).split("/")
    if len(parts) >= 3 and parts[0] == "rules":
        return parts[1]
    listed = fixture.get("rules") or []
    return str(listed[0]) if listed else None


def _named(entry: str) -> Owner:
    rule_id, _, clause = entry.partition(":")
    return rule_id, clause or None


def owners(fixture: Mapping[str, Any], key: str, explicit: Sequence[str] | None) -> list[Owner]:
    """The (rule, clause) pairs key ``key`` of a call's expectation speaks for."""
    own = own_rule(fixture)
    if key in OWNED_KEYS:
        rule_id, clause = OWNED_KEYS[key]
        if key == "additionalContexts" and own in CONTEXT_RULES:
            rule_id = own
        return [(rule_id, clause)]
    named: list[Owner] = []
    if explicit:
        named = [_named(e) for e in explicit]
    elif own is not None:
        named = [(own, None)]
    out: list[Owner] = []
    for rule_id, clause in named:
        table = KEY_CLAUSES.get(rule_id, {})
        out.append((rule_id, clause or table.get(key) or table.get("*")))
    return out


def _problems(view: View, call: CallView, want: Mapping[str, Any]) -> dict[str, str]:
    """key -> what is wrong with the call there (only the keys that are)."""
    result = call.result or {}
    out: dict[str, str] = {}
    closed_otherwise = call.closed_otherwise()
    if closed_otherwise is not None:
        if want.get("isError") is False:
            out["isError"] = f"it should have succeeded; it closed: {closed_otherwise}"
    elif "isError" in want and call.is_error != want["isError"]:
        out["isError"] = f"isError should be {want['isError']}"
    if want.get("code") is not None and call.code != want["code"]:
        out["code"] = f"error code should be {want['code']}, got {call.code}"
    if "codeOneOf" in want and call.code not in want["codeOneOf"]:
        out["codeOneOf"] = f"error code should be one of {want['codeOneOf']}, got {call.code}"
    if "value" in want and result.get("value") != want["value"]:
        out["value"] = f"value should be {want['value']!r}"
    if "content" in want and result.get("content") != want["content"]:
        out["content"] = "content differs from the expected content"
    if "bodyEntered" in want and call.body_entered != want["bodyEntered"]:
        out["bodyEntered"] = f"body {'should' if want['bodyEntered'] else 'should not'} have run"
    if "finalizerCalls" in want and call.finalizer_calls != want["finalizerCalls"]:
        expected = want["finalizerCalls"]
        out["finalizerCalls"] = f"finalizeContent ran {call.finalizer_calls}x, expected {expected}"
    if "resultNotifications" in want:
        observers = max(1, len(view.listeners("observers", call.spec.get("agent"))))
        seen = call.notifications / observers
        if seen != want["resultNotifications"]:
            expected = want["resultNotifications"]
            out["resultNotifications"] = f"{seen:g} tools/result notifications, expected {expected}"
    missing = [
        stage
        for stage in want.get("stagesEntered", [])
        if not call.entered(stage)
        and not (stage == "approval" and any(e.get("stage") == "approval" for e in call.events))
    ]
    if missing:
        out["stagesEntered"] = f"stages {missing} should have been entered"
    extra = [
        stage
        for stage in want.get("stagesNotEntered", [])
        if any(e.get("stage") == stage for e in call.events)
    ]
    if extra:
        out["stagesNotEntered"] = f"stages {extra} should not have been entered"
    if "concludesTurn" in want and bool(result.get("concludesTurn")) != want["concludesTurn"]:
        out["concludesTurn"] = f"concludesTurn should be {want['concludesTurn']}"
    if (
        "additionalContexts" in want
        and result.get("additionalContexts", []) != want["additionalContexts"]
    ):
        out["additionalContexts"] = "additionalContexts differ from the expected ones"
    if "messageContains" in want and want["messageContains"] not in call.message():
        out["messageContains"] = f"error.message should mention {want['messageContains']!r}"
    return out


@checker
def fixture_block(view: View) -> dict[str, list[Verdict]]:
    """The verdicts of a fixture's ``expect`` block, per rule ID it speaks for: one per
    (call, rule, clause) its keys speak for."""
    fixture = view.scenario
    expectations = fixture.get("expect") or {}
    out: dict[str, list[Verdict]] = {}
    by_id = {c.id: c for c in view.calls}
    for call_id, want in expectations.items():
        call = by_id.get(call_id)
        subject = f"expect[{call_id}]"
        explicit = want.get("rules")
        keys = [k for k in want if k != "rules"]
        if call is not None and call.raised and call.closed_otherwise() is None:
            continue  # the implementation crashed: recorded as an error, not judged as a fail
        if call is not None and call.closed_otherwise() is not None:
            keys = [k for k in keys if k not in RESULT_ONLY]
        by_owner: dict[Owner, list[str]] = {}
        for key in keys:
            for owner in owners(fixture, key, explicit):
                by_owner.setdefault(owner, [])
        if call is None or not call.answered:
            for rule_id, clause in by_owner:
                out.setdefault(rule_id, []).append(
                    # about the call's answer: its lane's answer is what is marked
                    Verdict(False, subject, "the call returned no result", clause, call_id)
                )
            continue
        for key, problem in _problems(view, call, {k: want[k] for k in keys}).items():
            for owner in owners(fixture, key, explicit):
                by_owner[owner].append(problem)
        for (rule_id, clause), problems in by_owner.items():
            out.setdefault(rule_id, []).append(
                # about the call's answer (what the block expects of it): the answer is marked
                require(not problems, subject, "; ".join(problems), clause, call=call_id)
            )
    return out
