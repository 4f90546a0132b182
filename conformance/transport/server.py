"""The harness protocol over HTTP, server side: any adapter as a small WSGI service.

    toolreg-conformance serve --adapter reference --port 8765
    toolreg-conformance run --adapter http://127.0.0.1:8765

:func:`make_app` turns an adapter into a WSGI application (the binding of
docs/protocol.md, section "HTTP binding"; shapes in fixtures/schema/openapi.json):

    GET  /health   -> 200 {"status": "ok"}
    POST /start    start -> 200 started
    POST /run      run   -> 200 trace | skipped | errored
    POST /stop     stop  -> 200 stopped (the service keeps serving)

Every request body is validated against its message's schema before the
adapter sees it; anything else -- not JSON, not an object, the wrong message,
the wrong media type, an unknown endpoint or method, a body too large -- is a
4xx with ``{"error": {"message", "path"}}``. A 5xx means the service itself
broke (never the implementation's behaviour: that belongs inside a trace).

The application is stdlib only, so it runs in process under a WSGI test client
(the schemathesis tier) as well as behind :func:`make_server` (a threading
``wsgiref`` server; one scenario runs at a time, ``/health`` always answers).
"""

from __future__ import annotations

import ipaddress
import socket
import threading
from collections.abc import Iterable, Mapping
from socketserver import ThreadingMixIn
from typing import Any, Final
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server
from wsgiref.types import StartResponse, WSGIApplication, WSGIEnvironment

from conformance.scenario.bounds import DEFAULT_MAX_DEPTH
from conformance.scenario.schema import FixtureError, validate
from conformance.seam.adapter import Adapter
from conformance.transport.protocol import (
    HarnessSession,
    OutOfBounds,
    encode,
    encode_answer,
    loads_bounded,
)

__all__ = [
    "ENDPOINTS",
    "MAX_BODY_BYTES",
    "ProtocolServer",
    "check_bind",
    "is_loopback",
    "make_app",
    "make_protocol_server",
]

# path -> (method, the request message it takes, or None for GET)
ENDPOINTS: Final[Mapping[str, tuple[str, str | None]]] = {
    "/health": ("GET", None),
    "/start": ("POST", "start"),
    "/run": ("POST", "run"),
    "/stop": ("POST", "stop"),
}
MAX_BODY_BYTES: Final = 64 * 1024 * 1024
MAX_DEPTH: Final = DEFAULT_MAX_DEPTH  # containers nested in a request body
READ_TIMEOUT_S: Final = 10.0  # a client that stalls mid-request is dropped after this
REQUEST_QUEUE: Final = 128  # connections waiting to be accepted (the listen backlog)
JSON_TYPE: Final = "application/json"
STATUS_TEXT: Final[Mapping[int, str]] = {
    200: "200 OK",
    400: "400 Bad Request",
    404: "404 Not Found",
    405: "405 Method Not Allowed",
    408: "408 Request Timeout",
    411: "411 Length Required",
    413: "413 Content Too Large",
    415: "415 Unsupported Media Type",
    500: "500 Internal Server Error",
}


