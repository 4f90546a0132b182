"""The HTTP transport: an implementation behind a running service.

    toolreg-conformance run --adapter http://127.0.0.1:8765

The messages are the harness protocol's (docs/protocol.md), one per request
body (``POST /start``, ``POST /run``, ``POST /stop``). Containment mirrors the
stdio transport (``transport/stdio.py``), with a service in place of a process:

* **Every answer has a deadline** -- ``start_deadline_s`` for the handshake,
  ``deadline_s`` per ``run``, over the whole request (connect, send, wait,
  read), not per socket read. A service that misses it is a ``timeout``.
* **Connection refused, reset or closed before a whole answer, and any 5xx**
  are ``crash`` (the service failed to answer). **A body that is not a JSON
  object, a wrong seq or message type, a 4xx (the service refused a valid
  request), any status but 200, and -- with ``validate_protocol`` -- a body
  off the schema or not ``application/json``** are ``protocol``. ``errored``
  is ``errored``. Each is reported against the scenario; the run goes on.
* **After a failure the session is replayed, bounded** -- the session policy
  every transport shares, in ``transport/policy.py``: the next scenario
  repeats the handshake (``seq`` restarts at 1), which must describe the same
  implementation; giving up never stops the run.

The transport never judges, and never decides what a rule means.
"""

from __future__ import annotations

import contextlib
import http.client
import queue
import socket
import ssl
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urlsplit

from conformance.seam.adapter import AdapterError, AdapterInfo, ImplementationFailure
from conformance.transport.policy import SessionAdapter, SessionOptions

if TYPE_CHECKING:
    from typing_extensions import Unpack
from conformance.transport.protocol import (
    decode_line,
    encode,
    info_from_started,
    interpret_answer,
    start_message,
)

__all__ = ["HttpAdapter"]

SHOWN_BODY_CHARS: Final = 300


@dataclass(frozen=True)
class _Answer:
    status: int
    reason: str
    content_type: str
    body: bytes

    def text(self) -> str:
        return self.body.decode("utf-8", "replace")

    def excerpt(self) -> str:
        text = self.text()
        if len(text) > SHOWN_BODY_CHARS:
            return repr(text[:SHOWN_BODY_CHARS]) + f"... ({len(self.body)} bytes)"
        return repr(text)


