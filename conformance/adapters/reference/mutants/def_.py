"""Mutants of the three layers of a tool definition (DEF-1..6).

Read beside ``conformance/judging/rules/def_.py``.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

import reference.registry as regmod
from conformance.adapters.reference.mutants._base import mutant
from reference import Registry, thaw
from reference.timeout import timeout_wrapper


@mutant("DEF-1", "schemas() copies the definition minus the body: a blacklist that fails open")
class BlacklistSchemas(Registry):
    """Only ``execute`` is known to be unsendable, so ``output``, ``finalize_content``,
    ``timeout_ms``, the presenters -- and every field added next year -- reach the model."""

    def schemas(self, scope: str | None = None) -> list[dict[str, Any]]:
        return [
            {k: v for k, v in t.definition.items() if k != "execute"}  # the bug
            for t in self._direct(scope).values()
        ]


@mutant("DEF-1,DEF-2", "timeoutMs is added to schemas() as a hint for the model")
class TimeoutInSchemas(Registry):
    """Tempting: "The model should know the deadline": a host-only field is sent to the model."""

    def schemas(self, scope: str | None = None) -> list[dict[str, Any]]:
        out = super().schemas(scope)
        for entry, tool in zip(out, self._direct(scope).values(), strict=True):
            if tool.timeout_ms is not None:
                entry["timeout_ms"] = tool.timeout_ms  # the bug
        return out


@mutant("DEF-2", "schemas() whitelists the callables away but passes unknown fields through")
class UnknownFieldsLeak(Registry):
    """A blacklist of the *known* host-only and presentation fields: a field the registry does
    not know yet (a new host option, a vendor extension) leaks to the model by default."""

    def schemas(self, scope: str | None = None) -> list[dict[str, Any]]:
        out = super().schemas(scope)
        for entry, tool in zip(out, self._direct(scope).values(), strict=True):
            entry.update(
                {
                    k: v
                    for k, v in tool.definition.items()
                    if k not in _KNOWN_UNSENDABLE and k not in entry
                }
            )
        return out


_KNOWN_UNSENDABLE = (  # what the blacklist knows of today: host-only and presentation fields
    "execute",
    "output",
    "finalize_content",
    "timeout_ms",
    "is_concurrency_safe",
    "present_call",
    "present_result",
)


@mutant("DEF-2", "schemas() memoizes its entries and hands out the cached objects")
class CachedSchemas(Registry):
    """A cache for speed: one caller's edit of a returned schema changes what every later
    request shows."""

    def schemas(self, scope: str | None = None) -> list[dict[str, Any]]:
        cache: dict[tuple[str | None, str], dict[str, Any]] = self.__dict__.setdefault("_cache", {})
        return [
            cache.setdefault((scope, t.name), regmod._schema(t))  # the bug: shared objects
            for t in self._direct(scope).values()
        ]


@mutant("DEF-2", "schemas() copies each entry's top level only: parameters are shared")
class ShallowSchemaCopies(Registry):
    """A fresh dict per entry, but the JSON Schema of ``parameters`` is thawed once and reused:
    mutating a nested key of one returned schema changes what every later request shows."""

    def schemas(self, scope: str | None = None) -> list[dict[str, Any]]:
        shared: dict[int, Any] = self.__dict__.setdefault("_parameters", {})
        return [
            {
                "name": t.name,
                "description": t.description,
                "parameters": shared.setdefault(id(t), thaw(t.parameters)),  # the bug
            }
            for t in self._direct(scope).values()
        ]


@mutant("DEF-3", "a definition without a complete output gets a permissive default")
class DefaultOutput(Registry):
    """Convenience over contract: a missing ``output.schema`` becomes ``{}`` and a missing
    ``render`` becomes ``str(value)``, instead of failing at registration."""

    def register(
        self, definition: Mapping[str, Any], scope: str | None = None
    ) -> Callable[[], None]:
        output = dict(definition.get("output") or {})
        output.setdefault("schema", {})  # the bug
        output.setdefault("render", lambda args, value: [{"type": "text", "text": str(value)}])
        return super().register({**definition, "output": output}, scope)


@mutant("DEF-3", "output.render is checked for presence, not for being a function")
class RenderPresenceOnly(Registry):
    """``"render" in output`` passes a string: registration succeeds, and the first success
    of the tool fails when its render is called (TypeError), long after registration."""

    def register(
        self, definition: Mapping[str, Any], scope: str | None = None
    ) -> Callable[[], None]:
        output = definition.get("output")
        if isinstance(output, Mapping) and "render" in output and not callable(output["render"]):
            held = output["render"]

            def render(args: Any, value: Any) -> Any:
                return held(args, value)  # the bug surfaces here: TypeError, not callable

            definition = {**definition, "output": {**output, "render": render}}
        return super().register(definition, scope)


@mutant("DEF-4", "a nonsense timeout_ms is silently dropped instead of refusing the registration")
class LenientTimeout(Registry):
    """``timeout_ms=0`` or ``-1`` or ``inf`` quietly means "no deadline"."""

    def register(
        self, definition: Mapping[str, Any], scope: str | None = None
    ) -> Callable[[], None]:
        value = definition.get("timeout_ms")
        valid = (
            isinstance(value, (int, float))
            and not isinstance(value, bool)
            and 0 < value < float("inf")
        )
        if not valid:
            definition = {k: v for k, v in definition.items() if k != "timeout_ms"}  # the bug
        return super().register(definition, scope)


@mutant("DEF-4", "the registry enforces timeout_ms itself, with no timeout policy installed")
class RegistryEnforcesTimeout(Registry):
    """Deadlines built in: every tool with ``timeout_ms`` times out, whether or not the host
    composed the timeout policy in. The registry must stay deadline-agnostic."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.on("tools/execute", timeout_wrapper, prepend=True)  # the bug

    def use_timeout_policy(self) -> Callable[[], None]:
        return lambda: None  # already installed


