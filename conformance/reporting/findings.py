"""The findings of a report, grouped by root cause: what the HTML page's cards show, and
what the Markdown report lists.

The failing rules whose counterexample is the same scenario (the same scenario content,
hence the same ``scenario.id``, or the same counterexample file), or whose written
finding quotes the same evidence (the same line of the same source), are one finding
that lists every rule it breaks; the differences (failures the report's contract does
not promise) are grouped the same way, apart. Read from the report model
(:class:`~conformance.running.outcomes.RunResult`'s rules), the expect file's ``expected``
entries and the loaded cases.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Final

from conformance.reporting.page import as_dict as _dict
from conformance.reporting.page import short as _short
from conformance.running.outcomes import RuleOutcome, RunResult
from conformance.vocab import FAILING, Status

__all__ = [
    "FINDING_STATUSES",
    "Finding",
    "expect_entry",
    "failing",
    "finding_anchors",
    "findings_of",
    "numbers",
    "primary_case",
    "sections",
    "verdict_kind",
    "views",
]


FINDING_STATUSES: Final = frozenset({*FAILING, Status.EXPECTED_FAIL})


@dataclass
class Finding:
    key: str
    #: The rules it breaks, each as its section shows it (:func:`views`).
    rules: list[RuleOutcome] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)  # the rules' counterexamples, in order


def verdict_kind(rule: RuleOutcome) -> str:
    if rule.status == Status.EXPECTED_FAIL:
        return str((rule.expected or {}).get("status", Status.FAIL))
    return str(rule.status)


def primary_case(rule: RuleOutcome, expected: Mapping[str, Any]) -> str | None:
    """The counterexample a rule's finding shows: one of its verdict's kind, as compare does."""
    failures = rule.kept()
    kind = verdict_kind(rule)
    for _, f in [*(p for p in failures if p[0] == kind), *failures]:
        if f.counterexample:
            return f.counterexample
    case = _dict(expected.get(rule.id)).get("counterexample")
    return case if isinstance(case, str) and case else None


def scenario_key(case: Mapping[str, Any]) -> str:
    scenario = case.get("scenario")
    text = _short(scenario, limit=10**9)
    digest = hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()[:16]
    return f"scenario:{_dict(scenario).get('id')}:{digest}"


def findings_of(
    rules: Iterable[RuleOutcome],
    expected: Mapping[str, Any],
    cases: Mapping[str, Mapping[str, Any]],
) -> list[Finding]:
    """Rules (their section's view: :func:`views`) grouped by root cause: rules whose
    counterexample is the same scenario (or file), or whose written finding quotes the same
    evidence (the same line of the same source), are one finding. Groups are the connected
    parts of "shares a key"."""
    failing = list(rules)
    paths: list[str | None] = []
    keys: list[set[str]] = []
    for rule in failing:
        path = primary_case(rule, expected)
        paths.append(path)
        mine = {f"rule:{rule.id}"}
        if path is not None:
            mine.add(scenario_key(cases[path]) if path in cases else f"file:{path}")
        entry = _dict(expected.get(rule.id)) or (rule.expected or {})
        evidence = _dict(entry.get("evidence"))
        if evidence.get("quote") and evidence.get("source"):
            mine.add(f"evidence:{evidence['source']}|{evidence['quote']}")
        keys.append(mine)
    # union-find over the rules, joined by any key they share
    parent = list(range(len(failing)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    first: dict[str, int] = {}
    for i, mine in enumerate(keys):
        for key in sorted(mine):
            if key in first:
                parent[root(i)] = root(first[key])
            else:
                first[key] = i
    out: dict[int, Finding] = {}
    for i, rule in enumerate(failing):
        group = root(i)
        finding = out.setdefault(group, Finding(min(keys[group])))
        finding.rules.append(rule)
        path = paths[i]
        if path is not None and path not in finding.paths:
            finding.paths.append(path)
    return list(out.values())


def views(rules: Iterable[RuleOutcome], differences: bool) -> list[RuleOutcome]:
    """The rules one section shows, each with the failures it shows (a copy of its outcome).

    The defects section: every failing rule (``fail``, ``error``, ``timeout``,
    ``expected-fail``) with its kept failures but the differences. The differences section:
    every rule with a kept difference, with those only; a rule that also has defects keeps
    its written finding (``expected``) for the defects section.
    """
    out = []
    for rule in rules:
        if differences and rule.differences:
            own = rule.status == Status.DIFFERENCE
            out.append(
                replace(
                    rule,
                    failures=[],
                    errors=[],
                    timeouts=[],
                    expected=rule.expected if own else None,
                )
            )
        elif not differences and str(rule.status) in FINDING_STATUSES:
            out.append(replace(rule, differences=[]))
    return out


def expect_entry(rule: RuleOutcome, expected: Mapping[str, Any] | None) -> dict[str, Any]:
    if expected is not None:
        return _dict(expected.get(rule.id))
    return rule.expected or {}


def failing(status: object, profile: str) -> bool:
    try:
        return Status(str(status)).fails_run(profile)
    except ValueError:
        return True  # a status the kit does not know: never hide it


def sections(
    rules: Sequence[RuleOutcome],
    written: Mapping[str, Any],
    cases: Mapping[str, Mapping[str, Any]],
) -> tuple[list[Finding], list[Finding], dict[str, Any]]:
    """(the defects' findings, the differences' findings, the written entries of the
    differences) as the page numbers them."""
    findings = findings_of(views(rules, False), written, cases)
    differing_views = views(rules, True)
    own = {r.id for r in differing_views if r.status == Status.DIFFERENCE}
    written_differences = {rid: e for rid, e in written.items() if rid in own}
    differences = findings_of(differing_views, written_differences, cases)
    return findings, differences, written_differences


def numbers(findings: Sequence[Finding]) -> dict[str, int]:
    return {r.id: n for n, f in enumerate(findings, 1) for r in f.rules}


def finding_anchors(
    result: RunResult,
    expect: Mapping[str, Any] | None,
    cases: Mapping[str, Mapping[str, Any]],
) -> dict[str, list[str]]:
    """Rule ID -> the anchors of its cards on the report page (``finding-N`` in the
    defects, ``difference-N`` in the differences): what another page links to."""
    written = _dict(expect.get("expected")) if expect is not None else {}
    findings, differences, _ = sections(result.rules, written, cases)
    out: dict[str, list[str]] = {}
    for rid, n in numbers(findings).items():
        out.setdefault(rid, []).append(f"finding-{n}")
    for rid, n in numbers(differences).items():
        out.setdefault(rid, []).append(f"difference-{n}")
    return out
