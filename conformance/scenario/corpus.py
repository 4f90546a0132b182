"""A frozen corpus: the scenarios a run draws, written once, replayed against any implementation.

Rules of this file:

* A run with ``--write-corpus FILE`` records every scenario it judges, in plan order --
  each fixture (examples, regressions, the attack-surface sweep's probes) and each
  example a property drew -- with the rules it is a source for (``targets``). Written
  against a conformant implementation (the reference), a derandomized profile's corpus
  holds exactly the examples its properties draw: hypothesis generates the same
  sequence for any implementation until the first failure.
* ``--corpus FILE`` replays it instead of planning and drawing: every scenario is
  trimmed to the adapter's stages and judged against every selected rule, like a
  fixture, and a scenario is a source only for its targets (its ``rules``); a replay of
  some rules takes the entries that are a source for one of them, and the examples and
  regressions, which every run judges. No generation and no
  shrinking happen (a failure's counterexample is the scenario as drawn), which makes a
  replay several times faster than the run that wrote it, and ``--fail-fast`` stops at
  the first failure: a mutant is judged in the time it takes to find its first fault.
* The format is JSON lines (``fixtures/schema/corpus.schema.json``): a header
  ``{"corpus": 1, "kit": ..., "profile": ..., "rules": [...], "implementation": {...}}``,
  then one ``{"source": ..., "targets": [...], "scenario": {...}}`` per scenario. A
  malformed corpus is a :class:`~conformance.scenario.schema.FixtureError` naming the file
  and the line.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, TextIO

from conformance._version import __version__
from conformance.scenario.schema import FixtureError, validate

__all__ = ["FORMAT", "Corpus", "CorpusWriter", "Entry", "read_corpus"]

FORMAT: Final = 1

#: Sources every run judges, whatever its rules (runner.fixture_files).
ALWAYS: Final = ("fixtures/examples/", "fixtures/regressions/")


@dataclass(frozen=True)
class Entry:
    """One recorded scenario: where it came from and the rules it is a source for."""

    source: str  # a fixture's path, "surface/<cell>", or "generated/<rule>"
    targets: tuple[str, ...]
    scenario: Mapping[str, Any]
    #: The corpus line the entry was read from (None: made otherwise, and then encoded once
    #: when first copied): each fresh copy of the scenario is parsed from it.
    line: str | None = field(default=None, compare=False, repr=False)

    @property
    def always(self) -> bool:
        """Judged by every run, whichever rules it selects (an example or a regression)."""
        return self.source.startswith(ALWAYS)

    def as_fixture(self) -> dict[str, Any]:
        """The scenario as the runner runs a fixture: its targets are its ``rules``. A fresh
        copy every time: an implementation may write into the objects a scenario hands it
        (a registry whose schemas are live views of its definitions), and one corpus serves
        many runs in one process (selftest's entries). The copy is parsed from the entry's
        JSON text (the scenario is JSON: a corpus line), several times faster than a deep copy."""
        return {**json.loads(self._line)["scenario"], "rules": list(self.targets)}

    @functools.cached_property
    def _line(self) -> str:
        return self.line if self.line is not None else json.dumps({"scenario": self.scenario})


@dataclass(frozen=True)
class Corpus:
    header: Mapping[str, Any]
    entries: tuple[Entry, ...]

    @property
    def profile(self) -> str:
        return str(self.header.get("profile", "quick"))


class CorpusWriter:
    """Appends a run's scenarios to a corpus file as they are judged."""

    def __init__(self, path: Path, *, profile: str, rules: Sequence[str], info: Any) -> None:
        self.path = path
        self.count = 0
        self._out: TextIO = path.open("w", encoding="utf-8")
        header = {
            "corpus": FORMAT,
            "kit": __version__,
            "profile": profile,
            "rules": list(rules),
            "implementation": info.to_json(),
        }
        self._out.write(json.dumps(header, sort_keys=True) + "\n")

    def add(self, source: str, targets: Sequence[str], scenario: Mapping[str, Any]) -> None:
        line = {"source": source, "targets": list(targets), "scenario": scenario}
        try:
            text = json.dumps(line, sort_keys=True, allow_nan=False)
        except (TypeError, ValueError):  # a scenario that is not JSON is never a fixture
            return
        self._out.write(text + "\n")
        self.count += 1

    def add_all(self, entries: Sequence[tuple[str, Sequence[str], Mapping[str, Any]]]) -> None:
        for source, targets, scenario in entries:
            self.add(source, targets, scenario)

    def close(self) -> None:
        self._out.close()


def read_corpus(path: str | Path) -> Corpus:
    """Read and check a corpus file (header, then one entry per line)."""
    source = str(path)
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except OSError as e:
        raise FixtureError(source, "$", f"cannot read: {e.strerror}") from None
    except UnicodeDecodeError as e:
        raise FixtureError(source, f"byte {e.start}", "not UTF-8 text") from None
    if not lines:
        raise FixtureError(source, "line 1", "empty: a corpus starts with its header")
    documents = []
    for number, text in enumerate(lines, start=1):
        try:
            documents.append(json.loads(text))
        except json.JSONDecodeError as e:
            raise FixtureError(source, f"line {number}", f"not JSON: {e.msg}") from None
    header, rest = documents[0], documents[1:]
    validate(header, "corpus#header", f"{source} (line 1)")
    if header["corpus"] != FORMAT:
        raise FixtureError(source, "line 1", f"corpus format {header['corpus']}, not {FORMAT}")
    entries = []
    for number, line in enumerate(rest, start=2):
        validate(line, "corpus#entry", f"{source} (line {number})")
        text = lines[number - 1]
        entries.append(Entry(line["source"], tuple(line["targets"]), line["scenario"], text))
    return Corpus(header, tuple(entries))