@mutant("DEF-5", "a duplicate name replaces the earlier registration instead of failing")
class DuplicateOverwrites(Registry):
    """Last registration wins: a plugin loaded twice, or two plugins with the same tool name,
    silently swap the tool under the model."""

    def register(
        self, definition: Mapping[str, Any], scope: str | None = None
    ) -> Callable[[], None]:
        layer = self._global if scope is None else self._scoped.setdefault(scope, {})
        layer.pop(str(definition.get("name")), None)  # the bug
        return super().register(definition, scope)


@mutant("DEF-5", "a scoped registration shadows the global tool for every agent")
class ShadowForEveryone(Registry):
    """All layers are merged into one view: one agent's replacement reaches everybody."""

    def _visible(self, scope: str | None) -> dict[str, Any]:
        view = dict(self._global)
        for layer in self._scoped.values():  # the bug: every agent's layer
            view.update(layer)
        return view


@mutant("DEF-6", "a disposer removes whatever registration compares equal to its own")
class EqualityDisposer(Registry):
    """The disposer checks equality, not identity: run again after the same definition was
    registered anew (a plugin reloaded), the spent disposer removes the new registration."""

    def register(
        self, definition: Mapping[str, Any], scope: str | None = None
    ) -> Callable[[], None]:
        super().register(definition, scope)
        layer = self._global if scope is None else self._scoped[scope]
        tool = layer[definition["name"]]

        def dispose() -> None:
            if layer.get(tool.name) == tool:  # the bug: == where the registry says `is`
                del layer[tool.name]

        return dispose


@mutant("DEF-6", "the disposer removes the name from the global layer, whatever its layer")
class GlobalOnlyDisposer(Registry):
    """Disposal by name in the wrong place: an agent-scoped tool stays visible and callable
    (and a global tool of the same name disappears instead)."""

    def register(
        self, definition: Mapping[str, Any], scope: str | None = None
    ) -> Callable[[], None]:
        super().register(definition, scope)
        name = definition["name"]

        def dispose() -> None:
            self._global.pop(name, None)  # the bug

        return dispose


@mutant("DEF-5", "a scoped shadow runs, but its arguments are checked against the global tool")
class ShadowCheckedByGlobal(Registry):
    """Validation looks the name up in the shared catalogue first: an agent whose own
    ``read_file`` is stricter (or looser) than the global one has its calls checked by
    the global parameters and then run by its own body."""

    def _resolve(self, name: str, scope: str | None, parent: Any) -> Any:
        tool = super()._resolve(name, scope, parent)
        shared = self._global.get(name)
        if tool is None or shared is None or shared is tool:
            return tool
        return dataclasses.replace(tool, params_validator=shared.params_validator)  # the bug


@mutant("DEF-5", "schemas() shows a scoped shadow with the global tool's parameters")
class ShadowShowsGlobalParameters(Registry):
    """The entry is rebuilt from the scoped description but the parameters are taken from
    the global registration: the model is told one argument shape, the agent's tool
    checks another."""

    def schemas(self, scope: str | None = None) -> list[dict[str, Any]]:
        out = super().schemas(scope)
        for entry in out:
            shared = self._global.get(entry["name"])
            if shared is not None:
                entry["parameters"] = thaw(shared.parameters)  # the bug
        return out


@mutant(
    "DEF-2,DEF-5", "schemas() caches its list per scope, cleared on dispose but not on register"
)
class SchemasStaleAfterRegister(Registry):
    """A cache for speed, invalidated where someone remembered to: a tool (or a shadow)
    registered after the first read never shows up, or shows the old definition."""

    def schemas(self, scope: str | None = None) -> list[dict[str, Any]]:
        cache: dict[str | None, list[dict[str, Any]]] = self.__dict__.setdefault("_lists", {})
        if scope not in cache:
            cache[scope] = super().schemas(scope)
        return copy.deepcopy(cache[scope])

    def register(self, definition: Mapping[str, Any], scope: str | None = None) -> Any:
        dispose = super().register(definition, scope)  # the bug: the cache is kept

        def disposer() -> None:
            self.__dict__.pop("_lists", None)
            dispose()

        return disposer
