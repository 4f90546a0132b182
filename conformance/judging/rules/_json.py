"""JSON values as the rules compare them: lossless or not, equal or not, valid or not.

Numbers compare by value but a boolean is never a number; ``{"$special": ...}``
markers stand for values JSON cannot carry; JSON Schema validity is draft
2020-12, each distinct schema compiled once. (The leading underscore keeps the
rule auto-loader away.)
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Mapping
from typing import Any

from jsonschema.validators import Draft202012Validator

from conformance.judging.model import MISSING
from conformance.scenario.schema import once_per_judgement

__all__ = [
    "args_valid",
    "copies",
    "has_special",
    "is_content",
    "masked",
    "project",
    "same_json",
    "schema_usable",
    "valid_against",
]

JSON = Any


def has_special(value: JSON) -> bool:
    """True when ``value`` holds a ``{"$special": ...}`` marker (a non-lossless value) anywhere."""
    if isinstance(value, Mapping):
        return "$special" in value or any(has_special(v) for v in value.values())
    if isinstance(value, list):
        return any(has_special(v) for v in value)
    return False


def same_json(a: JSON, b: JSON) -> bool:
    """JSON equality: numbers compare by value, but a boolean is never a number."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return set(a) == set(b) and all(same_json(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and bool(a == b)


def _validates(schema: JSON, value: JSON) -> bool | None:
    """Does ``value`` validate against ``schema`` (draft 2020-12)? None: the schema is unusable."""
    try:
        validator = _validator(json.dumps(schema, sort_keys=True))
        return bool(validator.is_valid(value))
    except Exception:
        return None


@functools.lru_cache(maxsize=512)
def _validator(canonical: str) -> Draft202012Validator:
    """A validator per distinct schema (by its canonical JSON): predicates ask about few."""
    return Draft202012Validator(json.loads(canonical))


def schema_usable(schema: JSON) -> bool:
    """Is ``schema`` a valid draft 2020-12 JSON Schema (``check_schema``)?"""
    try:
        canonical = json.dumps(schema, sort_keys=True)
    except (TypeError, ValueError):  # not JSON: checked as it is, nothing to cache by
        return _checks(schema)
    return _usable(canonical)


@functools.lru_cache(maxsize=512)
def _usable(canonical: str) -> bool:
    """:func:`schema_usable` per distinct schema (checking one walks the metaschema)."""
    return _checks(json.loads(canonical))


def _checks(schema: JSON) -> bool:
    try:
        Draft202012Validator.check_schema(schema)
    except Exception:
        return False
    return True


def valid_against(schema: JSON, value: JSON) -> bool:
    """Does ``value`` validate against the JSON Schema ``schema``? An unusable schema: False."""
    return _validates(schema, value) is True


@once_per_judgement
def args_valid(tool: Mapping[str, Any], arguments: JSON) -> bool | None:
    """Lossless and valid per ``parameters``: True / False, None when the schema is unusable."""
    if has_special(arguments):
        return False
    return _validates(tool.get("parameters", {"type": "object"}), arguments)


def is_content(value: JSON) -> bool:
    """A well-formed, lossless content list: blocks with a string ``type`` (text: ``text``)."""
    return (
        isinstance(value, list)
        and not has_special(value)
        and all(
            isinstance(b, Mapping)
            and isinstance(b.get("type"), str)
            and (b["type"] != "text" or isinstance(b.get("text"), str))
            for b in value
        )
    )


def masked(value: JSON, words: Iterable[str]) -> JSON:
    """``value`` with each non-empty word replaced by a placeholder in every string."""
    order = sorted({w for w in words if w}, key=lambda w: (-len(w), w))
    if isinstance(value, str):
        for i, word in enumerate(order):
            value = value.replace(word, f"<{i}>")
        return value
    if isinstance(value, Mapping):
        return {k: masked(v, order) for k, v in value.items()}
    if isinstance(value, list):
        return [masked(v, order) for v in value]
    return value


