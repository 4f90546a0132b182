"""The HTTP binding: the server's answers, and the client's containment of a misbehaving service.

The misbehaving service (:class:`FakeService`) answers like the reference,
except on the run with ``seq == 2`` of its first session, where it does what
its mode says. As over stdio, the scenario before the misbehaviour and the
one after it (a new handshake) must both come back as good traces; the bad
one is an ImplementationFailure of the right category, naming what came.
A hang is a handler blocked on an Event, released at teardown: no sleeps.
"""

from __future__ import annotations

import http.client
import json
import math
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from conformance.adapters import load_adapter
from conformance.adapters.reference import ReferenceAdapter
from conformance.cli.main import main
from conformance.running.runner import run_suite
from conformance.scenario.schema import load_json, validate
from conformance.seam.adapter import AdapterError, ImplementationFailure, ScenarioSkipped
from conformance.transport.http import HttpAdapter
from conformance.transport.policy import Limits
from conformance.transport.protocol import HarnessSession, encode
from conformance.transport.server import check_bind, is_loopback, make_app, make_protocol_server

ROOT = Path(__file__).resolve().parents[2]
SCENARIO: Mapping[str, Any] = load_json(ROOT / "fixtures/examples/seed-step-08-read-file.json")
APPROVAL: Mapping[str, Any] = load_json(ROOT / "fixtures/examples/seed-step-10-bash-approved.json")
DEADLINE_S = 2.0


# ------------------------------------------------------------ a fake service


