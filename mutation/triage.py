"""The triaged survivors of the gate's sample, and the gate's verdict on a session.

``mutation/triage.json`` lists every survivor of the gate's seeded sample that was
triaged *equivalent* (``E``: nothing can observe the change) or *dead or defensive*
(``D``: a line of the reference no scenario can reach); the reasons are in
benchmarks/mutation.md. A survivor is recognised by its file, operator, enclosing
definition and the changed lines of its diff -- not by its line number or occurrence,
which move with every unrelated edit of ``reference/``.

The gate's figure is the **non-equivalent kill rate**: killed / (run - equivalent
survivors). Defensive survivors and survivors nobody triaged count against it (an
untriaged survivor may be a blind spot of the kit). The floor is the recorded rate less
``margin`` mutants (see benchmarks/mutation.md, "The mutation gate in CI").
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

VERDICTS = ("E", "D")
Key = tuple[str, str, str, tuple[str, ...]]


class TriageError(ValueError):
    """A malformed triage file: the message names the file and the JSON path."""


@dataclass(frozen=True)
class Triage:
    """The recorded measurement of the gate's sample and its triaged survivors."""

    killed: int  # of the recorded measurement
    non_equivalent: int  # run - equivalent survivors, recorded
    margin: int  # mutants the gate forgives below the recorded rate
    verdicts: Mapping[Key, str]  # survivor key -> "E" | "D"

    @property
    def recorded(self) -> float:
        return self.killed / self.non_equivalent

    @property
    def floor(self) -> float:
        """The recorded rate less ``margin`` mutants of the recorded sample."""
        return (self.killed - self.margin) / self.non_equivalent


def change(diff: Iterable[str]) -> tuple[str, ...]:
    """The changed lines of a diff body ("-old" / "+new"), whitespace-insensitive."""
    return tuple(line[0] + " ".join(line[1:].split()) for line in diff if line[:1] in "+-")


def key(survivor: Mapping[str, Any]) -> Key:
    """How a survivor of measure.collect (file, operator, definition, diff) is recognised."""
    return (
        str(survivor["file"]),
        str(survivor["operator"]),
        str(survivor["definition"]),
        change(survivor["diff"]),
    )


def _field(obj: Mapping[str, Any], name: str, kind: type, where: str, path: Path) -> Any:
    value = obj.get(name)
    if not isinstance(value, kind) or isinstance(value, bool):
        raise TriageError(f"{path}: {where}.{name}: expected {kind.__name__}, got {value!r}")
    return value


def load(path: Path) -> Triage:
    """Read ``path``; a malformed file raises TriageError naming the file and JSON path."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as error:
        raise TriageError(f"{path}: {error}") from error
    if not isinstance(document, dict):
        raise TriageError(f"{path}: $: expected an object")
    recorded = _field(document, "recorded", dict, "$", path)
    killed = _field(recorded, "killed", int, "$.recorded", path)
    non_equivalent = _field(recorded, "nonEquivalent", int, "$.recorded", path)
    margin = _field(document, "margin", int, "$", path)
    if not 0 <= margin <= killed <= non_equivalent or non_equivalent == 0:
        raise TriageError(
            f"{path}: $.recorded: need 0 <= margin <= killed <= nonEquivalent > 0, got "
            f"margin {margin}, killed {killed}, nonEquivalent {non_equivalent}"
        )
    verdicts: dict[Key, str] = {}
    for i, entry in enumerate(_field(document, "survivors", list, "$", path)):
        where = f"$.survivors[{i}]"
        if not isinstance(entry, dict):
            raise TriageError(f"{path}: {where}: expected an object")
        verdict = _field(entry, "verdict", str, where, path)
        if verdict not in VERDICTS:
            raise TriageError(
                f"{path}: {where}.verdict: expected one of {VERDICTS}, got {verdict!r}"
            )
        _field(entry, "why", str, where, path)
        lines = _field(entry, "change", list, where, path)
        if not lines or not all(isinstance(x, str) and x[:1] in "+-" for x in lines):
            raise TriageError(
                f"{path}: {where}.change: expected '-old'/'+new' lines, got {lines!r}"
            )
        for name in ("file", "operator"):
            _field(entry, name, str, where, path)
        if entry.get("definition") is not None:  # null: a mutant outside any definition
            _field(entry, "definition", str, where, path)
        k = key({**entry, "diff": lines})
        if k in verdicts:
            raise TriageError(f"{path}: {where}: the same survivor is listed twice")
        verdicts[k] = verdict
    return Triage(killed, non_equivalent, margin, verdicts)


@dataclass(frozen=True)
class Verdict:
    """The gate's reading of a session's results."""

    killed: int
    non_equivalent: int
    untriaged: list[Mapping[str, Any]]  # survivors in no list: possible blind spots
    defensive: list[Mapping[str, Any]]

    @property
    def rate(self) -> float | None:
        return self.killed / self.non_equivalent if self.non_equivalent else None


def judge(killed: int, survivors: Sequence[Mapping[str, Any]], triage: Triage) -> Verdict:
    """The non-equivalent kill rate of ``killed`` kills beside ``survivors``."""
    untriaged = [s for s in survivors if key(s) not in triage.verdicts]
    defensive = [s for s in survivors if triage.verdicts.get(key(s)) == "D"]
    return Verdict(killed, killed + len(untriaged) + len(defensive), untriaged, defensive)


def describe(survivor: Mapping[str, Any]) -> str:
    lines = " / ".join(change(survivor["diff"]))
    return (
        f"{survivor['file']}:{survivor['line']} {survivor['operator']} "
        f"in `{survivor['definition']}`: {lines}"
    )


def entry(survivor: Mapping[str, Any], verdict: str, why: str) -> dict[str, Any]:
    """A triage.json entry for ``survivor`` (its line kept as a hint only)."""
    return {
        "file": survivor["file"],
        "line": survivor["line"],
        "operator": survivor["operator"],
        "definition": survivor["definition"],
        "change": list(change(survivor["diff"])),
        "verdict": verdict,
        "why": why,
    }
