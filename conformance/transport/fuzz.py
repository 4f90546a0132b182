"""The protocol-robustness tier: schemathesis against the HTTP binding of the harness protocol.

    toolreg-conformance fuzz-protocol --adapter http://127.0.0.1:8765
    toolreg-conformance fuzz-protocol --app reference          # in process, no socket

Semantic conformance (``run``) asks whether the implementation keeps the
rules; this tier asks whether the *service* keeps the protocol, whatever it
is sent. For every operation of ``fixtures/schema/openapi.json`` it generates
requests with schemathesis -- valid messages (positive) and messages that
break the schema (negative), ``max_examples`` of each, derandomized unless a
seed is given -- and runs schemathesis's response checks on every answer:

* ``not_a_server_error``: no 5xx, ever;
* ``status_code_conformance``, ``content_type_conformance``,
  ``response_headers_conformance``, ``response_schema_conformance``: every
  answer is documented and matches its schema (a ``trace`` answer matches
  trace.schema.json, a 4xx carries ``{"error": {"message", "path"}}``);
* ``negative_data_rejection``: a malformed message is refused with a 4xx;
* ``positive_data_acceptance``: a valid message is accepted.

Then a few fixed *probes* the generators do not make -- a body that is not
JSON, an empty body, a JSON array, a start message sent to /run, NaN, an
unknown endpoint, a wrong method -- each of which must get a 4xx with the
structured error body (check ``malformed_request_rejected``).

Generation never stops at the first failure and never shrinks: every failing
check is recorded (deduplicated by check, operation and title, with a
count), with the request and the answer that showed it, so the report says
everything that is wrong in one run. The result is the ``protocolConformance``
section of report.json (fixtures/schema/report.schema.json).
"""

from __future__ import annotations

import http.client
import importlib
import io
import json
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final
from urllib.parse import urlsplit
from wsgiref.types import WSGIApplication
from wsgiref.util import setup_testing_defaults

from conformance.scenario.bounds import DEFAULT_MAX_BYTES
from conformance.scenario.schema import FixtureError, validate
from conformance.transport.openapi import OPENAPI_PATH, build
from conformance.transport.policy import WAITING_STEPS

__all__ = [
    "CHECKS",
    "PROBE_CHECK",
    "FuzzUnavailable",
    "fuzz_protocol",
    "protocol_markdown",
]

# schemathesis's checks, by their registered names.
CHECKS: Final = (
    "not_a_server_error",
    "status_code_conformance",
    "content_type_conformance",
    "response_headers_conformance",
    "response_schema_conformance",
    "negative_data_rejection",
    "positive_data_acceptance",
)
PROBE_CHECK: Final = "malformed_request_rejected"
# Steps that wait until a deadline (5 s per action in the reference harness): a random valid
# scenario full of them is legitimately slow, so generated runs get {"yield": 1} instead.
MAX_FAILURES_KEPT: Final = 50
MAX_UNANSWERED: Final = 3  # requests in a row without an answer before an operation is dropped
SHOWN_CHARS: Final = 600


class FuzzUnavailable(Exception):
    """schemathesis is not installed (``pip install 'toolreg-conformance[http]'``)."""


def _shown(value: Any) -> str:
    if isinstance(value, bytes):
        text = value.decode("utf-8", "replace")
    elif isinstance(value, str):
        text = value
    else:
        try:
            text = json.dumps(value, ensure_ascii=False, default=repr, separators=(",", ":"))
        except (TypeError, ValueError):
            text = repr(value)
    return text if len(text) <= SHOWN_CHARS else text[:SHOWN_CHARS] + f"... ({len(text)} chars)"


