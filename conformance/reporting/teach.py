"""The executable spec: each rule shown as a passing trace beside a failing one.

    toolreg-conformance explain PRE-3     # in a terminal (conformance.cli.main)
    python -m conformance.reporting.site docs/spec   # the static site (site.py)

Everything here is computed from data: the rule's section of SPEC.md
(:func:`spec_sections`), the fixtures that name the rule (:func:`fixtures_of`: its own
directory first, then every other fixture whose ``rules`` list it), each run live on the
bundled reference and on the mutants of the catalogue that target the rule
(:func:`lessons`: for every fixture, the first mutant that breaks the rule on it), and the
mutant's story from its docstring (:func:`story`).
"""

from __future__ import annotations

import copy
import logging
import os
import re
import textwrap
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from conformance.judging.evaluate import evaluate
from conformance.judging.rules import RULES, Verdict
from conformance.reporting import timeline as tl
from conformance.running.outcomes import Pointer
from conformance.scenario.schema import FIXTURES, load_json
from conformance.seam.adapter import Adapter

if TYPE_CHECKING:  # the catalogue is imported when first needed
    from conformance.adapters.reference.mutants import Mutant

__all__ = [
    "Lesson",
    "Run",
    "SpecSection",
    "explain_text",
    "fixtures_of",
    "lessons",
    "replay_commands",
    "spec_path",
    "spec_sections",
    "story",
]

#: The lanes a text timeline shows at most (the marked ones first).
TEXT_LANES: Final = 4

#: SPEC.md beside the package (a checkout); an installed package ships none.
SPEC_MD: Final = Path(__file__).resolve().parents[2] / "SPEC.md"


# ----------------------------------------------------------------------- SPEC


@dataclass(frozen=True)
class SpecSection:
    """One rule's section of SPEC.md, by paragraph (Markdown source, unwrapped)."""

    id: str
    title: str
    number: str  # the group's section number, "6.4"
    group_title: str  # "PRE — ① tools/pre-execute, the allow / deny / ask waterfall"
    statement: tuple[str, ...]
    latitude: tuple[str, ...]
    rationale: tuple[str, ...]
    example: str
    checked: str
    notes: tuple[str, ...] = ()


_RULE_HEADING = re.compile(r"^### ([A-Z]+-\d+) — (.+?)\s*$")
_GROUP_HEADING = re.compile(r"^## (6\.\d+) (.+?)\s*$")
_LABELS: Final = {
    "**Latitude.**": "latitude",
    "**Rationale.**": "rationale",
    "**Example:**": "example",
    "**Checked:**": "checked",
}


def spec_path() -> Path | None:
    """The checkout's SPEC.md, or None (an installed package)."""
    return SPEC_MD if SPEC_MD.is_file() else None


def spec_sections(path: Path | None = None) -> dict[str, SpecSection]:
    """Every rule section of SPEC.md (section 6), by rule ID.

    A section runs from its ``### ID — Title`` heading to the next heading or rule
    (``---``). Its paragraphs are sorted by their bold label: ``**Latitude.**``,
    ``**Rationale.**``, ``**Example:**``, ``**Checked:**``; the others before
    ``Checked`` are the statement, those after it notes.
    """
    source = path if path is not None else spec_path()
    if source is None:
        return {}
    return dict(_parse_spec(source.read_text(encoding="utf-8")))


def _parse_spec(text: str) -> Iterator[tuple[str, SpecSection]]:
    number, group_title = "", ""
    current: tuple[str, str] | None = None
    paragraphs: list[str] = []
    lines: list[str] = []

    def close() -> Iterator[tuple[str, SpecSection]]:
        if lines:
            paragraphs.append(" ".join(lines))
            lines.clear()
        if current is not None:
            yield current[0], _section(current[0], current[1], number, group_title, paragraphs)
        paragraphs.clear()

    for raw in text.splitlines():
        line = raw.rstrip()
        heading = _RULE_HEADING.match(line)
        if heading or line.startswith("## ") or line.startswith("# ") or line == "---":
            yield from close()
            current = (heading.group(1), heading.group(2)) if heading else None
            group = _GROUP_HEADING.match(line)
            if group:
                number, group_title = group.group(1), group.group(2)
            elif line.startswith("## "):
                number, group_title = "", ""
            continue
        if current is None:
            continue
        if not line.strip():
            if lines:
                paragraphs.append(" ".join(lines))
                lines.clear()
            continue
        lines.append(line.strip())
    yield from close()


