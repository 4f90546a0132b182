"""DEF-1..6: each predicate catches a realistically broken registry; the reference passes."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import reference.registry as regmod
from reference import Registry
from tests.kit.support import mutant_status as _status


class _BlacklistSchemas(Registry):
    """schemas() copies the definition minus the body: a blacklist that fails open."""

    def schemas(self, scope: str | None = None) -> list[dict[str, Any]]:
        return [
            {k: v for k, v in t.definition.items() if k != "execute"}
            for t in self._direct(scope).values()
            if t.name != "run_code"
        ]


def test_DEF_1_catches_blacklisted_schemas() -> None:
    assert _status(_BlacklistSchemas, "DEF-1") == "fail"


class _ExtraFieldsLeak(Registry):
    """Whitelists the callables away but passes unknown (future) JSON fields through."""

    def schemas(self, scope: str | None = None) -> list[dict[str, Any]]:
        out = super().schemas(scope)
        for entry, tool in zip(out, self._direct(scope).values(), strict=True):
            entry.update(
                {
                    k: v
                    for k, v in tool.definition.items()
                    if k not in regmod.HOST_ONLY and k not in regmod.PRESENTATION and k not in entry
                }
            )
        return out


class _CachedSchemas(Registry):
    """schemas() memoizes its entries and hands out the cached objects."""

    def schemas(self, scope: str | None = None) -> list[dict[str, Any]]:
        cache: dict[tuple[str | None, str], dict[str, Any]] = self.__dict__.setdefault("_cache", {})
        return [
            cache.setdefault((scope, t.name), regmod._schema(t))
            for t in self._direct(scope).values()
        ]


def test_DEF_2_catches_future_fields_leaking() -> None:
    assert _status(_ExtraFieldsLeak, "DEF-2") == "fail"


def test_DEF_2_catches_shared_schema_objects() -> None:
    assert _status(_CachedSchemas, "DEF-2") == "fail"


class _DefaultOutput(Registry):
    """A definition without a complete output gets a permissive default instead of failing."""

    def register(
        self, definition: Mapping[str, Any], scope: str | None = None
    ) -> Callable[[], None]:
        output = dict(definition.get("output") or {})
        output.setdefault("schema", {})
        output.setdefault("render", lambda args, value: [{"type": "text", "text": str(value)}])
        return super().register({**definition, "output": output}, scope)


def test_DEF_3_catches_defaulted_output() -> None:
    assert _status(_DefaultOutput, "DEF-3") == "fail"


class _LenientTimeout(Registry):
    """A nonsense timeout_ms is silently dropped instead of refusing the registration."""

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
            definition = {k: v for k, v in definition.items() if k != "timeout_ms"}
        return super().register(definition, scope)


class _EnforcesTimeout(Registry):
    """The registry enforces timeout_ms itself, with no timeout policy installed."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        from reference.timeout import timeout_wrapper

        self.on("tools/execute", timeout_wrapper, prepend=True)


def test_DEF_4_catches_lenient_timeout_validation() -> None:
    assert _status(_LenientTimeout, "DEF-4") == "fail"


def test_DEF_4_catches_registry_enforced_deadline() -> None:
    assert _status(_EnforcesTimeout, "DEF-4") == "fail"


class _DuplicatesOverwrite(Registry):
    """A duplicate name replaces the earlier registration instead of failing."""

    def register(
        self, definition: Mapping[str, Any], scope: str | None = None
    ) -> Callable[[], None]:
        layer = self._global if scope is None else self._scoped.setdefault(scope, {})
        layer.pop(definition.get("name"), None)  # type: ignore[arg-type]
        return super().register(definition, scope)


class _ShadowEverywhere(Registry):
    """Scoped registrations leak into every agent's view."""

    def _visible(self, scope: str | None) -> dict[str, Any]:
        view = dict(self._global)
        for layer in self._scoped.values():
            view.update(layer)
        return view


def test_DEF_5_catches_duplicate_overwrite() -> None:
    assert _status(_DuplicatesOverwrite, "DEF-5") == "fail"


def test_DEF_5_catches_shadowing_for_everyone() -> None:
    assert _status(_ShadowEverywhere, "DEF-5") == "fail"


class _GlobalOnlyDisposer(Registry):
    """The disposer removes the name from the global layer, whatever layer it was registered in."""

    def register(
        self, definition: Mapping[str, Any], scope: str | None = None
    ) -> Callable[[], None]:
        super().register(definition, scope)
        name = definition["name"]

        def dispose() -> None:
            self._global.pop(name, None)

        return dispose


def test_DEF_6_catches_wrong_layer_disposer() -> None:
    assert _status(_GlobalOnlyDisposer, "DEF-6") == "fail"
