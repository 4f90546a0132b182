"""What a run does, in order: the rules it selects and the units of work that judge them.

``--rules`` is read by :func:`select` (IDs, globs, ``ID:clause``, named sets); the units
are the fixtures (bundled, examples, regressions) and the attack-surface sweep, then one
property per rule (:func:`plan`), or a frozen corpus's scenarios (:func:`corpus_units`).
"""

from __future__ import annotations

import fnmatch
import itertools
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conformance.judging.rule_sets import RULE_SETS
from conformance.judging.rules import FOCUS, RULES
from conformance.scenario.corpus import Corpus, Entry
from conformance.scenario.schema import FIXTURES, load_json, validate
from conformance.scenario.surface import cells, probe_scenario

__all__ = [
    "CORPUS_PER_UNIT",
    "FIXTURES_PER_UNIT",
    "Unit",
    "corpus_units",
    "fixture_files",
    "load_fixtures",
    "plan",
    "select",
    "select_rules",
    "surface_sweep",
]


FIXTURES_PER_UNIT = 12  # fixtures handed to a worker at once (-j N)
CORPUS_PER_UNIT = 100  # corpus scenarios of one source in one unit


def _shown(path: Path) -> str:
    """A fixture's path as a user would name it: relative to the bundled fixtures if it is one."""
    try:
        return str(Path("fixtures") / path.relative_to(FIXTURES))
    except ValueError:
        return str(path)


def fixture_files(rule_ids: Sequence[str]) -> list[Path]:
    """Fixture files relevant to the selected rules (all examples and regressions always run).

    A rule's fixtures are those in its own directory and every other bundled fixture whose
    ``rules`` name it (``rules/EXEC-5/timeout-waits-for-the-body`` is CANCEL-4's too): a run
    of some rules judges every scenario written for them, wherever it is filed."""
    selected = set(rule_ids)
    files: list[Path] = []
    for rid in rule_ids:
        files += sorted((FIXTURES / "rules" / rid).glob("*.json"))
    files += [
        path
        for path in sorted((FIXTURES / "rules").glob("*/*.json"))
        if path.parent.name not in selected and selected & _named_rules(path)
    ]
    files += sorted((FIXTURES / "examples").glob("*.json"))
    files += sorted((FIXTURES / "regressions").glob("*.json"))
    return files


def _named_rules(path: Path) -> set[str]:
    """The rules a bundled fixture file names (its ``rules``; malformed: none, so that
    :func:`load_fixtures` reports it when its own rule is selected)."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return set()
    named = document.get("rules", []) if isinstance(document, dict) else []
    return {r for r in named if isinstance(r, str)} if isinstance(named, list) else set()


def select(patterns: str | None) -> dict[str, frozenset[str] | None]:
    """The :data:`~conformance.judging.rule_sets.Selection` ``patterns`` names (``None``: every
    rule, whole), in SPEC order.

    ``patterns`` is comma-separated; each item is

    * a rule ID or a glob (``PRE-3``, ``PRE-*``): those rules, every clause;
    * ``ID:clause+clause`` (one exact rule ID): that rule judged on those clauses only
      (its ``Rule.clauses``; ``toolreg-conformance rules`` lists them);
    * a rule set's name (:data:`~conformance.judging.rule_sets.RULE_SETS`, e.g. ``portable``):
      its rules this kit has, on the clauses the set names.

    A rule named twice gets the union (a whole rule wins over some of its clauses). Every
    item must name at least one rule and every clause must be one its rule declares: a
    misspelt ID or clause is a ValueError, never silently dropped, and so is an empty list.
    """
    if patterns is None:
        return dict.fromkeys(RULES)
    items = [p.strip() for p in patterns.split(",") if p.strip()]
    if not items:
        raise ValueError(f"--rules {patterns!r} names no rule (e.g. 'PRE-*,FIN-2')")
    chosen: dict[str, frozenset[str] | None] = {}

    def add(rule_id: str, clauses: frozenset[str] | None) -> None:
        if rule_id in chosen:
            before = chosen[rule_id]
            chosen[rule_id] = None if before is None or clauses is None else before | clauses
        else:
            chosen[rule_id] = clauses

    unmatched: list[str] = []
    for item in items:
        if item in RULE_SETS:  # a named set stands for its rules this kit has
            for rule_id, clauses in RULE_SETS[item].items():
                if rule_id in RULES:
                    add(rule_id, _clauses(rule_id, clauses, f"rule set {item!r}"))
        elif ":" in item:
            rule_id, _, named = item.partition(":")
            rule_id = rule_id.strip()
            if rule_id not in RULES:
                raise ValueError(
                    f"--rules {item!r}: a clause selection needs one exact rule ID before the "
                    f"':' ({rule_id!r} is none; toolreg-conformance rules lists them)"
                )
            wanted = [c.strip() for c in named.split("+")]
            if not all(wanted):
                raise ValueError(f"--rules {item!r}: name the clauses as ID:clause+clause")
            add(rule_id, _clauses(rule_id, frozenset(wanted), f"--rules {item!r}"))
        else:
            matched = [rid for rid in RULES if fnmatch.fnmatchcase(rid, item)]
            if not matched:
                unmatched.append(item)
            for rule_id in matched:
                add(rule_id, None)
    if unmatched:
        names = ", ".join(repr(p) for p in unmatched)
        raise ValueError(
            f"--rules: {names} matches no rule ID (toolreg-conformance rules lists them)"
        )
    return {rid: chosen[rid] for rid in RULES if rid in chosen}


def _clauses(rule_id: str, clauses: frozenset[str] | None, where: str) -> frozenset[str] | None:
    """``clauses`` of ``rule_id``, each checked against the clauses the rule declares."""
    if clauses is None:
        return None
    declared = RULES[rule_id].clauses
    unknown = sorted(clauses - set(declared))
    if unknown:
        known = ", ".join(declared) or "none"
        raise ValueError(
            f"{where}: {', '.join(repr(c) for c in unknown)} is not a clause of {rule_id} "
            f"(it declares: {known})"
        )
    return clauses


def select_rules(patterns: str | None) -> list[str]:
    """The rule IDs ``patterns`` (``None``: every rule) names, in SPEC order (see
    :func:`select`, which also says which clauses of each)."""
    return list(select(patterns))


@dataclass(frozen=True)
class Unit:
    """One unit of a run's work: some fixtures (``rule`` None) or the property of ``rule``."""

    label: str
    rule: str | None = None
    fixtures: tuple[Mapping[str, Any], ...] = ()
    names: tuple[str, ...] = ()  # the fixtures' paths, as a user names them
    #: Corpus entries, run after ``fixtures``: each made a fixture only when it runs (a run
    #: that stops at its first failure parses no more of the corpus than it judged).
    entries: tuple[Entry, ...] = ()

    @property
    def targets(self) -> set[str]:
        """The rules whose sources this unit holds."""
        if self.rule is not None:
            return {self.rule}
        return {str(r) for fixture in self.fixtures for r in fixture.get("rules", [])} | {
            r for entry in self.entries for r in entry.targets
        }

    def scenarios(self) -> Iterator[tuple[Mapping[str, Any], str | None]]:
        """The unit's fixtures in order, each with its name (None: unnamed)."""
        names = self.names or (None,) * (len(self.fixtures) + len(self.entries))
        made = (entry.as_fixture() for entry in self.entries)
        yield from zip(itertools.chain(self.fixtures, made), names, strict=True)


