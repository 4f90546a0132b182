"""The layout tells the flow: no module imports against it, and no two import each other.

A scenario (``scenario/``, the language as data) is run by an interpreter
(``interpreter/``) behind the adapter seam (``seam/``); its trace is judged
(``judging/``); transports and adapters reach implementations (``transport/``,
``adapters/``); the runner plans, runs and tallies (``running/``); reports render what it
found (``reporting/``); the command line stands on everything (``cli/``). Each package
stands on a floor and may import only from its own floor or below; an import of a type
for annotations only (``if TYPE_CHECKING:``) is no dependency. Within the kit, no group
of modules imports itself in a circle, lazy imports inside functions included.
"""

from __future__ import annotations

import ast
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: Package (or module) -> floor. The package's face (``conformance/__init__.py``, which
#: only hands the seam's names on) and the documented entry points stand on top.
FLOORS = {
    "conformance._version": 0,
    "conformance.vocab": 0,
    "conformance.processes": 0,
    "conformance.scenario": 1,
    "conformance.interpreter": 2,
    "conformance.seam": 3,
    "conformance.judging": 4,
    "conformance.transport": 5,
    "conformance.adapters": 6,
    "conformance.running": 7,
    "conformance.reporting": 8,
    "conformance.selftest": 8,
    "conformance.cli": 9,
    "conformance.pytest_plugin": 9,
    "conformance.test_conformance": 9,
    "conformance.__main__": 9,
    "conformance.harness": 9,
    "conformance.script": 9,
    "conformance": 9,
}


def _modules(root: Path = ROOT) -> dict[str, Path]:
    out = {}
    for path in (root / "conformance").rglob("*.py"):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _floor(module: str) -> int:
    best = max((p for p in FLOORS if module == p or module.startswith(p + ".")), key=len)
    return FLOORS[best]


def _type_checking_lines(tree: ast.Module) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for inner in node.body:
                lines.update(range(inner.lineno, (inner.end_lineno or inner.lineno) + 1))
    return lines


def _edges(root: Path = ROOT) -> dict[str, set[str]]:
    modules = _modules(root)

    def resolve(name: str) -> str | None:
        while name and name not in modules:
            name = name.rsplit(".", 1)[0] if "." in name else ""
        return name or None

    edges: dict[str, set[str]] = defaultdict(set)
    for module, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skip = _type_checking_lines(tree)
        package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
        for node in ast.walk(tree):
            if getattr(node, "lineno", None) in skip:
                continue
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*parts, *([base] if base else [])])
                names = [base, *(f"{base}.{alias.name}" for alias in node.names)]
            for name in names:
                target = resolve(name) if name.startswith("conformance") else None
                if target is not None and target != module:
                    edges[module].add(target)
    return edges


def _against(root: Path = ROOT) -> list[str]:
    return sorted(
        f"{a} (floor {_floor(a)}) imports {b} (floor {_floor(b)})"
        for a, targets in _edges(root).items()
        for b in targets
        if _floor(a) < _floor(b)
    )


def test_no_module_imports_against_the_flow() -> None:
    against = _against()
    assert not against, "\n".join(against)


def test_no_modules_import_each_other_in_a_circle() -> None:
    circles = _circles()
    assert not circles, circles


def _circles(root: Path = ROOT) -> list[list[str]]:
    edges = _edges(root)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 5000))
    for module in sorted(_modules(root)):
        if module not in index:
            visit(module)
    return circles


def test_both_checks_fail_on_a_tree_that_breaks_them(tmp_path: Path) -> None:
    """A judging module that imports the runner (lazily, inside a function) is against the
    flow; two reporting modules importing each other are a circle; an import for
    annotations only is neither."""
    files = {
        "conformance/__init__.py": "",
        "conformance/judging/__init__.py": "",
        "conformance/judging/model.py": (
            "from typing import TYPE_CHECKING\n"
            "if TYPE_CHECKING:\n    from conformance.reporting.report import Report\n"
            "def f():\n    from conformance.running.runner import run_suite\n"
        ),
        "conformance/running/__init__.py": "",
        "conformance/running/runner.py": "import json\n",
        "conformance/reporting/__init__.py": "",
        "conformance/reporting/report.py": "from conformance.reporting import html\n",
        "conformance/reporting/html.py": "from conformance.reporting.report import x\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    assert _against(tmp_path) == [
        "conformance.judging.model (floor 4) imports conformance.running.runner (floor 7)"
    ]
    assert _circles(tmp_path) == [["conformance.reporting.html", "conformance.reporting.report"]]
