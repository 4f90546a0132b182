"""Scenarios and traces as data: loading, schema validation, clear errors.

A malformed scenario or trace is a :class:`FixtureError` naming the file and
the JSON path of the first problem -- never a stack trace from deep inside a
predicate.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, Final

import jsonschema
from jsonschema.validators import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

__all__ = [
    "FIXTURES",
    "LISTENER_KEYS",
    "SCHEMA_DIR",
    "FixtureError",
    "calls_of",
    "listener_lifecycle",
    "listeners_of",
    "load_json",
    "mutates_registry",
    "schema",
    "scripts_of",
    "scripts_remembered",
    "validate",
]

# The scenario keys that hold ordered listeners, one per pipeline stage.
LISTENER_KEYS = ("preExecute", "guards", "wrappers", "postExecute", "observers", "codeDispatchLog")
# The scripted callables of a tool spec.
TOOL_SCRIPT_KEYS = ("execute", "finalizeContent", "isConcurrencySafe")

# Everything the kit reads at run time ships inside the package, under
# ``conformance/fixtures`` (the repository's top-level ``fixtures`` is a link to it).
FIXTURES: Final = Path(str(resources.files("conformance") / "fixtures"))
SCHEMA_DIR: Final = FIXTURES / "schema"


class FixtureError(Exception):
    """A scenario, trace or fixture file is malformed. Names the file and JSON path."""

    def __init__(self, source: str, path: str, message: str) -> None:
        super().__init__(f"{source}: at {path}: {message}")
        self.source = source
        self.path = path
        self.message = message


@cache
def _schema_registry() -> Registry[Any]:
    """Every schema under ``fixtures/schema``, so one may ``$ref`` another by file name."""
    resources = []
    for path in sorted(SCHEMA_DIR.glob("*.schema.json")):
        document = json.loads(path.read_text(encoding="utf-8"))
        Draft202012Validator.check_schema(document)
        resources.append((document["$id"], Resource.from_contents(document, DRAFT202012)))
    return Registry().with_resources(resources)


@cache
def schema(name: str) -> Draft202012Validator:
    """The validator for ``fixtures/schema/<name>.schema.json``.

    ``name`` may point into a document's ``$defs``: ``protocol#started``.
    """
    file, _, definition = name.partition("#")
    document = json.loads((SCHEMA_DIR / f"{file}.schema.json").read_text(encoding="utf-8"))
    if definition:
        document = {"$ref": f"{document['$id']}#/$defs/{definition}"}
    return Draft202012Validator(document, registry=_schema_registry())


def _json_path(error: jsonschema.ValidationError) -> str:
    out = "$"
    for part in error.absolute_path:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


def validate(document: Any, name: str, source: str = "<memory>") -> None:
    """Raise FixtureError for the first (most relevant) schema violation."""
    errors = list(schema(name).iter_errors(document))
    if errors:
        error = jsonschema.exceptions.best_match(errors)
        raise FixtureError(source, _json_path(error), error.message)


def load_json(path: str | Path, name: str | None = None) -> Any:
    """Read a JSON file; validate it against schema ``name`` when given."""
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise FixtureError(source, "$", f"cannot read: {e.strerror}") from None
    except UnicodeDecodeError as e:
        raise FixtureError(source, f"byte {e.start}", "not UTF-8 text") from None
    try:
        document = json.loads(text)
    except json.JSONDecodeError as e:
        raise FixtureError(
            source, f"line {e.lineno} column {e.colno}", f"not JSON: {e.msg}"
        ) from None
    except RecursionError:
        raise FixtureError(source, "$", "nested too deeply to read") from None
    if name is not None:
        validate(document, name, source)
    return document


def calls_of(scenario: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """Every model-direct call of a scenario, in action order."""
    out: list[Mapping[str, Any]] = []
    for action in scenario.get("actions", []):
        if "call" in action:
            out.append(action["call"])
        elif "batch" in action:
            out.extend(action["batch"])
    return out


def listeners_of(scenario: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """Every listener of every stage (pre-execute, guards, wrappers, ...), in key order."""
    return [entry for key in LISTENER_KEYS for entry in scenario.get(key, [])]


def listener_lifecycle(scenario: Mapping[str, Any]) -> int | None:
    """The index of the first action that registers or disposes a listener, a guard or the
    timeout policy (an action with ``of``; PIPE-6), or -1 when a listener waits for such an
    action (``registered: false``); None when the set-up's registrations never change."""
    for index, action in enumerate(scenario.get("actions", [])):
        if ("register" in action or "dispose" in action) and "of" in action:
            return index
    if any(entry.get("registered") is False for entry in listeners_of(scenario)):
        return -1
    return None


_SCRIPTS: ContextVar[dict[int, tuple[Mapping[str, Any], list[list[Mapping[str, Any]]]]] | None] = (
    ContextVar("scripts_of", default=None)
)


@contextmanager
def scripts_remembered() -> Iterator[None]:
    """Within: :func:`scripts_of` collects a scenario's scripts once (the judge asks it of
    one unchanging scenario a dozen times); its callers only read what it returns."""
    token = _SCRIPTS.set({})
    try:
        yield
    finally:
        _SCRIPTS.reset(token)


def scripts_of(scenario: Mapping[str, Any]) -> list[list[Mapping[str, Any]]]:
    """Every script of a scenario: listeners', tools' and the approval service's."""
    remembered = _SCRIPTS.get()
    if remembered is None:
        return _scripts_of(scenario)
    known = remembered.get(id(scenario))
    if known is None or known[0] is not scenario:
        known = remembered[id(scenario)] = (scenario, _scripts_of(scenario))
    return known[1]


def _scripts_of(scenario: Mapping[str, Any]) -> list[list[Mapping[str, Any]]]:
    scripts = [list(entry["steps"]) for entry in listeners_of(scenario)]
    scripts += [list(t.get(k, [])) for t in scenario.get("tools", []) for k in TOOL_SCRIPT_KEYS]
    approval = scenario.get("approval")
    if approval is not None:
        scripts.append(list(approval["steps"]))
        scripts += [list(steps) for steps in approval.get("byCall", {}).values()]
    return scripts


def mutates_registry(scenario: Mapping[str, Any]) -> bool:
    """True when a script registers or disposes a tool while a call is in flight."""
    return any(
        "register" in step or "dispose" in step
        for script in scripts_of(scenario)
        for step in script
    )
