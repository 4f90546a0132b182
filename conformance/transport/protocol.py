"""The harness protocol, version 1: the messages, independent of any transport.

Everything both ends must agree on lives here; nothing here knows whether the
bytes travel over a pipe (``transport/stdio.py``) or HTTP. The normative text is
``docs/protocol.md``; the shapes are ``fixtures/schema/protocol.schema.json``.

Theory of operation. The kit sends ``start`` and gets ``started`` (who the
implementation is, which optional capabilities it can express and why the
others are missing). Then, per scenario, ``run {seq, scenario}`` and exactly
one answer with the same ``seq``: ``trace``, ``skipped {reason}`` or
``errored {context}``. ``stop`` ends it. The kit side interprets an answer
(:func:`interpret_answer`); the harness side turns an in-process adapter into
a message handler (:class:`HarnessSession`).

A broken answer is an :class:`~conformance.seam.adapter.ImplementationFailure` of
category ``protocol`` whose message names what was expected and what came.
"""

from __future__ import annotations

import json
import re
import sys
import traceback
from collections.abc import Mapping
from typing import Any, Final

from conformance._version import __version__
from conformance.scenario.bounds import DEFAULT_MAX_DEPTH, check_bounds
from conformance.scenario.schema import FixtureError, validate
from conformance.seam.adapter import (
    CAPABILITIES,
    DEFAULT_CLOSED_FORMS,
    Adapter,
    AdapterInfo,
    ImplementationFailure,
    ScenarioSkipped,
)

__all__ = [
    "PROTOCOL_VERSION",
    "HarnessSession",
    "OutOfBounds",
    "decode_line",
    "encode",
    "encode_answer",
    "info_from_started",
    "interpret_answer",
    "loads_bounded",
    "reject_constant",
    "shown",
    "start_message",
]

PROTOCOL_VERSION: Final = 1

# Which answer types each request admits.
REQUESTS: Final[Mapping[str, frozenset[str]]] = {
    "start": frozenset({"started"}),
    "run": frozenset({"trace", "skipped", "errored"}),
    "stop": frozenset({"stopped"}),
}
RESPONSES: Final = frozenset(t for answers in REQUESTS.values() for t in answers)


