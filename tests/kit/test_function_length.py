"""No function in conformance/reporting/'s page modules is over 80 lines (issue 26: the
report page was one 1,059-line module whose three largest functions held everything)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPORTING = Path(__file__).resolve().parents[2] / "conformance" / "reporting"
LIMIT = 80
#: The modules held to the limit: the HTML page and the parts it was split into.
CHECKED = ("html.py", "findings.py", "page.py", "timeline_html.py", "cases.py")


def too_long(source: str, limit: int = LIMIT) -> list[tuple[str, int]]:
    """(function name, lines) of every function or method longer than ``limit`` lines."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            length = (node.end_lineno or node.lineno) - node.lineno + 1
            if length > limit:
                out.append((node.name, length))
    return out


@pytest.mark.parametrize("name", CHECKED)
def test_no_function_is_over_80_lines(name: str) -> None:
    assert not too_long((REPORTING / name).read_text(encoding="utf-8")), name


def test_the_measure_finds_a_long_function() -> None:
    body = "".join(f"    x{i} = {i}\n" for i in range(LIMIT))
    assert too_long(f"def long():\n{body}") == [("long", LIMIT + 1)]
    assert too_long(
        f"class C:\n    async def m(self):\n    {body.replace(chr(10), chr(10) + '    ')}"
    )
    assert not too_long("def short():\n    return 1\n")
