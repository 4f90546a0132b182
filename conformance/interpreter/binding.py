"""How the kit reads, writes and builds an implementation's objects, and the JSON it records.

The interpreter (:mod:`conformance.interpreter.session`) reaches what a callable is
handed -- executions, dispatch views, run contexts, results, approval requests,
returned values, the caller's input -- only through a :class:`Binding`. Its
defaults handle attribute objects, mappings, sequences and read-only views;
an adapter overrides what its implementation shapes differently.
:func:`decode` turns a scenario's ``$special`` markers into the values they
stand for; :func:`jsonable` is the JSON form the trace records of any value.
"""

from __future__ import annotations

import collections
import datetime
import decimal
import enum
import fractions
import functools
import json
import math
import types
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar, cast

from conformance.scenario.steps import ScriptError

__all__ = ["ABSENT", "JSON", "Binding", "canonical_json", "decode", "jsonable"]

JSON = Any

#: What :meth:`Binding.request_arguments` returns for a request that shows no arguments.
ABSENT: Any = object()


def decode(value: JSON) -> Any:
    """Replace ``{"$special": ...}`` markers with the non-JSON values they stand for."""
    if isinstance(value, Mapping):
        if set(value) == {"$special"}:
            return _special(value["$special"])
        return {k: decode(v) for k, v in value.items()}
    if isinstance(value, list):
        return [decode(v) for v in value]
    return value


def _special(kind: str) -> Any:
    if kind == "nan":
        return math.nan
    if kind == "infinity":
        return math.inf
    if kind == "negative-infinity":
        return -math.inf
    if kind == "function":
        return lambda: None
    if kind == "cycle":
        cyclic: dict[str, Any] = {}
        cyclic["self"] = cyclic
        return cyclic
    if kind == "list-cycle":
        looped: list[Any] = []
        looped.append(looped)
        return looped
    if kind == "non-string-key":
        return {1: "one"}
    if kind == "host-object":
        return object()
    host = _HOST_VALUES.get(kind)  # method 4: host values a lazy JSON check lets through
    if host is not None:
        return host()
    raise ScriptError(f"unknown $special {kind!r}")


class _Plain:
    """An instance of a plain class: attributes, no JSON form (the ``class-instance`` kind)."""

    def __init__(self) -> None:
        self.x = 1


class _Text(str):
    """A subclass of str (the ``scalar-subclass`` kind)."""


class _Level(enum.IntEnum):
    ONE = 1


#: The ``$special`` host values of methods.json ``hostValues`` (its ``python`` column).
_HOST_VALUES: dict[str, Callable[[], Any]] = {
    "decimal": lambda: decimal.Decimal("0.1"),
    "fraction": lambda: fractions.Fraction(1, 3),
    "bytes": lambda: b"a",
    "datetime": lambda: datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC),
    "mapping": lambda: types.MappingProxyType({"k": 1}),
    "sequence": lambda: collections.deque([1, 2]),
    "class-instance": _Plain,
    "sparse-array": lambda: [1, ..., 3],  # Python lists have no holes: a host object in one
    # immutable at the top only: what is inside still has to be checked
    "frozen-array": lambda: (1, float("nan")),
    "scalar-subclass": lambda: _Text("a"),
    "enum-member": lambda: _Level.ONE,
}


def jsonable(value: Any) -> JSON:
    """Best-effort JSON form of whatever an implementation handed us (for the trace).

    A cycle is recorded as ``{"$special": "cycle"}`` instead of recursing forever.
    """
    return _recorded(value, set())


def _recorded(value: Any, active: set[int]) -> JSON:
    """:func:`jsonable` of ``value`` inside the containers ``active`` (by id: the path to it)."""
    shape = _per_type(_SHAPES, type(value), _shape)
    if shape == "scalar":
        return value
    if shape == "float":
        return (
            value if math.isfinite(value) else {"$special": "nan" if value != value else "infinity"}
        )
    if shape == "mapping" or shape == "sequence":
        if id(value) in active:
            return {"$special": "cycle"}
        active.add(id(value))
        try:
            if shape == "mapping":
                return {str(k): _recorded(v, active) for k, v in value.items()}
            return [_recorded(v, active) for v in value]
        finally:
            active.discard(id(value))
    to_json = getattr(value, "to_json", None)
    if callable(to_json):
        return jsonable(to_json())
    return {"$special": "host-object", "repr": type(value).__name__}


#: :func:`_shape` and :func:`_container` per type seen (see :func:`_per_type`).
_SHAPES: dict[type, str] = {}
_CONTAINERS: dict[type, bool] = {}
_TYPES_KEPT = 4096

T = TypeVar("T")


