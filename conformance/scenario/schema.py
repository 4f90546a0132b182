"""Scenarios and traces as data: loading, schema validation, clear errors.

A malformed scenario or trace is a :class:`FixtureError` naming the file and
the JSON path of the first problem -- never a stack trace from deep inside a
predicate.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Hashable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from functools import cache, wraps
from importlib import resources
from pathlib import Path
from typing import Any, Final, TypeVar, cast

import jsonschema
import jsonschema_rs
from jsonschema.validators import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

__all__ = [
    "FIXTURES",
    "LISTENER_KEYS",
    "SCHEMA_DIR",
    "FixtureError",
    "calls_of",
    "conforms",
    "listener_lifecycle",
    "listeners_of",
    "load_json",
    "mutates_registry",
    "once_per_judgement",
    "one_judgement",
    "schema",
    "scripts_of",
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


#: Where a ``$ref`` points: (schema file name without ``.schema.json``, JSON pointer).
_Target = tuple[str, str]


@cache
def _document(path: Path) -> Any:
    """A schema file, read once (shared: nothing may change it)."""
    return json.loads(path.read_text(encoding="utf-8"))


def _schema_files() -> list[Path]:
    return sorted(SCHEMA_DIR.glob("*.schema.json"))


def _root(name: str) -> tuple[Any, _Target]:
    """(the document to validate against, where it starts) for a :func:`schema` name: a
    file, or ``file#definition`` (a reference into that file's ``$defs``)."""
    file, _, definition = name.partition("#")
    document = _document(SCHEMA_DIR / f"{file}.schema.json")
    if not definition:
        return document, (file, "")
    return {"$ref": f"{document['$id']}#/$defs/{definition}"}, (file, f"/$defs/{definition}")


@cache
def _schema_registry() -> Registry[Any]:
    """Every schema under ``fixtures/schema``, so one may ``$ref`` another by file name."""
    resources = []
    for path in _schema_files():
        document = _document(path)
        Draft202012Validator.check_schema(document)
        resources.append((document["$id"], Resource.from_contents(document, DRAFT202012)))
    return Registry().with_resources(resources)


@cache
def schema(name: str) -> Draft202012Validator:
    """The validator for ``fixtures/schema/<name>.schema.json``.

    ``name`` may point into a document's ``$defs``: ``protocol#started``.
    """
    return Draft202012Validator(_root(name)[0], registry=_schema_registry())


def _refs(node: Any) -> Iterator[str]:
    """Every ``$ref`` under ``node``."""
    if isinstance(node, Mapping):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                yield value
            else:
                yield from _refs(value)
    elif isinstance(node, list):
        for item in node:
            yield from _refs(item)


def _target(ref: str, file: str) -> _Target | None:
    """Where ``ref`` (written in schema ``file``) points, or None outside fixtures/schema."""
    where, _, pointer = ref.partition("#")
    if not where:
        return file, pointer
    name = where.rsplit("/", 1)[-1]
    if not name.endswith(".schema.json") or not (SCHEMA_DIR / name).is_file():
        return None
    return name.removesuffix(".schema.json"), pointer


def _at(file: str, pointer: str) -> Any:
    node: Any = _document(SCHEMA_DIR / f"{file}.schema.json")
    for part in filter(None, pointer.split("/")):
        node = node[part.replace("~1", "/").replace("~0", "~")]
    return node


def _bounded(start: _Target) -> bool:
    """Does the schema at ``start`` reach no reference cycle (and nothing outside
    fixtures/schema)? Then validating descends at most as deep as the schema is."""
    path: list[_Target] = []
    done: set[_Target] = set()

    def visit(node: _Target) -> bool:
        if node in done:
            return True
        if node in path:
            return False
        path.append(node)
        for ref in _refs(_at(*node)):
            target = _target(ref, node[0])
            if target is None or not visit(target):
                return False
        path.pop()
        done.add(node)
        return True

    return visit(start)


@cache
def _fast(name: str) -> Any:
    """jsonschema-rs's validator of ``name`` (see :func:`schema`), or None when the schema
    reaches a reference cycle: jsonschema-rs recurses on the native stack, and a cycle lets a
    deep document overflow it (a crash, not an error). Without one, it descends no deeper
    than the schema, whatever the document."""
    document, start = _root(name)
    if not _bounded(start):
        return None
    registry = jsonschema_rs.Registry([(d["$id"], d) for d in map(_document, _schema_files())])
    return jsonschema_rs.validator_for(document, registry=registry)


def conforms(document: Any, name: str) -> bool:
    """Is ``document`` valid against schema ``name``? The fast check of every trace and
    scenario: jsonschema-rs answers "valid" alone; "invalid", an object it cannot read
    (a Mapping that is no dict, say), or a schema with a reference cycle go to
    python-jsonschema, which has the last word (and :func:`validate` the message).
    tests/kit/test_schema_fast.py proves the two agree."""
    fast = _fast(name)
    if fast is not None:
        try:
            if fast.is_valid(document):
                return True
        except (ValueError, TypeError, OverflowError):
            pass
    return bool(schema(name).is_valid(document))


def _json_path(error: jsonschema.ValidationError) -> str:
    out = "$"
    for part in error.absolute_path:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


def validate(document: Any, name: str, source: str = "<memory>") -> None:
    """Raise FixtureError for the first (most relevant) schema violation."""
    if conforms(document, name):
        return
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


#: What is worked out once per judgement (:func:`one_judgement`): (the function, the ids of
#: its arguments, its keywords) -> (the arguments, kept alive so that no id is reused, the value).
_REMEMBERED: ContextVar[dict[Hashable, tuple[tuple[Any, ...], Any]] | None] = ContextVar(
    "remembered", default=None
)


@contextmanager
def one_judgement() -> Iterator[None]:
    """One judgement: within, every function marked :func:`once_per_judgement` (``scripts_of``
    among them) works out its answer once per distinct arguments (the judge asks them of one
    unchanging scenario and trace dozens of times); their callers only read what they return."""
    token = _REMEMBERED.set({})
    try:
        yield
    finally:
        _REMEMBERED.reset(token)


F = TypeVar("F", bound=Callable[..., Any])


def once_per_judgement(fn: F) -> F:
    """``fn``'s answer remembered within :func:`one_judgement`, by the identity of its
    positional arguments and the value of its keywords (outside: worked out every time). For
    a pure function of objects the judgement never changes (the scenario, the trace, a call's
    view); what it returns is shared, so it is only read."""

    @wraps(fn)
    def remembering(*args: Any, **kwargs: Any) -> Any:
        remembered = _REMEMBERED.get()
        if remembered is None:
            return fn(*args, **kwargs)
        key = (fn, *map(id, args), *sorted(kwargs.items())) if kwargs else (fn, *map(id, args))
        known = remembered.get(key)
        if known is None:
            known = remembered[key] = (args, fn(*args, **kwargs))
        return known[1]

    return cast(F, remembering)


@once_per_judgement
def scripts_of(scenario: Mapping[str, Any]) -> list[list[Mapping[str, Any]]]:
    """Every script of a scenario: listeners', tools' and the approval service's."""
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