class FakeService:
    """A service speaking the binding over a raw handler, misbehaving once per ``mode``."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.release = threading.Event()
        self.session = HarnessSession(ReferenceAdapter())
        self.starts = 0
        self.misbehaved = False
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        host, port = self.server.server_address[:2]
        self.url = f"http://{host!s}:{port}"
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()

    def _misbehave_now(self, request: Mapping[str, Any]) -> bool:
        if self.mode.endswith("-always"):
            return True
        if request.get("seq") == 2 and not self.misbehaved:
            self.misbehaved = True
            return True
        return False

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        service = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def send(self, status: int, body: bytes, media: str = "application/json") -> None:
                self.send_response(status)
                self.send_header("Content-Type", media)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                request = json.loads(self.rfile.read(length))
                answer = service.session.handle(request)
                if request["type"] == "start":
                    service.starts += 1
                    if service.mode == "changeling" and service.starts > 1:
                        answer["implementation"]["name"] = "someone-else"
                    if service.mode == "refuse-start":
                        self.send(503, b"down for maintenance", "text/plain")
                        return
                if request["type"] == "run" and service._misbehave_now(request):
                    mode = service.mode.removesuffix("-always")
                    if mode == "hang":
                        service.release.wait()
                        return
                    if mode == "server-error":
                        self.send(500, b"Internal Server Error: boom", "text/plain")
                        return
                    if mode == "refused":
                        self.send(400, b'{"error":{"message":"no thanks","path":"$"}}')
                        return
                    if mode == "garble":
                        self.send(200, b"this is not JSON")
                        return
                    if mode == "hangup":
                        self.close_connection = True
                        self.connection.shutdown(socket.SHUT_RDWR)
                        return
                    if mode == "not-http":
                        self.wfile.write(b"garbage\r\n\r\n")
                        return
                    if mode == "redirect":
                        self.send_response(302)
                        self.send_header("Location", "/elsewhere")
                        self.send_header("Content-Length", "0")
                        self.end_headers()
                        return
                    if mode == "endless-chunked":
                        self.send_response(200)
                        self.send_header("Content-Type", "application/json")
                        self.send_header("Transfer-Encoding", "chunked")
                        self.end_headers()
                        chunk = b"[" * 65536
                        try:
                            while not service.release.is_set():  # until the kit hangs up
                                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                        except OSError:
                            pass
                        self.close_connection = True
                        return
                    if mode == "deep":
                        nested = b"[" * 900 + b"]" * 900
                        body = b'{"type":"trace","seq":2,"trace":{"deep":%s}}' % nested
                        self.send(200, body)
                        return
                    if mode == "bad-utf8":
                        answer["trace"]["note"] = "MARK"
                        self.send(200, encode(answer).encode().replace(b"MARK", b"\xffMARK"))
                        return
                    if mode == "wrong-seq":
                        answer["seq"] = request["seq"] + 1
                    if mode == "wrong-type":
                        answer = service.session.start({})
                    if mode == "errored":
                        answer = {"type": "errored", "seq": request["seq"], "context": "fake: no"}
                    if mode == "off-schema":
                        answer["trace"]["elapsed"] = "fast"
                    if mode == "text-plain":
                        self.send(200, encode(answer).encode(), "text/plain")
                        return
                skip = service.mode == "skip-approval" and "approval" in request.get("scenario", {})
                if request["type"] == "run" and skip:
                    answer = {"type": "skipped", "seq": request["seq"], "reason": "fake: no"}
                self.send(200, encode(answer).encode())

        return Handler


@pytest.fixture
def services() -> Iterator[list[FakeService]]:
    made: list[FakeService] = []
    yield made
    for service in made:
        service.close()


def fake(services: list[FakeService], mode: str, **options: Any) -> HttpAdapter:
    service = FakeService(mode)
    services.append(service)
    options.setdefault("deadline_s", DEADLINE_S)
    return HttpAdapter(service.url, **options)


def three_runs(adapter: HttpAdapter) -> ImplementationFailure:
    """Good trace, the failure, good trace again (after a new handshake)."""
    validate(adapter.run(SCENARIO), "trace")
    with pytest.raises(ImplementationFailure) as caught:
        adapter.run(SCENARIO)
    validate(adapter.run(SCENARIO), "trace")
    return caught.value


# ------------------------------------------------------------ containment


@pytest.mark.parametrize(
    ("mode", "category", "says"),
    [
        ("hang", "timeout", f"no answer to run seq 2 from URL within {DEADLINE_S:g} s"),
        ("server-error", "crash", "the service failed with HTTP 500 Internal Server Error: "
         "'Internal Server Error: boom'"),
        ("refused", "protocol", "refused the kit's (valid) request with HTTP 400"),
        ("garble", "protocol", "(POST URL/run) is not JSON"),
        ("hangup", "crash", "closed the connection before a whole answer to run seq 2"),
        ("not-http", "protocol", "the answer to run seq 2 from URL is not HTTP"),
        ("redirect", "protocol", "expected HTTP 200 with a message, got HTTP 302"),
        ("wrong-seq", "protocol", "answer carries seq 3, expected 2"),
        ("wrong-type", "protocol", "got type 'started'"),
        ("deep", "protocol", "is out of bounds: nested deeper than 200 levels (at $.trace.deep"),
        ("bad-utf8", "protocol", "(POST URL/run) is not UTF-8"),
    ],
)  # fmt: skip
def test_a_misbehaving_service_is_contained_and_the_session_replayed(
    services: list[FakeService], mode: str, category: str, says: str
) -> None:
    adapter = fake(services, mode)
    failure = three_runs(adapter)
    assert failure.category == category, failure
    assert says.replace("URL", services[0].url) in failure.message
    diagnostics = adapter.diagnostics()
    assert diagnostics["transport"] == "http" and diagnostics["url"] == services[0].url
    assert diagnostics["starts"] == 2 and diagnostics["failures"] == {category: 1}
    assert services[0].starts == 2  # the service saw the handshake replayed


def test_an_endless_chunked_body_is_read_up_to_the_limit(services: list[FakeService]) -> None:
    adapter = fake(services, "endless-chunked", limits=Limits(max_message_bytes=1024 * 1024))
    failure = three_runs(adapter)
    assert failure.category == "protocol", failure
    assert "the answer to run seq 2 is larger than 1048576 bytes" in failure.message
    assert "it begins b'[[[[" in failure.message


@pytest.mark.parametrize("deadline", [0, -2.5, math.nan])
def test_a_deadline_that_is_not_positive_is_refused_at_construction(deadline: float) -> None:
    with pytest.raises(AdapterError, match="the deadline must be a positive number of seconds"):
        HttpAdapter("http://127.0.0.1:9", deadline_s=deadline)


def test_errored_keeps_the_session(services: list[FakeService]) -> None:
    adapter = fake(services, "errored")
    failure = three_runs(adapter)
    assert failure.category == "errored" and "fake: no" in failure.message
    assert adapter.diagnostics()["starts"] == 1


def test_a_skipped_scenario_is_skipped(services: list[FakeService]) -> None:
    adapter = fake(services, "skip-approval")
    with pytest.raises(ScenarioSkipped, match="fake: no"):
        adapter.run(APPROVAL)
    validate(adapter.run(SCENARIO), "trace")
    assert adapter.diagnostics()["starts"] == 1


def test_validate_protocol_checks_every_body(services: list[FakeService]) -> None:
    adapter = fake(services, "off-schema", validate_protocol=True)
    failure = three_runs(adapter)
    assert failure.category == "protocol" and "elapsed" in failure.message
    lenient = fake(services, "off-schema")  # without it the runner's trace check decides
    lenient.run(SCENARIO)
    assert "elapsed" in lenient.run(SCENARIO)


def test_validate_protocol_wants_a_json_media_type(services: list[FakeService]) -> None:
    strict = fake(services, "text-plain", validate_protocol=True)
    failure = three_runs(strict)
    assert failure.category == "protocol" and "Content-Type is 'text/plain'" in failure.message
    lenient = fake(services, "text-plain")
    for _ in range(3):
        validate(lenient.run(SCENARIO), "trace")


def test_timeouts_in_a_row_give_up(services: list[FakeService]) -> None:
    adapter = fake(services, "hang-always", max_consecutive=2, deadline_s=0.5)
    for _ in range(2):
        with pytest.raises(ImplementationFailure, match="no answer to run seq 1"):
            adapter.run(SCENARIO)
    with pytest.raises(ImplementationFailure, match="gave up after 2 timeouts in a row"):
        adapter.run(SCENARIO)
    assert adapter.diagnostics()["failures"] == {"timeout": 2}


def test_new_handshakes_are_bounded(services: list[FakeService]) -> None:
    adapter = fake(services, "server-error-always", max_restarts=2)
    for _ in range(3):  # the first handshake and two more
        with pytest.raises(ImplementationFailure, match="HTTP 500"):
            adapter.run(SCENARIO)
    with pytest.raises(ImplementationFailure, match="gave up after 2 new handshakes"):
        adapter.run(SCENARIO)
    assert adapter.diagnostics()["starts"] == 3


def test_a_changed_handshake_after_a_failure_gives_up(services: list[FakeService]) -> None:
    adapter = fake(services, "changeling")
    adapter.run(SCENARIO)
    adapter._close_session()  # as if a failure had happened
    with pytest.raises(ImplementationFailure, match="handshake changed after a failure"):
        adapter.run(SCENARIO)
    with pytest.raises(ImplementationFailure, match="different implementation"):
        adapter.run(SCENARIO)


def test_connection_refused_is_an_adapter_error_then_a_crash(services: list[FakeService]) -> None:
    service = FakeService("none")
    adapter = HttpAdapter(service.url, deadline_s=DEADLINE_S)
    validate(adapter.run(SCENARIO), "trace")
    service.close()  # the service goes away mid-run
    with pytest.raises(ImplementationFailure) as caught:
        adapter.run(SCENARIO)
    assert caught.value.category == "crash" and "connection refused" in caught.value.message
    with pytest.raises(ImplementationFailure, match=r"cannot connect to .* for start"):
        adapter.run(SCENARIO)  # the new handshake fails: give up
    with pytest.raises(ImplementationFailure, match="not run: a new handshake failed"):
        adapter.run(SCENARIO)  # no more connection attempts
    never = HttpAdapter(service.url, deadline_s=DEADLINE_S)
    with pytest.raises(AdapterError, match=r"did not start.*connection refused"):
        never.describe()


def test_a_service_that_cannot_shake_hands_is_an_adapter_error(
    services: list[FakeService],
) -> None:
    adapter = fake(services, "refuse-start")
    with pytest.raises(AdapterError, match=r"HTTP 503.*down for maintenance"):
        adapter.describe()


def test_load_adapter_parses_the_url() -> None:
    adapter = load_adapter("http://127.0.0.1:9/harness/", deadline_s=3, validate_protocol=True)
    assert isinstance(adapter, HttpAdapter)
    assert (adapter.host, adapter.port, adapter.base_path) == ("127.0.0.1", 9, "/harness")
    assert adapter.deadline_s == 3 and adapter.validate_protocol
    with pytest.raises(AdapterError, match="no query"):
        load_adapter("http://127.0.0.1:9/?x=1")


# ------------------------------------------------------- the run goes on


def test_a_run_reports_the_failure_per_scenario_and_everything_else(
    services: list[FakeService], tmp_path: Path
) -> None:
    adapter = fake(services, "garble")
    try:
        result = run_suite(adapter, profile="quick", rules="PRE-1,PRE-2", report_dir=tmp_path)
    finally:
        adapter.close()
    statuses = {o.id: o.status for o in result.rules}
    assert sorted(statuses.values()) == ["error", "pass"], statuses
    (failure,) = [f for o in result.rules for f in o.errors]
    assert failure.category == "protocol" and "not JSON" in failure.message
    assert result.transport is not None and result.transport["failures"] == {"protocol": 1}
    assert not result.kit_errors


def test_the_cli_reports_a_timeout_with_the_transport_section(
    services: list[FakeService], tmp_path: Path
) -> None:
    service = FakeService("hang")
    services.append(service)
    code = main(
        [
            *("run", "--adapter", service.url, "--profile", "quick", "--rules", "PRE-1,PRE-2"),
            *("--deadline", "1", "--report", str(tmp_path), "-q"),
        ]
    )
    assert code == 1
    report = json.loads((tmp_path / "report.json").read_text())
    validate(report, "report")
    assert report["transport"]["transport"] == "http"
    assert report["transport"]["failures"] == {"timeout": 1}
    timeouts = [f for r in report["rules"] for f in r["failures"] if f["kind"] == "timeout"]
    assert [f["category"] for f in timeouts] == ["timeout"]
    markdown = (tmp_path / "report.md").read_text()
    assert "## Transport" in markdown and f"- url: `{service.url}`" in markdown
    assert "stderr" not in markdown.split("## Transport")[1].split("##")[0]


# ------------------------------------------------------------ the server


def wsgi_call(
    app: Any, method: str, path: str, body: bytes | None = None, media: str = "application/json"
) -> tuple[int, dict[str, str], Any]:
    from conformance.transport.fuzz import _wsgi_sender

    headers = {"Content-Type": media} if body is not None else {}
    status, response_headers, data = _wsgi_sender(app)(method, path, headers, body)
    return status, response_headers, json.loads(data)


@pytest.fixture(scope="module")
def app() -> Any:
    return make_app(ReferenceAdapter())


def test_the_server_answers_every_message(app: Any) -> None:
    assert wsgi_call(app, "GET", "/health")[::2] == (200, {"status": "ok"})
    status, headers, started = wsgi_call(app, "POST", "/start", b'{"type":"start","protocol":1}')
    assert status == 200 and headers["content-type"] == "application/json"
    validate(started, "protocol#started")
    run = encode({"type": "run", "seq": 7, "scenario": SCENARIO}).encode()
    status, _, answer = wsgi_call(app, "POST", "/run", run)
    assert status == 200 and answer["type"] == "trace" and answer["seq"] == 7
    validate(answer, "protocol#trace")
    assert wsgi_call(app, "POST", "/stop", b'{"type":"stop"}')[::2] == (200, {"type": "stopped"})
    assert wsgi_call(app, "GET", "/health")[0] == 200  # stop does not stop the service


JSON = "application/json"
START = b'{"type":"start","protocol":1}'
SEQ_0 = b'{"type":"run","seq":0,"scenario":{"id":"x","tools":[],"actions":[]}}'


@pytest.mark.parametrize(
    ("method", "path", "body", "media", "status", "message", "where"),
    [
        ("POST", "/run", b"nope", JSON, 400, "not JSON", "$"),
        ("POST", "/run", b"", JSON, 400, "the body is empty", "$"),
        ("POST", "/run", b"[1]", JSON, 400, "not a run message object", "$"),
        ("POST", "/run", START, JSON, 400, "not a valid run message", "$"),
        ("POST", "/run", SEQ_0, JSON, 400, "less than the minimum of 1", "$.seq"),
        ("POST", "/start", b'{"type":"start","protocol":NaN}', JSON, 400, "NaN is not JSON", "$"),
        ("POST", "/stop", b'{"type":"\xff"}', JSON, 400, "not UTF-8", "$"),
        ("POST", "/start", START, "text/plain", 415, "must be application/json", None),
        ("GET", "/nowhere", None, "", 404, "no endpoint '/nowhere'", None),
        ("GET", "/run", None, "", 405, "/run takes POST, not GET", None),
        ("POST", "/health", b"{}", JSON, 405, "/health takes GET, not POST", None),
    ],
)
def test_a_malformed_request_gets_a_structured_4xx(
    app: Any,
    method: str,
    path: str,
    body: bytes | None,
    media: str,
    status: int,
    message: str,
    where: str | None,
) -> None:
    got, headers, document = wsgi_call(app, method, path, body, media)
    assert got == status, document
    validate(document, "protocol#httpError")
    assert message in document["error"]["message"]
    assert document["error"]["path"] == where
    if status == 405:
        assert headers["allow"] in ("GET", "POST")


def test_the_server_binds_loopback_only_unless_asked() -> None:
    for host in ("127.0.0.1", "localhost", "::1", "127.0.0.2"):
        assert is_loopback(host), host
        check_bind(host, allow_public=False)
    for host in ("0.0.0.0", "", "192.0.2.1", "::"):
        assert not is_loopback(host), host
        with pytest.raises(ValueError, match="--allow-public"):
            check_bind(host, allow_public=False)
        check_bind(host, allow_public=True)


def test_serve_refuses_a_public_bind(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--host", "0.0.0.0", "--port", "0"]) == 2
    assert "not a loopback address" in capsys.readouterr().err


def test_serve_prints_its_url_and_stops_on_sigterm() -> None:
    command = [sys.executable, "-m", "conformance", "serve", "--port", "0"]
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT
    )
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:") and not url.endswith(":0"), url
        adapter = HttpAdapter(url, deadline_s=10)
        assert adapter.describe().name == "reference"
        validate(adapter.run(SCENARIO), "trace")
        adapter.close()
    finally:
        process.terminate()
        _, err = process.communicate(timeout=10)
    assert process.returncode == 0, err
    assert "serving reference" in err


def test_a_served_server_in_a_thread_runs_the_kit() -> None:
    server = make_protocol_server(make_app(ReferenceAdapter()))
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        adapter = load_adapter(server.url, validate_protocol=True)
        result = run_suite(adapter, profile="quick", rules="PRE-1,FIN-2")
        adapter.close()
    finally:
        server.shutdown()
        server.server_close()
    assert {o.status for o in result.rules} == {"pass"}
    assert result.transport is not None and result.transport["failures"] == {}


# ------------------------------------------------- the server under hostile clients


@pytest.fixture
def served() -> Iterator[Any]:
    server = make_protocol_server(make_app(ReferenceAdapter()), read_timeout_s=0.5)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def raw_exchange(server: Any, data: bytes) -> tuple[int, dict[str, str], bytes]:
    """Send raw bytes, read until the server closes: (status, headers, body)."""
    host, port = server.server_address[:2]
    with socket.create_connection((host, port), timeout=10) as sock:
        sock.sendall(data)
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
    head, _, body = received.partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.split(": ", 1) for line in header_lines)
    return int(status_line.split()[1]), {k.lower(): v for k, v in headers.items()}, body


def deep_run(depth: int) -> bytes:
    """A run message whose one tool's ``timeoutMs`` (any JSON) is a list nested ``depth`` deep."""
    nested = "[" * depth + "]" * depth
    tool = f'{{"name":"t","execute":[],"timeoutMs":{nested}}}'
    scenario = f'{{"id":"x","tools":[{tool}],"actions":[]}}'
    return f'{{"type":"run","seq":1,"scenario":{scenario}}}'.encode()


