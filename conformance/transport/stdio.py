"""The stdio transport: any implementation, any language, behind one long-lived process.

    toolreg-conformance run --adapter "stdio:node harnesses/dsh/harness.mjs"

This file owns containment. The rules it keeps:

* **Every answer has a deadline.** ``start`` gets ``start_deadline_s``, each
  ``run`` gets ``deadline_s`` plus what the scenario itself may wait for
  (``SessionAdapter.deadline_for``). A harness that misses it is killed and
  the scenario is an ``ImplementationFailure("timeout")``.
* **A harness is a process group, and everything it started.** It is started in
  its own session; ending it (stop, timeout, crash, give-up, the kit's exit) sends
  the whole group SIGTERM, then SIGKILL after ``limits.kill_grace_s``, then
  SIGKILL to every process still carrying the harness's tag (its descendants that
  left the group; the kit is their subreaper, so it reaps them:
  :mod:`conformance.processes`). No read ever blocks:
  one ``poll`` over the pipes and a pidfd per wait, bounded by the deadline,
  and once the harness itself has exited its stdout counts as closed, so a
  child that inherited the pipe cannot hold the kit.
* **Anything else off-protocol kills the harness too**: EOF or exit (``crash``),
  a line that is not a JSON object, not UTF-8, longer than
  ``limits.max_message_bytes`` or nested deeper than ``limits.max_depth``, a
  wrong ``seq`` or type (``protocol``, naming the stdout line number and
  quoting the line's start). After such a failure the byte stream can no
  longer be trusted, so the process is never reused.
* **Restarts are bounded and replay the handshake** (``transport/policy.py``).
  The next scenario starts a fresh process; its ``started`` answer must
  describe the same implementation. The adapter gives up -- every later
  scenario fails at once with the reason -- after ``max_restarts`` restarts,
  ``max_consecutive`` timeouts in a row or ``max_timeouts`` in all, or when a
  restart's handshake fails. Giving up never stops the run: the report is
  still written.
* **stderr is evidence, never a failure.** Its last ``limits.stderr_tail_bytes``
  are kept (newline or not); the part written while a failed scenario ran is
  attached to that failure, and the tail goes into the report.

The transport never judges, and never decides what a rule means.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import select
import signal
import subprocess
import time
from collections import deque
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from conformance.processes import become_subreaper, end_tagged, tagged
from conformance.seam.adapter import AdapterError, AdapterInfo, ImplementationFailure
from conformance.transport.policy import Limits, SessionAdapter, SessionOptions

if TYPE_CHECKING:
    from typing_extensions import Unpack
from conformance.transport.protocol import (
    decode_line,
    encode,
    info_from_started,
    interpret_answer,
    start_message,
)

__all__ = ["StdioAdapter", "end_all_harnesses"]

STDERR_KEPT_LINES: Final = 60  # lines of stderr in the report's transport section
STDERR_LINE_CHARS: Final = 2000
CHUNK: Final = 64 * 1024
SHOWN_BYTES: Final = 200  # of an oversized or non-UTF-8 line, quoted in the failure
_POLL_IN: Final = select.POLLIN | select.POLLHUP | select.POLLERR
_POLL_FALLBACK_S: Final = 0.05  # how often to look for the harness's exit without a pidfd


class _Oversized(Exception):
    """A stdout line longer than the limit (``head`` is its first bytes)."""

    def __init__(self, head: bytes) -> None:
        super().__init__()
        self.head = head


class _Process:
    """One harness process in its own process group, read without blocking and without threads.

    Every wait is one ``poll`` over the harness's stdout, its stderr, its
    stdin (while a request is being written) and a pidfd that becomes
    readable when the harness exits, bounded by the caller's deadline. Once
    the harness itself has exited, what is already in its pipes is read and
    its stdout counts as closed: a child that inherited the pipe and outlived
    it can never hold a read open. Buffers are bounded: the stdout line
    being read by ``limits.max_message_bytes``, stderr by a tail of
    ``limits.stderr_tail_bytes`` (newline or not).
    """

    def __init__(
        self,
        command: Sequence[str],
        cwd: str | None,
        env: Mapping[str, str] | None,
        limits: Limits,
    ) -> None:
        become_subreaper()  # a descendant that escapes the group is re-parented to the kit
        environment, self.tag = tagged(env)  # ... and carries the tag that finds it
        try:
            self.popen = subprocess.Popen(
                list(command),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=cwd,
                env=environment,
                start_new_session=True,  # its own process group, killed as a whole
            )
        except OSError as e:
            raise AdapterError(f"cannot start {' '.join(command)!r}: {e}") from e
        _LIVE.add(self)
        self.limits = limits
        assert self.popen.stdin and self.popen.stdout and self.popen.stderr
        self._in = self.popen.stdin.fileno()
        self._out = self.popen.stdout.fileno()
        self._err = self.popen.stderr.fileno()
        for fd in (self._in, self._out, self._err):
            os.set_blocking(fd, False)
        self._pidfd: int | None = None
        with contextlib.suppress(AttributeError, OSError):  # Linux >= 5.3
            self._pidfd = os.pidfd_open(self.popen.pid)
        self._buffer = bytearray()  # stdout bytes not yet taken as lines
        self._scanned = 0  # how much of the buffer is known to hold no newline
        self._out_open = True
        self._err_open = True
        self.exited = False  # the harness itself (the group leader) has exited
        self._killed = False
        self.stderr_tail = bytearray()
        self.stderr_total = 0  # bytes of stderr read so far (marks for stderr_since)
        self.stdout_line = 0  # stdout lines taken so far (for error messages)

    # ----------------------------------------------------------------- reading

    @staticmethod
    def _read(fd: int) -> bytes | None:
        """One chunk of what ``fd`` holds: ``b""`` at EOF, ``None`` when nothing is there yet."""
        try:
            return os.read(fd, CHUNK)
        except BlockingIOError:
            return None
        except OSError:
            return b""

    def _read_out(self) -> bool:
        """Read what stdout holds (one chunk); whether anything came."""
        chunk = self._read(self._out)
        if not chunk:
            self._out_open = self._out_open and chunk is None
            return False
        self._buffer += chunk
        over = len(self._buffer) > self.limits.max_message_bytes
        if over and b"\n" not in chunk and self._buffer.find(b"\n", self._scanned) < 0:
            raise _Oversized(bytes(self._buffer[:SHOWN_BYTES]))
        return True

    def _read_err(self) -> bool:
        """Read what stderr holds (one chunk) into the capped tail; whether anything came."""
        chunk = self._read(self._err)
        if not chunk:
            self._err_open = self._err_open and chunk is None
            return False
        self.stderr_total += len(chunk)
        self.stderr_tail += chunk
        excess = len(self.stderr_tail) - self.limits.stderr_tail_bytes
        if excess > 0:
            del self.stderr_tail[:excess]
        return True

    def _drain(self, budget: int, *, stdout: bool = True) -> None:
        """Read what the pipes already hold (about ``budget`` bytes each at most), never waiting."""
        for _ in range(budget // CHUNK + 1):
            if not (stdout and self._out_open and self._read_out()):
                break
        for _ in range(budget // CHUNK + 1):
            if not (self._err_open and self._read_err()):
                break

    def _harness_exited(self) -> None:
        """The harness has exited: take what its pipes hold; its stdout is closed from now on."""
        self.exited = True
        self._drain(self.limits.max_message_bytes + CHUNK)
        self._out_open = False

    def _wait(self, end: float, writing: memoryview | None = None) -> memoryview | None:
        """One bounded wait for anything to happen; returns what is still to be written.

        TimeoutError past ``end``; BrokenPipeError if the harness closed its stdin.
        """
        remaining = end - time.monotonic()
        if remaining <= 0:
            raise TimeoutError
        poller = select.poll()
        if self._out_open:
            poller.register(self._out, _POLL_IN)
        if self._err_open:
            poller.register(self._err, _POLL_IN)
        if writing is not None:
            poller.register(self._in, select.POLLOUT | select.POLLERR | select.POLLHUP)
        if not self.exited and self._pidfd is not None:
            poller.register(self._pidfd, select.POLLIN)
        elif not self.exited:
            remaining = min(remaining, _POLL_FALLBACK_S)
        ready = dict(poller.poll(max(1, int(remaining * 1000))))
        if self._out in ready:
            self._read_out()
        if self._err in ready:
            self._read_err()
        if writing is not None and self._in in ready:
            written = os.write(self._in, writing[:CHUNK])  # BrokenPipeError if it hung up
            writing = writing[written:]
        exited = self._pidfd in ready if self._pidfd is not None else self.popen.poll() is not None
        if exited and not self.exited:
            self._harness_exited()
        return writing

    def send(self, message: Mapping[str, Any], end: float) -> None:
        """Write one line before ``end`` (TimeoutError), reading the harness's output meanwhile."""
        pending: memoryview | None = memoryview((encode(message) + "\n").encode("utf-8"))
        while pending:
            if self.exited:
                raise BrokenPipeError
            pending = self._wait(end, pending)

    def receive(self, end: float) -> bytes | None:
        """The next stdout line (no newline); ``None`` at EOF; TimeoutError past ``end``.

        _Oversized when the line grows past the limit; a fragment before EOF is a line.
        """
        while True:
            newline = self._buffer.find(b"\n", self._scanned)
            self._scanned = len(self._buffer) if newline < 0 else 0
            if newline >= 0 or (not self._out_open and self._buffer):
                size = newline if newline >= 0 else len(self._buffer)
                if size > self.limits.max_message_bytes:
                    raise _Oversized(bytes(self._buffer[:SHOWN_BYTES]))
                line = bytes(self._buffer[:size])
                del self._buffer[: size + 1]
                self._scanned = 0
                self.stdout_line += 1
                return line.removesuffix(b"\r")
            if not self._out_open:
                return None
            self._wait(end)

    def stderr_since(self, mark: int) -> str:
        """What the harness wrote to stderr since ``stderr_total`` was ``mark`` (its kept tail)."""
        wanted = self.stderr_total - mark
        kept = self.stderr_tail[-wanted:] if wanted > 0 else b""
        lost = f"[... {wanted - len(kept)} bytes not kept]\n" if wanted > len(kept) else ""
        return lost + bytes(kept).decode("utf-8", "replace")

    def stderr_lines(self) -> list[str]:
        lines = bytes(self.stderr_tail).decode("utf-8", "replace").splitlines()
        return [x if len(x) <= STDERR_LINE_CHARS else x[:STDERR_LINE_CHARS] + " ..." for x in lines]

    # ----------------------------------------------------------------- ending

    def exit_status(self) -> str:
        code = self.popen.poll()
        if code is None:
            return "still running"
        if code < 0:
            with contextlib.suppress(ValueError):
                return f"killed by {signal.Signals(-code).name}"
        return f"exit code {code}"

    def wait_exit(self, timeout_s: float) -> bool:
        """Wait up to ``timeout_s`` for the harness itself to exit, without reaping it.

        Only its exit is watched (its pipes are left alone).
        """
        if self.exited:
            return True
        if self._pidfd is not None:
            ready = select.poll()
            ready.register(self._pidfd, select.POLLIN)
            return bool(ready.poll(max(0, int(timeout_s * 1000))))
        end = time.monotonic() + timeout_s
        while True:  # no pidfd: look every few milliseconds
            with contextlib.suppress(ChildProcessError):
                flags = os.WEXITED | os.WNOHANG | os.WNOWAIT
                if os.waitid(os.P_PID, self.popen.pid, flags) is not None:
                    return True
            if self.popen.returncode is not None or time.monotonic() >= end:
                return self.popen.returncode is not None
            time.sleep(_POLL_FALLBACK_S / 5)

    def _signal_group(self, sig: signal.Signals) -> None:
        # The leader is not reaped before the group is killed, so its pid -- the
        # group's id -- cannot have been reused by an unrelated process.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.popen.pid, sig)

    def kill(self, grace_s: float | None = None) -> None:
        """End the whole process group: SIGTERM, a short grace, SIGKILL; keep its last stderr."""
        if self._killed:
            return
        try:
            self._signal_group(signal.SIGTERM)
            with contextlib.suppress(OSError):
                self.wait_exit(self.limits.kill_grace_s if grace_s is None else grace_s)
        finally:  # even if an interrupt cut the grace short
            self._signal_group(signal.SIGKILL)  # the leader if it ignored SIGTERM, and any child
            self._killed = True
            _LIVE.discard(self)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.popen.wait(timeout=5)
        end_tagged(self.tag)  # a descendant that left the group (setsid) goes too
        with contextlib.suppress(OSError):
            self._drain(self.limits.stderr_tail_bytes + CHUNK, stdout=False)
        for stream in (self.popen.stdin, self.popen.stdout, self.popen.stderr):
            with contextlib.suppress(OSError):
                if stream is not None:
                    stream.close()
        if self._pidfd is not None:
            with contextlib.suppress(OSError):
                os.close(self._pidfd)


