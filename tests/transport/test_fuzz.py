"""The protocol-robustness tier: it passes on the reference and fails on a broken server."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("schemathesis", reason="the fuzz tier needs pip install -e '.[http]'")

from conformance.adapters.reference import ReferenceAdapter
from conformance.cli.main import main
from conformance.scenario.schema import validate
from conformance.transport.fuzz import CHECKS, PROBE_CHECK, fuzz_protocol
from conformance.transport.server import ProtocolServer, make_app, make_protocol_server
from transport.broken_server import MODES, make_broken_app

EXAMPLES = 10  # per operation and mode: enough to hit every broken mode, fast


@pytest.fixture(autouse=True)
def quiet_reference() -> Iterator[None]:
    logging.disable(logging.CRITICAL)  # the reference logs its scripted failures
    yield
    logging.disable(logging.NOTSET)


def serving(app: Any) -> ProtocolServer:
    server = make_protocol_server(app)
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    return server


def failing_checks(section: dict[str, Any]) -> set[str]:
    return {f["check"] for f in section["failures"]}


@pytest.mark.long(6)
def test_the_reference_passes_in_process() -> None:
    section = fuzz_protocol(
        app=make_app(ReferenceAdapter()), target="reference", max_examples=EXAMPLES
    )
    assert section["passed"], json.dumps(section["failures"], indent=1)[:3000]
    assert not section["errors"]
    names = [c["name"] for c in section["checks"]]
    assert names == [*CHECKS, PROBE_CHECK]
    assert all(c["passed"] > 0 and c["failed"] == 0 for c in section["checks"])
    modes = {(o["operation"], o["mode"]) for o in section["operations"]}
    for operation in ("POST /start", "POST /run", "POST /stop"):
        assert {(operation, "positive"), (operation, "negative")} <= modes
    statuses = {(o["operation"], o["mode"]): set(o["statuses"]) for o in section["operations"]}
    assert statuses[("POST /run", "positive")] == {"200"}
    assert statuses[("POST /run", "negative")] == {"400"}  # every malformed run refused


@pytest.mark.parametrize(
    ("mode", "checks", "title"),
    [
        ("server-error", {"not_a_server_error"}, "Server error"),
        ("off-schema-trace", {"response_schema_conformance"}, "Response violates schema"),
        ("no-validation", {"negative_data_rejection", PROBE_CHECK}, "accepted"),
        ("plain-errors", {"content_type_conformance", PROBE_CHECK}, "Content-Type"),
    ],
)
def test_a_broken_server_fails_with_a_clear_report(mode: str, checks: set[str], title: str) -> None:
    section = fuzz_protocol(app=make_broken_app(mode), target=mode, max_examples=EXAMPLES)
    assert not section["passed"]
    assert checks <= failing_checks(section), section["failures"]
    first = next(f for f in section["failures"] if f["check"] in checks - {PROBE_CHECK})
    assert title in first["title"]
    assert first["request"]["method"] and first["request"]["path"]  # what was sent...
    assert first["response"] is not None and first["response"]["status"]  # ...and what came
    validate(
        {"kit": {"name": "toolreg-conformance", "version": "0"}, "protocolConformance": section},
        "report",
    )


def test_every_broken_mode_is_listed() -> None:
    assert set(MODES) == {"server-error", "off-schema-trace", "no-validation", "plain-errors"}


def test_the_cli_merges_into_the_kit_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server = serving(make_app(ReferenceAdapter()))
    try:
        kit = ["run", "--adapter", server.url, "--rules", "PRE-1", "--profile", "quick"]
        assert main([*kit, "--report", str(tmp_path), "-q"]) == 0
        fuzz = ["fuzz-protocol", "--adapter", server.url, "--max-examples", "5"]
        code = main([*fuzz, "--report", str(tmp_path), "-q"])
    finally:
        server.shutdown()
        server.server_close()
    assert code == 0
    out = capsys.readouterr().out
    assert "protocol conformance: PASS" in out and server.url in out
    report = json.loads((tmp_path / "report.json").read_text())
    validate(report, "report")
    assert report["conformant"] and [r["id"] for r in report["rules"]] == ["PRE-1"]
    section = report["protocolConformance"]
    assert section["passed"] and section["target"] == server.url
    assert section["implementation"]["name"] == "reference"
    markdown = (tmp_path / "report.md").read_text()
    assert "## PRE" in markdown and "## Protocol conformance" in markdown
    assert "- result: **PASS**" in markdown


def test_the_cli_fails_against_the_broken_server_and_writes_its_own_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server = serving(make_broken_app("all"))
    try:
        fuzz = ["fuzz-protocol", "--adapter", server.url, "--max-examples", "5"]
        code = main([*fuzz, "--report", str(tmp_path), "-q"])
    finally:
        server.shutdown()
        server.server_close()
    assert code == 1
    out = capsys.readouterr().out
    assert "protocol conformance: FAIL" in out
    assert "FAIL not_a_server_error: POST /run (positive)" in out
    report = json.loads((tmp_path / "report.json").read_text())
    validate(report, "report")
    assert set(report) == {"kit", "protocolConformance"}  # no kit run beside it
    markdown = (tmp_path / "report.md").read_text()
    assert markdown.startswith("# Protocol conformance report")
    assert "### not_a_server_error: POST /run (positive)" in markdown
    assert "- response: HTTP 500 `text/plain` body `boom`" in markdown
    rendered = tmp_path / "rendered.md"
    assert main(["render", str(tmp_path / "report.json"), "-o", str(rendered)]) == 0
    assert rendered.read_text() == markdown


def test_the_in_process_app_of_an_adapter(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fuzz-protocol", "--app", "reference", "--max-examples", "3", "-q"]) == 0
    assert "in-process app of reference" in capsys.readouterr().out


def test_an_unreachable_service_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    server = make_protocol_server(make_app(ReferenceAdapter()))
    url = server.url
    server.server_close()  # nobody listens there now
    assert main(["fuzz-protocol", "--adapter", url, "-q"]) == 2
    assert f"cannot reach {url}" in capsys.readouterr().err


@pytest.mark.long(5)
def test_a_hanging_operation_is_given_up_on_after_three_requests() -> None:
    release = threading.Event()  # set at teardown: the handlers never answer before
    good = make_app(ReferenceAdapter())

    def hanging(environ: dict[str, Any], start_response: Any) -> Any:
        if environ.get("PATH_INFO") == "/run":
            release.wait()
        return good(environ, start_response)

    server = serving(hanging)
    try:
        section = fuzz_protocol(url=server.url, target="hang", max_examples=5, deadline_s=0.5)
    finally:
        release.set()
        server.shutdown()
        server.server_close()
    assert not section["passed"]
    assert "POST /run: gave up after 3 requests in a row without an answer" in section["errors"]
    generated = [
        o for o in section["operations"] if o["operation"] == "POST /run" and o["mode"] != "probe"
    ]
    assert sum(o["requests"] for o in generated) == 3
    assert {f["title"] for f in section["failures"] if f["operation"] == "POST /run"} >= {
        "No answer"
    }
    other = {o["operation"] for o in section["operations"] if "no answer" not in o["statuses"]}
    assert {"POST /start", "POST /stop", "GET /health"} <= other  # the rest was still fuzzed
