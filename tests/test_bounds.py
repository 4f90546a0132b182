"""conformance.scenario.bounds: untrusted values are measured and copied without recursion."""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest

from conformance.scenario.bounds import DEFAULT_MAX_DEPTH, check_bounds, to_json_safe


def nested(depth: int) -> Any:
    value: Any = []
    for _ in range(depth - 1):
        value = [value]
    return value


def test_within_bounds_is_none() -> None:
    trace = {"actions": [{"result": {"ok": [1, 2.5, "x", None, True]}}], "events": []}
    assert check_bounds(trace) is None
    assert check_bounds(nested(DEFAULT_MAX_DEPTH)) is None
    assert check_bounds("scalar", max_depth=0) is None


def test_depth_counts_containers() -> None:
    assert check_bounds(nested(3), max_depth=3) is None
    breach = check_bounds(nested(4), max_depth=3)
    assert breach == "nested deeper than 3 levels (at $[0][0][0])"
    assert check_bounds({"a": {"b": {}}}, max_depth=2) == "nested deeper than 2 levels (at $.a.b)"


def test_far_deeper_than_the_interpreter_can_recurse() -> None:
    deep = nested(sys.getrecursionlimit() * 20)
    breach = check_bounds(deep)
    assert breach is not None and breach.startswith(f"nested deeper than {DEFAULT_MAX_DEPTH}")
    assert "..." in breach  # the path is shortened


def test_size_is_the_compact_json_length() -> None:
    value = {"key": ["abc", 12, None, True, False, -3]}
    exact = len(json.dumps(value, separators=(",", ":")))
    assert check_bounds(value, max_bytes=exact) is None
    assert check_bounds(value, max_bytes=exact - 1) is not None


def test_size_breach_names_where_it_happened() -> None:
    big = {"events": [{"payload": "x" * 1000}]}
    assert check_bounds(big, max_bytes=500) == (
        "larger than 500 bytes as JSON (at $.events[0].payload)"
    )


def test_a_huge_value_stops_at_the_limit() -> None:
    wide = [0] * 5_000_000
    assert check_bounds(wide, max_bytes=1000) == "larger than 1000 bytes as JSON (at $)"
    huge_int = 10**100_000
    assert check_bounds(huge_int, max_bytes=1000) is not None


def test_a_cycle_is_too_deep_not_endless() -> None:
    loop: list[Any] = []
    loop.append(loop)
    assert check_bounds(loop, max_depth=10) == (
        "nested deeper than 10 levels (at $[0][0][0][0][0][0][0][0][0][0])"
    )


def test_to_json_safe_keeps_json_and_reprs_the_rest() -> None:
    class Thing:
        def __repr__(self) -> str:
            return "<thing>"

    value = {"a": (1, 2), 3: {"b": float("nan")}, "c": Thing(), "d": {1}}
    safe = to_json_safe(value)
    assert safe == {"a": [1, 2], "3": {"b": "nan"}, "c": "<thing>", "d": "{1}"}
    json.dumps(safe, allow_nan=False)
    assert to_json_safe(float("inf")) == "inf"
    assert to_json_safe(b"\xff") == "b'\\xff'"


def test_to_json_safe_survives_broken_reprs_cycles_and_depth() -> None:
    class Broken:
        def __repr__(self) -> str:
            raise RuntimeError("no")

    loop: dict[str, Any] = {}
    loop["self"] = loop
    assert to_json_safe(loop) == {"self": "<cycle>"}
    assert to_json_safe([Broken()]) == ["<Broken: repr failed: RuntimeError>"]
    deep = to_json_safe(nested(100_000), max_depth=5)
    assert deep == [[[[["<deeper than 5 levels>"]]]]]
    json.dumps(to_json_safe(nested(100_000)), allow_nan=False)  # no RecursionError
    shared = [1]
    assert to_json_safe([shared, shared]) == [[1], [1]]  # shared is not a cycle


@pytest.mark.parametrize("value", [None, True, 0, -1.5, "text", [], {}])
def test_to_json_safe_is_identity_on_json(value: Any) -> None:
    assert to_json_safe(value) == value
    assert type(to_json_safe(value)) is type(value)


def test_a_long_repr_is_shortened() -> None:
    class Long:
        def __repr__(self) -> str:
            return "x" * 10_000

    text = to_json_safe(Long())
    assert isinstance(text, str) and len(text) < 300 and text.endswith("...")
