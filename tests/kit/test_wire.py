"""The one wire projection of DEF-2 (conformance.seam.wire): what it drops, what it keeps."""

from __future__ import annotations

from conformance.seam.wire import model_entry


def test_the_envelope_is_dropped_and_names_mapped() -> None:
    schema = {"type": "object"}
    entry = {"type": "function", "name": "t", "inputSchema": schema, "strict": False}
    out = model_entry(entry, {"inputSchema": "parameters"})
    assert out == {"name": "t", "parameters": schema}
    assert out["parameters"] is schema  # the framework's own object, not a copy


def test_an_envelope_key_with_definition_data_is_kept() -> None:
    # a ``type`` other than the discriminator, or a non-boolean ``strict``, is judged
    out = model_entry({"name": "t", "type": "custom", "strict": {"x-owner": "me"}})
    assert out == {"name": "t", "type": "custom", "strict": {"x-owner": "me"}}


def test_every_other_key_is_kept() -> None:
    out = model_entry({"name": "t", "description": "d", "parameters": {}, "x-owner": "host"})
    assert "x-owner" in out