class HttpAdapter(SessionAdapter):
    """An :class:`~conformance.Adapter` speaking the harness protocol to an HTTP service.

    A session is one handshake; the restart policy is :class:`SessionAdapter`'s.
    """

    transport = "http"
    restart_noun = "new handshakes with the service"

    def __init__(
        self,
        url: str,
        **options: Unpack[SessionOptions],
    ) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise AdapterError(f"{url!r} is not an http:// or https:// URL with a host")
        if parts.query or parts.fragment:
            raise AdapterError(f"{url!r}: the service URL takes no query or fragment")
        try:
            port = parts.port
        except ValueError as e:
            raise AdapterError(f"{url!r}: {e}") from None
        super().__init__(**options)
        self.url = url.rstrip("/")
        self.scheme = parts.scheme
        self.host = parts.hostname
        self.port = port or (443 if parts.scheme == "https" else 80)
        self.base_path = parts.path.rstrip("/")

    def diagnostics(self) -> dict[str, Any]:
        """The session facts plus the URL."""
        return {**super().diagnostics(), "url": self.url}

    def close(self) -> None:
        if not self._open:
            return
        self._close_session()
        with contextlib.suppress(ImplementationFailure):
            self._post("/stop", {"type": "stop"}, min(self.deadline_s, 2.0), "stop")

    # ------------------------------------------------------- transport hooks

    def _start_failed(self, failure: ImplementationFailure) -> AdapterError:
        return AdapterError(f"the service at {self.url} did not start: {failure}")

    def _handshake(self) -> AdapterInfo:
        where = f"the answer to start (POST {self.url}/start)"
        answer = self._post("/start", start_message(), self.start_deadline_s, "start")
        return info_from_started(self._decode(answer, where), where=where)

    def _exchange(self, seq: int, scenario: Mapping[str, Any]) -> dict[str, Any]:
        message = {"type": "run", "seq": seq, "scenario": scenario}
        answer = self._post("/run", message, self.deadline_for(scenario), f"run seq {seq}")
        where = f"the answer to run seq {seq} (POST {self.url}/run)"
        decoded = self._decode(answer, where)
        return interpret_answer(decoded, seq=seq, where=where, strict=self.validate_protocol)

    # ------------------------------------------------------------- internals

    def _decode(self, answer: _Answer, where: str) -> dict[str, Any]:
        """The 200 answer's body as a message; a failure of the right category otherwise."""
        shown = f"HTTP {answer.status} {answer.reason}".rstrip()
        if answer.status >= 500:
            raise ImplementationFailure(
                "crash", f"{where}: the service failed with {shown}: {answer.excerpt()}"
            )
        if 400 <= answer.status < 500:
            raise ImplementationFailure(
                "protocol",
                f"{where}: the service refused the kit's (valid) request with {shown}: "
                f"{answer.excerpt()}",
            )
        if answer.status != 200:
            raise ImplementationFailure(
                "protocol", f"{where}: expected HTTP 200 with a message, got {shown}"
            )
        try:
            text = answer.body.decode("utf-8")
        except UnicodeDecodeError as e:
            raise ImplementationFailure(
                "protocol", f"{where} is not UTF-8 ({e}): {answer.excerpt()}"
            ) from None
        message = decode_line(text, where=where, max_depth=self.limits.max_depth)
        if self.validate_protocol:  # the body's schema: info_from_started / interpret_answer
            media = answer.content_type.split(";", 1)[0].strip().lower()
            if media != "application/json":
                raise ImplementationFailure(
                    "protocol", f"{where}: Content-Type is {answer.content_type!r}, not JSON"
                )
        return message

    def _connection(self, timeout_s: float) -> http.client.HTTPConnection:
        if self.scheme == "https":
            return http.client.HTTPSConnection(
                self.host, self.port, timeout=timeout_s, context=ssl.create_default_context()
            )
        return http.client.HTTPConnection(self.host, self.port, timeout=timeout_s)

    def _post(self, path: str, message: Mapping[str, Any], deadline_s: float, what: str) -> _Answer:
        """POST one message; the whole exchange is bounded by ``deadline_s``."""
        body = encode(message).encode("utf-8")
        limit = self.limits.max_message_bytes
        connection = self._connection(deadline_s)
        outcome: queue.Queue[_Answer | BaseException] = queue.Queue(maxsize=1)

        def exchange() -> None:
            try:
                connection.request(
                    "POST",
                    self.base_path + path,
                    body=body,
                    headers={
                        "Content-Type": "application/json",
                        "Accept": "application/json",
                    },
                )
                response = connection.getresponse()
                data = response.read(limit + 1)  # bounded, chunked or not
                outcome.put(
                    _Answer(
                        response.status,
                        response.reason or "",
                        response.getheader("Content-Type") or "",
                        data,
                    )
                )
            except BaseException as e:
                outcome.put(e)

        worker = threading.Thread(target=exchange, name=f"http {what}", daemon=True)
        worker.start()
        try:
            result = outcome.get(timeout=deadline_s)
        except queue.Empty:
            _abort(connection)
            raise ImplementationFailure(
                "timeout", f"no answer to {what} from {self.url} within {deadline_s:g} s"
            ) from None
        finally:
            connection.close()
        if isinstance(result, _Answer):
            if len(result.body) > limit:
                raise ImplementationFailure(
                    "protocol",
                    f"the answer to {what} is larger than {limit} bytes, the limit of one "
                    f"message; it begins {result.body[:SHOWN_BODY_CHARS]!r}",
                )
            return result
        raise _failure(result, what, self.url, deadline_s)


def _abort(connection: http.client.HTTPConnection) -> None:
    """Unblock a worker stuck on the connection (it is a daemon thread either way)."""
    sock = connection.sock
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)


def _failure(error: BaseException, what: str, url: str, deadline_s: float) -> BaseException:
    """The ImplementationFailure for a transport error (other exceptions are returned as is)."""
    if isinstance(error, TimeoutError):  # socket.timeout: a read stalled past the deadline
        return ImplementationFailure(
            "timeout", f"no answer to {what} from {url} within {deadline_s:g} s"
        )
    if isinstance(error, ConnectionRefusedError):
        return ImplementationFailure(
            "crash", f"cannot connect to {url} for {what}: connection refused"
        )
    if isinstance(error, http.client.RemoteDisconnected | http.client.IncompleteRead):
        return ImplementationFailure(
            "crash", f"the service closed the connection before a whole answer to {what}: {error}"
        )
    if isinstance(error, http.client.HTTPException):  # not HTTP at all (bad status line...)
        return ImplementationFailure(
            "protocol", f"the answer to {what} from {url} is not HTTP: {error!r}"
        )
    if isinstance(error, OSError):
        return ImplementationFailure(
            "crash", f"the connection to {url} failed during {what}: {error}"
        )
    return error