class _Reject(Exception):
    """A request the service cannot accept: answered with ``status`` and an error body."""

    def __init__(
        self,
        status: int,
        message: str,
        path: str | None = None,
        headers: Iterable[tuple[str, str]] = (),
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.path = path
        self.headers = list(headers)


def _error_body(message: str, path: str | None) -> dict[str, Any]:
    return {"error": {"message": message, "path": path}}


def _read_body(environ: WSGIEnvironment) -> bytes:
    raw_length = environ.get("CONTENT_LENGTH") or ""
    if not raw_length.strip():
        if environ.get("HTTP_TRANSFER_ENCODING"):
            raise _Reject(411, "send the body with a Content-Length (no chunked encoding)")
        return b""
    try:
        length = int(raw_length)
    except ValueError:
        raise _Reject(400, f"Content-Length {raw_length!r} is not a number") from None
    if length < 0:
        raise _Reject(400, f"Content-Length {length} is negative")
    if length > MAX_BODY_BYTES:
        raise _Reject(413, f"the body has {length} bytes; the limit is {MAX_BODY_BYTES}")
    try:
        body: bytes = environ["wsgi.input"].read(length)
    except TimeoutError:
        raise _Reject(408, "the body did not arrive in time") from None
    if len(body) < length:
        raise _Reject(400, f"the body ended after {len(body)} of {length} bytes", "$")
    return body


def _media_type(environ: WSGIEnvironment) -> str:
    return str(environ.get("CONTENT_TYPE") or "").split(";", 1)[0].strip().lower()


def _message(environ: WSGIEnvironment, kind: str) -> dict[str, Any]:
    """The request body as the endpoint's message, or a _Reject saying what is wrong."""
    media = _media_type(environ)
    if media != JSON_TYPE:
        shown = f"{media!r}" if media else "no Content-Type"
        raise _Reject(415, f"the body must be {JSON_TYPE} (a {kind} message), got {shown}")
    raw = _read_body(environ)
    if not raw:
        raise _Reject(400, f"the body is empty; expected a {kind} message", "$")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise _Reject(400, f"the body is not UTF-8: {e}", "$") from None
    try:
        message = loads_bounded(text, MAX_DEPTH)
    except OutOfBounds as e:
        raise _Reject(400, f"the body is out of bounds: {e}", "$") from None
    except ValueError as e:
        raise _Reject(400, f"the body is not JSON: {e}", "$") from None
    if not isinstance(message, dict):
        raise _Reject(
            400, f"the body is JSON {type(message).__name__}, not a {kind} message object", "$"
        )
    try:
        validate(message, f"protocol#{kind}", f"the {kind} request")
    except FixtureError as e:
        raise _Reject(400, f"not a valid {kind} message: {e.message}", e.path) from None
    except RecursionError:  # within MAX_DEPTH, but too deep for the schema validator
        why = f"the body is nested too deep to validate as a {kind} message"
        raise _Reject(400, why, "$") from None
    return message


def make_app(adapter: Adapter) -> WSGIApplication:
    """The HTTP binding of the harness protocol, serving ``adapter``."""
    session = HarnessSession(adapter)
    lock = threading.Lock()  # one scenario at a time, as over stdio

    def respond(
        start_response: StartResponse,
        status: int,
        body: Mapping[str, Any] | str,
        headers: Iterable[tuple[str, str]] = (),
    ) -> list[bytes]:
        data = (body if isinstance(body, str) else encode(body)).encode("utf-8")
        start_response(
            STATUS_TEXT[status],
            [
                ("Content-Type", JSON_TYPE),
                ("Content-Length", str(len(data))),
                ("Cache-Control", "no-store"),
                *headers,
            ],
        )
        return [data]

    def app(environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        method = str(environ.get("REQUEST_METHOD", "GET")).upper()
        path = str(environ.get("PATH_INFO") or "/")
        try:
            endpoint = ENDPOINTS.get(path)
            if endpoint is None:
                known = ", ".join(f"{m} {p}" for p, (m, _) in ENDPOINTS.items())
                raise _Reject(404, f"no endpoint {path!r}; the endpoints are {known}")
            allowed, kind = endpoint
            if method != allowed:
                raise _Reject(
                    405, f"{path} takes {allowed}, not {method}", headers=[("Allow", allowed)]
                )
            if kind is None:
                return respond(start_response, 200, {"status": "ok"})
            request = _message(environ, kind)
            if kind == "run":
                with lock:
                    answer = session.handle(request)
            else:  # start and stop never wait behind a scenario
                answer = session.handle(request)
            return respond(start_response, 200, encode_answer(answer))
        except _Reject as e:
            return respond(start_response, e.status, _error_body(e.message, e.path), e.headers)
        except Exception as e:  # a bug of the service (or of the adapter's describe())
            message = f"the service failed: {type(e).__name__}: {e}"
            return respond(start_response, 500, _error_body(message, None))

    return app


# --------------------------------------------------------------------- serving


def is_loopback(host: str) -> bool:
    """Whether every address ``host`` names is a loopback address."""
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, None)
    except OSError:
        return False
    addresses = {info[4][0] for info in infos}
    return bool(addresses) and all(
        ipaddress.ip_address(str(a).split("%", 1)[0]).is_loopback for a in addresses
    )


def check_bind(host: str, *, allow_public: bool) -> None:
    """Refuse a non-loopback bind unless asked explicitly (ValueError says why)."""
    if not allow_public and not is_loopback(host):
        raise ValueError(
            f"refusing to serve on {host!r}: not a loopback address. The service runs scenarios "
            "on the implementation for anyone who can reach it; pass --allow-public to bind "
            "a public address on purpose"
        )


class _Handler(WSGIRequestHandler):
    """wsgiref's handler, with a read timeout and errors of its own as the JSON error body."""

    def handle(self) -> None:
        try:
            super().handle()
        except (TimeoutError, ConnectionError):  # a stalled or vanished client: drop it
            self.close_connection = True

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """A request line or headers the server cannot parse: a 4xx with ``{"error": ...}``."""
        short = self.responses.get(code, ("error", ""))[0]
        text = message or short
        data = encode(_error_body(f"{code} {text}", None)).encode("utf-8")
        if self.request_version in ("", "HTTP/0.9"):
            self.request_version = "HTTP/1.0"  # answer with a status line and headers
        self.log_error("code %d, message %s", code, text)
        self.send_response(code, short)
        self.send_header("Content-Type", JSON_TYPE)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)
        self.close_connection = True


class _QuietHandler(_Handler):
    def log_message(self, format: str, *args: Any) -> None:  # no access log on stderr
        pass


class ProtocolServer(ThreadingMixIn, WSGIServer):
    """A threading ``wsgiref`` server (one daemon thread per connection).

    ``request_queue_size`` is the listen backlog (a burst of clients is
    queued, not reset); ``read_timeout_s`` drops a client that stalls while
    sending its request, so no thread is held forever.
    """

    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = REQUEST_QUEUE
    read_timeout_s: float = READ_TIMEOUT_S

    def get_request(self) -> tuple[socket.socket, Any]:
        connection, address = super().get_request()
        connection.settimeout(self.read_timeout_s)
        return connection, address

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        text = host.decode() if isinstance(host, bytes) else str(host)
        shown = f"[{text}]" if ":" in text else text
        return f"http://{shown}:{port}"


class _ProtocolServer6(ProtocolServer):
    address_family = socket.AF_INET6


def make_protocol_server(
    app: WSGIApplication,
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    allow_public: bool = False,
    quiet: bool = True,
    read_timeout_s: float = READ_TIMEOUT_S,
) -> ProtocolServer:
    """Bind ``app`` (port 0: an ephemeral port; ``server.url`` says which)."""
    check_bind(host, allow_public=allow_public)
    server_class: type[ProtocolServer] = ProtocolServer
    if ":" in host.strip("[]"):
        server_class = _ProtocolServer6
    handler: type[WSGIRequestHandler] = _QuietHandler if quiet else _Handler
    server = make_server(host.strip("[]"), port, app, server_class, handler)
    server.read_timeout_s = read_timeout_s
    return server