@pytest.mark.parametrize("depth", [150, 195, 197, 2000, 100_000])
def test_a_deeply_nested_body_is_never_a_server_error(app: Any, depth: int) -> None:
    """Within the limit (200 levels, counting the message's own 4) it runs; beyond, a 400."""
    status, _, document = wsgi_call(app, "POST", "/run", deep_run(depth))
    if depth <= 195:
        assert (status, document["type"]) == (200, "trace"), document
        return
    assert status == 400, document
    validate(document, "protocol#httpError")
    assert "out of bounds: nested deeper than 200 levels" in document["error"]["message"]


def test_a_garbage_request_line_gets_the_json_error_body(served: Any) -> None:
    for garbage in (b"GARBAGE\r\n\r\n", b"GET / HTTP/9.9 extra\r\n\r\n", b"\x00\xff\r\n\r\n"):
        status, headers, body = raw_exchange(served, garbage)
        assert 400 <= status < 500, (garbage, status, body)
        assert headers["content-type"] == "application/json"
        validate(json.loads(body), "protocol#httpError")


def test_a_stalled_client_is_dropped_after_the_read_timeout(served: Any) -> None:
    host, port = served.server_address[:2]
    with socket.create_connection((host, port), timeout=10) as sock:
        sock.sendall(b"POST /run HTTP/1.1\r\nHost: x")  # and nothing more
        started = time.monotonic()
        assert sock.recv(65536) == b""  # the server hung up
    assert time.monotonic() - started < 5


def test_a_stalled_body_gets_a_408(served: Any) -> None:
    head = b"POST /run HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n"
    status, headers, body = raw_exchange(served, head + b'{"type":')  # 8 of 100 bytes
    assert status == 408 and headers["content-type"] == "application/json"
    assert "did not arrive in time" in json.loads(body)["error"]["message"]


def test_fifty_concurrent_requests_are_all_answered(served: Any) -> None:
    run = encode({"type": "run", "seq": 1, "scenario": SCENARIO}).encode()
    host, port = served.server_address[:2]
    barrier = threading.Barrier(50)
    outcomes: list[object] = []

    def client() -> None:
        connection = http.client.HTTPConnection(host, port, timeout=60)
        try:
            barrier.wait()
            connection.request("POST", "/run", run, {"Content-Type": "application/json"})
            response = connection.getresponse()
            outcomes.append((response.status, json.loads(response.read())["type"]))
        except Exception as e:
            outcomes.append(e)
        finally:
            connection.close()

    threads = [threading.Thread(target=client) for _ in range(50)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert outcomes == [(200, "trace")] * 50