def _section(
    rule_id: str, title: str, number: str, group_title: str, paragraphs: Sequence[str]
) -> SpecSection:
    parts: dict[str, list[str]] = {
        "statement": [],
        "latitude": [],
        "rationale": [],
        "example": [],
        "checked": [],
        "notes": [],
    }
    checked = False
    for paragraph in paragraphs:
        label = next((k for k in _LABELS if paragraph.startswith(k)), None)
        if label is not None:
            parts[_LABELS[label]].append(paragraph[len(label) :].strip())
            checked = checked or _LABELS[label] == "checked"
        else:
            parts["notes" if checked else "statement"].append(paragraph)
    return SpecSection(
        rule_id,
        title,
        number,
        group_title,
        tuple(parts["statement"]),
        tuple(parts["latitude"]),
        tuple(parts["rationale"]),
        " ".join(parts["example"]),
        " ".join(parts["checked"]),
        tuple(parts["notes"]),
    )


# ------------------------------------------------------------------- fixtures


@cache
def _all_fixtures() -> tuple[tuple[Path, Mapping[str, Any]], ...]:
    paths = sorted(FIXTURES.glob("rules/*/*.json")) + sorted(FIXTURES.glob("examples/*.json"))
    return tuple((path, load_json(path)) for path in paths)


def _names(fixture: Mapping[str, Any], rule_id: str) -> bool:
    return any(str(r).split(":", 1)[0] == rule_id for r in fixture.get("rules", []))


def fixtures_of(rule_id: str) -> list[tuple[Path, Mapping[str, Any]]]:
    """Every fixture whose ``rules`` name ``rule_id``: its own directory
    (``fixtures/rules/<ID>/``) first, then the other rules' fixtures and the seed's
    examples, each in path order."""
    named = [(p, f) for p, f in _all_fixtures() if _names(f, rule_id)]
    own = [(p, f) for p, f in named if p.parent.name == rule_id]
    return own + [(p, f) for p, f in named if p.parent.name != rule_id]


def is_own(path: Path, rule_id: str) -> bool:
    return path.parent.name == rule_id and path.parent.parent.name == "rules"


def display_path(path: Path) -> str:
    """``path`` relative to the current directory when it is below it (a checkout), else
    as it is: what a command printed for the reader to type."""
    try:
        return (
            Path(os.path.relpath(path)).as_posix() if path.is_relative_to(Path.cwd()) else str(path)
        )
    except ValueError:
        return str(path)


# ----------------------------------------------------------------------- runs


@dataclass
class Run:
    """One fixture run on one implementation and judged by one rule."""

    adapter: str  # "reference" or the mutant's name
    scenario: Mapping[str, Any]
    trace: dict[str, Any] | None
    verdicts: list[Verdict]
    problem: str | None = None  # why there is no trace

    @property
    def violations(self) -> list[Verdict]:
        return [v for v in self.verdicts if not v.ok]

    def sources(self, rule_id: str) -> list[tl.Source]:
        """The violations as the timeline marks them (by their pointers)."""
        key = tl.trace_key(self.trace)
        return [
            tl.Source(
                rule_id,
                f"{v.subject}: {v.message}",
                Pointer(v.subject, v.call, v.events, v.action, v.registration)
                if v.points
                else None,
                key,
            )
            for v in self.violations
        ]


@dataclass
class Lesson:
    """One fixture of a rule: its run on the reference, and on a mutant that breaks the
    rule on it (None: no mutant of the catalogue does)."""

    rule: str
    path: Path
    fixture: Mapping[str, Any]
    passing: Run
    failing: Run | None = None
    mutant: Mutant | None = None
    tried: list[str] = field(default_factory=list)  # the mutants run on it, in order

    @property
    def own(self) -> bool:
        return is_own(self.path, self.rule)

    @property
    def name(self) -> str:
        """``rules/PRE-3/ask-without-approval-service``: the fixture's path below fixtures/
        (of a file elsewhere: its directory's name and its own)."""
        try:
            return self.path.relative_to(FIXTURES).with_suffix("").as_posix()
        except ValueError:
            return f"{self.path.parent.name}/{self.path.stem}"


@contextmanager
def quiet_logs() -> Iterator[None]:
    """The implementations' own log records (an observer that threw...) stay off stderr."""
    root = logging.getLogger()
    saved, level = root.handlers[:], root.level
    root.handlers = [logging.NullHandler()]
    try:
        yield
    finally:
        root.handlers, root.level = saved, level