_LIVE: set[_Process] = set()


@atexit.register
def end_all_harnesses(grace_s: float | None = None) -> None:
    """End every live harness's process group (registered at exit: none outlives the kit).

    ``grace_s`` overrides each harness's SIGTERM grace (``0``: SIGKILL at
    once, e.g. before an ``os._exit`` on a second interrupt).
    """
    for process in list(_LIVE):
        with contextlib.suppress(Exception):
            process.kill(grace_s)


class StdioAdapter(SessionAdapter):
    """An :class:`~conformance.seam.adapter.Adapter` speaking the harness protocol to a subprocess.

    A session is one harness process; the restart policy is :class:`SessionAdapter`'s.
    """

    transport = "stdio"
    restart_noun = "restarts of the harness"

    def __init__(
        self,
        command: Sequence[str],
        *,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        **options: Unpack[SessionOptions],
    ) -> None:
        super().__init__(**options)
        self.command = list(command)
        self.cwd = cwd
        self.env = env
        self._process: _Process | None = None
        self._stderr_tail: deque[str] = deque(maxlen=STDERR_KEPT_LINES)

    def diagnostics(self) -> dict[str, Any]:
        """The session facts plus the command and the tail of the harness's stderr."""
        tail = list(self._stderr_tail)
        if self._process is not None:
            tail += self._process.stderr_lines()
        return {
            **super().diagnostics(),
            "command": self.command,
            "stderrTail": tail[-STDERR_KEPT_LINES:],
        }

    def close(self) -> None:
        """Ask the harness to stop (``stop``, 2 s to answer and exit), then end its group."""
        process = self._process
        if process is None:
            return
        with contextlib.suppress(Exception):
            end = time.monotonic() + 2.0
            process.send({"type": "stop"}, end)
            process.receive(end)
            process.wait_exit(max(0.0, end - time.monotonic()))  # a harness that answered exits
        self._close_session()

    # ------------------------------------------------------- transport hooks

    def _start_failed(self, failure: ImplementationFailure) -> AdapterError:
        detail = f"\n--- harness stderr ---\n{failure.stderr}" if failure.stderr else ""
        shown = repr(" ".join(self.command))
        return AdapterError(f"harness {shown} did not start: {failure}{detail}")

    def _handshake(self) -> AdapterInfo:
        process = _Process(self.command, self.cwd, self.env, self.limits)
        self._process = process
        try:
            line = self._receive_after_send(process, start_message(), self.start_deadline_s)
            where = "the harness's answer to start (stdout line 1)"
            message = decode_line(line, where=where, max_depth=self.limits.max_depth)
            return info_from_started(message, where=where)
        except ImplementationFailure as e:
            self._kill()
            e.stderr = process.stderr_since(0)
            raise

    def _exchange(self, seq: int, scenario: Mapping[str, Any]) -> dict[str, Any]:
        process = self._process
        assert process is not None
        mark = process.stderr_total
        message = {"type": "run", "seq": seq, "scenario": scenario}
        try:
            line = self._receive_after_send(process, message, self.deadline_for(scenario))
            where = f"stdout line {process.stdout_line} (the answer to run seq {seq})"
            answer = decode_line(line, where=where, max_depth=self.limits.max_depth)
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
        """Send ``message`` and take the answer line, all within ``deadline_s``, as text."""
        what = f"{message['type']}" + (f" seq {message['seq']}" if "seq" in message else "")
        started = time.monotonic()
        end = started + deadline_s
        try:
            process.send(message, end)
        except TimeoutError:
            raise ImplementationFailure(
                "timeout",
                f"the harness did not read {what} within {deadline_s:g} s; it was killed",
            ) from None
        except _Oversized as e:
            raise self._oversized(process, e, what) from None
        except OSError:  # BrokenPipeError: it closed its input (or exited)
            raise ImplementationFailure(
                "crash",
                f"the harness closed its input before {what} ({self._status(process)})",
            ) from None
        try:
            raw = process.receive(end)
        except TimeoutError:
            raise ImplementationFailure(
                "timeout",
                f"no answer to {what} within {deadline_s:g} s; the harness was killed",
            ) from None
        except _Oversized as e:
            raise self._oversized(process, e, what) from None
        if raw is None:
            waited = time.monotonic() - started
            raise ImplementationFailure(
                "crash",
                f"the harness exited before answering {what} ({self._status(process)}, "
                f"after {waited:.1f} s)",
            )
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as e:
            line = raw.decode("utf-8", "replace")
            raise ImplementationFailure(
                "protocol",
                f"stdout line {process.stdout_line} (the answer to {what}) is not UTF-8 ({e}): "
                f"{raw[:SHOWN_BYTES]!r}",
                line=line,
            ) from None

    def _oversized(self, process: _Process, error: _Oversized, what: str) -> ImplementationFailure:
        limit = self.limits.max_message_bytes
        return ImplementationFailure(
            "protocol",
            f"stdout line {process.stdout_line + 1} (the answer to {what}) is longer than "
            f"{limit} bytes, the limit of one message; it begins {error.head!r}",
            line=error.head.decode("utf-8", "replace"),
        )

    @staticmethod
    def _status(process: _Process) -> str:
        process.wait_exit(3.0)  # it is exiting: let it, to say how
        return process.exit_status()

    def _kill(self) -> None:
        process, self._process = self._process, None
        if process is not None:
            process.kill()
            self._stderr_tail.extend(process.stderr_lines())  # its last words, for the report
