"""One headless Chromium for many pages, driven over the DevTools protocol on a pipe.

``chromium --remote-debugging-pipe`` reads protocol commands on its file descriptor 3 and
writes answers and events on 4, each message JSON ended by a NUL byte. :class:`Chromium`
opens a tab per page, waits for its load event, reads the DOM the page's script left
(``document.documentElement.outerHTML``, what ``--dump-dom`` prints) and collects what the
page told its console on the way: console API calls, uncaught exceptions and the
browser's own log entries at warning or error level (a Content-Security-Policy refusal is
one). One browser process for every page instead of one per page: a launch costs more than
a page.
"""

from __future__ import annotations

import json
import os
import selectors
import subprocess
import time
from pathlib import Path
from types import TracebackType
from typing import Any

#: The browser's log levels that count as the page telling its console something.
LOGGED = ("warning", "error")


class BrowserError(RuntimeError):
    """Chromium did not answer as the protocol says (it died, or a deadline passed)."""


class Chromium:
    """``with Chromium(binary, profile) as browser: dom, console = browser.dump(page)``."""

    def __init__(self, binary: str, profile: Path, *, deadline_s: float = 60.0) -> None:
        self.deadline_s = deadline_s
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()

        def on_fds_3_and_4() -> None:  # in the child, before exec
            read, write = os.dup(to_browser_r), os.dup(from_browser_w)
            os.dup2(read, 3)
            os.dup2(write, 4)

        self._process = subprocess.Popen(
            [
                binary,
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--remote-debugging-pipe",
                f"--user-data-dir={profile}",
                "about:blank",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=(3, 4),
            preexec_fn=on_fds_3_and_4,  # a test helper: no thread of its own runs beside it
        )
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._buffer = b""
        self._next_id = 0
        self._events: list[dict[str, Any]] = []

    # -- the protocol
    def _send(self, method: str, params: dict[str, Any], session: str | None = None) -> int:
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params}
        if session is not None:
            message["sessionId"] = session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        return self._next_id

    def _receive(self, until: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            left = until - time.monotonic()
            if left <= 0:
                raise BrowserError(f"no answer from chromium within {self.deadline_s:g} s")
            with selectors.DefaultSelector() as selector:
                selector.register(self._from_browser, selectors.EVENT_READ)
                if not selector.select(left):
                    continue
            chunk = os.read(self._from_browser, 1 << 20)
            if not chunk:
                raise BrowserError(f"chromium closed its pipe (exit {self._process.poll()})")
            self._buffer += chunk
        message, _, self._buffer = self._buffer.partition(b"\0")
        parsed: dict[str, Any] = json.loads(message)
        return parsed

    def call(self, method: str, params: dict[str, Any], session: str | None = None) -> Any:
        """Send one command; its result (events that arrive meanwhile are kept)."""
        ident = self._send(method, params, session)
        until = time.monotonic() + self.deadline_s
        while True:
            message = self._receive(until)
            if message.get("id") == ident:
                if "error" in message:
                    raise BrowserError(f"{method}: {message['error']}")
                return message.get("result", {})
            self._events.append(message)

    def _await_event(self, method: str, session: str) -> None:
        until = time.monotonic() + self.deadline_s
        while True:
            kept = [e for e in self._events if e.get("method") == method]
            if any(e.get("sessionId") == session for e in kept):
                return
            self._events.append(self._receive(until))

    # -- a page
    def dump(self, page: Path) -> tuple[str, list[str]]:
        """The DOM of ``page`` after its load event, and what it logged to the console."""
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})[
            "sessionId"
        ]
        try:
            for domain in ("Page", "Runtime", "Log"):
                self.call(f"{domain}.enable", {}, session)
            self._events = [e for e in self._events if e.get("sessionId") != session]
            self.call("Page.navigate", {"url": page.resolve().as_uri()}, session)
            self._await_event("Page.loadEventFired", session)
            found = self.call(
                "Runtime.evaluate",
                {"expression": "document.documentElement.outerHTML", "returnByValue": True},
                session,
            )
            dom = str(found["result"]["value"])
            return dom, self._console(session)
        finally:
            self.call("Target.closeTarget", {"targetId": target})
            self._events = [e for e in self._events if e.get("sessionId") != session]

    def _console(self, session: str) -> list[str]:
        lines = []
        for event in self._events:
            if event.get("sessionId") != session:
                continue
            method, params = event.get("method"), event.get("params", {})
            if method == "Runtime.consoleAPICalled":
                texts = [str(a.get("value", a.get("description", ""))) for a in params["args"]]
                lines.append(f"CONSOLE {params.get('type')}: {' '.join(texts)}")
            elif method == "Runtime.exceptionThrown":
                details = params.get("exceptionDetails", {})
                lines.append(f"CONSOLE exception: {details.get('text', '')}")
            elif method == "Log.entryAdded" and params["entry"].get("level") in LOGGED:
                entry = params["entry"]
                lines.append(f"CONSOLE {entry.get('level')}: {entry.get('text', '')}")
        return lines

    # -- its lifetime
    def __enter__(self) -> Chromium:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        try:
            self._send("Browser.close", {})
            self._process.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            self._process.kill()
            self._process.wait()
        finally:
            os.close(self._to_browser)
            os.close(self._from_browser)
