"""The scenario ``run_code`` program language: a code runtime whose programs are JSON.

A scenario drives Code Mode with programs of the form ``{"steps": [...]}``:

* ``{"call": NAME, "arguments": {...}}`` calls a tool through the SDK; a failed
  call is recorded as an outcome and the program goes on;
* ``{"log": TEXT}`` writes a log line;
* ``{"return": VALUE}`` ends the program with VALUE;
* ``{"fail": TEXT}`` fails the run.

Without a ``return`` the program's result is the list of call outcomes, each
``{"ok": value}`` or ``{"error": {"toolName": ..., "message": ...}}``.

This is the kit's, not an implementation's: an adapter mounts it as its
registry's code runtime and says, through the constructor, which exception
means "a tool call failed" and which one to raise for a failed run (both are
the implementation's own types). The JavaScript twin is
``harnesses/js/program.mjs``; the golden cases ``fixtures/interpreter/*.json``
with a ``program`` pin both.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, Protocol

__all__ = ["CodeRunFailed", "ProgramSdk", "ScriptedCodeRuntime"]


class CodeRunFailed(Exception):
    """The default failure of a scripted program (an adapter may pass its own type)."""

    code = "CODE_RUN_FAILED"


class ProgramSdk(Protocol):
    """What a program reaches: tool calls and a log."""

    async def call(self, name: str, arguments: Any) -> Any: ...

    def log(self, line: str) -> None: ...


class ScriptedCodeRuntime:
    """A code runtime whose program is JSON: ``{"steps": [...]}`` (see the module docstring)."""

    language = "scripted-json"

    def __init__(
        self,
        on_step: Callable[[Mapping[str, Any]], None] | None = None,
        *,
        failure: Callable[[str], Exception] = CodeRunFailed,
        call_error: type[Exception] | tuple[type[Exception], ...] = Exception,
        returned: Callable[[Any], Any] = lambda value: value,
    ) -> None:
        """``returned`` maps a ``return`` value to the implementation's form (a frozen copy...)."""
        self._on_step = on_step
        self._failure = failure
        self._call_error = call_error
        self._returned = returned

    async def run(self, code: str, sdk: ProgramSdk, signal: Any = None) -> Any:
        """Run one program; its result, or the ``failure`` exception."""
        try:
            program = json.loads(code)
            steps = program["steps"]
        except (ValueError, KeyError, TypeError) as e:
            raise self._failure(f"not a scripted program: {e}") from None
        outcomes: list[Any] = []
        for step in steps:
            if self._on_step is not None:
                self._on_step(step)
            if "call" in step:
                try:
                    value = await sdk.call(step["call"], step.get("arguments", {}))
                    outcomes.append({"ok": value})
                except self._call_error as e:
                    name = getattr(e, "tool_name", step["call"])
                    message = getattr(e, "message", str(e))
                    outcomes.append({"error": {"toolName": name, "message": message}})
            elif "log" in step:
                sdk.log(step["log"])
            elif "return" in step:
                return self._returned(step["return"])
            elif "fail" in step:
                raise self._failure(str(step["fail"]))
        return outcomes
