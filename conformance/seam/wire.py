"""DEF-2 on a wire form: the kit's one projection of a provider request's tool entry.

An adapter whose ``schemas`` answer is read off what a scripted model receives (an agent
framework's provider request) maps each tool entry back to the definition's model-visible
part with :func:`model_entry`, so every adapter is judged by the same projection (SPEC
DEF-2, "On a wire form"):

* the provider's field names become the spec's (``renames``, e.g. ``{"inputSchema":
  "parameters"}``, ``{"parameters_json_schema": "parameters"}``);
* the *envelope* is dropped: keys the provider protocol defines for every function tool
  and that carry no definition data -- the discriminator ``type: "function"`` and the
  constrained-decoding flag ``strict`` (a boolean). A ``type`` or ``strict`` of any other
  value is kept, and judged;
* every other key is kept, so a host-only or unknown field that reached the wire shows;
* values are the framework's own objects, never copies: a ``schemas`` action's write goes
  into what the framework sends next time (DEF-2's copy clause judges the framework, not
  the adapter).

The JavaScript twin is ``modelEntry`` in ``harnesses/js/wire.mjs``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

__all__ = ["ENVELOPE", "model_entry"]

#: Envelope key -> the test that a value of it carries no definition data.
ENVELOPE: Final[Mapping[str, Any]] = {
    "type": lambda value: value == "function",
    "strict": lambda value: isinstance(value, bool),
}


def model_entry(
    entry: Mapping[str, Any], renames: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """``entry`` as DEF-2 judges it: renamed to the spec's keys, the envelope dropped, the
    framework's own value objects kept (an absent ``description`` stays absent)."""
    renames = renames or {}
    out: dict[str, Any] = {}
    for key, value in entry.items():
        test = ENVELOPE.get(key)
        if test is not None and test(value):
            continue
        out[renames.get(key, key)] = value
    return out
