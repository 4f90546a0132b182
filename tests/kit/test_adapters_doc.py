"""docs/adapters.md cites the reference adapter line by line: each cited range holds its name."""

from __future__ import annotations

import re
from pathlib import Path

import conformance.adapters.reference as example

ROOT = Path(__file__).parents[2]
CITE = re.compile(r"\*\*(\d+)-(\d+) `([A-Za-z_]+)`")


def cites(text: str) -> list[tuple[int, int, str]]:
    return [(int(a), int(b), name) for a, b, name in CITE.findall(text)]


def misplaced(doc: str, source: str) -> list[str]:
    """The cites whose range does not start at (or hold) its name's definition."""
    lines = source.splitlines()
    out = []
    for first, last, name in cites(doc):
        span = lines[first - 1 : last]
        defines = re.compile(rf"^\s*(async def|def|class) {name}\b|^\s*\"{name}\"|\b{name}\b")
        if not span or last > len(lines) or not defines.search(span[0]):
            out.append(f"{first}-{last} {name}")
    return out


def test_every_cited_range_starts_at_its_name() -> None:
    doc = (ROOT / "docs/adapters.md").read_text("utf-8")
    source = Path(example.__file__).read_text("utf-8")
    assert len(cites(doc)) >= 10
    assert misplaced(doc, source) == []


def test_a_stale_cite_is_caught() -> None:
    source = Path(example.__file__).read_text("utf-8")
    assert misplaced("**1-9 `build_definition`**", source) == ["1-9 build_definition"]
    assert misplaced("**51-99999 `build_definition`**", source) == ["51-99999 build_definition"]
