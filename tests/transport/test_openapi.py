"""The OpenAPI document of the HTTP binding is generated from the protocol's JSON Schemas."""

from __future__ import annotations

import json
from typing import Any

import pytest

from conformance.scenario.schema import SCHEMA_DIR
from conformance.transport.openapi import OPENAPI_PATH, build, main, render


def test_the_committed_document_is_the_generated_one() -> None:
    assert OPENAPI_PATH.read_text(encoding="utf-8") == render(), (
        "fixtures/schema/openapi.json is stale: run python -m conformance.transport.openapi"
    )
    assert main(["--check"]) == 0


def test_check_notices_a_stale_document(tmp_path: Any) -> None:
    stale = tmp_path / "openapi.json"
    stale.write_text("{}\n")
    assert main(["--check", "-o", str(stale)]) == 1
    assert main(["-o", str(stale)]) == 0
    assert stale.read_text() == render()


def test_it_is_valid_openapi_3_1() -> None:
    validator = pytest.importorskip("openapi_spec_validator", reason="pip install -e '.[dev]'")
    document = build()
    assert document["openapi"].startswith("3.1")
    validator.validate(document)


def _back(node: Any, owner: str) -> Any:
    """A component with its refs mapped back to the JSON Schema files' spelling."""
    if isinstance(node, list):
        return [_back(v, owner) for v in node]
    if not isinstance(node, dict):
        return node
    out = {k: _back(v, owner) for k, v in node.items()}
    if isinstance(node.get("$ref"), str):
        target = node["$ref"].removeprefix("#/components/schemas/")
        file, _, name = target.partition(".")
        prefix = "" if file == owner else f"{file}.schema.json"
        out["$ref"] = f"{prefix}#/$defs/{name}" if name else f"{file}.schema.json"
    return out


@pytest.mark.parametrize("source", ["protocol", "scenario", "trace"])
def test_every_definition_is_embedded_unchanged(source: str) -> None:
    schemas = build()["components"]["schemas"]
    original = json.loads((SCHEMA_DIR / f"{source}.schema.json").read_text())
    for name, definition in original["$defs"].items():
        assert _back(schemas[f"{source}.{name}"], source) == definition, name
    if source != "protocol":
        root = {k: v for k, v in original.items() if k not in ("$schema", "$id", "$defs")}
        assert _back(schemas[source], source) == root


def test_every_body_is_a_protocol_message_and_every_ref_resolves() -> None:
    document = build()
    schemas = document["components"]["schemas"]
    bodies = {
        path: operation["requestBody"]["content"]["application/json"]["schema"]["$ref"]
        for path, item in document["paths"].items()
        for operation in item.values()
        if "requestBody" in operation
    }
    assert bodies == {
        "/start": "#/components/schemas/protocol.start",
        "/run": "#/components/schemas/protocol.run",
        "/stop": "#/components/schemas/protocol.stop",
    }

    def refs(node: Any) -> list[str]:
        if isinstance(node, dict):
            found = [node["$ref"]] if isinstance(node.get("$ref"), str) else []
            return found + [r for v in node.values() for r in refs(v)]
        if isinstance(node, list):
            return [r for v in node for r in refs(v)]
        return []

    for ref in refs(document):
        assert ref.startswith("#/components/schemas/"), ref
        assert ref.removeprefix("#/components/schemas/").split("/")[0] in schemas, ref
