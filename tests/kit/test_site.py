"""docs/spec/, the executable spec's site: generated from data, self-contained, current.

The browser test (tests/browser/test_spec_site.py) loads every committed page in
Chromium; these check the generator itself on a few rules.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conformance.cli.main import main
from conformance.judging.rules import RULES
from conformance.reporting.site import _inline, build_site
from tests.kit.test_html import parse, self_contained

ROOT = Path(__file__).resolve().parents[2]
PUBLISHED = ROOT / "docs" / "implementations"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("spec")
    (out / "STALE-1.html").write_text("a page for a rule that went away", encoding="utf-8")
    (out / "PRE-6").mkdir()
    (out / "PRE-6" / "gone.json").write_text("{}", encoding="utf-8")
    (out / "notes.txt").write_text("not the generator's", encoding="utf-8")
    build_site(
        out, published_root=PUBLISHED, spec=ROOT / "SPEC.md", rules=["PRE-3", "PRE-6", "CONC-3"]
    )
    return out


def test_it_writes_a_page_per_rule_an_index_and_the_cases_and_nothing_stale(site: Path) -> None:
    assert sorted(p.name for p in site.glob("*.html")) == [
        "CONC-3.html",
        "PRE-3.html",
        "PRE-6.html",
        "index.html",
    ]
    assert sorted(p.name for p in (site / "PRE-3").iterdir()) == [
        "ask-without-approval-service.json",
        "method-every-path.json",
    ]
    assert not (site / "PRE-6" / "gone.json").exists()  # pruned: the generator's directory
    assert (site / "notes.txt").exists()  # only pages and cases are the generator's
    assert not (site / "CONC-3").exists()  # no mutant, no case


def test_every_page_is_self_contained_and_escaped(site: Path) -> None:
    for page in site.glob("*.html"):
        tree = parse(page.read_text(encoding="utf-8"))
        self_contained(tree)


def test_a_rule_page_shows_the_spec_both_sides_the_story_and_the_replays(site: Path) -> None:
    text = (site / "PRE-3.html").read_text(encoding="utf-8")
    tree = parse(text)
    fixtures = {n.attrs["data-fixture"]: n for n in tree.root.all("fixture")}
    assert set(fixtures) == {
        "rules/PRE-3/ask-without-approval-service",
        "rules/PRE-3/method-every-path",
    }
    fixture = fixtures["rules/PRE-3/ask-without-approval-service"]
    sides = {("passing" if "passing" in n.classes else "failing"): n for n in fixture.all("side")}
    assert not sides["passing"].all("violation") and sides["passing"].all("timeline")
    assert sides["failing"].all("violation") and sides["failing"].all("timeline")
    assert "<code>ask</code> decision when no approval capability is available" in text
    assert "Tempting: Nobody to ask" in text
    assert "replay docs/spec/PRE-3/ask-without-approval-service.json" not in text  # tmp site
    assert re.search(r"replay \S*PRE-3/ask-without-approval-service\.json --adapter mutant:", text)
    case = [n for n in tree.root.every() if n.tag == "a" and "case" in n.classes]
    assert case and case[0].attrs["href"] == "PRE-3/ask-without-approval-service.json"


def test_the_case_beside_the_page_replays_as_its_commands_say(
    site: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    case = site / "PRE-3" / "ask-without-approval-service.json"
    document = json.loads(case.read_text(encoding="utf-8"))
    assert document["rule"] == "PRE-3"
    assert document["implementation"]["name"] == "pre.ask-without-service-allows"
    # issue 24: one pointer per violated verdict, each naming the call (and its events)
    assert len(document["required"]) == len(document["pointers"]) == 2
    assert all(p["call"] for p in document["pointers"])
    assert document["pointers"][0]["events"]  # the predicate's: the body that ran
    assert main(["replay", str(case), "--adapter", "mutant:pre.ask-without-service-allows"]) == 1
    assert "still FAILING: PRE-3" in capsys.readouterr().out
    assert main(["replay", str(case), "--adapter", "reference"]) == 0
    assert "FIXED: PRE-3 holds" in capsys.readouterr().out


def test_published_implementations_link_to_their_findings(site: Path) -> None:
    tree = parse((site / "PRE-6.html").read_text(encoding="utf-8"))
    rows = [n for n in tree.root.every() if n.tag == "tr" and "data-implementation" in n.attrs]
    assert {r.attrs["data-implementation"] for r in rows} == {
        str(p.parent.relative_to(PUBLISHED)) for p in PUBLISHED.glob("**/report.json")
    }
    checked = 0
    for row in rows:
        cards = ("#finding-", "#difference-")
        for link in (
            n for n in row.every() if n.tag == "a" and any(c in n.attrs["href"] for c in cards)
        ):
            target, anchor = link.attrs["href"].split("#")
            report = (site / target).resolve()
            assert report.is_file(), target
            card = re.search(rf'id="{anchor}" data-rules="([^"]*)"', report.read_text("utf-8"))
            assert card and "PRE-6" in card.group(1).split(), (target, anchor)
            checked += 1
    assert checked >= 5  # dsh-tools (defects) and the frameworks (differences) all break PRE-6


def test_a_rule_without_a_predicate_says_why_no_mutant_breaks_it(site: Path) -> None:
    text = (site / "CONC-3.html").read_text(encoding="utf-8")
    assert 'data-predicate="false"' in text
    assert "No predicate: an obligation on tool authors" in text
    assert "the kit cannot judge this rule, so none can break it" in text


def test_the_index_lists_the_rules_by_group(site: Path) -> None:
    text = (site / "index.html").read_text(encoding="utf-8")
    assert re.findall(r'data-rule="([^"]+)"', text) == ["PRE-3", "PRE-6", "CONC-3"]
    assert "<h2>PRE — ① tools/pre-execute" in text and "<h2>CONC — " in text


def test_the_inline_markdown_is_escaped_and_links_only_within_the_checkout() -> None:
    assert _inline("a `<b>` **c** *d* [e](fixtures/x/)", "../..") == (
        'a <code>&lt;b&gt;</code> <strong>c</strong> <em>d</em> <a href="../../fixtures/x/">e</a>'
    )
    assert "<a" not in _inline("[x](javascript:alert(1))", "..")  # the text only
    assert _inline("[x](https://example.com)", "..") == "x"
    assert _inline("see [A](#appendix-a)", "..") == 'see <a href="../SPEC.md#appendix-a">A</a>'
    assert _inline("<script>", "..") == "&lt;script&gt;"


def test_the_committed_site_has_a_page_for_every_rule() -> None:
    pages = {p.stem for p in (ROOT / "docs" / "spec").glob("*.html")} - {"index"}
    assert pages == set(RULES), "run bash docs/implementations/build (or docs/spec/build)"