@dataclass
class _Tally:
    """Requests, statuses and check outcomes of one fuzz run."""

    checks: dict[str, list[int]] = field(default_factory=dict)  # name -> [passed, failed]
    operations: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    failures: dict[tuple[str, str, str], dict[str, Any]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    unanswered: dict[str, int] = field(default_factory=dict)  # operation -> in a row

    def count(self, check: str, ok: bool) -> None:
        cell = self.checks.setdefault(check, [0, 0])
        cell[0 if ok else 1] += 1

    def request(self, operation: str, mode: str, status: int | None) -> None:
        entry = self.operations.setdefault(
            (operation, mode), {"operation": operation, "mode": mode, "requests": 0, "statuses": {}}
        )
        entry["requests"] += 1
        key = "no answer" if status is None else str(status)
        entry["statuses"][key] = entry["statuses"].get(key, 0) + 1

    def fail(
        self,
        check: str,
        operation: str,
        mode: str,
        title: str,
        message: str,
        request: Mapping[str, Any],
        response: Mapping[str, Any] | None,
    ) -> None:
        self.count(check, False)
        key = (check, operation, title)
        if key in self.failures:
            self.failures[key]["count"] += 1
            return
        if len(self.failures) >= MAX_FAILURES_KEPT:
            return
        self.failures[key] = {
            "check": check,
            "operation": operation,
            "mode": mode,
            "title": title,
            "message": message.strip()[:2000],
            "count": 1,
            "request": dict(request),
            "response": dict(response) if response is not None else None,
        }


# ------------------------------------------------------------------ probes


@dataclass(frozen=True)
class _Probe:
    name: str
    method: str
    path: str
    body: bytes | None
    content_type: str | None = "application/json"
    status: int | None = None  # a specific status required (else any 4xx)
    allow: str | None = None  # a required Allow header


PROBES: Final = (
    _Probe("a body that is not JSON", "POST", "/run", b"this is not JSON"),
    _Probe("an empty body", "POST", "/start", b""),
    _Probe("a JSON array, not a message", "POST", "/run", b"[]"),
    _Probe("a start message sent to /run", "POST", "/run", b'{"type":"start","protocol":1}'),
    _Probe("NaN in a run message", "POST", "/run", b'{"type":"run","seq":NaN,"scenario":{}}'),
    _Probe("a body that is not UTF-8", "POST", "/stop", b'{"type":"\xff"}'),
    _Probe("an unknown endpoint", "GET", "/no-such-endpoint", None, None, status=404),
    _Probe("GET on a POST endpoint", "GET", "/run", None, None, status=405, allow="POST"),
)

_Sender = Callable[[str, str, Mapping[str, str], bytes | None], tuple[int, dict[str, str], bytes]]


def _wsgi_sender(app: WSGIApplication) -> _Sender:
    def send(
        method: str, path: str, headers: Mapping[str, str], body: bytes | None
    ) -> tuple[int, dict[str, str], bytes]:
        environ: dict[str, Any] = {
            "REQUEST_METHOD": method,
            "PATH_INFO": path,
            "wsgi.input": io.BytesIO(body or b""),
            "CONTENT_LENGTH": str(len(body)) if body is not None else "",
        }
        if "Content-Type" in headers:
            environ["CONTENT_TYPE"] = headers["Content-Type"]
        setup_testing_defaults(environ)
        captured: dict[str, Any] = {}

        def start_response(status: str, response_headers: list[tuple[str, str]], *_: Any) -> Any:
            captured["status"] = int(status.split(" ", 1)[0])
            captured["headers"] = {k.lower(): v for k, v in response_headers}
            return lambda data: None

        try:
            chunks = app(environ, start_response)
            try:
                data = b"".join(chunks)
            finally:
                close = getattr(chunks, "close", None)
                if callable(close):
                    close()
        except Exception as e:  # what a WSGI server answers when the application raises
            return 500, {"content-type": "text/plain"}, f"the application raised {e!r}".encode()
        return captured["status"], captured["headers"], data

    return send


def _http_sender(url: str, timeout_s: float) -> _Sender:
    parts = urlsplit(url)
    base = parts.path.rstrip("/")

    def send(
        method: str, path: str, headers: Mapping[str, str], body: bytes | None
    ) -> tuple[int, dict[str, str], bytes]:
        host = parts.hostname or "127.0.0.1"
        connection: http.client.HTTPConnection
        if parts.scheme == "https":
            connection = http.client.HTTPSConnection(host, parts.port or 443, timeout=timeout_s)
        else:
            connection = http.client.HTTPConnection(host, parts.port or 80, timeout=timeout_s)
        try:
            connection.request(method, base + path, body=body, headers=dict(headers))
            response = connection.getresponse()
            data = response.read(DEFAULT_MAX_BYTES + 1)  # bounded: a longer body is cut (and fails)
            return response.status, {k.lower(): v for k, v in response.getheaders()}, data
        finally:
            connection.close()

    return send


def _run_probes(send: _Sender, tally: _Tally) -> None:
    for probe in PROBES:
        operation = f"{probe.method} {probe.path}"
        headers = {"Content-Type": probe.content_type} if probe.content_type else {}
        request = {"method": probe.method, "path": probe.path, "body": _shown(probe.body or b"")}
        try:
            status, response_headers, data = send(probe.method, probe.path, headers, probe.body)
        except Exception as e:
            tally.request(operation, "probe", None)
            message = f"no answer: {type(e).__name__}: {e}"
            tally.fail(PROBE_CHECK, operation, "probe", probe.name, message, request, None)
            continue
        tally.request(operation, "probe", status)
        response = {
            "status": status,
            "contentType": response_headers.get("content-type", ""),
            "body": _shown(data),
        }
        problems = _probe_problems(probe, status, response_headers, data)
        if problems:
            message = f"{probe.name}: " + "; ".join(problems)
            tally.fail(PROBE_CHECK, operation, "probe", probe.name, message, request, response)
        else:
            tally.count(PROBE_CHECK, True)


def _probe_problems(
    probe: _Probe, status: int, headers: Mapping[str, str], data: bytes
) -> list[str]:
    problems = []
    if probe.status is not None and status != probe.status:
        problems.append(f"expected HTTP {probe.status}, got {status}")
    elif not 400 <= status < 500:
        problems.append(f"expected a 4xx, got HTTP {status}")
    if probe.allow is not None:
        allowed = {m.strip().upper() for m in headers.get("allow", "").split(",") if m.strip()}
        if probe.allow not in allowed:
            problems.append(f"expected an Allow header naming {probe.allow}, got {allowed or None}")
    media = headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if media != "application/json":
        problems.append(f"the error body is {media or 'untyped'}, not application/json")
        return problems
    try:
        document = json.loads(data.decode("utf-8"))
        validate(document, "protocol#httpError", "the error body")
    except (UnicodeDecodeError, ValueError) as e:
        problems.append(f"the error body is not JSON: {e}")
    except FixtureError as e:
        problems.append(f"the error body is not {{'error': {{message, path}}}}: {e}")
    return problems


# --------------------------------------------------------------- schemathesis


def _load_schemathesis() -> Any:
    try:
        import schemathesis
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise FuzzUnavailable(
            f"fuzz-protocol needs schemathesis: pip install 'toolreg-conformance[http]' ({e})"
        ) from None
    return schemathesis


def _header(headers: Mapping[str, Any], name: str) -> str:
    for key, value in headers.items():
        if key.lower() == name:
            return str(value[0] if isinstance(value, list) and value else value)
    return ""


def _case_request(case: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"method": str(case.method).upper(), "path": str(case.formatted_path)}
    body = getattr(case, "body", None)
    if body is not None and type(body).__name__ != "NotSet":
        out["body"] = _shown(body)
    media = getattr(case, "media_type", None)
    if media:
        out["contentType"] = str(media)
    return out


def _fuzz_operations(
    schemathesis: Any,
    *,
    url: str | None,
    app: WSGIApplication | None,
    tally: _Tally,
    max_examples: int,
    seed: int | None,
    deadline_s: float,
    progress: Callable[[str], None],
) -> None:
    from hypothesis import HealthCheck, Phase, Verbosity, given, settings
    from hypothesis import seed as hypothesis_seed
    from hypothesis.errors import Unsatisfiable
    from schemathesis.checks import CHECKS as REGISTRY
    from schemathesis.checks import load_all_checks
    from schemathesis.config import SchemathesisConfig

    load_all_checks()
    checks = list(zip(CHECKS, REGISTRY.get_by_names(list(CHECKS)), strict=True))
    schema = schemathesis.openapi.from_dict(build(), config=SchemathesisConfig())
    if app is not None:
        schema.app = app
    call_options: dict[str, Any] = {}
    if url is not None:
        call_options = {"base_url": url, "timeout": deadline_s, "session": _session(url)}
    hypothesis_settings = settings(
        max_examples=max_examples,
        derandomize=seed is None,
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        phases=[Phase.explicit, Phase.generate],  # no shrinking: every failure is recorded
        verbosity=Verbosity.quiet,
        print_blob=False,
    )
    modes = (
        ("positive", schemathesis.GenerationMode.POSITIVE),
        ("negative", schemathesis.GenerationMode.NEGATIVE),
    )
    for result in schema.get_all_operations():
        operation = result.ok()
        label = str(operation.label)
        for mode_name, mode in modes:
            progress(f"{label} ({mode_name})")
            exercise = _exerciser(label, mode_name, checks, call_options, tally)
            strategy = operation.as_strategy(generation_mode=mode)
            if mode_name == "positive":
                strategy = strategy.map(_defused)
            test = given(case=strategy)(exercise)
            test = hypothesis_settings(test)
            if seed is not None:
                test = hypothesis_seed(seed)(test)
            try:
                test()
            except Unsatisfiable:  # e.g. no negative input exists for GET /health
                continue
            except Exception as e:
                tally.errors.append(f"{label} ({mode_name}): {type(e).__name__}: {e}")
    if "session" in call_options:
        call_options["session"].close()


def _session(url: str) -> Any:
    """A requests session; for a loopback service it ignores proxy settings from the environment."""
    from conformance.transport.server import is_loopback

    session = importlib.import_module("requests").Session()
    if is_loopback(urlsplit(url).hostname or ""):
        session.trust_env = False
    return session


def _defuse(node: Any) -> Any:
    """``node`` with every step that waits for a deadline replaced by ``{"yield": 1}``."""
    if isinstance(node, list):
        return [_defuse(item) for item in node]
    if isinstance(node, dict):
        if len(node) == 1 and next(iter(node)) in WAITING_STEPS:
            return {"yield": 1}
        return {key: _defuse(value) for key, value in node.items()}
    return node


def _defused(case: Any) -> Any:
    """A valid run keeps its shape but cannot wait: the tier's time stays bounded."""
    body = getattr(case, "body", None)
    if isinstance(body, dict) and isinstance(body.get("scenario"), dict):
        case.body = {**body, "scenario": _defuse(body["scenario"])}
    return case


def _exerciser(
    label: str,
    mode_name: str,
    checks: list[tuple[str, Any]],
    call_options: Mapping[str, Any],
    tally: _Tally,
) -> Callable[[Any], None]:
    """The body of one operation's test: call, then run every check, recording everything."""

    def exercise(case: Any) -> None:
        if tally.unanswered.get(label, 0) >= MAX_UNANSWERED:
            return  # gave up on this operation: each unanswered request costs a deadline
        request = _case_request(case)
        try:
            response = case.call(**call_options)
        except Exception as e:
            tally.request(label, mode_name, None)
            message = f"no answer: {type(e).__name__}: {e}"
            no_answer = ("not_a_server_error", label, mode_name, "No answer", message)
            tally.fail(*no_answer, request, None)
            tally.unanswered[label] = tally.unanswered.get(label, 0) + 1
            if tally.unanswered[label] == MAX_UNANSWERED:
                tally.errors.append(
                    f"{label}: gave up after {MAX_UNANSWERED} requests in a row without an answer"
                )
            return
        tally.unanswered[label] = 0
        tally.request(label, mode_name, response.status_code)
        shown = {
            "status": response.status_code,
            "contentType": _header(response.headers, "content-type"),
            "body": _shown(response.content),
        }
        for name, check in checks:
            try:
                case.validate_response(response, checks=[check])
            except BaseExceptionGroup as group:
                for failure in group.exceptions:
                    title = str(getattr(failure, "title", type(failure).__name__))
                    message = str(getattr(failure, "message", failure))
                    tally.fail(name, label, mode_name, title, message, request, shown)
            except AssertionError as failure:
                title = str(getattr(failure, "title", type(failure).__name__))
                message = str(getattr(failure, "message", failure))
                tally.fail(name, label, mode_name, title, message, request, shown)
            else:
                tally.count(name, True)

    return exercise


def fuzz_protocol(
    *,
    url: str | None = None,
    app: WSGIApplication | None = None,
    target: str,
    max_examples: int = 25,
    seed: int | None = None,
    deadline_s: float = 20.0,
    progress: Callable[[str], None] = lambda line: None,
) -> dict[str, Any]:
    """Fuzz the service at ``url`` (or the in-process WSGI ``app``); the report section."""
    if (url is None) == (app is None):
        raise ValueError("fuzz_protocol needs exactly one of url= and app=")
    schemathesis = _load_schemathesis()
    started = time.monotonic()
    tally = _Tally()
    _fuzz_operations(
        schemathesis,
        url=url,
        app=app,
        tally=tally,
        max_examples=max_examples,
        seed=seed,
        deadline_s=deadline_s,
        progress=progress,
    )
    progress("probes: malformed requests")
    send = _wsgi_sender(app) if app is not None else _http_sender(str(url), deadline_s)
    _run_probes(send, tally)
    failures = list(tally.failures.values())
    return {
        "tool": {"name": "schemathesis", "version": str(schemathesis.__version__)},
        "target": target,
        "openapi": str(OPENAPI_PATH.relative_to(OPENAPI_PATH.parents[2])),
        "maxExamples": max_examples,
        "seed": seed,
        "derandomized": seed is None,
        "durationSeconds": round(time.monotonic() - started, 3),
        "passed": not failures and not tally.errors,
        "requests": sum(o["requests"] for o in tally.operations.values()),
        "operations": list(tally.operations.values()),
        "checks": [
            {"name": name, "passed": passed, "failed": failed}
            for name, (passed, failed) in tally.checks.items()
        ],
        "failures": failures,
        "errors": tally.errors,
    }


# ------------------------------------------------------------------ reporting


def protocol_markdown(section: Mapping[str, Any]) -> list[str]:
    """The "Protocol conformance" section of report.md."""
    verdict = "PASS" if section.get("passed") else "FAIL"
    tool = section.get("tool", {})
    lines = [
        "## Protocol conformance",
        "",
        f"- target: `{section.get('target')}` (the HTTP binding, `{section.get('openapi')}`)",
        f"- tool: {tool.get('name')} {tool.get('version')}, "
        f"{section.get('maxExamples')} examples per operation and mode, "
        + ("derandomized" if section.get("derandomized") else f"seed {section.get('seed')}"),
        f"- requests: {section.get('requests')} in {section.get('durationSeconds', 0):.1f} s",
        f"- result: **{verdict}**",
        "",
        "| check | passed | failed |",
        "|---|---:|---:|",
    ]
    for check in section.get("checks", []):
        failed = f"**{check['failed']}**" if check["failed"] else "0"
        lines.append(f"| {check['name']} | {check['passed']} | {failed} |")
    lines.append("")
    for failure in section.get("failures", []):
        lines += _failure_markdown(failure)
    errors = section.get("errors", [])
    if errors:
        lines += ["Errors (the fuzzer could not exercise an operation):", ""]
        lines += [f"- {e}" for e in errors] + [""]
    return lines


def _failure_markdown(failure: Mapping[str, Any]) -> list[str]:
    times = f" ({failure['count']}x)" if failure.get("count", 1) > 1 else ""
    request = failure.get("request") or {}
    response = failure.get("response")
    lines = [
        f"### {failure['check']}: {failure['operation']} ({failure['mode']}){times}",
        "",
        f"**{failure['title']}**",
        "",
    ]
    message = str(failure["message"]).splitlines()
    if message:
        lines += [*(f"> {line}" if line else ">" for line in message), ""]
    body = f" body {_code(request['body'])}" if request.get("body") else ""
    lines.append(f"- request: `{request.get('method')} {request.get('path')}`{body}")
    if response is None:
        lines.append("- response: none")
    else:
        lines.append(
            f"- response: HTTP {response.get('status')} {_code(response.get('contentType'))} "
            f"body {_code(response.get('body'))}"
        )
    lines.append("")
    return lines


def _code(text: Any) -> str:
    """Inline code that survives any text (backticks, newlines)."""
    shown = str(text or "").replace("\n", "\\n").replace("`", "'")
    return f"`{shown}`" if shown.strip() else "(empty)"


def summary_lines(section: Mapping[str, Any]) -> Iterable[str]:
    """A few lines for the terminal."""
    verdict = "PASS" if section.get("passed") else "FAIL"
    yield (
        f"protocol conformance: {verdict}: {section.get('requests')} requests to "
        f"{section.get('target')} in {section.get('durationSeconds', 0):.1f} s "
        f"({section['tool']['name']} {section['tool']['version']})"
    )
    for check in section.get("checks", []):
        yield f"  {check['name']:<30} {check['passed']:>5} passed  {check['failed']:>4} failed"
    for failure in section.get("failures", []):
        times = f" ({failure['count']}x)" if failure.get("count", 1) > 1 else ""
        response = failure.get("response") or {}
        status = response.get("status", "no answer")
        yield (
            f"  FAIL {failure['check']}: {failure['operation']} ({failure['mode']}){times}: "
            f"{failure['title']} [HTTP {status}]"
        )
    for error in section.get("errors", []):
        yield f"  ERROR {error}"
