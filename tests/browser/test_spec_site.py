"""Every page of the executable spec (``docs/spec/``) in headless Chromium, from ``file://``.

    python -m pytest -m browser tests/browser    # needs chromium (apt-get install chromium)

For each rule page: its script ran and nothing reached the console (a script error or a
Content-Security-Policy refusal), every fixture's passing timeline is drawn, and -- for a
rule the kit judges -- at least one fixture has a failing timeline and each failing
timeline marks what the violated verdicts point at. A page built from a fixture full of
hostile strings (a tool named ``<img onerror=...>``, a description with a ``<script>``)
stays inert. The pages are the committed ones, loaded one after another in one browser
(``tests/browser/cdp.py``).
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path

import pytest

from conformance.judging.rules import RULES
from conformance.reporting.site import rule_page
from conformance.reporting.teach import lessons, spec_sections
from tests.browser.cdp import Chromium
from tests.browser.test_report_page import CHROMIUM

ROOT = Path(__file__).resolve().parents[2]
SITE = ROOT / "docs" / "spec"
PAGES = sorted(p for p in SITE.glob("*.html") if p.name != "index.html")

#: What a failing timeline may mark: the events the violated verdicts point at, the
#: answer of the call one names without an event (a fixture's ``expect`` block judges the
#: call's answer; a call with no event has only its answer), or the answer of an action
#: that is no call (a ``schemas`` listing), or a set-up registration's outcome. Nothing is
#: read from wording.
MARKED = ("event", "answer", "action", "registration")

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        CHROMIUM is None and not os.environ.get("TOOLREG_BROWSER_REQUIRED"),
        reason="no chromium on PATH",
    ),
]


class Blocks(HTMLParser):
    """The site's blocks: per fixture section, per side, the timelines and their marks."""

    def __init__(self) -> None:
        super().__init__()
        self.page: dict[str, str] = {}
        self.fixtures: list[dict[str, object]] = []
        self.stack: list[tuple[str, set[str]]] = []
        self.elements: list[dict[str, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {k: v or "" for k, v in attrs}
        classes = set(values.get("class", "").split())
        self.elements.append({"tag": tag, **values})
        if "page" in classes and tag == "div":
            self.page = values
        if "fixture" in classes and tag == "section":
            self.fixtures.append({"name": values.get("data-fixture", ""), "sides": {}})
        side = next((c for c in ("passing", "failing") if "side" in classes and c in classes), None)
        if side is not None and self.fixtures:
            sides = self.fixtures[-1]["sides"]
            assert isinstance(sides, dict)
            sides[side] = {"none": "none" in classes, "timelines": 0, "lanes": 0, "marks": []}
        current = self._side()
        if current is not None:
            if "timeline" in classes:
                current["timelines"] += 1
            if "lane" in classes and "ticks" not in classes:
                current["lanes"] += 1
            if "violation" in classes:
                current["marks"].append(next((k for k in MARKED if k in classes), tag))
        if tag not in ("meta", "br", "input", "img", "link", "hr"):
            self.stack.append((tag, classes))

    def handle_endtag(self, tag: str) -> None:
        while self.stack:
            opened, _ = self.stack.pop()
            if opened == tag:
                break

    def _side(self) -> dict[str, object] | None:
        open_sides = [c for _, c in self.stack if "side" in c]
        if not open_sides or not self.fixtures:
            return None
        which = "passing" if "passing" in open_sides[-1] else "failing"
        sides = self.fixtures[-1]["sides"]
        assert isinstance(sides, dict)
        side: dict[str, object] = sides[which]
        return side


def problems(dom_text: str, rule_id: str, predicate: bool) -> list[str]:
    """What is wrong with one rule page's DOM (empty: nothing)."""
    blocks = Blocks()
    blocks.feed(dom_text)
    found = []
    if blocks.page.get("data-rule") != rule_id:
        found.append(f"the page is not {rule_id}'s: {blocks.page.get('data-rule')!r}")
    if blocks.page.get("data-predicate") != str(predicate).lower():
        found.append("data-predicate says otherwise than the rule table")
    if not blocks.fixtures:
        found.append("no fixture block")
    failing = 0
    for fixture in blocks.fixtures:
        sides = fixture["sides"]
        assert isinstance(sides, dict)
        passing = sides.get("passing")
        if not passing or passing["timelines"] != 1:
            found.append(f"{fixture['name']}: no passing timeline")
        side = sides.get("failing")
        if side is None:
            found.append(f"{fixture['name']}: no failing side (a mutant's, or why none)")
        elif not side["none"]:
            failing += 1
            if side["timelines"] != 1:
                found.append(f"{fixture['name']}: the failing side draws no timeline")
            if not any(m in MARKED for m in side["marks"]):
                found.append(f"{fixture['name']}: the failing timeline marks no violated event")
    if predicate and not failing:
        found.append("no failing timeline on the page of a rule the kit judges")
    return found


@pytest.fixture(scope="module")
def dumped(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[str, list[str], str]]:
    """Every page's DOM after its script ran, its console, and whether the script ran."""
    assert CHROMIUM is not None, "no chromium on PATH (Debian: apt-get install chromium)"
    dumped: dict[str, tuple[str, list[str], str]] = {}
    with Chromium(CHROMIUM, tmp_path_factory.mktemp("site")) as browser:
        for page in [*PAGES, SITE / "index.html"]:
            dom, console = browser.dump(page)
            ran = re.search(r'<html[^>]*\bdata-script="ran"', dom) is not None
            dumped[page.stem] = (dom, console, "ran" if ran else "")
    return dumped


def test_there_is_a_page_for_every_rule() -> None:
    assert {p.stem for p in PAGES} == set(RULES), "bash docs/spec/build, then commit"


@pytest.mark.parametrize("page", [p.stem for p in PAGES])
def test_every_rule_page_draws_both_timelines(
    page: str, dumped: dict[str, tuple[str, list[str], str]]
) -> None:
    dom, console, ran = dumped[page]
    assert console == [], "the page logged to the console (a script error or a CSP refusal)"
    assert ran == "ran", "the page's own script did not run"
    assert problems(dom, page, RULES[page].check is not None) == []


def test_the_index_lists_every_rule(dumped: dict[str, tuple[str, list[str], str]]) -> None:
    dom, console, ran = dumped["index"]
    assert console == [] and ran == "ran"
    listed = re.findall(r'<tr class="rule" data-rule="([^"]+)"', dom)
    assert sorted(listed) == sorted(RULES)


def test_the_page_check_fails_on_a_page_that_marks_nothing() -> None:
    """The check above can fail: strip the marks, or the failing side, and it says so."""
    text = (SITE / "PRE-3.html").read_text(encoding="utf-8")
    assert problems(text, "PRE-3", True) == []
    unmarked = text.replace(" violation", "")
    assert "marks no violated event" in " ".join(problems(unmarked, "PRE-3", True))
    no_failing = text.replace('class="side failing"', 'class="side failing none"')
    assert "no failing timeline" in " ".join(problems(no_failing, "PRE-3", True))
    assert "not PRE-4's" in " ".join(problems(text, "PRE-4", True))


HOSTILE = "<img src=x onerror=console.error(1)><script>console.error(2)</script>"


@pytest.fixture
def hostile_page(tmp_path: Path) -> Iterator[Path]:
    """PRE-3's page built from its fixture with hostile strings everywhere a trace shows them
    (the tool's name, its output, the listener's id and reason, the description)."""
    source = ROOT / "conformance/fixtures/rules/PRE-3/ask-without-approval-service.json"
    text = source.read_text(encoding="utf-8")
    text = text.replace('"bash"', json.dumps(HOSTILE)).replace('"permission"', json.dumps(HOSTILE))
    fixture = json.loads(text)
    fixture["description"] = HOSTILE + " `" + HOSTILE + "` [x](javascript:alert(1))"
    fixture["tools"][0]["execute"] = [{"return": {"stdout": HOSTILE}}]
    fixture["preExecute"][0]["steps"] = [{"return": {"kind": "ask", "reason": HOSTILE}}]
    path = tmp_path / "rules" / "PRE-3" / "hostile.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(fixture), encoding="utf-8")
    found = lessons("PRE-3", fixtures=[(path, fixture)])
    assert found[0].failing is not None, "the mutant still breaks PRE-3 on it"
    out = tmp_path / "site"
    out.mkdir()
    html, _ = rule_page("PRE-3", spec_sections().get("PRE-3"), found, [], ["PRE-3"], out, ROOT)
    assert HOSTILE not in html and "javascript:" not in html.replace("javascript:alert", "")
    page = out / "PRE-3.html"
    page.write_text(html, encoding="utf-8")
    yield page
    shutil.rmtree(out)


def test_hostile_strings_from_a_trace_stay_inert(hostile_page: Path, tmp_path: Path) -> None:
    assert CHROMIUM is not None
    with Chromium(CHROMIUM, tmp_path / "profile") as browser:
        dom, console = browser.dump(hostile_page)
    assert console == [], "a hostile string ran"
    assert re.search(r'<html[^>]*\bdata-script="ran"', dom)
    blocks = Blocks()
    blocks.feed(dom)
    tags = [e["tag"] for e in blocks.elements]
    assert "img" not in tags and tags.count("script") == 1, "an element made of a trace's text"
    assert not any(k.startswith("on") for e in blocks.elements for k in e), "an event handler"
    text = hostile_page.read_text(encoding="utf-8")
    assert "&lt;img src=x onerror=console.error(1)&gt;" in text
    assert problems(text, "PRE-3", True) == []
