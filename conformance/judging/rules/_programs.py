"""Reading a scripted run_code program and its outcomes (CODE rules, the path twins).

Programs are the kit's scripted runtime format (``conformance/interpreter/code_runtime.py``):
``run_code`` arguments ``{"code": JSON text of {"steps": [...]}, "description": ...}``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

__all__ = ["program_calls", "program_outcomes", "program_steps"]


def program_steps(call: Mapping[str, Any]) -> list[Mapping[str, Any]] | None:
    """The steps of a run_code call's scripted program, or None when it is not one."""
    arguments = call.get("arguments")
    if not isinstance(arguments, Mapping) or not isinstance(arguments.get("code"), str):
        return None
    try:
        program = json.loads(arguments["code"])
    except ValueError:
        return None
    steps = program.get("steps") if isinstance(program, Mapping) else None
    if not isinstance(steps, list) or not all(isinstance(step, Mapping) for step in steps):
        return None
    return steps


def program_calls(steps: list[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The call steps a program runs (up to its first return / fail)."""
    out: list[Mapping[str, Any]] = []
    for step in steps:
        if "return" in step or "fail" in step:
            break
        if "call" in step:
            out.append(step)
    return out


def _is_outcome(item: Any) -> bool:
    return isinstance(item, Mapping) and len(item) == 1 and ("ok" in item or "error" in item)


def program_outcomes(value: Any, calls: int, max_depth: int = 4) -> list[Any] | None:
    """The scripted program's list of call outcomes inside ``run_code``'s value, or None.

    SPEC.md leaves the shape of ``run_code``'s value open (the reference returns
    ``{"logs": [...], "result": outcomes}``; another registry may return the outcomes
    themselves, or wrap them otherwise). The outcomes are looked for, breadth-first and
    at most ``max_depth`` levels down, as a list of ``calls`` items each ``{"ok": v}`` or
    ``{"error": ...}``; a value holding no such list is not judged on it.
    """
    level: list[Any] = [value]
    for _ in range(max_depth + 1):
        below: list[Any] = []
        for item in level:
            if isinstance(item, list):
                if calls and len(item) == calls and all(_is_outcome(o) for o in item):
                    return item
                below += item
            elif isinstance(item, Mapping):
                below += list(item.values())
        level = below
    return None
