"""The findings of a report, grouped by root cause: what the HTML page's cards show, and
what the Markdown report lists.

The failing rules whose counterexample is the same scenario (the same scenario content,
hence the same ``scenario.id``, or the same counterexample file), or whose written
finding quotes the same evidence (the same line of the same source), are one finding
that lists every rule it breaks; the differences (failures the report's contract does
not promise) are grouped the same way, apart. Read from a ``report.json`` document, the
expect file's ``expected`` entries and the loaded cases.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from conformance.reporting.page import as_dict as _dict
from conformance.reporting.page import as_list as _list
from conformance.reporting.page import short as _short
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
    "rules_of",
    "sections",
    "verdict_kind",
    "views",
]


FINDING_STATUSES: Final = frozenset({*FAILING, Status.EXPECTED_FAIL})


@dataclass
class Finding:
    key: str
    rules: list[dict[str, Any]] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)  # the rules' counterexamples, in order


def verdict_kind(rule: Mapping[str, Any]) -> str:
    status = str(rule.get("status"))
    if status == Status.EXPECTED_FAIL:
        return str(_dict(rule.get("expected")).get("status", Status.FAIL))
    return status


def primary_case(rule: Mapping[str, Any], expected: Mapping[str, Any]) -> str | None:
    """The counterexample a rule's finding shows: one of its verdict's kind, as compare does."""
    failures = [_dict(f) for f in _list(rule.get("failures"))]
    kind = verdict_kind(rule)
    for f in [*(f for f in failures if f.get("kind") == kind), *failures]:
        case = f.get("counterexample")
        if isinstance(case, str) and case:
            return case
    case = _dict(expected.get(str(rule.get("id")))).get("counterexample")
    return case if isinstance(case, str) and case else None


def scenario_key(case: Mapping[str, Any]) -> str:
    scenario = case.get("scenario")
    text = _short(scenario, limit=10**9)
    digest = hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()[:16]
    return f"scenario:{_dict(scenario).get('id')}:{digest}"


def findings_of(
    rules: Iterable[Mapping[str, Any]],
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
        mine = {f"rule:{rule.get('id')}"}
        if path is not None:
            mine.add(scenario_key(cases[path]) if path in cases else f"file:{path}")
        entry = _dict(expected.get(str(rule.get("id")))) or _dict(rule.get("expected"))
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
        finding.rules.append(dict(rule))
        path = paths[i]
        if path is not None and path not in finding.paths:
            finding.paths.append(path)
    return list(out.values())


def views(rules: Iterable[Mapping[str, Any]], differences: bool) -> list[dict[str, Any]]:
    """The rules one section shows, each with the failures it shows.

    The defects section: every failing rule (``fail``, ``error``, ``timeout``,
    ``expected-fail``) with its kept failures but the differences. The differences section:
    every rule with a kept difference, with those only; a rule that also has defects keeps
    its written finding (``expected``) for the defects section.
    """
    out = []
    for rule in rules:
        failures = [_dict(f) for f in _list(rule.get("failures"))]
        differing = [f for f in failures if f.get("kind") == Status.DIFFERENCE]
        if differences and differing:
            view = {**rule, "failures": differing}
            if str(rule.get("status")) != Status.DIFFERENCE:
                view.pop("expected", None)
            out.append(view)
        elif not differences and str(rule.get("status")) in FINDING_STATUSES:
            out.append({**rule, "failures": [f for f in failures if f not in differing]})
    return out


def expect_entry(rule: Mapping[str, Any], expected: Mapping[str, Any] | None) -> dict[str, Any]:
    if expected is not None:
        return _dict(expected.get(str(rule.get("id"))))
    return _dict(rule.get("expected"))


def rules_of(document: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [_dict(r) for r in _list(document.get("rules"))]


def failing(status: object, profile: str) -> bool:
    try:
        return Status(str(status)).fails_run(profile)
    except ValueError:
        return True  # a status the kit does not know: never hide it


def sections(
    rules: list[dict[str, Any]],
    written: Mapping[str, Any],
    cases: Mapping[str, Mapping[str, Any]],
) -> tuple[list[Finding], list[Finding], dict[str, Any]]:
    """(the defects' findings, the differences' findings, the written entries of the
    differences) as the page numbers them."""
    findings = findings_of(views(rules, False), written, cases)
    differing_views = views(rules, True)
    own = {str(r.get("id")) for r in differing_views if r.get("status") == Status.DIFFERENCE}
    written_differences = {rid: e for rid, e in written.items() if rid in own}
    differences = findings_of(differing_views, written_differences, cases)
    return findings, differences, written_differences


def numbers(findings: Sequence[Finding]) -> dict[str, int]:
    return {str(r.get("id")): n for n, f in enumerate(findings, 1) for r in f.rules}


def finding_anchors(
    document: Mapping[str, Any],
    expect: Mapping[str, Any] | None,
    cases: Mapping[str, Mapping[str, Any]],
) -> dict[str, list[str]]:
    """Rule ID -> the anchors of its cards on the report page (``finding-N`` in the
    defects, ``difference-N`` in the differences): what another page links to."""
    written = _dict(expect.get("expected")) if expect is not None else {}
    findings, differences, _ = sections(rules_of(document), written, cases)
    out: dict[str, list[str]] = {}
    for rid, n in numbers(findings).items():
        out.setdefault(rid, []).append(f"finding-{n}")
    for rid, n in numbers(differences).items():
        out.setdefault(rid, []).append(f"difference-{n}")
    return out
