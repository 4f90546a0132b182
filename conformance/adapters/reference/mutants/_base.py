"""The shape of a catalogue entry: a mutant (a known-bad registry) or a correct variant.

A **mutant** is a small variant of the bundled reference that makes one mistake
a real implementer could make. It is declared where it is defined::

    @mutant("PRE-3", "ask is allowed when no approval service is mounted")
    class AskWithoutServiceAllows(Registry):
        '''The docstring says what the bug is and why it is tempting.'''

        async def _approve(self, execution, reason):
            ...

The decorated object is what the mutant replaces in the reference, as
``replaces`` says:

* ``"registry"`` (the default): a :class:`reference.Registry` subclass;
* ``"batch"``: a batch driver with :func:`reference.run_batch`'s signature;
* ``"adapter"``: a zero-argument callable returning a whole adapter;
* ``"MODULE:NAME"``: a module-level name of the reference (a class or a
  function), swapped in only while the mutant's scenarios run.

A **variant** is declared the same way with :func:`variant`: a registry that
differs from the reference only where SPEC.md leaves a choice open (section 9
lists the reference's choices). The kit must pass every variant; a variant
that fails names an overfit predicate (or a variant that is not correct).
"""

from __future__ import annotations

import importlib
import inspect
import re
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

from conformance.judging.rules import RULES
from conformance.seam.adapter import Adapter, AdapterInfo

__all__ = ["CATALOGUE", "VARIANTS", "Mutant", "PatchedAdapter", "Variant", "mutant", "variant"]

T = TypeVar("T")

CATALOGUE: dict[str, Mutant] = {}
VARIANTS: dict[str, Variant] = {}


@dataclass(frozen=True)
class Mutant:
    """One known-bad registry and the rule(s) that must catch it."""

    name: str  # "<group>.<kebab-case name>", e.g. "pre.ask-without-service-allows"
    targets: tuple[str, ...]  # the rule IDs it breaks: each must report "fail"
    description: str  # one line: the bug
    doc: str  # the decorated object's docstring: the bug, at length
    where: str  # "conformance/adapters/reference/mutants/pre.py:AskWithoutServiceAllows"
    build: Callable[[], Adapter]  # a fresh adapter running the mutant

    @property
    def group(self) -> str:
        return self.name.split(".", 1)[0]


@dataclass(frozen=True)
class Variant:
    """One correct registry that differs from the reference where the spec allows it."""

    name: str
    description: str
    doc: str
    where: str
    build: Callable[[], Adapter]
    witness: Mapping[str, Any]  # a scenario on which it behaves differently from the reference
    rules: str | None = None  # the rules it must pass (None: the whole kit; e.g. "portable")


class PatchedAdapter:
    """Runs ``inner`` with module-level names of the reference swapped for the mutant's."""

    def __init__(self, inner: Adapter, patches: Mapping[tuple[str, str], Any]) -> None:
        self._inner = inner
        self._patches = dict(patches)

    def describe(self) -> AdapterInfo:
        return self._inner.describe()

    def run(self, scenario: Mapping[str, Any]) -> dict[str, Any]:
        with _patched(self._patches):
            return self._inner.run(scenario)


@contextmanager
def _patched(patches: Mapping[tuple[str, str], Any]) -> Iterator[None]:
    saved: list[tuple[Any, str, Any]] = []
    try:
        for (module_name, attr), value in patches.items():
            module = importlib.import_module(module_name)
            saved.append((module, attr, getattr(module, attr)))
            setattr(module, attr, value)
        yield
    finally:
        for module, attr, original in reversed(saved):
            setattr(module, attr, original)


def _kebab(name: str) -> str:
    name = name.strip("_").replace("_", "-")
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "-", name).lower()


def _group(module: str) -> str:
    return module.rsplit(".", 1)[-1].rstrip("_")


def _where(obj: Any) -> str:
    module = obj.__module__.replace(".", "/")
    return f"{module}.py:{obj.__qualname__}"


