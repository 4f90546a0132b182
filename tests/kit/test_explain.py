"""``toolreg-conformance explain RULE``: the rule's SPEC text, each fixture on the reference
and on a mutant that breaks it (the violated event marked), the mutant's story, the replay
commands; and what it says when a rule has no fixture, no mutant or no SPEC section."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from conformance.adapters.reference.mutants import CATALOGUE
from conformance.cli.main import main
from conformance.judging.rules import RULES
from conformance.reporting.teach import (
    explain_text,
    fixtures_of,
    lessons,
    mutants_of,
    spec_sections,
    story,
)

ROOT = Path(__file__).resolve().parents[2]


def explain(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["explain", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_explain_shows_the_rule_its_fixture_on_both_sides_and_the_replays(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    code, out, err = explain(capsys, "PRE-3")
    assert code == 0 and err == ""
    assert out.startswith("PRE-3 — Fail-closed ask   (SPEC.md 6.4: PRE")
    assert "An `ask` decision when no approval capability is available MUST become a" in out
    assert 'Rationale:\n  `ask` means "a person must agree".' in out
    assert "Latitude:\n  none beyond what the rule's own words leave open." in out
    assert "\nFixture rules/PRE-3/ask-without-approval-service\n" in out
    reference, mutant = out.split("On the reference: ", 1)[1].split("On mutant ", 1)
    assert reference.startswith("PRE-3 holds") and "✗" not in reference
    assert mutant.startswith("pre.ask-without-service-allows: PRE-3 FAILS")
    assert "the bug: ask is allowed when no approval service is mounted" in mutant
    assert "Tempting: Nobody to ask, so the call goes ahead" in mutant
    assert "✗ ▸ body bash" in mutant  # the violated event, marked
    fixture = "conformance/fixtures/rules/PRE-3/ask-without-approval-service.json"
    assert f"toolreg-conformance replay {fixture} --adapter reference" in mutant
    assert f"replay {fixture} --adapter mutant:pre.ask-without-service-allows" in mutant


def test_the_replay_commands_it_prints_work(capsys: pytest.CaptureFixture[str]) -> None:
    fixture = str(ROOT / "conformance/fixtures/rules/PRE-3/ask-without-approval-service.json")
    assert main(["replay", fixture, "--adapter", "reference"]) == 0
    assert "FIXED" in capsys.readouterr().out
    assert main(["replay", fixture, "--adapter", "mutant:pre.ask-without-service-allows"]) == 1
    assert "still FAILING" in capsys.readouterr().out
    assert main(["replay", fixture, "--adapter", "mutant:pre.no-such-mutant"]) == 2
    assert "no such mutant" in capsys.readouterr().err


def test_an_unknown_rule_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = explain(capsys, "PRE-99")
    assert (code, out) == (2, "") and "'PRE-99' is not a rule ID" in err
    code, _, err = explain(capsys, "PRE-3", "--spec", "/nonexistent/SPEC.md")
    assert code == 2 and "no such file" in err


def test_a_rule_without_a_predicate_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = explain(capsys, "CONC-3")
    assert code == 0
    assert "CONC-3 has no predicate: an obligation on tool authors" in out
    assert "(no mutant can break a rule the kit cannot judge)" in out
    assert "On the reference: CONC-3 has no predicate: nothing judged" in out
    assert "On mutant" not in out


def test_without_a_fixture_or_a_mutant_or_a_section_it_says_so() -> None:
    text = explain_text("PRE-3", found=[])
    assert "PRE-3 has no fixture: no fixture's rules name it." in text
    unbroken = lessons("PRE-3", catalogue={})
    assert unbroken and unbroken[0].failing is None and unbroken[0].tried == []
    text = explain_text("PRE-3", found=unbroken, spec={})
    assert "No bundled mutant breaks PRE-3 on this fixture (tried: none)." in text
    assert "SPEC.md has no section for this rule" in text
    assert "On mutant" not in text


def test_a_fixture_no_mutant_breaks_is_shown_with_one_that_is_broken() -> None:
    """RES-2's own fixture is broken by none of its mutants; explain adds another fixture
    that names RES-2 and is (every rule with a predicate gets a failing trace)."""
    text = explain_text("RES-2")
    assert "No bundled mutant breaks RES-2 on this fixture" in text
    assert "(a fixture of another rule that names it)" in text
    assert "RES-2 FAILS" in text
    assert "explain RES-2 --all shows them" in text
    assert text.count("\nFixture ") < explain_text("RES-2", every=True).count("\nFixture ")


def test_every_rule_with_a_predicate_has_a_fixture_a_mutant_breaks() -> None:
    adapters: dict[str, object] = {}
    for rule_id, rule in RULES.items():
        if rule.check is None:
            continue
        found = lessons(rule_id, adapters=adapters)  # type: ignore[arg-type]
        assert found, f"{rule_id}: no fixture names it"
        assert any(lesson.failing is not None for lesson in found), (
            f"{rule_id}: no mutant of {[m.name for m in mutants_of(rule_id)]} breaks it on any "
            f"of {[lesson.name for lesson in found]}"
        )
        assert all(not lesson.passing.violations for lesson in found), rule_id


def test_spec_sections_parse_every_rule() -> None:
    sections = spec_sections(ROOT / "SPEC.md")
    assert set(sections) == set(RULES)
    for rule_id, section in sections.items():
        assert section.title == RULES[rule_id].title, rule_id
        assert section.statement and section.rationale and section.checked, rule_id
        assert section.number.startswith("6.") and section.group_title.startswith(
            RULES[rule_id].group
        )
        assert section.example == f"[fixtures/rules/{rule_id}/](fixtures/rules/{rule_id}/)"
    assert sections["CONC-2"].latitude[0].startswith("Asked for a pool size below one")
    assert sections["DEF-1"].latitude and not sections["PRE-3"].latitude
    assert sections["CODE-4"].notes[0].startswith("Note *(upstream)*")
    assert sections["DEF-2"].statement[2].startswith("**On a wire form.**")


def test_fixtures_of_a_rule_start_with_its_own_directory() -> None:
    found = [p for p, _ in fixtures_of("RES-2")]
    assert found[0].parent.name == "RES-2"
    assert {p.parent.name for p in found[1:]} and "RES-2" not in {p.parent.name for p in found[1:]}


def test_a_mutant_story_is_one_tempting_line() -> None:
    mutant = CATALOGUE["pre.ask-without-service-allows"]
    assert story(mutant) == (
        "Tempting: Nobody to ask, so the call goes ahead: a permission question silently "
        "becomes a grant."
    )
    assert story(CATALOGUE["cancel.own-signal"]).startswith('Tempting: "The registry manages')
    two = dataclasses.replace(mutant, doc="First, `x`. Second one.\n\nMore.")
    assert story(two) == "Tempting: First, `x`."
    for entry in CATALOGUE.values():
        line = story(entry)
        assert line.startswith("Tempting: ") and "\n" not in line and "``" not in line
