"""Every bundled framework adapter and harness passes the adapter doctor (issue 23): it
delivers each capability it declares (what it cannot deliver it skips with the reason).

The Python adapters need the frameworks extra; the stdio harnesses their node_modules
(``npm ci --prefix harnesses/dsh``, ``--prefix harnesses/vercel-ai``, ``--prefix
harnesses/openai-agents-js``): each is skipped
when its dependency is absent.
"""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import pytest

from conformance.adapters import load_adapter
from conformance.cli.common import close_adapter
from conformance.running.doctor import diagnose

ROOT = Path(__file__).resolve().parents[2]

PYTHON = [
    ("pydantic_ai", "python:conformance.adapters.pydantic_ai:make_adapter"),
    ("pydantic_ai", "python:conformance.adapters.pydantic_ai:make_inline_adapter"),
    ("agents", "python:conformance.adapters.openai_agents:make_adapter"),
    ("google.adk", "python:conformance.adapters.google_adk:make_adapter"),
    ("langgraph", "python:conformance.adapters.langgraph:make_adapter"),
]
STDIO = ["dsh", "vercel-ai", "openai-agents-js"]


def _installed(module: str) -> bool:
    """Is ``module`` importable? (``find_spec`` of ``google.adk`` raises without ``google``.)"""
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


def _check(spec: str) -> None:
    adapter = load_adapter(spec)
    try:
        found = diagnose(adapter)
    finally:
        close_adapter(adapter)
    broken = [f"{d.probe.name}: {d.detail}" for d in found if d.broken]
    assert broken == [], spec


@pytest.mark.parametrize(("module", "spec"), PYTHON, ids=[s for _, s in PYTHON])
def test_a_python_framework_adapter_passes_the_doctor(module: str, spec: str) -> None:
    if not _installed(module):
        pytest.skip(f"{module} is not installed (pip install -e '.[frameworks]')")
    _check(spec)


@pytest.mark.parametrize("harness", STDIO)
def test_a_stdio_harness_passes_the_doctor(harness: str) -> None:
    if shutil.which("node") is None or not (ROOT / "harnesses" / harness / "node_modules").is_dir():
        pytest.skip(f"node or harnesses/{harness}/node_modules absent (npm ci --prefix ...)")
    _check(f"stdio:node {ROOT / 'harnesses' / harness / 'harness.mjs'}")
