"""report.html and the comparison page: self-contained, grouped by root cause, escaped."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from conformance.cli.main import main
from conformance.reporting.compare import compare
from conformance.reporting.html import comparison_html, load_cases, report_html
from conformance.reporting.report import report_json, write_reports
from conformance.running.outcomes import Failure, Pointer, RuleOutcome, RunResult
from conformance.seam.adapter import AdapterInfo
from tests.kit.test_report import synthetic

RC8 = Path(__file__).resolve().parents[2] / "docs" / "implementations" / "dsh-tools-0.1.0-rc.8"
HOSTILE = "<script>alert(1)</script>"
VOID = {"meta", "input", "br", "img", "link", "hr", "wbr", "source", "col", "area", "base"}


@dataclass
class Node:
    tag: str
    attrs: dict[str, str]
    parent: Node | None = None
    children: list[Node] = field(default_factory=list)
    text: str = ""

    @property
    def classes(self) -> set[str]:
        return set(self.attrs.get("class", "").split())

    def all(self, cls: str) -> list[Node]:
        out = [n for n in self.children if cls in n.classes]
        for child in self.children:
            out += child.all(cls)
        return out

    def every(self) -> list[Node]:
        return [n for c in self.children for n in [c, *c.every()]]


class Tree(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#root", {})
        self.current = self.root
        self.scripts: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, {k: v or "" for k, v in attrs}, self.current)
        self.current.children.append(node)
        if tag not in VOID:
            self.current = node

    def handle_endtag(self, tag: str) -> None:
        node: Node | None = self.current
        while node is not None and node.tag != tag:
            node = node.parent
        assert node is not None and node.parent is not None, f"stray </{tag}>"
        self.current = node.parent

    def handle_data(self, data: str) -> None:
        self.current.text += data
        if self.current.tag == "script":
            self.scripts.append(data)


def parse(page: str) -> Tree:
    tree = Tree()
    tree.feed(page)
    tree.close()
    assert tree.current is tree.root, "unclosed elements"
    return tree


def self_contained(tree: Tree) -> None:
    for node in tree.root.every():
        for attr in ("src", "href", "action", "srcset", "data"):
            value = node.attrs.get(attr, "")
            assert not re.match(r"\s*(https?:)?//", value, re.I), (node.tag, attr, value)
            assert not value.strip().lower().startswith("javascript:"), value
        assert node.tag not in ("link", "img", "iframe", "object", "embed"), node.tag
        if node.tag == "script":
            assert "src" not in node.attrs
    assert len(tree.scripts) == 1 and "alert" not in tree.scripts[0]  # the page's own, no data


def case_file(path: Path, rule: str, tool: str, message: str) -> str:
    """A small counterexample: one call whose guard, wrapper and body ran; the body wrote."""
    events: list[dict[str, Any]] = [
        {"stage": "guard", "at": "enter", "call": "c1", "id": "g", "tool": tool},
        {"stage": "guard", "at": "exit", "call": "c1", "id": "g", "returned": None},
        {"stage": "wrapper", "at": "enter", "call": "c1", "id": "w"},
        {"stage": "body", "at": "enter", "call": "c1", "id": tool},
        {"stage": "body", "call": "c1", "id": tool, "mutate": "signal", "raised": False},
        {"stage": "body", "call": "c1", "id": tool, "mutate": f"arguments['{HOSTILE}']"},
        {"stage": "body", "at": "exit", "call": "c1", "id": tool, "returned": HOSTILE},
        {"stage": "wrapper", "at": "exit", "call": "c1", "id": "w"},
        {"stage": "result", "at": "enter", "call": "c2", "id": "log"},
    ]
    case = {
        "rule": rule,
        "kit": {"name": "toolreg-conformance", "version": HOSTILE},
        "implementation": {"name": HOSTILE, "version": "1", "language": "x", "capabilities": []},
        "required": [message],
        "scenario": {
            "id": "generated/X",
            "description": HOSTILE,
            "actions": [
                {"call": {"callId": "c1", "name": tool, "arguments": {}}},
                {"call": {"callId": "c2", "name": tool, "abortBefore": True}},
                {"register": HOSTILE},
            ],
            "tools": [{"name": tool, "execute": [{"abort": True}]}],
        },
        "trace": {
            "registrations": [],
            "actions": [
                {"result": {"isError": False, "value": HOSTILE}},
                {"raised": HOSTILE},
                {"ok": True},
            ],
            "events": events,
        },
    }
    path.write_text(json.dumps(case), encoding="utf-8")
    return str(path)


def hostile_result(tmp_path: Path) -> RunResult:
    result = synthetic()
    case = case_file(tmp_path / "PRE-2.json", "PRE-2", HOSTILE, f"body '{HOSTILE}' ran")
    result.implementation = AdapterInfo(HOSTILE, "1.2", "rust", frozenset({"approval"}))
    for outcome in result.rules:
        if outcome.id == "PRE-2":
            # it points at c1's body (event 3), as the message says
            pointers = [Pointer("c1", "c1", (3,))]
            outcome.failures = [
                Failure(f"c1: body '{HOSTILE}' ran", "generated/X", case, pointers=pointers)
            ]
            outcome.title = HOSTILE
    return result


def test_synthetic_report_page(tmp_path: Path) -> None:
    result = hostile_result(tmp_path)
    loaded = RunResult.from_json(report_json(result))  # report.json -> the same model
    files = load_cases(loaded, None, tmp_path, None, tmp_path)
    assert list(files.cases) == [str(tmp_path / "PRE-2.json")]
    assert "out/counterexamples/X.json" in files.missing  # synthetic()'s path exists nowhere
    page = report_html(loaded, None, files.cases, links=files.links, missing=files.missing)
    tree = parse(page)
    self_contained(tree)
    assert HOSTILE not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page

    rows = {n.attrs["data-rule"]: n for n in tree.root.all("rule")}
    assert set(rows) == {r.id for r in result.rules}
    assert rows["PRE-2"].attrs["data-status"] == "fail"
    assert rows["PRE-1"].attrs["data-failing"] == "false"
    groups = [n for n in tree.root.every() if "data-group" in n.attrs]
    assert [g.attrs["data-group"] for g in groups] == ["PRE", "FIN", "RES"]

    # PRE-2, PRE-3 (no case), FIN-1 and RES-1 (the same missing file: one root cause)
    findings = {n.attrs["data-rules"]: n for n in tree.root.all("finding")}
    assert set(findings) == {"PRE-2", "PRE-3", "FIN-1 RES-1"}
    assert "not found" in page  # the missing counterexample is named, not an error
    (timeline,) = findings["PRE-2"].all("timeline")
    assert not findings["FIN-1 RES-1"].all("timeline")
    lanes = {n.attrs["data-call"]: n for n in timeline.all("lane") if "data-call" in n.attrs}
    assert list(lanes) == ["c1", "c2"]
    events = lanes["c1"].all("event")
    assert [int(e.attrs["data-index"]) for e in events] == list(range(8))  # trace order
    assert [e.attrs["data-stage"] for e in events][:4] == ["guard", "guard", "wrapper", "body"]
    spans = {s.attrs["data-stage"]: s for s in lanes["c1"].all("span")}
    assert set(spans) == {"guard", "wrapper", "body"}
    assert "violation" in spans["body"].classes  # the pointer names the body's entry
    assert "violation" not in spans["guard"].classes and "no pointer" not in page
    mutations = [e for e in events if "mutate" in e.classes]
    assert [m.attrs["data-raised"] for m in mutations] == ["false", "false"]
    assert lanes["c2"].all("span")[0].attrs["data-closed-by"] == "nothing"  # no exit: open
    (answer,) = lanes["c2"].all("answer")
    assert "raised" in answer.classes
    assert "aborted on entry" in page


def test_write_reports_writes_the_page(tmp_path: Path) -> None:
    paths = write_reports(hostile_result(tmp_path), tmp_path / "out")
    assert [p.name for p in paths] == ["report.json", "report.md", "junit.xml", "report.html"]
    tree = parse(paths[3].read_text(encoding="utf-8"))
    self_contained(tree)
    assert len(tree.root.all("timeline")) == 1
    links = [n.attrs["href"] for n in tree.root.every() if n.tag == "a" and "href" in n.attrs]
    assert "../PRE-2.json" in links  # relative to the page


def test_the_page_of_a_run_is_the_page_of_its_report_json(tmp_path: Path) -> None:
    """One report model: the page written from a run and the page rendered from the
    report.json it wrote (RunResult.read, the one loader) are the same bytes."""
    out = tmp_path / "out"
    expect_file = str(tmp_path / "absent-expect.json")  # named in the header, never read
    paths = write_reports(hostile_result(tmp_path), out, expect_file)
    loaded = RunResult.read(paths[0])
    assert loaded.expect_file == expect_file
    files = load_cases(loaded, None, out, None, out)
    again = report_html(loaded, None, files.cases, links=files.links, missing=files.missing)
    assert again == paths[3].read_text(encoding="utf-8")


def test_rc8_findings_by_root_cause() -> None:
    document = json.loads((RC8 / "report.json").read_text(encoding="utf-8"))
    expect = json.loads((RC8 / "expect.json").read_text(encoding="utf-8"))
    result = RunResult.read(RC8 / "report.json")
    files = load_cases(result, expect, RC8, RC8, RC8)
    assert not files.missing
    page = report_html(result, expect, files.cases, links=files.links)
    tree = parse(page)
    self_contained(tree)
    findings = {n.attrs["data-rules"]: n for n in tree.root.all("finding")}
    # a malformed decision skips the guards: the same quoted promise of dsh-tools, two rules
    assert "GUARD-1 PRE-6" in findings
    # a stage's write to the execution sticks: the same quoted promise (the immutable view)
    assert "PIPE-3 PIPE-7 RES-1" in findings
    failing = {r["id"] for r in document["rules"] if r["status"] == "expected-fail"}
    assert sorted(r for key in findings for r in key.split()) == sorted(failing)
    assert len(findings) < len(failing)
    shared = findings["GUARD-1 PRE-6"]
    assert len(shared.all("timeline")) == 2  # two cases, two traces: one timeline each
    assert "A monotonic execution guard evaluated after every" in shared.text + "".join(
        n.text for n in shared.every()
    )
    timelines = tree.root.all("timeline")
    traces = {
        json.dumps(json.loads((RC8 / str(e["counterexample"])).read_text())["trace"])
        for e in expect["expected"].values()
    }
    assert len(timelines) == len(traces)  # one per distinct trace
    for timeline in timelines:
        case = json.loads((RC8 / timeline.attrs["data-case"]).read_text(encoding="utf-8"))
        calls = {e.get("call") or "" for e in case["trace"]["events"]}
        lanes = {n.attrs["data-call"] for n in timeline.all("lane") if "data-call" in n.attrs}
        assert calls <= lanes
        shown = [e for lane in timeline.all("lane") for e in lane.all("event")]
        assert len(shown) == len(case["trace"]["events"])
        # a case published with pointers marks what they name; one published before the
        # predicates pointed (issue 24) marks nothing and says so (a finding's other rules'
        # unpointed verdicts may add the note to a pointed one)
        pointed = bool(case.get("pointers")) or any(
            f.get("pointers") and f.get("counterexample") == timeline.attrs["data-case"]
            for r in document["rules"]
            for f in r["failures"]
        )
        notes = [n for n in timeline.every() if "no-pointer" in n.classes]
        assert bool(timeline.all("violation")) == pointed, timeline.attrs["data-case"]
        assert pointed or notes, timeline.attrs["data-case"]


def test_rc8_rules_sharing_a_case_show_its_trace_once() -> None:
    """Two rules whose counterexample is one scenario are one finding, its trace shown once
    (the published rc.8 cases are all distinct: PIPE-2 is pointed at PIPE-3's case here)."""
    document = json.loads((RC8 / "report.json").read_text(encoding="utf-8"))
    expect = json.loads((RC8 / "expect.json").read_text(encoding="utf-8"))
    case = expect["expected"]["PIPE-3"]["counterexample"]
    expect["expected"]["PIPE-2"]["counterexample"] = case
    (pipe_2,) = [r for r in document["rules"] if r["id"] == "PIPE-2"]
    for failure in pipe_2["failures"]:
        if failure.get("counterexample"):
            failure["counterexample"] = case
    result = RunResult.from_json(document)
    files = load_cases(result, expect, RC8, RC8, RC8)
    tree = parse(report_html(result, expect, files.cases, links=files.links))
    findings = {n.attrs["data-rules"]: n for n in tree.root.all("finding")}
    # PIPE-3, PIPE-7 and RES-1 quote the same promise
    shared = findings["PIPE-2 PIPE-3 PIPE-7 RES-1"]
    shown = [n.attrs["data-case"] for n in shared.all("timeline")]
    assert sorted(shown) == ["cases/PIPE-3.json", "cases/PIPE-7.json", "cases/RES-1.json"]


def test_render_and_compare_html(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "page.html"
    args = ["render", str(RC8 / "report.json"), "--expect", str(RC8 / "expect.json")]
    assert main([*args, "--html", "-o", str(out)]) == 0
    tree = parse(out.read_text(encoding="utf-8"))
    self_contained(tree)
    # 7 defects; GUARD-1 + PRE-6 and PIPE-3 + RES-1 each one root cause (the 5 differences
    # are shown in a section of their own)
    assert len(tree.root.all("finding")) == 5
    assert not any("missing" in n.classes for n in tree.root.every())

    def outcome(rid: str, status: str, **kw: Any) -> RuleOutcome:
        o = RuleOutcome(rid, f"title {HOSTILE}", rid.split("-")[0], status=status)
        for key, value in kw.items():
            setattr(o, key, value)
        return o

    dirs = []
    for version, status in (("1", "pass"), ("2", "fail")):
        directory = tmp_path / version
        failures = [Failure("c0: broke", "generated/X", "cases/X.json")] if status == "fail" else []
        result = RunResult(
            implementation=AdapterInfo("impl", version, "typescript", frozenset()),
            profile="ci",
            seed=1,
            rules=[outcome("PRE-1", status, failures=failures), outcome("PRE-2", "pass")],
            kit_errors=[],
            duration_s=1.0,
            scenarios=3,
        )
        write_reports(result, directory)
        dirs.append(str(directory))
    comparison = compare(dirs)
    page = comparison_html(comparison, tmp_path)
    assert HOSTILE not in page
    tree = parse(page)
    self_contained(tree)
    changes = [n for n in tree.root.every() if "change" in n.classes]
    assert [(c.attrs["data-rule"], c.attrs["data-kind"]) for c in changes] == [
        ("PRE-1", "regressed")
    ]
    assert page.index('class="change"') < page.index('class="matrix"')  # changes first
    cells = [n for n in tree.root.every() if "cell" in n.classes]
    assert [c.attrs["data-status"] for c in cells] == ["pass", "fail", "pass", "pass"]
    assert "status-fail" in cells[1].classes
    (link,) = [n for n in cells[1].children if n.tag == "a"]
    assert link.attrs["href"] == "2/cases/X.json"

    target = tmp_path / "cmp.html"
    assert main(["compare", *dirs, "--html", str(target), "-o", str(tmp_path / "c.md")]) == 0
    assert "matrix" in target.read_text(encoding="utf-8")
    capsys.readouterr()