def _run(adapter: Adapter, name: str, rule_id: str, fixture: Mapping[str, Any]) -> Run:
    # a copy each time: a registry that hands out live objects (a mutant's schemas) writes
    # into the scenario's own definitions, and the next run would see the write
    evaluation = evaluate(adapter, copy.deepcopy(fixture), rules=[rule_id])
    problem = evaluation.no_trace.message if evaluation.no_trace is not None else None
    return Run(
        name, evaluation.scenario, evaluation.trace, evaluation.verdicts.get(rule_id, []), problem
    )


def mutants_of(rule_id: str, catalogue: Mapping[str, Mutant] | None = None) -> list[Mutant]:
    """The catalogue's mutants that target ``rule_id``: its own group's first, then the
    others, each in name order."""
    if catalogue is None:
        from conformance.adapters.reference.mutants import CATALOGUE

        catalogue = CATALOGUE
    group = rule_id.split("-")[0].lower()
    found = [m for m in catalogue.values() if rule_id in m.targets]
    return sorted(found, key=lambda m: (m.group != group, m.name))


def lessons(
    rule_id: str,
    *,
    fixtures: Sequence[tuple[Path, Mapping[str, Any]]] | None = None,
    catalogue: Mapping[str, Mutant] | None = None,
    reference: Callable[[], Adapter] | None = None,
    adapters: dict[str, Adapter] | None = None,
) -> list[Lesson]:
    """Each fixture of ``rule_id`` on the reference and on the first of the rule's
    mutants that breaks the rule on it (a violation in a trace: a crash is no lesson).

    ``adapters`` caches one adapter per mutant across calls.
    """
    from conformance.adapters.reference import ReferenceAdapter

    cache_ = adapters if adapters is not None else {}
    if "" not in cache_:
        cache_[""] = (reference or ReferenceAdapter)()
    found = fixtures if fixtures is not None else fixtures_of(rule_id)
    mutants = mutants_of(rule_id, catalogue) if RULES[rule_id].check is not None else []
    out = []
    with quiet_logs():
        for path, fixture in found:
            lesson = Lesson(rule_id, path, fixture, _run(cache_[""], "reference", rule_id, fixture))
            for mutant in mutants:
                if mutant.name not in cache_:
                    cache_[mutant.name] = mutant.build()
                lesson.tried.append(mutant.name)
                run = _run(cache_[mutant.name], mutant.name, rule_id, fixture)
                if run.trace is not None and run.violations:
                    lesson.failing, lesson.mutant = run, mutant
                    break
            out.append(lesson)
    return out


# ---------------------------------------------------------------------- story


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"`(*])")


def story(mutant: Mutant) -> str:
    """The mutant's one-line story: ``Tempting: ...``, the first sentence of its docstring
    (which says what the bug is and why it is tempting), RST literals as Markdown ones."""
    paragraph = " ".join(mutant.doc.split("\n\n")[0].split())
    sentence = _SENTENCE_END.split(paragraph, maxsplit=1)[0]
    sentence = sentence.replace("``", "`")
    if sentence.startswith("Tempting:"):
        return sentence
    return f"Tempting: {sentence}"


def replay_commands(path: str, mutant: str | None, rule_id: str | None = None) -> list[str]:
    """The commands that replay a scenario file (judged by every rule) or a case (by
    ``rule_id``) on the reference and on the mutant, each saying what it prints."""
    judged = rule_id or "every rule"
    out = [f"toolreg-conformance replay {path} --adapter reference   # FIXED: {judged} holds"]
    if mutant is not None:
        out.append(f"toolreg-conformance replay {path} --adapter mutant:{mutant}   # still FAILING")
    return out


# ------------------------------------------------------------------- explain


def _wrap(text: str, indent: str = "  ", width: int = 92) -> list[str]:
    return textwrap.wrap(
        " ".join(text.split()),
        width,
        initial_indent=indent,
        subsequent_indent=indent,
        break_on_hyphens=False,
    ) or [indent.rstrip()]


def _verdict_line(rule_id: str, run: Run) -> str:
    if run.trace is None:
        return f"no trace: {run.problem}"
    bad = run.violations
    checks = len(run.verdicts)
    if RULES[rule_id].check is None:
        return f"{rule_id} has no predicate: nothing judged"
    if bad:
        return f"{rule_id} FAILS ({len(bad)} of {checks} checks)"
    if not checks:
        return f"{rule_id} not exercised (0 checks)"
    return f"{rule_id} holds ({checks} check{'s' if checks != 1 else ''})"


