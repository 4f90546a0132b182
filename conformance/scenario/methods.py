"""The test-design methods, as data: the tables of ``fixtures/schema/methods.json``.

Strategies grow by *methods*, not by described cases: each method is a table (the
literals SPEC fixes and their near misses; the "nothing versus empty" values of every
hook whose return means something; the host value kinds a lazy JSON check lets through;
...) and a way to apply it. This module loads the tables and offers two ways to use them:

* strategy fragments (``near_misses_of(...)``, ...) that the focused strategies of
  ``conformance.judging.rules`` draw from, so generated scenarios meet every row;
* *sweeps*: :func:`sweeps` builds, per table and rule, one scenario that holds every row
  of the table (each row one call), written as the fixtures
  ``fixtures/rules/<ID>/method-*.json`` by ``python -m conformance.scenario.sweeps --write``
  (``--check`` says whether the committed ones are current). The fixtures run in every
  profile, so every row is met whatever hypothesis draws.

``benchmarks/methods.md`` says, per method, where it is applied, the bundled mutant that
proves it can fail and how many scenarios it adds to a ``ci`` run.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Final

from hypothesis import strategies as st

__all__ = [
    "FIXTURES_DIR",
    "METHODS_PATH",
    "Family",
    "NearMiss",
    "almost_results",
    "empties",
    "empty_values",
    "family",
    "host_kinds",
    "meaning",
    "near_miss_values",
    "near_misses",
    "near_misses_of",
    "table",
    "throwables",
]

METHODS_PATH: Final = Path(__file__).resolve().parents[1] / "fixtures" / "schema" / "methods.json"
FIXTURES_DIR: Final = Path(__file__).resolve().parents[1] / "fixtures" / "rules"

JSON = Any


@cache
def table() -> Mapping[str, Any]:
    """The whole methods table (``fixtures/schema/methods.json``)."""
    document: Mapping[str, Any] = json.loads(METHODS_PATH.read_text(encoding="utf-8"))
    return document


# --------------------------------------------------------- method 1: near misses

#: Latin letters and a lookalike of each (Cyrillic, or Greek where Cyrillic has none).
_HOMOGLYPHS: Final[Mapping[str, str]] = {
    "a": "\u0430",
    "c": "\u0441",
    "d": "\u0501",
    "e": "\u0435",
    "h": "\u04bb",
    "i": "\u0456",
    "k": "\u03ba",
    "l": "\u04cf",
    "o": "\u043e",
    "p": "\u0440",
    "s": "\u0455",
    "u": "\u03c5",
    "x": "\u0445",
    "y": "\u0443",
}


@dataclass(frozen=True)
class NearMiss:
    """One near miss of a literal: its class (a key of the table's ``nearMisses``) and value."""

    kind: str
    value: JSON


@dataclass(frozen=True)
class Family:
    """One family of literals SPEC fixes, where it is used and which classes of near miss apply."""

    name: str
    values: tuple[JSON, ...]
    where: str
    spec: str
    rules: tuple[str, ...]
    classes: tuple[str, ...]
    #: Other literals of the vocabulary where this one belongs (the ``confusion`` class).
    confusions: tuple[JSON, ...] = ()

    def near_misses(self) -> list[NearMiss]:
        """Every near miss of every value of the family, in the table's class order, without
        duplicates and without any value of the family itself."""
        out: list[NearMiss] = []
        seen: list[JSON] = list(self.values)
        for value in self.values:
            for miss in near_misses(value, self.classes):
                if not any(_same(miss.value, other) for other in seen):
                    seen.append(miss.value)
                    out.append(miss)
        if "confusion" in self.classes:
            for other in self.confusions:
                if not any(_same(other, known) for known in seen):
                    seen.append(other)
                    out.append(NearMiss("confusion", other))
        return out


def _same(a: JSON, b: JSON) -> bool:
    return type(a) is type(b) and a == b


def _lookalikes(text: str) -> list[str]:
    out: list[str] = []
    for i, char in enumerate(text):
        if char in _HOMOGLYPHS:
            out.append(text[:i] + _HOMOGLYPHS[char] + text[i + 1 :])
            break
    full = "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)
    if full != text:
        out.append(full)  # NFKC folds the full-width form back to the text
    if len(text) > 1:
        out.append(text[:1] + "\u200b" + text[1:])
    return out


def near_misses(value: JSON, classes: Iterable[str] | None = None) -> list[NearMiss]:
    """The near misses of one literal ``value``, class by class (all classes when None)."""
    wanted = list(classes) if classes is not None else list(table()["literals"]["nearMisses"])
    out: list[NearMiss] = []

    def add(kind: str, *candidates: JSON) -> None:
        for candidate in candidates:
            if not _same(candidate, value) and not any(_same(candidate, m.value) for m in out):
                out.append(NearMiss(kind, candidate))

    for kind in wanted:
        if isinstance(value, str):
            if kind == "case":
                add(kind, value.upper(), value.capitalize(), value.swapcase())
            elif kind == "whitespace":
                add(kind, f" {value}", f"{value} ", f"{value}\n", f"\t{value}")
            elif kind == "affix" and value:
                add(kind, value[:-1], f"{value}2", f"_{value}")
            elif kind == "lookalike":
                add(kind, *_lookalikes(value))
            elif kind == "empty":
                add(kind, "")
            elif kind == "type":
                add(kind, [value], {"value": value})
        elif isinstance(value, bool):
            if kind == "type":
                add(kind, str(value).lower(), str(value), int(value), float(value))
                add(kind, [value], {"value": value})
            elif kind == "empty":
                add(kind, "")
    return [m for m in out if m.value != "" or "empty" in wanted]


@cache
def family(name: str) -> Family:
    """One literal family of the table."""
    entry = table()["literals"]["families"][name]
    return Family(
        name=name,
        values=tuple(entry["values"]),
        where=entry["where"],
        spec=entry["spec"],
        rules=tuple(entry["rules"]),
        classes=tuple(entry["classes"]),
        confusions=tuple(entry.get("confusions", ())),
    )


def near_miss_values(name: str) -> list[JSON]:
    """The near-miss values of a literal family, in table order."""
    return [miss.value for miss in family(name).near_misses()]


def near_misses_of(name: str) -> st.SearchStrategy[JSON]:
    """A strategy drawing one near miss of a literal family."""
    return st.sampled_from(near_miss_values(name))


# ------------------------------------------------- method 2: nothing versus empty


def empties() -> list[JSON]:
    """The "nothing versus something empty" values: null, "", 0, false, [], {}."""
    return list(table()["nothingVsEmpty"]["values"])


def empty_values() -> st.SearchStrategy[JSON]:
    """A strategy drawing one of the "nothing versus empty" values."""
    return st.sampled_from(empties())


def meaning(hook: str, value: JSON) -> str:
    """What ``value`` means returned at ``hook`` (the table's words)."""
    entry = table()["nothingVsEmpty"]["hooks"][hook]["meaning"]
    return str(entry.get(json.dumps(value), entry["default"]))


# -------------------------------------------------------- method 4: host values


def host_kinds(verdict: str | None = "reject") -> list[str]:
    """The ``$special`` host value kinds of the table with this verdict (None: every kind)."""
    kinds = table()["hostValues"]["kinds"]
    return [k for k, entry in kinds.items() if verdict is None or entry["verdict"] == verdict]


# ------------------------------------- method 10: throwables and almost-results


def throwables() -> list[JSON]:
    """The structured throwables a throw step can raise (its object forms)."""
    return list(table()["throwables"]["throws"])


def almost_results() -> list[tuple[JSON, str]]:
    """(what a wrapper returns, what SPEC makes of it: error or success)."""
    return [(row["returns"], row["must"]) for row in table()["almostResults"]["rows"]]


# ------------------------------------------------------------------- the sweeps
