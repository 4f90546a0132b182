"""``docs/spec/``: the executable spec as a static site, one page per rule.

    python -m conformance.reporting.site docs/spec --published docs/implementations
    bash docs/spec/build            # the same, as docs/implementations/build runs it

Generated from data only -- SPEC.md (each rule's section, rendered), the fixtures that
name the rule (each run live on the bundled reference and on the first mutant of the
catalogue that breaks the rule on it: :func:`conformance.reporting.teach.lessons`), the
catalogue's metadata (the mutant's description and docstring) and the published reports
(``docs/implementations/**/report.json``, with their expect files and cases). No page is
written by hand. The output directory is wholly the generator's: a file in it that this
run did not write is removed, so a committed page for a fixture that went away shows as a
change.

Each rule's page (``RULE.html``) holds the SPEC section, one block per fixture with the
passing timeline (the reference) beside the failing one (the mutant, what its violated
verdicts point at marked ``violation``), the mutant's story, the counterexample case it
produced (``RULE/FIXTURE.json``, next to the page: ``toolreg-conformance replay`` reads it)
with the replay commands, and what each published implementation's report says of the
rule, linked to its finding. ``index.html`` lists the rules by group.

Pages follow report.html's discipline (:mod:`conformance.reporting.html`): one
self-contained file each, no network, everything taken from a trace escaped, the one
inline script allowed by its hash in the page's Content-Security-Policy, links relative
(they work from ``file://``).

DOM hooks (the browser test reads them): ``html[data-rule]`` on a rule page;
``body[data-rule][data-predicate]``; ``section.fixture[data-fixture]`` with
``.side.passing`` and ``.side.failing`` (``.side.failing.none`` when no mutant breaks the
rule on that fixture), each side's ``.timeline``; ``.published tr[data-implementation]``;
on the index ``tr.rule[data-rule]``.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final
from urllib.parse import quote

from conformance.judging.rules import RULES
from conformance.reporting import timeline as tl
from conformance.reporting.cases import load_cases
from conformance.reporting.html import escape_text as _e
from conformance.reporting.html import finding_anchors, legend, page, timeline_html
from conformance.reporting.teach import (
    Lesson,
    SpecSection,
    lessons,
    mutants_of,
    replay_commands,
    spec_path,
    spec_sections,
    story,
)
from conformance.running.outcomes import RunResult
from conformance.running.tally import counterexample
from conformance.scenario.cases import case_text
from conformance.seam.adapter import Adapter

__all__ = ["Published", "build_site", "main", "published", "rule_page"]

#: The lanes a page's timeline draws at most (the marked ones first).
PAGE_LANES: Final = 6

_CSS: Final = """
.pair { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); gap: 1rem; }
.side { min-width: 0; border-top: 3px solid #ccc; padding-top: .3rem; }
.side.passing { border-top-color: #1e7b34; } .side.failing { border-top-color: #c0392b; }
.side h4 { margin: .2rem 0; }
.spec p { max-width: 52rem; } .spec .label { font-weight: bold; }
.story { font-style: italic; }
.commands { background: #f6f6f6; padding: .4rem .6rem; overflow-x: auto; }
nav.rules a { margin-right: .6rem; }
section.fixture { border-top: 1px solid #ddd; margin-top: 1.5rem; }
td.id { white-space: nowrap; }
"""

_LINK = re.compile(r"\[([^\]]+)\]\(([^)\s]+)\)")
_SAFE_TARGET = re.compile(r"^[A-Za-z0-9_./#-]+$")


# ------------------------------------------------------------------ Markdown


def _inline(text: str, root: str) -> str:
    """SPEC.md's inline Markdown as HTML: `code`, **bold**, *emphasis*, [text](link).

    Everything is escaped first; a link's target is kept only when it is a relative
    path or an anchor (made relative to the repository root ``root``), else only its text
    shows."""
    out = []
    for i, part in enumerate(re.split(r"(`[^`]*`)", text)):
        if i % 2:
            out.append(f"<code>{_e(part[1:-1])}</code>")
            continue
        html = _e(part)
        html = re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", html)
        html = re.sub(r"(?<![*\w])\*(?!\s)(.+?)(?<!\s)\*(?![*\w])", r"<em>\1</em>", html)
        html = _LINK.sub(lambda m: _link(m.group(1), m.group(2), root), html)
        out.append(html)
    return "".join(out)


def _link(text: str, target: str, root: str) -> str:
    raw = target.replace("&amp;", "&")
    if not _SAFE_TARGET.match(raw):
        return text
    href = f"{root}/SPEC.md{raw}" if raw.startswith("#") else f"{root}/{raw}"
    return f'<a href="{_e(quote(href, safe="/#.-_"))}">{text}</a>'


def _paragraphs(paragraphs: Sequence[str], root: str, label: str | None = None) -> list[str]:
    out = []
    for n, paragraph in enumerate(paragraphs):
        lead = f'<span class="label">{_e(label)}</span> ' if label and n == 0 else ""
        out.append(f"<p>{lead}{_inline(paragraph, root)}</p>")
    return out


def _spec_html(section: SpecSection | None, rule_id: str, root: str) -> list[str]:
    if section is None:
        return [f'<p class="note">SPEC.md has no section for {_e(rule_id)}.</p>']
    out = ['<div class="spec">', *_paragraphs(section.statement, root)]
    if section.latitude:
        out += _paragraphs(section.latitude, root, "Latitude.")
    else:
        out.append(
            '<p class="latitude"><span class="label">Latitude.</span> None beyond what the '
            "rule's own words leave open.</p>"
        )
    out += _paragraphs(section.rationale, root, "Rationale.")
    out += _paragraphs(section.notes, root)
    if section.example:
        out += _paragraphs([section.example], root, "Example:")
    out += _paragraphs([section.checked], root, "Checked:")
    out.append("</div>")
    return out


# ------------------------------------------------------------- published


@dataclass(frozen=True)
class Published:
    """One published report: its directory, label and what it says of each rule."""

    directory: Path
    label: str  # the implementation and version (compare's column label)
    where: str  # its directory below the published root: dsh-tools-0.1.0-rc.8
    cells: Mapping[str, Any]  # rule -> conformance.reporting.compare.Cell
    anchors: Mapping[str, list[str]]  # rule -> its cards on report.html


def published(root: Path) -> list[Published]:
    """Every ``report.json`` under ``root`` (a directory of published implementations)."""
    from conformance.reporting.compare import compare
    from conformance.reporting.expectations import load_expectations

    reports = sorted(root.glob("**/report.json"))
    if not reports:
        return []
    comparison = compare([str(p) for p in reports])
    out = []
    for path, column in zip(reports, comparison.columns, strict=True):
        directory = path.parent
        result = RunResult.read(path)
        expect_path = directory / "expect.json"
        expect = load_expectations(str(expect_path)).to_json() if expect_path.exists() else None
        files = load_cases(result, expect, directory, directory, directory)
        where = directory.relative_to(root).as_posix()
        anchors = finding_anchors(result, expect, files.cases)
        out.append(Published(directory, column.label, where, column.cells, anchors))
    return out


def _href(target: Path, base: Path) -> str:
    return quote(Path(os.path.relpath(target.resolve(), base.resolve())).as_posix())


def _relative(path: Path, root: Path) -> str:
    """``path`` as a command run from the checkout ``root`` names it."""
    return Path(os.path.relpath(path.resolve(), root.resolve())).as_posix()


def _published_html(rule_id: str, found: Sequence[Published], out_dir: Path) -> list[str]:
    if not found:
        return ["<p>No published report was given.</p>"]
    rows = []
    for report in found:
        cell = report.cells.get(rule_id)
        page_href = _href(report.directory / "report.html", out_dir)
        who = (
            f'<tr data-implementation="{_e(report.where)}" '
            f'data-status="{_e(cell.status if cell is not None else "")}"><td>{_e(report.label)}'
            f'</td><td><a href="{_e(page_href)}">{_e(report.where)}</a></td>'
        )
        if cell is None:
            rows.append(f"{who}<td>not judged (not in that run's rule set)</td><td></td></tr>")
            continue
        anchors = report.anchors.get(rule_id, [])
        links = [
            f'<a href="{_e(page_href)}#{_e(a)}">{_e(a.replace("-", " "))}</a>' for a in anchors
        ] or [f'<a href="{_e(page_href)}#rule-{_e(rule_id)}">its row</a>']
        if cell.counterexample:
            case = Path(cell.counterexample)
            links.append(f'<a href="{_e(_href(case, out_dir))}">case</a>')
        reason = f' title="{_e(cell.reason)}"' if cell.reason else ""
        rows.append(f"{who}<td{reason}>{_e(cell.text())}</td><td>{' · '.join(links)}</td></tr>")
    return [
        '<table class="published"><tr><th>implementation</th><th>report</th><th>this rule</th>'
        "<th>finding</th></tr>",
        *rows,
        "</table>",
    ]


# ----------------------------------------------------------------- the pages


def _case_name(lesson: Lesson) -> str:
    """The counterexample's file name beside the page: the fixture's own name, or, for a
    fixture of another directory, its path below fixtures/ with ``--`` for ``/``."""
    return (lesson.path.stem if lesson.own else lesson.name.replace("/", "--")) + ".json"


def _verdict(rule_id: str, run: Any) -> str:
    if run.trace is None:
        return f"no trace: {run.problem}"
    if RULES[rule_id].check is None:
        return "nothing judged: the rule has no predicate"
    bad, checks = len(run.violations), len(run.verdicts)
    if bad:
        return f"{rule_id} fails ({bad} of {checks} checks)"
    return f"{rule_id} holds ({checks} checks)" if checks else f"{rule_id} not exercised"


def _lesson_html(
    rule_id: str, lesson: Lesson, out_dir: Path, root_dir: Path, case_dir: Path
) -> tuple[list[str], tuple[str, dict[str, Any]] | None]:
    """One fixture's block, and the counterexample file it links to (name, case)."""
    passing, failing = lesson.passing, lesson.failing
    out = [
        f'<section class="fixture" data-fixture="{_e(lesson.name)}" '
        f'data-own="{str(lesson.own).lower()}">',
        f"<h3>{_e(lesson.name)}</h3>",
    ]
    fixture_href = _href(lesson.path, out_dir)
    origin = "" if lesson.own else " (a fixture of another rule that names this one)"
    out.append(f'<p><a href="{_e(fixture_href)}">the fixture</a>{_e(origin)}</p>')
    if lesson.fixture.get("description"):
        said = _inline(str(lesson.fixture["description"]), _href(root_dir, out_dir))
        out.append(f'<p class="description">{said}</p>')
    keys: list[str] | None = None
    if failing is not None and failing.trace is not None:
        every = tl.lanes(failing.scenario, failing.trace)
        marks = [tl.resolve(s) for s in failing.sources(rule_id)]
        keys = [lane.key for lane in tl.focus(every, marks, PAGE_LANES)[0]]
    elif passing.trace is not None:
        every = tl.lanes(passing.scenario, passing.trace)
        keys = [lane.key for lane in tl.focus(every, [], PAGE_LANES)[0]]
    out.append('<div class="pair">')
    out.append('<div class="side passing">')
    out.append(f"<h4>On the reference: {_e(_verdict(rule_id, passing))}</h4>")
    if passing.trace is not None:
        key = f"reference/{lesson.name}"
        out.append(
            timeline_html(
                key, passing.scenario, passing.trace, passing.sources(rule_id), keys=keys, log=False
            )
        )
    out.append("</div>")
    written: tuple[str, dict[str, Any]] | None = None
    commands: list[str]
    fixture_path = _relative(lesson.path, root_dir)
    if failing is None or lesson.mutant is None or failing.trace is None:
        out.append('<div class="side failing none">')
        if RULES[rule_id].check is None:
            out.append("<h4>No mutant: the kit cannot judge this rule, so none can break it</h4>")
        else:
            tried = ", ".join(lesson.tried) or "none"
            out.append(f"<h4>No bundled mutant breaks {_e(rule_id)} on this fixture</h4>")
            out.append(f"<p>Tried: {_e(tried)}.</p>")
        out.append("</div>")
        commands = replay_commands(fixture_path, None)
    else:
        mutant = lesson.mutant
        out.append('<div class="side failing">')
        out.append(
            f"<h4>On mutant <code>{_e(mutant.name)}</code>: {_e(_verdict(rule_id, failing))}</h4>"
        )
        out.append(f"<p>The bug: {_e(mutant.description)}</p>")
        out.append(f'<p class="story">{_inline(story(mutant), "")}</p>')
        out.append(f'<p class="where"><code>{_e(mutant.where)}</code></p>')
        out.append('<ul class="messages">')
        for verdict in failing.violations:
            out.append(f"<li>{_e(verdict.subject)}: {_e(verdict.message)}</li>")
        out.append("</ul>")
        name = _case_name(lesson)
        case_href = _href(case_dir / name, out_dir)
        key = f"{rule_id}/{name}"
        out.append(
            timeline_html(
                key, failing.scenario, failing.trace, failing.sources(rule_id), keys=keys, log=False
            )
        )
        out.append(
            f'<p>The counterexample: <a class="case" href="{_e(case_href)}">{_e(key)}</a></p>'
        )
        info = _mutant_adapter(mutant.name).describe()
        case = counterexample(
            rule_id,
            info,
            failing.scenario,
            failing.trace,
            [v.message for v in failing.violations],
            failing.violations,
        )
        written = (name, case)
        out.append("</div>")
        case_path = _relative(case_dir / name, root_dir)
        commands = [
            *replay_commands(case_path, mutant.name, rule_id),
            *replay_commands(fixture_path, mutant.name),
        ]
    out.append("</div>")
    out.append('<pre class="commands">' + "\n".join(_e(c) for c in commands) + "</pre>")
    out.append("</section>")
    return out, written


_ADAPTERS: dict[str, Adapter] = {}


def _mutant_adapter(name: str) -> Adapter:
    if name not in _ADAPTERS:
        from conformance.adapters.reference.mutants import CATALOGUE

        _ADAPTERS[name] = CATALOGUE[name].build()
    return _ADAPTERS[name]


def _nav(order: Sequence[str], rule_id: str) -> str:
    at = order.index(rule_id)
    parts = ['<a href="index.html">every rule</a>']
    if at > 0:
        parts.append(f'<a href="{_e(order[at - 1])}.html">← {_e(order[at - 1])}</a>')
    if at + 1 < len(order):
        parts.append(f'<a href="{_e(order[at + 1])}.html">{_e(order[at + 1])} →</a>')
    return '<nav class="rules">' + "".join(parts) + "</nav>"


def rule_page(
    rule_id: str,
    section: SpecSection | None,
    found: Sequence[Lesson],
    reports: Sequence[Published],
    order: Sequence[str],
    out_dir: Path,
    root_dir: Path,
) -> tuple[str, dict[str, dict[str, Any]]]:
    """The page of ``rule_id`` (to be written in ``out_dir``; ``root_dir`` is the checkout
    the commands run from) and the counterexample cases it links to, by file name."""
    rule = RULES[rule_id]
    root = _href(root_dir, out_dir)
    title = f"{rule_id} — {rule.title}"
    predicate = rule.check is not None
    body = [
        f'<div data-rule="{_e(rule_id)}" data-predicate="{str(predicate).lower()}" class="page">',
        _nav(order, rule_id),
        f"<h1>{_e(title)}</h1>",
    ]
    if section is not None:
        body.append(
            f"<p>SPEC.md section {_e(section.number)}: {_inline(section.group_title, root)}</p>"
        )
    body.append("<h2>The rule</h2>")
    body += _spec_html(section, rule_id, root)
    if rule.clauses:
        body.append(
            '<h3>Clauses</h3><table class="clauses"><tr><th>clause</th><th>requires</th></tr>'
        )
        body += [
            f"<tr><td><code>{_e(name)}</code></td><td>{_e(text)}</td></tr>"
            for name, text in rule.clauses.items()
        ]
        body.append("</table>")
    body.append("<h2>Its mutants</h2>")
    if not predicate:
        body.append(
            f"<p>No predicate: {_e(rule.untested or 'not black-box checkable')}. "
            "No mutant can break a rule the kit cannot judge.</p>"
        )
    else:
        mutants = mutants_of(rule_id)
        if not mutants:
            body.append(f"<p>No mutant of the catalogue targets {_e(rule_id)}.</p>")
        else:
            body.append('<ul class="mutants">')
            for mutant in mutants:
                body.append(
                    f'<li data-mutant="{_e(mutant.name)}"><code>{_e(mutant.name)}</code>: '
                    f'{_e(mutant.description)}<br><span class="story">{_inline(story(mutant), "")}'
                    "</span></li>"
                )
            body.append("</ul>")
    body.append("<h2>Each fixture on the reference and on a mutant</h2>")
    cases: dict[str, dict[str, Any]] = {}
    if not found:
        body.append(f"<p>No fixture names {_e(rule_id)}.</p>")
    else:
        body.append(
            "<p>Left: the fixture run live on the bundled reference. Right: the same fixture on "
            "the first mutant of the catalogue that breaks the rule on it, what its violated "
            "verdicts point at outlined in red.</p>"
        )
        body.append(legend())
    case_dir = out_dir / rule_id
    for lesson in found:
        block, written = _lesson_html(rule_id, lesson, out_dir, root_dir, case_dir)
        body += block
        if written is not None:
            cases[written[0]] = written[1]
    body.append("<h2>Published implementations</h2>")
    body += _published_html(rule_id, reports, out_dir)
    body.append("</div>")
    return page(title, body, _CSS), cases


def _index_page(
    order: Sequence[str],
    sections: Mapping[str, SpecSection],
    found: Mapping[str, Sequence[Lesson]],
    reports: Sequence[Published],
    root: str,
) -> str:
    title = "The executable spec: every rule, a passing trace beside a failing one"
    body = [
        '<div class="page index">',
        f"<h1>{_e(title)}</h1>",
        "<p>One page per rule of SPEC.md: its text, each fixture that names it run live on the "
        "bundled reference and on a mutant that breaks it, the mutant's story, and what each "
        "published implementation does. Generated from SPEC.md, the fixtures, the mutant "
        "catalogue and the published reports.</p>",
    ]
    groups: dict[str, list[str]] = {}
    for rid in order:
        section = sections.get(rid)
        groups.setdefault(section.group_title if section else RULES[rid].group, []).append(rid)
    for group, members in groups.items():
        body.append(f"<h2>{_inline(group, root)}</h2>")
        body.append(
            '<table class="rules"><tr><th>rule</th><th>title</th><th>checked</th>'
            '<th class="num">fixtures</th><th class="num">broken by a mutant</th>'
            "<th>published: defect or difference</th></tr>"
        )
        for rid in members:
            lessons_ = found.get(rid, [])
            broken = sum(lesson.failing is not None for lesson in lessons_)
            section = sections.get(rid)
            checked = section.checked.split(" — ")[0].rstrip(".") if section else ""
            said: dict[str, list[str]] = {}
            for report in reports:
                cell = report.cells.get(rid)
                if cell is not None and cell.kind not in ("pass", "not-run"):
                    said.setdefault(cell.text(), []).append(report.where)
            failing = [f"{word}: {', '.join(where)}" for word, where in said.items()]
            body.append(
                f'<tr class="rule" data-rule="{_e(rid)}"><td class="id">'
                f'<a href="{_e(rid)}.html">{_e(rid)}</a></td><td>{_e(RULES[rid].title)}</td>'
                f"<td>{_inline(checked, root)}</td>"
                f'<td class="num">{len(lessons_)}</td><td class="num">{broken}</td>'
                f"<td>{_e('; '.join(failing) or '-')}</td></tr>"
            )
        body.append("</table>")
    body.append("</div>")
    return page(title, body, _CSS)


def build_site(
    out_dir: Path,
    *,
    published_root: Path | None = None,
    spec: Path | None = None,
    rules: Sequence[str] | None = None,
) -> list[Path]:
    """Write the site into ``out_dir`` (removing what it no longer writes); the paths
    written. ``rules`` limits it to some rules (a test's); the index lists those."""
    out_dir.mkdir(parents=True, exist_ok=True)
    source = spec if spec is not None else spec_path()
    if source is None:
        raise FileNotFoundError("SPEC.md not found: pass --spec FILE")
    root_dir = source.parent
    sections = spec_sections(source)
    order = [r for r in sections if r in RULES] + [r for r in RULES if r not in sections]
    if rules is not None:
        order = [r for r in order if r in rules]
    reports = published(published_root) if published_root is not None else []
    adapters: dict[str, Adapter] = {}
    found = {rid: lessons(rid, adapters=adapters) for rid in order}
    written: list[Path] = []
    for rid in order:
        text, cases = rule_page(
            rid, sections.get(rid), found[rid], reports, order, out_dir, root_dir
        )
        written.append(_write(out_dir / f"{rid}.html", text))
        for name, case in cases.items():
            path = out_dir / rid / name
            written.append(_write(path, case_text(case, str(path))))
    written.append(
        _write(
            out_dir / "index.html",
            _index_page(order, sections, found, reports, _href(root_dir, out_dir)),
        )
    )
    _prune(out_dir, set(written))
    return written


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")
    return path


def _prune(out_dir: Path, keep: set[Path]) -> None:
    """Remove every page or case under ``out_dir`` this run did not write, then the
    directories left empty."""
    kept = {p.resolve() for p in keep}
    for path in sorted(out_dir.rglob("*"), reverse=True):
        if path.is_file() and path.suffix in (".html", ".json") and path.resolve() not in kept:
            path.unlink()
        elif path.is_dir() and not any(path.iterdir()):
            path.rmdir()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m conformance.reporting.site",
        description="Write the executable spec's static site (one page per rule).",
    )
    parser.add_argument("out", metavar="DIR", help="the site's directory, e.g. docs/spec")
    parser.add_argument(
        "--published", metavar="DIR", help="the published implementations (every report.json)"
    )
    parser.add_argument("--spec", metavar="FILE", help="SPEC.md (default: the checkout's)")
    args = parser.parse_args(argv)
    started = time.monotonic()
    paths = build_site(
        Path(args.out),
        published_root=Path(args.published) if args.published else None,
        spec=Path(args.spec) if args.spec else None,
    )
    pages = sum(p.suffix == ".html" for p in paths)
    print(
        f"wrote {pages} pages and {len(paths) - pages} cases to {args.out} "
        f"in {time.monotonic() - started:.1f} s",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