def explain_text(
    rule_id: str,
    *,
    every: bool = False,
    spec: Mapping[str, SpecSection] | None = None,
    found: Sequence[Lesson] | None = None,
) -> str:
    """What ``toolreg-conformance explain RULE`` prints.

    ``every``: every fixture that names the rule; by default its own directory's, plus --
    when none of those shows a mutant breaking it -- the first others that do.
    """
    rule = RULES[rule_id]
    sections = spec if spec is not None else spec_sections()
    section = sections.get(rule_id)
    out = [f"{rule_id} — {rule.title}"]
    if section is None:
        where = spec_path()
        out += [
            "",
            "  SPEC.md has no section for this rule"
            + (f" ({where})" if where else " (none found: an installed package ships none)"),
        ]
    else:
        out[0] += f"   (SPEC.md {section.number}: {section.group_title})"
        out += ["", "The rule:"]
        for paragraph in section.statement:
            out += [*_wrap(paragraph), ""]
        out += ["Latitude:"]
        if section.latitude:
            for paragraph in section.latitude:
                out += [*_wrap(paragraph), ""]
        else:
            out += ["  none beyond what the rule's own words leave open.", ""]
        out += ["Rationale:"]
        for paragraph in section.rationale:
            out += [*_wrap(paragraph), ""]
        for paragraph in section.notes:
            out += [*_wrap(paragraph), ""]
        out += textwrap.wrap(
            f"Checked: {section.checked}", 92, subsequent_indent="  ", break_on_hyphens=False
        )
    if rule.check is None:
        out += ["", f"{rule_id} has no predicate: {rule.untested or 'not black-box checkable'}"]
        out += ["(no mutant can break a rule the kit cannot judge)"]
    shown = list(found) if found is not None else lessons(rule_id)
    if not shown:
        out += ["", f"{rule_id} has no fixture: no fixture's rules name it."]
        return "\n".join(out) + "\n"
    chosen = shown
    if not every:
        chosen = [lesson for lesson in shown if lesson.own]
        if rule.check is not None and not any(lesson.failing for lesson in chosen):
            chosen += [lesson for lesson in shown if not lesson.own and lesson.failing][:1]
        chosen = chosen or shown[:1]
    left = len(shown) - len(chosen)
    for lesson in chosen:
        out += _lesson_text(rule_id, lesson)
    if left:
        out += ["", f"{left} more fixture(s) name {rule_id}: explain {rule_id} --all shows them."]
    return "\n".join(out) + "\n"


def _lesson_text(rule_id: str, lesson: Lesson) -> list[str]:
    origin = "" if lesson.own else " (a fixture of another rule that names it)"
    out = ["", f"Fixture {lesson.name}{origin}"]
    description = lesson.fixture.get("description")
    if description:
        out += _wrap(str(description))
    passing = lesson.passing
    out += ["", f"  On the reference: {_verdict_line(rule_id, passing)}"]
    keys: list[str] | None = None
    if lesson.failing is not None and lesson.failing.trace is not None:
        failing_lanes = tl.lanes(lesson.failing.scenario, lesson.failing.trace)
        marks = [tl.resolve(s) for s in lesson.failing.sources(rule_id)]
        keys = [lane.key for lane in tl.focus(failing_lanes, marks, TEXT_LANES)[0]]
    if passing.trace is not None:
        out += tl.text_timeline(
            passing.scenario, passing.trace, passing.sources(rule_id), keys=keys
        )
    path = display_path(lesson.path)
    if lesson.failing is None or lesson.mutant is None:
        if RULES[rule_id].check is not None:
            tried = ", ".join(lesson.tried) or "none"
            out += ["", f"  No bundled mutant breaks {rule_id} on this fixture (tried: {tried})."]
        out += ["", "  Replay:", *(f"    {c}" for c in replay_commands(path, None))]
        return out
    failing, mutant = lesson.failing, lesson.mutant
    out += [
        "",
        f"  On mutant {mutant.name}: {_verdict_line(rule_id, failing)}",
        f"    the bug: {mutant.description}",
        *_wrap(story(mutant), "    "),
        f"    ({mutant.where})",
    ]
    for verdict in failing.violations[:3]:
        out += _wrap(f"violated: {verdict.subject}: {verdict.message}", "    ")
    assert failing.trace is not None
    out += tl.text_timeline(failing.scenario, failing.trace, failing.sources(rule_id), keys=keys)
    if any(s.pointed for s in failing.sources(rule_id)):
        out += ["  ✗ marks what the violated verdict points at (its call and trace events).", ""]
    else:
        out += ["  The violated verdict carries no pointer: nothing is marked.", ""]
    out += ["  Replay:", *(f"    {c}" for c in replay_commands(path, mutant.name))]
    return out
