"""The HTML pages in a real browser: headless Chromium loads them from ``file://``.

    python -m pytest -m browser tests/browser    # needs chromium (apt-get install chromium)

The page under test is the dsh-tools report: by default rendered here from the committed
``docs/implementations/dsh-tools-0.1.0-rc.8`` (with its expect file and cases); CI points
``TOOLREG_BROWSER_REPORT`` at the ``report.html`` its own dsh-tools run wrote. The DOM is
the one Chromium holds after the page's script ran, and the console messages (script
errors, Content-Security-Policy refusals) are those the page logged, both read over the
DevTools protocol (``tests/browser/cdp.py``).
``TOOLREG_BROWSER_ARTIFACTS=DIR`` keeps a screenshot of each page there.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections import defaultdict
from html.parser import HTMLParser
from pathlib import Path

import pytest

from conformance.cli.main import main
from tests.browser.cdp import Chromium

ROOT = Path(__file__).resolve().parents[2]
DSH = ROOT / "docs" / "implementations" / "dsh-tools-0.1.0-rc.8"
CHROMIUM = next(
    (p for n in ("chromium", "chromium-browser", "google-chrome") if (p := shutil.which(n))),
    None,
)

FINDING = ("fail", "error", "timeout", "expected-fail")

pytestmark = [
    pytest.mark.browser,
    # CI sets TOOLREG_BROWSER_REQUIRED=1: there, a missing browser fails instead of skipping
    pytest.mark.skipif(
        CHROMIUM is None and not os.environ.get("TOOLREG_BROWSER_REQUIRED"),
        reason="no chromium on PATH",
    ),
]


class Dom(HTMLParser):
    """The elements of a page by class, with their attributes."""

    def __init__(self) -> None:
        super().__init__()
        self.by_class: dict[str, list[dict[str, str]]] = defaultdict(list)
        self.root: dict[str, str] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {k: v or "" for k, v in attrs}
        if tag == "html":
            self.root = values
        for name in values.get("class", "").split():
            self.by_class[name].append(values)


def headless(page: Path, profile: Path, *options: str) -> subprocess.CompletedProcess[str]:
    assert CHROMIUM is not None, "no chromium on PATH (Debian: apt-get install chromium)"
    return subprocess.run(
        [
            CHROMIUM,
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--enable-logging=stderr",
            "--v=0",
            f"--user-data-dir={profile}",
            *options,
            page.resolve().as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )


def load(page: Path, tmp_path: Path) -> tuple[Dom, list[str]]:
    """The page's DOM after its script ran, and every console message it logged."""
    assert CHROMIUM is not None, "no chromium on PATH (Debian: apt-get install chromium)"
    with Chromium(CHROMIUM, tmp_path / "profile") as browser:
        text, console = browser.dump(page)
    dom = Dom()
    dom.feed(text)
    artifacts = os.environ.get("TOOLREG_BROWSER_ARTIFACTS")
    if artifacts:
        Path(artifacts).mkdir(parents=True, exist_ok=True)
        shot = Path(artifacts) / f"{page.stem}.png"
        headless(page, tmp_path / "profile", "--window-size=1400,4000", f"--screenshot={shot}")
        assert shot.stat().st_size > 0
    return dom, console


def dsh_page(tmp_path: Path) -> tuple[Path, dict[str, object]]:
    given = os.environ.get("TOOLREG_BROWSER_REPORT")
    if given:
        page = Path(given)
        return page, json.loads((page.parent / "report.json").read_text(encoding="utf-8"))
    page = tmp_path / "dsh-tools-0.1.0-rc.8.html"
    argv = ["render", str(DSH / "report.json"), "--expect", str(DSH / "expect.json")]
    assert main([*argv, "--html", "-o", str(page)]) == 0
    return page, json.loads((DSH / "report.json").read_text(encoding="utf-8"))


def test_the_dsh_tools_report_page_shows_every_finding_and_timeline(tmp_path: Path) -> None:
    page, report = dsh_page(tmp_path)
    dom, console = load(page, tmp_path)
    assert console == [], "the page logged to the console (a script error or a CSP refusal)"
    assert dom.root.get("data-script") == "ran", "the page's own script did not run"

    rules = report["rules"]
    assert isinstance(rules, list)
    failing = {r["id"] for r in rules if r["status"] in FINDING}
    assert failing, "the dsh-tools report has findings"
    findings = [set(f["data-rules"].split()) for f in dom.by_class["finding"]]
    # every failing rule is in exactly one finding (a root cause may break several)
    assert sorted(r for f in findings for r in f) == sorted(failing)
    assert len(findings) <= len(failing)

    # one timeline per counterexample: each case a finding points at is drawn, or
    # named as the same trace as one drawn above it
    cases = {
        str(f["counterexample"])
        for r in rules
        if r["id"] in failing
        for f in r["failures"]
        if f.get("counterexample")
    }
    drawn = {t["data-case"] for t in dom.by_class["timeline"]}
    same = {t["data-case"] for t in dom.by_class["same-trace"]}
    shown = {Path(p).name for p in drawn | same}
    primary = {
        Path(str(next(f["counterexample"] for f in r["failures"] if f.get("counterexample")))).name
        for r in rules
        if r["id"] in failing and any(f.get("counterexample") for f in r["failures"])
    }
    assert primary <= shown, f"no timeline for {sorted(primary - shown)}"
    assert len(drawn) == len(dom.by_class["timeline"]), "one timeline per case"
    assert cases
    for timeline in dom.by_class["timeline"]:
        assert timeline["data-case"]
    lanes = [lane for lane in dom.by_class["lane"] if "ticks" not in lane["class"].split()]
    assert lanes, "timelines have one lane per call"
    assert all("data-call" in lane for lane in lanes)  # "" is the lane of events without one
    assert dom.by_class["violation"], "each counterexample marks what broke the rule"


def test_a_hostile_page_is_inert(tmp_path: Path) -> None:
    """Strings from the implementation are text: a script in them neither runs nor logs."""
    page, _ = dsh_page(tmp_path)
    hostile = tmp_path / "hostile.html"
    text = page.read_text(encoding="utf-8")
    marker = "NOT CONFORMANT"
    assert marker in text
    evil = "&lt;img src=x onerror=console.error(1)&gt;&lt;script&gt;console.error(2)&lt;/script&gt;"
    hostile.write_text(text.replace(marker, evil, 1), encoding="utf-8")
    dom, console = load(hostile, tmp_path)
    assert console == [] and dom.root.get("data-script") == "ran"


def test_a_page_whose_script_is_refused_is_caught(tmp_path: Path) -> None:
    """The check can fail: a script the page's CSP does not allow logs a refusal."""
    page, _ = dsh_page(tmp_path)
    broken = tmp_path / "broken.html"
    text = page.read_text(encoding="utf-8")
    refused, count = re.subn(r"sha256-[A-Za-z0-9+/]+=*", "sha256-AAAA", text, count=1)
    assert count == 1, "the page allows its script by hash"
    broken.write_text(refused, encoding="utf-8")
    dom, console = load(broken, tmp_path)
    assert console and dom.root.get("data-script") != "ran"
