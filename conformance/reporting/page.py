"""The report pages' shell: the self-contained page (its Content-Security-Policy, the one
inline script, the stylesheet) and the escaping and small formatting helpers every
part of a page uses (:mod:`conformance.reporting.html`, ``findings``, ``timeline_html``).

Everything read from a report comes from the implementation under test and is treated
as hostile: every string goes through :func:`esc`.
"""

from __future__ import annotations

import base64
import hashlib
import re
from html import escape
from typing import Any, Final

from conformance.reporting import timeline as tl
from conformance.reporting.timeline import STAGE_ORDER
from conformance.vocab import Status

__all__ = [
    "CSS",
    "as_dict",
    "as_list",
    "esc",
    "escape_text",
    "page",
    "short",
    "slug",
    "stage_class",
    "status_class",
]

_JS: Final = """
document.addEventListener('DOMContentLoaded', function () {
  document.documentElement.setAttribute('data-script', 'ran');
  var box = document.getElementById('only-failing');
  if (!box) { return; }
  box.addEventListener('change', function () {
    var rows = document.querySelectorAll('tr.rule');
    for (var i = 0; i < rows.length; i++) {
      var quiet = rows[i].getAttribute('data-failing') !== 'true';
      rows[i].hidden = box.checked && quiet;
    }
  });
});
"""

CSS: Final = """
:root { --col: 2.1rem; --label: 11rem; --answer: 16rem; font-family: system-ui, sans-serif; }
body { margin: 1.5rem; color: #1d1d1f; background: #fff; line-height: 1.4; }
h1 { font-size: 1.5rem; } h2 { margin-top: 2rem; border-bottom: 1px solid #ccc; }
code, pre, .mono { font-family: ui-monospace, monospace; font-size: .85em; }
table { border-collapse: collapse; margin: .5rem 0; }
th, td { border: 1px solid #ddd; padding: .2rem .5rem; text-align: left; vertical-align: top; }
td.num, th.num { text-align: right; }
.verdict { font-weight: bold; padding: .1rem .4rem; border-radius: .2rem; }
.verdict.ok { background: #d7f5dd; } .verdict.bad { background: #fbd9d9; }
.status-pass { background: #e3f6e6; } .status-fail { background: #fbd9d9; }
.status-error, .status-timeout { background: #fde4c8; }
.status-expected-fail { background: #f6ecc4; } .status-unexpected-pass { background: #e6dcfb; }
.status-not-applicable, .status-untested, .status-not-exercised, .status-none { color: #666; }
.finding { border: 1px solid #bbb; border-left: .4rem solid #c0392b; margin: 1rem 0;
  padding: .5rem 1rem; }
.finding h3, .difference h3 { margin: .3rem 0; }
.difference { border: 1px solid #bbb; border-left: .4rem solid #2f6db5; margin: 1rem 0;
  padding: .5rem 1rem; }
.status-difference { background: #dde8f7; }
.why { color: #444; font-size: .85em; }
blockquote { margin: .3rem 0 .3rem 1rem; padding-left: .6rem; border-left: 3px solid #ccc;
  white-space: pre-wrap; }
.messages li { font-family: ui-monospace, monospace; font-size: .85em; }
.note { color: #8a4b00; }
.timeline { overflow-x: auto; margin: .6rem 0; padding: .3rem; background: #fafafa;
  border: 1px solid #e5e5e5; }
.lane { display: grid; gap: 2px 0; align-items: center; border-top: 1px dashed #ddd;
  padding: 3px 0; min-width: max-content; }
.lane.ticks { border-top: none; color: #888; font-size: .7rem; }
.lane-label { grid-column: 1; font-size: .8rem; padding-right: .4rem; overflow-wrap: anywhere; }
.span { height: 1.25rem; border-radius: .25rem; font-size: .7rem; padding: 0 .3rem;
  overflow: hidden; white-space: nowrap; color: #111; opacity: .85; }
.span.open { border-right: 2px dashed #333; }
.event { z-index: 1; justify-self: center; font-size: .8rem; min-width: 1.1rem; text-align: center;
  border-radius: .2rem; cursor: default; }
.event.mutate { background: #fff; border: 1px solid #555; }
.event.mutate.accepted { background: #c0392b; color: #fff; }
.event.at-throw { color: #c0392b; font-weight: bold; }
.answer { font-size: .75rem; padding: .1rem .3rem; border: 1px solid #bbb; border-radius: .2rem;
  overflow-wrap: anywhere; }
.answer.error, .answer.raised, .answer.interrupted { background: #fdecea; }
.answer.ok { background: #eef8ef; }
.violation { outline: 3px solid #e01b24; outline-offset: 1px; }
.badge { font-size: .7rem; padding: 0 .3rem; border-radius: .2rem; background: #eee; }
.badge.abort { background: #fde4c8; }
.stage-pre-execute { background: #9ecae1; } .stage-approval { background: #fdd0a2; }
.stage-guard { background: #c7e9c0; } .stage-wrapper { background: #dadaeb; }
.stage-body { background: #fdae6b; } .stage-post-execute { background: #a1d99b; }
.stage-finalize { background: #bcbddc; } .stage-result { background: #d9d9d9; }
.stage-classifier, .stage-code-dispatch-log, .stage-program, .stage-present,
.stage-other { background: #f2f2f2; }
.event[class*="stage-"] { background: transparent; }
.legend span { display: inline-block; padding: 0 .4rem; margin-right: .2rem; font-size: .75rem;
  border-radius: .2rem; }
details.log li { font-size: .8rem; }
.kind-regressed { color: #c0392b; } .kind-fixed { color: #1e7b34; }
"""


def esc(value: object) -> str:
    """Escape anything for HTML text and attribute values."""
    return escape(str(value), quote=True)


def short(value: Any, limit: int = 160) -> str:
    """A JSON preview of a value, cut to ``limit`` characters (not escaped)."""
    return tl.short(value, limit)


def slug(value: object) -> str:
    """A token safe in a class name or an id: anything else becomes ``-``."""
    return re.sub(r"[^A-Za-z0-9_-]", "-", str(value))[:80] or "x"


def status_class(status: object) -> str:
    return f"status-{status}" if str(status) in {str(s) for s in Status} else "status-none"


def stage_class(stage: object) -> str:
    return f"stage-{stage}" if stage in STAGE_ORDER else "stage-other"


def as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def page(title: str, body: list[str], css: str = "") -> str:
    """A whole self-contained page: ``body`` (HTML, escaped by the caller) under the page's
    Content-Security-Policy (no network, the one inline script allowed by its hash), with
    :data:`CSS` plus ``css``."""
    return _page(title, body, css)


def escape_text(value: object) -> str:
    """Escape anything for HTML text and attribute values."""
    return esc(value)


def _page(title: str, body: list[str], css: str = "") -> str:
    digest = base64.b64encode(hashlib.sha256(_JS.encode()).digest()).decode()
    policy = (
        "default-src 'none'; style-src 'unsafe-inline'; "
        f"script-src 'sha256-{digest}'; img-src data:; base-uri 'none'; form-action 'none'"
    )
    head = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{esc(policy)}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{esc(title)}</title>",
        f"<style>{CSS}{css}</style>",
        f"<script>{_JS}</script>",
        "</head>",
        "<body>",
    ]
    return "\n".join([*head, *body, "</body>", "</html>"]) + "\n"
