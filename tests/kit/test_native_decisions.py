"""The reference adapter hands a scripted decision to the registry as its host constructor built
it (or as plain data), and a constructor that builds anything else -- nothing at all included --
is a mismatch, never masked by the scripted data (``native_decision``)."""

from __future__ import annotations

from typing import Any

import pytest

import reference
from conformance.adapters.reference import DecisionMismatch, native_decision

WELL_FORMED: list[tuple[str, dict[str, Any]]] = [
    ("allow", {"kind": "allow"}),
    ("deny", {"kind": "deny", "reason": "no"}),
    ("ask", {"kind": "ask", "reason": "why"}),
    ("accept", {"kind": "accept", "content": [{"type": "text", "text": "t"}]}),
    ("block", {"kind": "block", "feedback": "no"}),
]


@pytest.mark.parametrize(("constructor", "decision"), WELL_FORMED, ids=[c for c, _ in WELL_FORMED])
def test_a_constructor_that_builds_nothing_is_a_mismatch(
    constructor: str, decision: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert native_decision(decision) == decision  # as built, or as data: the same mapping
    monkeypatch.setattr(reference, constructor, lambda *args, **kwargs: None)
    with pytest.raises(DecisionMismatch):
        native_decision(decision)


def test_a_decision_no_constructor_builds_passes_as_scripted() -> None:
    near_miss = {"kind": "Allow"}
    assert native_decision(near_miss) == near_miss
    stray = {"kind": "deny", "reason": "r", "extra": 1}
    assert native_decision(stray) == stray