def encode(message: Mapping[str, Any]) -> str:
    """One message as one line of strict JSON (no NaN), without the newline."""
    return json.dumps(message, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def reject_constant(name: str) -> Any:
    """``json.loads(..., parse_constant=reject_constant)``: NaN and Infinity are not JSON."""
    raise ValueError(f"{name} is not JSON")


def shown(text: str, chars: int = 200) -> str:
    """``text`` quoted for a message: its first ``chars`` characters and its length."""
    return repr(text) if len(text) <= chars else repr(text[:chars]) + f"... ({len(text)} chars)"


def loads_bounded(text: str, max_depth: int = DEFAULT_MAX_DEPTH) -> Any:
    """Strict JSON (no NaN) nested at most ``max_depth`` deep; ValueError says what is wrong.

    Deep nesting is refused without recursion: before parsing when the text
    is deeper than the parser could go (a ``RecursionError`` is never raised),
    after parsing by :func:`~conformance.scenario.bounds.check_bounds`.
    """
    try:
        value = json.loads(text, parse_constant=reject_constant)
    except RecursionError:
        raise OutOfBounds(f"nested deeper than {max_depth} levels") from None
    if _surely_within(text, max_depth):
        return value
    breach = check_bounds(value, max_depth=max_depth, max_bytes=sys.maxsize)
    if breach is not None:
        raise OutOfBounds(breach)
    return value


_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")


def _surely_within(text: str, max_depth: int) -> bool:
    """A fast, conservative test that JSON ``text`` nests at most ``max_depth`` deep.

    Strings removed, only brackets left, each round strips the innermost pairs
    (one or two levels); ``False`` means "not sure" (the exact walk decides).
    """
    if text.count("[") + text.count("{") <= max_depth:  # not enough brackets to nest deeper
        return True
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    for _ in range(max_depth // 2):
        if not brackets:
            return True
        shorter = brackets.replace("[]", "").replace("{}", "")
        if len(shorter) == len(brackets):
            return False
        brackets = shorter
    return not brackets


class OutOfBounds(ValueError):
    """JSON that parses but breaks a limit (docs/protocol.md, "Limits")."""


def decode_line(line: str, *, where: str, max_depth: int = DEFAULT_MAX_DEPTH) -> dict[str, Any]:
    """Parse one line as a JSON object; a ``protocol`` failure naming ``where`` otherwise.

    A value nested deeper than ``max_depth`` is a ``protocol`` failure too.
    """
    try:
        message = loads_bounded(line, max_depth)
    except OutOfBounds as e:
        raise ImplementationFailure(
            "protocol", f"{where} is out of bounds: {e}: {shown(line)}", line=line
        ) from None
    except ValueError as e:
        raise ImplementationFailure(
            "protocol", f"{where} is not JSON ({e}): {shown(line)}", line=line
        ) from None
    if not isinstance(message, dict):
        raise ImplementationFailure(
            "protocol", f"{where} is JSON but not an object: {shown(line)}", line=line
        )
    return message


def check_message(message: Mapping[str, Any], *, where: str, line: str | None = None) -> None:
    """Validate one message against its ``$defs`` entry in the protocol schema."""
    kind = message.get("type")
    if not isinstance(kind, str) or kind not in {*REQUESTS, *RESPONSES}:
        raise ImplementationFailure(
            "protocol", f"{where} has unknown message type {kind!r}", line=line
        )
    try:
        validate(message, f"protocol#{kind}", where)
    except FixtureError as e:
        raise ImplementationFailure("protocol", str(e), line=line) from None


def start_message() -> dict[str, Any]:
    return {
        "type": "start",
        "protocol": PROTOCOL_VERSION,
        "kit": {"name": "toolreg-conformance", "version": __version__},
    }


def info_from_started(message: Mapping[str, Any], *, where: str) -> AdapterInfo:
    """The implementation's description from its ``started`` answer."""
    if message.get("type") != "started":
        raise ImplementationFailure(
            "protocol", f"{where}: expected 'started', got {message.get('type')!r}"
        )
    version = message.get("protocol")
    if version != PROTOCOL_VERSION:
        raise ImplementationFailure(
            "protocol",
            f"{where}: the harness speaks protocol {version!r}; this kit speaks {PROTOCOL_VERSION}",
        )
    check_message(message, where=where)
    impl = message["implementation"]
    return AdapterInfo(
        name=impl["name"],
        version=impl["version"],
        language=impl["language"],
        capabilities=frozenset(message["capabilities"]),
        missing=dict(message.get("missing", {})),
        closed_forms=frozenset(message.get("closedForms", DEFAULT_CLOSED_FORMS)),
    )


def interpret_answer(
    message: Mapping[str, Any], *, seq: int, where: str, strict: bool, line: str | None = None
) -> dict[str, Any]:
    """The trace of a ``run`` answer; raises ScenarioSkipped or ImplementationFailure.

    ``strict`` (``--validate-protocol``) validates the whole message, trace
    included, against the protocol schema. Without it only the envelope is
    checked here; the runner validates every trace against the trace schema.
    """
    kind = message.get("type")
    if kind not in REQUESTS["run"]:
        raise ImplementationFailure(
            "protocol",
            f"{where}: expected an answer to run seq {seq} (trace, skipped or errored), "
            f"got type {kind!r}",
            line=line,
        )
    answered = message.get("seq")
    if type(answered) is not int or answered != seq:  # not True, not 1.0
        raise ImplementationFailure(
            "protocol",
            f"{where}: answer carries seq {message.get('seq')!r}, expected {seq}",
            line=line,
        )
    if strict:
        check_message(message, where=where, line=line)
    if kind == "skipped":
        raise ScenarioSkipped(str(message.get("reason") or "the harness skipped it"))
    if kind == "errored":
        raise ImplementationFailure(
            "errored", f"{where}: {message.get('context') or 'no context given'}", line=line
        )
    trace = message.get("trace")
    if not isinstance(trace, dict):
        raise ImplementationFailure(
            "protocol", f"{where}: 'trace' is {type(trace).__name__}, not an object", line=line
        )
    return trace


class HarnessSession:
    """The harness side: answers protocol messages by running an in-process adapter.

    Transport-free: ``handle(request) -> answer``. ``python -m conformance.harness``
    wraps it in a stdin/stdout loop; ``toolreg-conformance serve`` in HTTP.
    """

    def __init__(self, adapter: Adapter) -> None:
        self.adapter = adapter
        self.started = False

    def handle(self, request: Mapping[str, Any]) -> dict[str, Any]:
        kind = request.get("type")
        if kind == "start":
            return self.start(request)
        if kind == "run":
            return self.run(request)
        if kind == "stop":
            return {"type": "stopped"}
        raise ValueError(f"unknown request type {kind!r}")

    def start(self, request: Mapping[str, Any]) -> dict[str, Any]:
        info = self.adapter.describe()
        self.started = True
        missing = {c: why for c, why in info.missing.items() if c not in info.capabilities}
        for capability in sorted(set(CAPABILITIES) - info.capabilities):
            missing.setdefault(capability, "not supported by this adapter")
        answer: dict[str, Any] = {
            "type": "started",
            "protocol": PROTOCOL_VERSION,
            "implementation": {
                "name": info.name,
                "version": info.version,
                "language": info.language,
            },
            "capabilities": sorted(info.capabilities),
        }
        if missing:
            answer["missing"] = missing
        return answer

    def run(self, request: Mapping[str, Any]) -> dict[str, Any]:
        seq = request.get("seq")
        try:
            trace = self.adapter.run(request["scenario"])
        except ScenarioSkipped as e:
            return {"type": "skipped", "seq": seq, "reason": e.reason}
        except Exception as e:
            return {"type": "errored", "seq": seq, "context": _context(e)}
        return {"type": "trace", "seq": seq, "trace": trace}

    def handle_line(self, line: str) -> str:
        """One request line in, one answer line out (``""`` never: every request is answered)."""
        try:
            request = json.loads(line)
            if not isinstance(request, dict):
                raise ValueError("a request must be a JSON object")
            answer = self.handle(request)
        except Exception as e:  # the kit sent something this harness cannot read
            return encode({"type": "errored", "seq": _seq_of(line), "context": _context(e)})
        return encode_answer(answer)


def encode_answer(answer: Mapping[str, Any]) -> str:
    """An answer as one strict-JSON line; ``errored`` when it is not strict JSON (a NaN, an
    object JSON has no form for, a cycle)."""
    try:
        return encode(answer)
    except (ValueError, TypeError, RecursionError) as e:
        context = f"the answer is not strict JSON: {e}"
        return encode({"type": "errored", "seq": answer.get("seq"), "context": context})


def _context(e: BaseException) -> str:
    frames = traceback.extract_tb(e.__traceback__)
    where = f" (at {frames[-1].filename}:{frames[-1].lineno})" if frames else ""
    return f"{type(e).__name__}: {e}{where}"


def _seq_of(line: str) -> Any:
    try:
        return json.loads(line).get("seq")
    except Exception:
        return None
