"""The fast schema check (jsonschema-rs) never says "valid" where python-jsonschema says not.

``conforms`` lets jsonschema-rs answer "valid" alone, so the two validators must agree on
everything a run may hand them. The documents: the reference's traces of bundled fixtures
and those fixtures' scenarios, each with every node systematically broken in turn (its
value replaced by each JSON kind, a key deleted, an unknown key added).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest

from conformance.adapters.reference import ReferenceAdapter
from conformance.scenario import schema as schemas
from conformance.scenario.schema import FIXTURES, FixtureError, conforms, schema, validate

#: Fixtures whose scenario and trace cover most event, answer and action shapes.
FIXTURES_USED = [
    "rules/PRE-3",
    "rules/PIPE-5",
    "rules/CODE-3",
    "rules/CONC-1",
    "rules/DEF-6",
]
KINDS: list[Any] = [None, 7, 1.5, "x", True, [], {}, [{"stage": 1}], {"zz": None}]


def _paths(node: Any, here: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield here
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _paths(value, (*here, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _paths(value, (*here, index))


def _broken(document: Any) -> Iterator[Any]:
    """``document`` with one node changed, for every node and every change."""
    for path in _paths(document):
        for kind in KINDS:
            yield _set(document, path, lambda _old, k=kind: copy.deepcopy(k))
        if path:
            yield _set(document, path[:-1], lambda parent, key=path[-1]: _without(parent, key))
        yield _set(document, path, lambda old: {**old, "zz": 1} if isinstance(old, dict) else old)


def _without(parent: Any, key: Any) -> Any:
    if isinstance(parent, dict):
        return {k: v for k, v in parent.items() if k != key}
    return [v for i, v in enumerate(parent) if i != key]


def _set(document: Any, path: tuple[Any, ...], change: Any) -> Any:
    out = copy.deepcopy(document)
    if not path:
        return change(out)
    parent = out
    for part in path[:-1]:
        parent = parent[part]
    parent[path[-1]] = change(parent[path[-1]])
    return out


def _documents() -> Iterator[tuple[str, Any]]:
    adapter = ReferenceAdapter()
    for folder in FIXTURES_USED:
        for path in sorted((FIXTURES / folder).glob("*.json"))[:1]:
            scenario = json.loads(path.read_text(encoding="utf-8"))
            yield "scenario", scenario
            yield "trace", json.loads(json.dumps(adapter.run(scenario)))


DOCUMENTS = list(_documents())


@pytest.mark.parametrize(
    ("name", "document"), DOCUMENTS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(DOCUMENTS)]
)
def test_the_fast_check_agrees_with_python_jsonschema_on_every_broken_node(
    name: str, document: Any
) -> None:
    assert conforms(document, name) and schema(name).is_valid(document)
    disagree, invalid = [], 0
    for broken in _broken(document):
        slow = schema(name).is_valid(broken)
        invalid += not slow
        if conforms(broken, name) != slow:
            disagree.append(broken)
    assert disagree == []
    assert invalid > 20  # the breaking breaks: the check is not comparing valid documents only


def test_objects_jsonschema_rs_cannot_read_go_to_python_jsonschema() -> None:
    adapter = ReferenceAdapter()
    path = sorted((FIXTURES / "rules/PRE-3").glob("*.json"))[0]
    trace = json.loads(json.dumps(adapter.run(json.loads(path.read_text(encoding="utf-8")))))
    proxied = {**trace, "events": [MappingProxyType(e) for e in trace["events"]]}
    assert conforms(proxied, "trace") == schema("trace").is_valid(proxied)
    broken = {**trace, "events": [MappingProxyType({"stage": 3})]}
    assert not conforms(broken, "trace")


def test_a_schema_with_a_reference_cycle_is_left_to_python_jsonschema(tmp_path: Path) -> None:
    # steps.schema.json reaches the draft's own metaschema (outside fixtures/schema)
    assert schemas._fast("steps") is None
    assert schemas._fast("trace") is not None and schemas._fast("scenario") is not None
    cyclic = {
        "$defs": {"a": {"items": {"$ref": "#/$defs/b"}}, "b": {"items": {"$ref": "#/$defs/a"}}}
    }
    (tmp_path / "cyclic.schema.json").write_text(json.dumps(cyclic))
    original = schemas.SCHEMA_DIR
    try:
        schemas.SCHEMA_DIR = tmp_path
        assert not schemas._bounded(("cyclic", "/$defs/a"))
        assert not schemas._bounded(("cyclic", ""))  # its $defs are walked too: no cycle anywhere
    finally:
        schemas.SCHEMA_DIR = original


def test_validate_still_names_the_path_of_the_first_problem() -> None:
    with pytest.raises(FixtureError) as raised:
        validate({"registrations": [], "actions": [], "events": [{"stage": 3}]}, "trace", "t")
    assert raised.value.path == "$.events[0].stage"
