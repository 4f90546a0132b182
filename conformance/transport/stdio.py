"""The stdio transport: any implementation, any language, behind one long-lived process.

    toolreg-conformance run --adapter "stdio:node harnesses/dsh/harness.mjs"

This file owns containment. The rules it keeps:

* **Every answer has a deadline.** ``start`` gets ``start_deadline_s``, each
  ``run`` gets ``deadline_s``. A harness that misses it is killed (its whole
  process group) and the scenario is an ``ImplementationFailure("timeout")``.
* **Anything else off-protocol kills the harness too**: EOF or exit (``crash``),
  a line that is not a JSON object, a wrong ``seq`` or type (``protocol``,
  naming the stdout line number and quoting the line). After such a failure
  the byte stream can no longer be trusted, so the process is never reused.
* **Restarts are bounded and replay the handshake.** The next scenario starts
  a fresh process; its ``started`` answer must describe the same
  implementation. The adapter gives up -- every later scenario fails at once
  with the reason -- after ``max_restarts`` restarts, after
  ``max_consecutive`` timeouts in a row (each costs a full deadline), or when
  a restart's handshake fails. Giving up never stops the run: the report is still written.
* **stderr is evidence, never a failure.** A reader thread keeps the tail of
  the harness's stderr; the part written while a failed scenario ran is
  attached to that failure, and the tail goes into the report.

The transport never judges, and never decides what a rule means.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import queue
import signal
import subprocess
import threading
import time
from collections import deque
from collections.abc import Mapping, Sequence
from typing import IO, Any

from conformance.core.adapter import AdapterError, AdapterInfo, ImplementationFailure
from conformance.transport.policy import SessionAdapter
from conformance.transport.protocol import (
    decode_line,
    encode,
    info_from_started,
    interpret_answer,
    start_message,
)

__all__ = ["StdioAdapter"]

_EOF = object()
STDERR_KEPT_LINES = 400
STDERR_LINE_CHARS = 2000
PIPE_SAFE_BYTES = 32 * 1024  # below Linux's 64 KiB pipe buffer


class _Process:
    """One harness process: line reader threads and a kill switch."""

    def __init__(self, command: Sequence[str], cwd: str | None, env: Mapping[str, str] | None):
        try:
            self.popen = subprocess.Popen(
                list(command),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=cwd,
                env=dict(env) if env is not None else None,
                start_new_session=True,  # a process group we can kill as a whole
            )
        except OSError as e:
            raise AdapterError(f"cannot start {' '.join(command)!r}: {e}") from e
        self.lines: queue.Queue[object] = queue.Queue()
        self.stderr: deque[tuple[int, str]] = deque(maxlen=STDERR_KEPT_LINES)
        self.stderr_count = 0
        self.stdout_line = 0  # stdout lines consumed so far (for error messages)
        assert self.popen.stdout is not None and self.popen.stderr is not None
        threading.Thread(target=self._pump, args=(self.popen.stdout,), daemon=True).start()
        self._drainer = threading.Thread(target=self._drain, args=(self.popen.stderr,), daemon=True)
        self._drainer.start()

    def _pump(self, stream: IO[bytes]) -> None:
        for raw in iter(stream.readline, b""):
            self.lines.put(raw)
        self.lines.put(_EOF)

    def _drain(self, stream: IO[bytes]) -> None:
        for raw in iter(stream.readline, b""):
            text = raw.decode("utf-8", "replace").rstrip("\n")
            if len(text) > STDERR_LINE_CHARS:
                text = text[:STDERR_LINE_CHARS] + " ..."
            self.stderr.append((self.stderr_count, text))
            self.stderr_count += 1

    def stderr_since(self, mark: int) -> str:
        return "\n".join(text for n, text in list(self.stderr) if n >= mark)

    def send(self, message: Mapping[str, Any], deadline_s: float) -> None:
        """Write one line; TimeoutError if the harness does not read it within the deadline.

        A line that fits the pipe buffer is written directly (the harness read
        everything before it answered); a larger one is written by a helper
        thread, so a harness that stops reading cannot block the kit.
        """
        stdin = self.popen.stdin
        assert stdin is not None
        data = (encode(message) + "\n").encode("utf-8")
        if len(data) <= PIPE_SAFE_BYTES:
            stdin.write(data)
            stdin.flush()
            return
        failed: list[BaseException] = []

        def write() -> None:
            try:
                stdin.write(data)
                stdin.flush()
            except BaseException as e:
                failed.append(e)

        writer = threading.Thread(target=write, daemon=True)
        writer.start()
        writer.join(deadline_s)
        if writer.is_alive():
            raise TimeoutError
        if failed:
            raise failed[0]

    def receive(self, deadline_s: float) -> str | None:
        """The next stdout line (no newline); ``None`` at EOF; TimeoutError past the deadline."""
        try:
            item = self.lines.get(timeout=deadline_s)
        except queue.Empty:
            raise TimeoutError from None
        if item is _EOF:
            return None
        self.stdout_line += 1
        assert isinstance(item, bytes)
        return item.decode("utf-8", "replace").rstrip("\r\n")

    def exit_status(self, wait_s: float = 1.0) -> str:
        try:
            code = self.popen.wait(timeout=wait_s)
        except subprocess.TimeoutExpired:
            return "still running"
        if code < 0:
            with contextlib.suppress(ValueError):
                return f"killed by {signal.Signals(-code).name}"
        return f"exit code {code}"

    def kill(self) -> None:
        if self.popen.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.popen.pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.popen.wait(timeout=5)
        self._drainer.join(timeout=2)  # every stderr line the process wrote, as evidence
        for stream in (self.popen.stdin, self.popen.stdout, self.popen.stderr):
            with contextlib.suppress(Exception):
                if stream is not None:
                    stream.close()


class StdioAdapter(SessionAdapter):
    """An :class:`~conformance.core.adapter.Adapter` speaking the harness protocol to a subprocess.

    A session is one harness process; the restart policy is :class:`SessionAdapter`'s.
    """

    transport = "stdio"
    restart_noun = "restarts of the harness"

    def __init__(
        self,
        command: Sequence[str],
        *,
        deadline_s: float = 20.0,
        start_deadline_s: float = 60.0,
        max_restarts: int = 50,
        max_consecutive: int = 3,
        validate_protocol: bool = False,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(
            deadline_s=deadline_s,
            start_deadline_s=start_deadline_s,
            max_restarts=max_restarts,
            max_consecutive=max_consecutive,
            validate_protocol=validate_protocol,
        )
        self.command = list(command)
        self.cwd = cwd
        self.env = env
        self._process: _Process | None = None
        self._stderr_tail: deque[str] = deque(maxlen=60)
        atexit.register(self.close)

    def diagnostics(self) -> dict[str, Any]:
        """The session facts plus the command and the tail of the harness's stderr."""
        tail = list(self._stderr_tail)
        if self._process is not None:
            tail += [text for _, text in list(self._process.stderr)]
        return {
            **super().diagnostics(),
            "command": self.command,
            "stderrTail": tail[-(self._stderr_tail.maxlen or len(tail)) :],
        }

    def close(self) -> None:
        process = self._process
        if process is None:
            return
        with contextlib.suppress(Exception):
            process.send({"type": "stop"}, 2.0)
            process.receive(2.0)
            process.popen.wait(timeout=2.0)  # a harness that answered stopped exits by itself
        self._close_session()

    # ------------------------------------------------------- transport hooks

    def _start_failed(self, failure: ImplementationFailure) -> AdapterError:
        detail = f"\n--- harness stderr ---\n{failure.stderr}" if failure.stderr else ""
        shown = repr(" ".join(self.command))
        return AdapterError(f"harness {shown} did not start: {failure}{detail}")

    def _handshake(self) -> AdapterInfo:
        process = _Process(self.command, self.cwd, self.env)
        self._process = process
        where = "the harness's answer to start (stdout line 1)"
        try:
            line = self._receive_after_send(process, start_message(), self.start_deadline_s)
            return info_from_started(decode_line(line, where=where), where=where)
        except ImplementationFailure as e:
            self._kill()
            e.stderr = process.stderr_since(0)
            raise

    def _exchange(self, seq: int, scenario: Mapping[str, Any]) -> dict[str, Any]:
        process = self._process
        assert process is not None
        mark = process.stderr_count
        message = {"type": "run", "seq": seq, "scenario": scenario}
        try:
            line = self._receive_after_send(process, message, self.deadline_s)
            where = f"stdout line {process.stdout_line} (the answer to run seq {seq})"
            answer = decode_line(line, where=where)
            return interpret_answer(
                answer, seq=seq, where=where, strict=self.validate_protocol, line=line
            )
        except ImplementationFailure as e:
            if e.category != "errored":  # out of sync: never reuse this process
                self._kill()
            e.stderr = process.stderr_since(mark)
            raise

    def _drop(self) -> None:
        self._kill()

    # ------------------------------------------------------------- internals

    def _receive_after_send(
        self, process: _Process, message: Mapping[str, Any], deadline_s: float
    ) -> str:
        what = f"{message['type']}" + (f" seq {message['seq']}" if "seq" in message else "")
        try:
            process.send(message, deadline_s)
        except TimeoutError:
            raise ImplementationFailure(
                "timeout",
                f"the harness did not read {what} within {deadline_s:g} s; it was killed",
            ) from None
        except (BrokenPipeError, OSError):
            raise ImplementationFailure(
                "crash",
                f"the harness closed its input before {what} ({process.exit_status()})",
            ) from None
        started = time.monotonic()
        try:
            line = process.receive(deadline_s)
        except TimeoutError:
            raise ImplementationFailure(
                "timeout",
                f"no answer to {what} within {deadline_s:g} s; the harness was killed",
            ) from None
        if line is None:
            waited = time.monotonic() - started
            raise ImplementationFailure(
                "crash",
                f"the harness exited before answering {what} ({process.exit_status()}, "
                f"after {waited:.1f} s)",
            )
        return line

    def _kill(self) -> None:
        process, self._process = self._process, None
        if process is not None:
            process.kill()
            # Let the stderr reader finish, then keep its tail for the report.
            for _, text in list(process.stderr):
                self._stderr_tail.append(text)