def _builder(obj: Any, replaces: str, name: str) -> Callable[[], Adapter]:
    """A zero-argument factory of adapters running ``obj`` in place of ``replaces``."""
    from conformance.adapters.reference import ReferenceAdapter
    from reference import Registry, run_batch

    def mode(scenario: Mapping[str, Any]) -> Any:
        return scenario.get("registry", {}).get("mode", "native")

    if replaces == "adapter":
        if not callable(obj):
            raise TypeError(f"{name}: replaces='adapter' needs a zero-argument adapter factory")
        return obj  # type: ignore[no-any-return]
    if replaces == "registry":
        if not (inspect.isclass(obj) and issubclass(obj, Registry)):
            raise TypeError(f"{name}: replaces='registry' needs a reference.Registry subclass")
        cls: type[Registry] = obj
        return lambda: ReferenceAdapter(lambda s: cls(mode=mode(s)), name=name)
    if replaces == "batch":
        if not callable(obj):
            raise TypeError(f"{name}: replaces='batch' needs a batch driver")
        return lambda: ReferenceAdapter(name=name, batch=obj)
    module_name, sep, attr = replaces.partition(":")
    if not sep or not module_name.startswith("reference") or not attr:
        raise ValueError(
            f"{name}: replaces must be registry, batch, adapter or 'reference.MODULE:NAME', "
            f"not {replaces!r}"
        )
    if not hasattr(importlib.import_module(module_name), attr):
        raise ValueError(f"{name}: {module_name} has no {attr!r} to replace")
    patches = {(module_name, attr): obj}
    return lambda: PatchedAdapter(ReferenceAdapter(name=name, batch=run_batch), patches)


def _docstring(obj: Any, name: str) -> str:
    doc = inspect.cleandoc(obj.__doc__ or "")  # its own docstring, never an inherited one
    if not doc:
        raise ValueError(f"{name}: a catalogue entry needs a docstring (it is teaching material)")
    return doc


def _one_line(text: str, name: str) -> str:
    if not text.strip() or "\n" in text:
        raise ValueError(f"{name}: the description must be one non-empty line")
    return text.strip()


def mutant(
    targets: str, description: str, *, replaces: str = "registry", name: str | None = None
) -> Callable[[T], T]:
    """Declare the decorated object a mutant that the rule(s) ``targets`` must catch.

    ``targets`` is a rule ID or a comma-separated list of them; every one must
    fail on the mutant for it to count as killed.
    """
    ids = tuple(t.strip() for t in targets.split(",") if t.strip())

    def register(obj: T) -> T:
        full = f"{_group(obj.__module__)}.{name or _kebab(getattr(obj, '__name__', ''))}"
        if not ids:
            raise ValueError(f"{full}: a mutant names at least one target rule")
        for rid in ids:
            if rid not in RULES:
                raise ValueError(f"{full}: {rid!r} is not a rule ID of SPEC.md")
            if RULES[rid].check is None:
                raise ValueError(f"{full}: {rid} has no predicate; no mutant can be killed by it")
        if full in CATALOGUE:
            raise ValueError(f"mutant {full} declared twice")
        CATALOGUE[full] = Mutant(
            name=full,
            targets=ids,
            description=_one_line(description, full),
            doc=_docstring(obj, full),
            where=_where(obj),
            build=_builder(obj, replaces, full),
        )
        return obj

    return register


def variant(
    description: str,
    *,
    witness: Mapping[str, Any],
    replaces: str = "registry",
    name: str | None = None,
    rules: str | None = None,
) -> Callable[[T], T]:
    """Declare the decorated object a correct variant: the whole kit must pass it (or the
    rules ``rules`` selects, as ``run --rules`` does: a variant of an agent framework's
    closed forms answers to the portable set).

    ``witness`` is a scenario on which the variant's trace differs from the
    reference's (a variant that behaves like the reference proves nothing).
    """

    def register(obj: T) -> T:
        full = name or _kebab(getattr(obj, "__name__", ""))
        if full in VARIANTS:
            raise ValueError(f"variant {full} declared twice")
        VARIANTS[full] = Variant(
            name=full,
            description=_one_line(description, full),
            doc=_docstring(obj, full),
            where=_where(obj),
            build=_builder(obj, replaces, f"variant-{full}"),
            witness=witness,
            rules=rules,
        )
        return obj

    return register