def load_fixtures(rule_ids: Sequence[str]) -> list[tuple[str, Mapping[str, Any]]]:
    """(shown path, scenario) of every fixture the selected rules run, validated."""
    out: list[tuple[str, Mapping[str, Any]]] = []
    for path in fixture_files(rule_ids):
        document = load_json(path)
        if path.parent.name == "regressions":  # a saved counterexample case
            fixture = {**document["scenario"], "rules": [document["rule"]]}
        else:
            fixture = document
        validate(fixture, "scenario", str(path))
        out.append((_shown(path), fixture))
    return out


def surface_sweep(
    rule_ids: Sequence[str], capabilities: Iterable[str]
) -> list[tuple[str, Mapping[str, Any]]]:
    """(name, scenario) of the probe of every attack-surface cell the capabilities allow
    and that threatens a selected rule (see :mod:`conformance.scenario.surface`).

    Each probe runs as a fixture: judged against every selected rule, its cell's rules
    counting it as a source. Every profile runs the sweep (about 350 small scenarios),
    so that every cell is attempted at least once whatever the generators draw.
    """
    selected = set(rule_ids)
    out: list[tuple[str, Mapping[str, Any]]] = []
    for cell in cells(capabilities):
        scenario = probe_scenario(cell) if selected & set(cell.rules) else None
        if scenario is not None:
            out.append((f"surface/{cell.id}", scenario))
    return out


def plan(
    rule_ids: Sequence[str], per_unit: int = 1, capabilities: Iterable[str] | None = None
) -> list[Unit]:
    """The run's work in order: the fixtures and the attack-surface sweep (``per_unit``
    to a unit; no sweep when ``capabilities`` is None), then each property."""
    fixtures = load_fixtures(rule_ids)
    if capabilities is not None:
        fixtures += surface_sweep(rule_ids, capabilities)
    units: list[Unit] = []
    for start in range(0, len(fixtures), per_unit):
        chunk = fixtures[start : start + per_unit]
        names = tuple(name for name, _ in chunk)
        label = f"fixture {names[0]}" if len(chunk) == 1 else f"fixtures {names[0]} ..."
        units.append(Unit(label, None, tuple(f for _, f in chunk), names))
    units += [Unit(f"property {rid}", rid) for rid in rule_ids if rid in FOCUS]
    return units


def corpus_units(corpus: Corpus, rule_ids: Sequence[str], per_unit: int) -> list[Unit]:
    """A corpus's scenarios that are a source for a selected rule, or that every run judges
    (examples, regressions), as units: consecutive entries of one source together, at most
    ``per_unit`` to a unit."""
    selected = set(rule_ids)
    units: list[Unit] = []
    chunk: list[Entry] = []

    def flush() -> None:
        if chunk:
            source = chunk[0].source
            label = f"corpus {source}" + (f" ({len(chunk)})" if len(chunk) > 1 else "")
            names = tuple(e.source for e in chunk)
            units.append(Unit(label, None, names=names, entries=tuple(chunk)))
            chunk.clear()

    for entry in corpus.entries:
        if not entry.always and not selected & set(entry.targets):
            continue
        if chunk and (chunk[0].source != entry.source or len(chunk) >= per_unit):
            flush()
        chunk.append(entry)
    flush()
    return units