def _per_type(cache: dict[type, T], kind: type, work: Callable[[type], T]) -> T:
    """``work(kind)``, worked out once per type (the ABC checks behind it are the slow part
    of every read and of recording a trace); the cache is emptied when it outgrows a bound,
    so that a class made per scenario does not pile up in a long run."""
    known = cache.get(kind)
    if known is None:
        if len(cache) >= _TYPES_KEPT:
            cache.clear()
        known = cache[kind] = work(kind)
    return known


def _shape(kind: type) -> str:
    """How :func:`jsonable` records a value of type ``kind``: ``scalar`` as it is (None,
    bool, int, str), ``float``, ``mapping``, ``sequence`` (list, tuple), or ``other``."""
    if kind is type(None) or issubclass(kind, (bool, int, str)):
        return "scalar"
    if issubclass(kind, float):
        return "float"
    if issubclass(kind, Mapping):
        return "mapping"
    return "sequence" if issubclass(kind, (list, tuple)) else "other"


@functools.lru_cache(maxsize=1024)
def _snake_case(key: str) -> str:
    """``callId``: ``call_id`` (asked for the same few keys on every read)."""
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in key)


def canonical_json(value: JSON) -> str:
    """Canonical JSON text: sorted keys, compact separators, non-ASCII characters unescaped."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


class Binding:
    """How the kit reads, writes and builds an implementation's objects. Override what differs.

    The interpreter reaches an implementation's objects (executions, dispatch
    views, run contexts, results, approval requests, returned values) *only*
    through :meth:`read`, :meth:`write`, :meth:`delete` and :meth:`insert`,
    always with the scenario's own (camelCase) key. Their defaults handle
    mappings and sequences by item, and any other object by attribute (the
    key in snake_case: ``callId`` is ``call_id``); a read-only mapping, a
    tuple or a frozen dataclass raises, and a mutation step records the raise.
    """

    # -- generic access (every read and write of an implementation object goes through these)
    def attribute(self, key: str) -> str:
        """The attribute holding a scenario key on an attribute object (``callId``: ``call_id``)."""
        return _snake_case(key)

    def read(self, obj: Any, key: str | int) -> Any:
        """``obj``'s field or item ``key``; raises when it has none."""
        if _is_container(obj):
            return obj[key]
        if not isinstance(key, str):
            raise TypeError(f"{type(obj).__name__} has no item {key!r}")
        return getattr(obj, self.attribute(key))

    def get(self, obj: Any, key: str) -> Any:
        """:meth:`read`, or None when ``obj`` has no such field."""
        try:
            return self.read(obj, key)
        except (LookupError, AttributeError, TypeError):
            return None

    def write(self, obj: Any, key: str | int, value: Any) -> None:
        """Set ``obj``'s field or item ``key`` (an index past the end of a sequence raises)."""
        if _is_container(obj):
            obj[key] = value
        elif not isinstance(key, str):
            raise TypeError(f"{type(obj).__name__} has no item {key!r}")
        else:
            setattr(obj, self.attribute(key), value)

    def delete(self, obj: Any, key: str | int) -> None:
        """Remove ``obj``'s field or item ``key`` (a sequence closes the gap; absent: raises)."""
        if _is_container(obj):
            del obj[key]
        elif not isinstance(key, str):
            raise TypeError(f"{type(obj).__name__} has no item {key!r}")
        else:
            delattr(obj, self.attribute(key))

    def insert(self, obj: Any, index: int | None, value: Any) -> None:
        """Insert ``value`` into the sequence ``obj`` before ``index`` (None: at its end)."""
        if isinstance(obj, Mapping) or not isinstance(obj, Sequence) or isinstance(obj, str):
            raise TypeError(f"{type(obj).__name__} is not a sequence")
        obj.insert(len(obj) if index is None else index, value)  # type: ignore[attr-defined]

    def host_write(self, op: str, obj: Any, key: str | int | None, value: Any) -> None:
        """One of the host language's own writes (a ``mutate`` op of the step table's
        ``mutateOps`` other than assign, delete, add, append and splice).

        A ``container`` op (``key`` None) calls the container's own mutator on ``obj``; a
        ``key`` op writes ``key`` of the container ``obj``. Python has no ``fill`` or
        ``copyWithin``: their nearest equivalent is a slice assignment (what each does is
        in the table). Raises whatever the object raises.
        """
        target: Any = obj
        if op == "sort":
            target.sort()
        elif op == "reverse":
            target.reverse()
        elif op == "copy-within":
            target[:-1] = target[1:]
        elif op == "pop":
            target.pop()
        elif op == "shift":
            target.pop(0)
        elif op == "remove":
            target.remove(value)
        elif op == "unshift":
            target.insert(0, value)
        elif op == "extend":
            target.extend(value)
        elif op == "fill":
            target[:] = [value] * len(target)
        elif op == "clear":
            target.clear()
        elif op == "update":
            target.update(value)
        elif op == "popitem":
            target.popitem()
        elif op == "pop-key":
            target.pop(key)
        elif op == "setdefault":
            target.setdefault(key, value)
        elif op == "inplace-add":
            target[key] += value
        elif op == "inplace-or":
            target[key] |= value
        elif op == "set-attribute":
            setattr(target, self._attribute_of(target, key), value)
        elif op == "define":
            if isinstance(target, dict):
                dict.__setitem__(target, key, value)
            elif isinstance(target, list):
                list.__setitem__(target, cast("int", key), value)
            else:
                object.__setattr__(target, self._attribute_of(target, key), value)
        elif op == "set-prototype":
            # An attribute object keeps its class: Python cannot swap an instance's class for
            # one of another layout, so there the write is the binding's plain one.
            plain: type | None = (
                dict
                if isinstance(target, Mapping)
                else list
                if isinstance(target, Sequence) and not isinstance(target, (str, bytes))
                else None
            )
            if plain is not None and type(target) is not plain:
                object.__setattr__(target, "__class__", plain)
            self.write(target, key if key is not None else "", value)
        else:
            raise ScriptError(f"unknown host write {op!r}")

    def _attribute_of(self, obj: Any, key: str | int | None) -> str:
        """The attribute name a key stands for: the key itself on a container, else the
        attribute holding it (``callId``: ``call_id``)."""
        if not isinstance(key, str):
            raise TypeError(f"{type(obj).__name__} has no attribute {key!r}")
        return key if _is_container(obj) else self.attribute(key)

    def keys(self, obj: Any) -> list[str]:
        """The public field names of an object, as the scenario spells them (camelCase)."""
        if isinstance(obj, Mapping):
            return [str(k) for k in obj]
        fields = getattr(obj, "__dataclass_fields__", None)
        names = list(fields) if fields is not None else list(vars(obj))
        return [_camel(k) for k in names if not k.startswith("_")]

    def request_arguments(self, request: Any) -> Any:
        """The arguments an approval request shows its approver, as JSON (PIPE-5), or
        :data:`ABSENT` when it shows none (PRE-5). A framework whose request spells them
        otherwise (a JSON string, another field) overrides this."""
        if "arguments" not in self.keys(request):
            return ABSENT
        return jsonable(self.get(request, "arguments"))

    # -- executions (also: a dispatch view, a run context, an approval request, a log record)
    def call_id(self, execution: Any) -> str | None:
        return _text(self.get(execution, "callId"))

    def tool_name(self, execution: Any) -> str | None:
        return _text(self.get(execution, "name"))

    def agent(self, execution: Any) -> str | None:
        return _text(self.get(execution, "agent"))

    def has_parent(self, execution: Any) -> bool:
        return self.get(execution, "parent") is not None

    def arguments(self, execution: Any) -> Any:
        return self.get(execution, "arguments")

    def signal(self, execution: Any) -> Any:
        return self.get(execution, "signal")

    # -- signals
    def aborted(self, signal: Any) -> bool:
        return bool(getattr(signal, "aborted", False))

    async def wait_aborted(self, signal: Any) -> None:
        await signal.wait()

    def new_controller(self) -> Any:
        """A fresh abort controller of the implementation's own kind (a caller's, a replacement)."""
        raise NotImplementedError("the binding builds the implementation's abort controllers")

    def controller_signal(self, controller: Any) -> Any:
        return controller.signal

    def abort(self, controller: Any) -> None:
        controller.abort("aborted by the scenario")

    # -- results and decisions
    def result_json(self, result: Any) -> JSON:
        return jsonable(result)

    def authored_result(self, data: JSON) -> Any:
        """A wrapper-authored result, from its JSON form."""
        return decode(data)

    def pre_decision(self, data: JSON) -> Any:
        return decode(data)

    def post_decision(self, data: JSON) -> Any:
        return decode(data)

    # -- the body's run context
    def defer_context(self, ctx: Any, message: Any) -> None:
        ctx.defer_context(message)

    def conclude_turn(self, ctx: Any) -> None:
        ctx.conclude_turn()

    def forward(self, ctx: Any, result: Any) -> None:
        """A composite tool forwards a nested call's result (its contexts, its turn mark)."""
        ctx.forward(result)


def _text(value: Any) -> str | None:
    return cast("str | None", value)  # as the implementation gave it (a trace records it)


def _is_container(obj: Any) -> bool:
    """Is ``obj`` read by item (a mapping or a sequence, not text)?"""
    return _per_type(_CONTAINERS, type(obj), _container)


def _container(kind: type) -> bool:
    return issubclass(kind, (Mapping, Sequence)) and not issubclass(kind, (str, bytes))


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)
