"""A deliberately broken HTTP binding (the protocol-robustness tier's self-test).

    python tests/transport/broken_server.py MODE [--port N]     # prints its URL

It serves the reference like ``toolreg-conformance serve``, except, per MODE:

    server-error     answers 500 (text/plain) to a scenario needing any optional
                     capability, instead of running it or answering ``skipped``
    off-schema-trace answers run with a trace that breaks trace.schema.json
                     (an undeclared top-level field, no ``events``)
    no-validation    runs whatever /run is sent: a malformed run gets 200 errored
                     with seq null instead of a 4xx
    plain-errors     refuses malformed requests with 400 text/plain "bad request"
    all              every one of the above
"""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from wsgiref.types import StartResponse, WSGIApplication, WSGIEnvironment

from conformance.adapters.reference import ReferenceAdapter
from conformance.seam.adapter import requirements
from conformance.transport.protocol import HarnessSession, encode
from conformance.transport.server import make_app, make_protocol_server

MODES = ("server-error", "off-schema-trace", "no-validation", "plain-errors")


def _read(environ: WSGIEnvironment) -> bytes:
    length = int(environ.get("CONTENT_LENGTH") or 0)
    body: bytes = environ["wsgi.input"].read(length)
    environ["wsgi.input"] = io.BytesIO(body)  # the wrapped app reads it again
    return body


def _json(body: bytes) -> Any:
    try:
        return json.loads(body)
    except ValueError:
        return None


def make_broken_app(mode: str) -> WSGIApplication:
    modes = set(MODES) if mode == "all" else {mode}
    if not modes <= set(MODES):
        raise ValueError(f"unknown mode {mode!r}; expected one of {', '.join(MODES)} or all")
    good = make_app(ReferenceAdapter())
    session = HarnessSession(ReferenceAdapter())

    def send(
        start_response: StartResponse,
        status: str,
        body: bytes,
        media: str,
        headers: Iterable[tuple[str, str]] = (),
    ) -> list[bytes]:
        kept = [(k, v) for k, v in headers if k.lower() not in ("content-type", "content-length")]
        start_response(status, [("Content-Type", media), ("Content-Length", str(len(body))), *kept])
        return [body]

    def off_schema(body: bytes) -> bytes:
        answer = json.loads(body)
        if "off-schema-trace" in modes and answer.get("type") == "trace":
            answer["trace"]["elapsed"] = "fast"
            answer["trace"].pop("events", None)
        return encode(answer).encode()

    def app(environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        path = environ.get("PATH_INFO")
        if path == "/run" and environ.get("REQUEST_METHOD") == "POST":
            request = _json(_read(environ))
            scenario = request.get("scenario") if isinstance(request, dict) else None
            if "server-error" in modes and isinstance(scenario, dict):
                try:
                    needs = requirements(scenario)
                except Exception:
                    needs = frozenset()
                if needs:
                    return send(start_response, "500 Internal Server Error", b"boom", "text/plain")
            if "no-validation" in modes and isinstance(request, dict):
                try:
                    answer = session.run(request)
                except Exception as e:
                    answer = {"type": "errored", "seq": request.get("seq"), "context": str(e)}
                body = off_schema(encode(answer).encode())
                return send(start_response, "200 OK", body, "application/json")
        captured: dict[str, Any] = {}

        def capture(status: str, headers: list[tuple[str, str]], *_: Any) -> Any:
            captured["status"], captured["headers"] = status, headers
            return lambda data: None

        body = b"".join(good(environ, capture))
        status: str = captured["status"]
        headers: list[tuple[str, str]] = captured["headers"]
        if "plain-errors" in modes and status.startswith("4"):
            return send(start_response, status, b"bad request", "text/plain", headers)
        if path == "/run" and status.startswith("200"):
            body = off_schema(body)
        return send(start_response, status, body, "application/json", headers)

    return app


def main() -> None:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=[*MODES, "all"])
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    server = make_protocol_server(make_broken_app(args.mode), "127.0.0.1", args.port)
    print(server.url, flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
