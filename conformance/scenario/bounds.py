"""Bounds on values the kit did not make: how deep, how large, and how to write them safely.

Anything read from an implementation -- a trace decoded from a harness's
line, a trace an in-process adapter returned, a value headed for a
counterexample file -- may be nested without end, huge, cyclic or not JSON at
all. These helpers look at such a value without trusting it:

* :func:`check_bounds` walks it *iteratively* (never a ``RecursionError``)
  and says, in one sentence, the first bound it breaks -- nested deeper than
  ``max_depth`` containers, or larger than ``max_bytes`` as compact JSON --
  or ``None``. The size is counted while walking and the walk stops at the
  breach, so a 100 MB value costs no more than its first ``max_bytes``.
* :func:`to_json_safe` returns a copy that ``json.dumps(..., allow_nan=False)``
  always accepts: mappings with string keys, lists, strings, finite numbers,
  booleans and ``None``; anything else becomes its (shortened) ``repr``, a
  cycle or a level past ``max_depth`` a marker string. Also iterative.
* :func:`non_json` says where a value stops being JSON (a trace an in-process
  adapter returned holding the implementation's own objects), or ``None``.
* :func:`counterexample_text` writes a counterexample case safely: non-JSON
  parts by their ``repr``, a trace past :data:`COUNTEREXAMPLE_MAX_BYTES` left out
  with the reason.

The defaults are the kit's documented limits (docs/protocol.md, "Limits").
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping
from typing import Any, Final

__all__ = [
    "COUNTEREXAMPLE_MAX_BYTES",
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_DEPTH",
    "check_bounds",
    "counterexample_text",
    "non_json",
    "to_json_safe",
]

DEFAULT_MAX_DEPTH: Final = 200
DEFAULT_MAX_BYTES: Final = 8 * 1024 * 1024
COUNTEREXAMPLE_MAX_BYTES: Final = 1024 * 1024  # a saved trace larger than this is left out
REPR_CHARS: Final = 200  # a non-JSON value's repr is cut to this many characters
_OTHER_BYTES: Final = 16  # what check_bounds counts for a value that is not JSON (no repr taken)

# A JSON path as a linked list (parent, step): built into a string only on a breach.
_Path = tuple[Any, str | int] | None


def _show(path: _Path) -> str:
    steps: list[str | int] = []
    while path is not None:
        path, step = path
        steps.append(step)
    text = "$" + "".join(f"[{s}]" if isinstance(s, int) else f".{s}" for s in reversed(steps))
    return text if len(text) <= 120 else text[:60] + "..." + text[-57:]


def _scalar_bytes(value: object) -> int:
    if value is None or value is True:
        return 4
    if value is False:
        return 5
    if isinstance(value, str):
        return len(value) + 2
    if isinstance(value, int):
        # digits of |n| without building the string (a huge int is cheap to bound)
        return max(1, math.ceil(value.bit_length() * 0.30103)) + (value < 0)
    if isinstance(value, float):
        return 24
    return _OTHER_BYTES


def check_bounds(
    value: object, max_depth: int = DEFAULT_MAX_DEPTH, max_bytes: int = DEFAULT_MAX_BYTES
) -> str | None:
    """The first bound ``value`` breaks, as a sentence naming where; ``None`` if within both.

    Depth counts containers: ``[]`` is depth 1, ``[[]]`` depth 2; a scalar is
    depth 0. Size is the length of the value's compact JSON encoding, counted
    in characters (a non-JSON leaf counts a few bytes; it is never ``repr``-ed).
    A cyclic value is reported as too deep. Memory stays proportional to the
    depth walked, whatever the width.
    """
    size = 0
    # one iterator over (key, child) per open container, with the children's depth and path
    stack: list[tuple[Iterator[tuple[str | int, object]], int, _Path, bool]] = []
    item, depth, path = value, 0, None
    while True:
        if isinstance(item, Mapping | list | tuple):
            if depth + 1 > max_depth:
                return f"nested deeper than {max_depth} levels (at {_show(path)})"
            size += 2 + max(0, len(item) - 1)  # brackets and commas
            if isinstance(item, Mapping):
                size += len(item)  # colons
                pairs: Iterator[tuple[str | int, object]] = (
                    (k if isinstance(k, str) else str(k), v) for k, v in item.items()
                )
                stack.append((pairs, depth + 1, path, True))
            else:
                stack.append((enumerate(item), depth + 1, path, False))
        else:
            size += _scalar_bytes(item)
        if size > max_bytes:
            return f"larger than {max_bytes} bytes as JSON (at {_show(path)})"
        while stack:
            pairs, depth, parent, is_mapping = stack[-1]
            step = next(pairs, None)
            if step is None:
                stack.pop()
                continue
            key, item = step
            if is_mapping:
                size += len(str(key)) + 2
            path = (parent, key)
            break
        else:
            return None


def _repr(value: object) -> str:
    try:
        text = repr(value)
    except Exception as e:  # a broken __repr__ is the implementation's, not the kit's
        text = f"<{type(value).__name__}: repr failed: {type(e).__name__}>"
    return text if len(text) <= REPR_CHARS else text[:REPR_CHARS] + "..."


def _leaf(value: object) -> Any:
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int):
        return value if value.bit_length() <= 4000 else _repr(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    return _repr(value)


def to_json_safe(value: object, *, max_depth: int = DEFAULT_MAX_DEPTH) -> Any:
    """A copy of ``value`` that strict JSON can encode; non-JSON parts become their ``repr``.

    Mapping keys become strings, tuples lists; a container met again inside
    itself becomes ``"<cycle>"``, one past ``max_depth`` ``"<deeper than N
    levels>"``. Never recursive, whatever the depth.
    """
    if not isinstance(value, Mapping | list | tuple):
        return _leaf(value)
    root: Any = {} if isinstance(value, Mapping) else []
    # (source container, its copy, depth, ids of the containers above it)
    stack: list[tuple[Any, Any, int, frozenset[int]]] = [(value, root, 1, frozenset({id(value)}))]
    while stack:
        source, copy, depth, above = stack.pop()
        pairs = (
            ((str(k) if not isinstance(k, str) else k, v) for k, v in source.items())
            if isinstance(source, Mapping)
            else enumerate(source)
        )
        for key, child in pairs:
            converted: Any
            if not isinstance(child, Mapping | list | tuple):
                converted = _leaf(child)
            elif id(child) in above:
                converted = "<cycle>"
            elif depth >= max_depth:
                converted = f"<deeper than {max_depth} levels>"
            else:
                converted = {} if isinstance(child, Mapping) else []
                stack.append((child, converted, depth + 1, above | {id(child)}))
            if isinstance(copy, dict):
                copy[key] = converted
            else:
                copy.append(converted)
    return root


def non_json(value: object, max_depth: int = DEFAULT_MAX_DEPTH) -> str | None:
    """Where ``value`` stops being JSON, as a sentence (``None``: it is all JSON).

    JSON here is what :func:`to_json_safe` keeps unchanged: mappings with string
    keys, lists and tuples, strings, finite numbers, booleans and ``None``; a
    cycle or a level past ``max_depth`` is not. Iterative, like the rest.
    """
    try:  # the fast path: the C encoder accepts the common case at once
        json.dumps(value, allow_nan=False)
        return None
    except (TypeError, ValueError, RecursionError):
        pass
    stack: list[tuple[object, int, _Path, frozenset[int]]] = [(value, 0, None, frozenset())]
    while stack:
        item, depth, path, above = stack.pop()
        if isinstance(item, Mapping | list | tuple):
            if id(item) in above:
                return f"a cycle at {_show(path)}"
            if depth + 1 > max_depth:
                return f"nested deeper than {max_depth} levels (at {_show(path)})"
            inside = above | {id(item)}
            if isinstance(item, Mapping):
                for key, child in item.items():
                    if not isinstance(key, str):
                        return f"a non-string key {_repr(key)} at {_show(path)}"
                    stack.append((child, depth + 1, (path, key), inside))
            else:
                for index, child in enumerate(item):
                    stack.append((child, depth + 1, (path, index), inside))
        elif not (
            item is None
            or isinstance(item, bool | str | int)
            or (isinstance(item, float) and math.isfinite(item))
        ):
            return f"{_repr(item)} ({type(item).__name__}, not JSON) at {_show(path)}"
    return None


def counterexample_text(case: Mapping[str, Any], max_bytes: int = COUNTEREXAMPLE_MAX_BYTES) -> str:
    """A counterexample case as indented JSON that always encodes and stays bounded.

    Non-JSON parts become their ``repr`` (:func:`to_json_safe`); a ``trace``
    larger than ``max_bytes`` is replaced by ``None``, and ``traceOmitted``
    says why (the scenario, which replays the case, is always kept).
    """
    safe = to_json_safe(case)
    trace = safe.get("trace")
    breach = None if trace is None else check_bounds(trace, max_bytes=max_bytes)
    if breach is not None:
        safe["trace"] = None
        safe["traceOmitted"] = f"the trace was left out: {breach}"
    return json.dumps(safe, indent=2, sort_keys=True, allow_nan=False) + "\n"