def _parsed(text: JSON) -> JSON:
    if not isinstance(text, str):
        return MISSING
    try:
        return json.loads(text)
    except ValueError:
        return MISSING


def project(kind: Any, args: Any, value: Any, *, content: bool, got: Any) -> bool | None:
    """Does ``got`` equal the projection ``kind`` of (args, value)? None: not computable.

    The vocabulary is scenario.schema.json's ``projection``. JSON text
    (``json``, ``args``, ``value``, ``call``, ``text`` of a non-string) is
    compared parsed, so the check does not depend on a language's number
    formatting; ``const`` and ``text`` of a string are compared exactly.
    """
    if isinstance(kind, Mapping):
        const = kind.get("const")
        if has_special(const):
            return None
        return same_json(got, const)
    if kind == "text" and isinstance(value, str):
        payload: Any = value
        exact = True
    elif kind == "args":
        payload, exact = {"args": args}, False
    elif kind == "value":
        payload, exact = {"value": value}, False
    elif kind == "call":
        payload, exact = {"args": args, "value": value}, False
    elif kind in ("json", "text"):
        payload, exact = value, False
    else:
        return None
    if content:
        if not (isinstance(got, list) and len(got) == 1 and isinstance(got[0], Mapping)):
            return False
        block = got[0]
        if set(block) != {"type", "text"} or block.get("type") != "text":
            return False
        text = block.get("text")
        if exact:
            return bool(text == payload)
        parsed = _parsed(text)
        return parsed is not MISSING and same_json(parsed, payload)
    if exact or kind in ("json", "text"):
        if exact:
            return bool(got == payload)
        parsed = _parsed(got)
        return parsed is not MISSING and same_json(parsed, payload)
    return same_json(got, payload)


def _leaves(value: JSON) -> Iterable[JSON]:
    if isinstance(value, Mapping):
        for item in value.values():
            yield from _leaves(item)
    elif isinstance(value, list):
        for item in value:
            yield from _leaves(item)
    else:
        yield value


def _parts(value: JSON) -> Iterable[JSON]:
    """``value`` and every object or array inside it."""
    if isinstance(value, (Mapping, list)):
        yield value
        for item in value.values() if isinstance(value, Mapping) else value:
            yield from _parts(item)


def copies(value: JSON, haystack: JSON, ignore: Iterable[str] = ()) -> list[str]:
    """Where ``haystack`` carries a copy of ``value``, in any form (method 7): its JSON text
    (compact, spaced, sorted or not) or a distinctive string of it inside any string; the
    value, or any non-empty object or array of it, as a nested value. Strings shorter than
    five characters, or occurring in one of ``ignore`` (the call's own id, tool, agent, the
    reason the scenario gave), are too common to prove a copy."""
    if value in ({}, [], None) or has_special(value):
        return []
    known = [w for w in ignore if isinstance(w, str)]
    texts = {
        json.dumps(value, separators=(",", ":")),
        json.dumps(value, separators=(",", ":"), sort_keys=True),
        json.dumps(value),
        json.dumps(value, sort_keys=True),
        json.dumps(value, ensure_ascii=False),
    }
    texts |= {
        leaf
        for leaf in _leaves(value)
        if isinstance(leaf, str) and len(leaf) >= 5 and not any(leaf in w for w in known)
    }
    parts = [p for p in _parts(value) if p and len(json.dumps(p)) >= 8]
    found: list[str] = []

    def walk(item: JSON, where: str) -> None:
        if any(same_json(item, part) for part in parts):
            found.append(f"{where} holds {item!r}")
            return
        if isinstance(item, str):
            hits = sorted(t for t in texts if t in item)
            if hits:
                found.append(f"{where} contains {hits[0]!r}")
        elif isinstance(item, Mapping):
            for key, inner in item.items():
                walk(inner, f"{where}.{key}")
        elif isinstance(item, list):
            for i, inner in enumerate(item):
                walk(inner, f"{where}[{i}]")

    walk(haystack, "$")
    return found
