"""Lossless JSON: materialize once, freeze deeply.

Everything that crosses a trust boundary of the pipeline -- a call's arguments,
a body's value, ``meta``, a replacement value, a finalizer's content, deferred
contexts -- goes through :func:`materialize` exactly once (PIPE-2, OUT-1, OUT-5).

"Frozen" in Python means: JSON objects become :class:`FrozenDict` (a
``Mapping`` with no mutators) and JSON arrays become ``tuple``. A mutation
attempt therefore fails loudly: ``d["k"] = v`` raises ``TypeError``, ``t.append``
raises ``AttributeError``. :func:`thaw` gives back plain ``dict``/``list`` copies
for serialization or for a caller that wants a private mutable copy.

Lossless JSON is: ``None``, ``bool``, ``int``, finite ``float``, ``str``, objects
with ``str`` keys and arrays of lossless JSON, without cycles. Anything else
(NaN, +-Infinity, non-string keys, sets, bytes, functions, arbitrary objects,
cycles) is rejected at the source with :class:`NotLosslessJSON` naming the path.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping
from typing import Any, NoReturn

__all__ = ["FrozenDict", "NotLosslessJSON", "dumps", "materialize", "thaw"]


class NotLosslessJSON(ValueError):
    """A value is not lossless JSON. ``path`` is a JSONPath-like location."""

    def __init__(self, path: str, why: str) -> None:
        super().__init__(f"{path}: {why}")
        self.path = path
        self.why = why


class FrozenDict(Mapping[str, Any]):
    """A read-only JSON object. Equal to any mapping with the same items."""

    __slots__ = ("_d",)
    _d: dict[str, Any]

    def __init__(self, items: Mapping[str, Any] | None = None) -> None:
        object.__setattr__(self, "_d", dict(items or {}))

    def __getitem__(self, key: str) -> Any:
        return self._d[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._d)

    def __len__(self) -> int:
        return len(self._d)

    def __repr__(self) -> str:
        return f"FrozenDict({self._d!r})"

    # A good citizen of the host language: copies and pickles are equal frozen values.
    def __reduce__(self) -> tuple[type[FrozenDict], tuple[dict[str, Any]]]:
        return (FrozenDict, (self._d,))

    def __copy__(self) -> FrozenDict:
        return self  # immutable: a copy is the value itself

    def __deepcopy__(self, memo: dict[int, Any]) -> FrozenDict:
        return self  # deep-frozen: nothing inside it can change either

    def __setattr__(self, name: str, value: Any) -> NoReturn:
        raise AttributeError(f"FrozenDict is immutable (attempted to set {name!r})")

    def __setitem__(self, key: str, value: Any) -> NoReturn:
        raise TypeError(f"FrozenDict is immutable (attempted to set key {key!r})")

    def __delitem__(self, key: str) -> NoReturn:
        raise TypeError(f"FrozenDict is immutable (attempted to delete key {key!r})")


def materialize(value: Any, path: str = "$") -> Any:
    """Snapshot ``value`` as deep-frozen lossless JSON, or raise NotLosslessJSON."""
    return _materialize(value, path, set())


def _materialize(value: Any, path: str, active: set[int]) -> Any:
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise NotLosslessJSON(path, f"{value!r} is not a finite number")
        return float(value)
    if isinstance(value, (dict, FrozenDict)):
        if id(value) in active:
            raise NotLosslessJSON(path, "cycle")
        active.add(id(value))
        try:
            out: dict[str, Any] = {}
            for key, item in value.items():
                if not isinstance(key, str):
                    raise NotLosslessJSON(path, f"non-string key {key!r}")
                out[key] = _materialize(item, f"{path}.{key}", active)
        finally:
            active.discard(id(value))
        return FrozenDict(out)
    if isinstance(value, (list, tuple)):
        if id(value) in active:
            raise NotLosslessJSON(path, "cycle")
        active.add(id(value))
        try:
            return tuple(_materialize(item, f"{path}[{i}]", active) for i, item in enumerate(value))
        finally:
            active.discard(id(value))
    raise NotLosslessJSON(path, f"{type(value).__name__} is not JSON")


def thaw(value: Any) -> Any:
    """A plain, mutable, JSON-serializable deep copy of frozen (or plain) JSON."""
    if isinstance(value, Mapping):
        return {k: thaw(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [thaw(v) for v in value]
    return value


def dumps(value: Any) -> str:
    """Canonical JSON text (sorted keys, compact) of frozen or plain JSON."""
    return json.dumps(thaw(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
