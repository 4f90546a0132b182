"""Decoding a harness's message: the depth limit holds exactly, and the fast path never lies."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.scenario.bounds import check_bounds
from conformance.transport.protocol import OutOfBounds, loads_bounded

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(alphabet='[]{}"\\ab'),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=40,
)


@settings(max_examples=300, derandomize=True, database=None)
@given(JSON_VALUES, st.integers(min_value=1, max_value=8))
def test_loads_bounded_refuses_exactly_what_is_too_deep(value: Any, max_depth: int) -> None:
    text = json.dumps(value)
    breach = check_bounds(value, max_depth=max_depth, max_bytes=len(text) * 10 + 100)
    if breach is None:
        assert loads_bounded(text, max_depth) == value
    else:
        with pytest.raises(OutOfBounds, match=f"nested deeper than {max_depth} levels"):
            loads_bounded(text, max_depth)


@pytest.mark.parametrize("depth", [1, 199, 200])
def test_the_default_limit_is_200_levels(depth: int) -> None:
    assert loads_bounded("[" * depth + "]" * depth) is not None
    with pytest.raises(OutOfBounds):
        loads_bounded("[" * (depth + 201) + "]" * (depth + 201))


def test_brackets_inside_strings_do_not_count() -> None:
    text = json.dumps({"s": "[" * 500 + '\\"' + "{" * 500})
    assert loads_bounded(text, 1) == json.loads(text)


def test_not_json_is_a_value_error_not_out_of_bounds() -> None:
    with pytest.raises(ValueError) as caught:
        loads_bounded("[[[")
    assert not isinstance(caught.value, OutOfBounds)
    with pytest.raises(ValueError, match="NaN is not JSON"):
        loads_bounded("[NaN]")


@pytest.mark.parametrize(
    "bad",
    [float("nan"), object(), {1j}],
    ids=["nan", "an-object", "a-set"],
)
def test_an_answer_json_has_no_form_for_is_errored_not_a_crash(bad: Any) -> None:
    """A served in-process adapter whose trace holds a value JSON cannot hold answers
    ``errored`` for that scenario (the session goes on), never crashes the harness."""
    from conformance.transport.protocol import encode_answer

    line = encode_answer({"type": "trace", "seq": 7, "trace": {"events": [{"v": bad}]}})
    answer = json.loads(line)
    assert answer["type"] == "errored" and answer["seq"] == 7
    assert "not strict JSON" in answer["context"]
    cyclic: dict[str, Any] = {"type": "trace", "seq": 8}
    cyclic["trace"] = cyclic
    assert json.loads(encode_answer(cyclic))["type"] == "errored"
