"""SCOPE-1..2: visibility."""

from __future__ import annotations

import pytest
from conftest import code_of, execute, tool

from conformance.adapters.reference import code_runtime
from reference import Registry


def test_SCOPE_1_hidden_tool_looks_like_a_missing_one() -> None:
    """SCOPE-1: a hidden tool is UNKNOWN_TOOL, indistinguishable from a missing one."""
    entered: list[str] = []
    hidden = Registry()
    hidden.register(tool("secret", lambda a, c: entered.append("body") or "ok"), scope="a")
    missing = Registry()
    hidden_result = execute(hidden, "secret", agent="b")
    missing_result = execute(missing, "secret", agent="b")
    assert code_of(hidden_result) == "UNKNOWN_TOOL"
    assert hidden_result.to_json() == missing_result.to_json()
    assert entered == []


def test_SCOPE_1_hidden_and_missing_reach_the_same_stages() -> None:
    """SCOPE-1: neither case exposes more pipeline (same listener/observer traffic)."""

    def traffic(r: Registry) -> list[str]:
        events: list[str] = []
        r.on("tools/pre-execute", lambda e, n: events.append("pre") or n())
        r.guard(lambda e: events.append("guard"))
        r.on("tools/result", lambda e, res: events.append("result"))
        execute(r, "secret", agent="b")
        return events

    hidden = Registry()
    hidden.register(tool("secret"), scope="a")
    assert traffic(hidden) == traffic(Registry())


def test_SCOPE_1_agent_less_call_cannot_see_scoped_tools() -> None:
    """SCOPE-1: a call with no agent sees only global tools."""
    r = Registry()
    r.register(tool("secret"), scope="a")
    assert code_of(execute(r, "secret", agent=None)) == "UNKNOWN_TOOL"
    assert not execute(r, "secret", agent="a").is_error


def runnable(r: Registry, scope: str | None, names: list[str]) -> set[str]:
    return {n for n in names if code_of(execute(r, n, agent=scope)) != "UNKNOWN_TOOL"}


@pytest.mark.parametrize("mode", ["native", "both"])
def test_SCOPE_2_schemas_list_exactly_what_the_scope_can_run(mode: str) -> None:
    """SCOPE-2: native/both: schemas(scope) is exactly what a direct call can execute."""
    r = Registry(mode=mode, code_runtime=code_runtime())  # type: ignore[arg-type]
    r.register(tool("shared"))
    r.register(tool("a_only"), scope="a")
    r.register(tool("b_only"), scope="b")
    r.register(tool("shared"), scope="b")  # shadow
    universe = ["shared", "a_only", "b_only", "run_code", "nowhere"]
    for scope in ("a", "b", "c", None):
        names = [s["name"] for s in r.schemas(scope)]
        assert len(names) == len(set(names))
        assert set(names) == runnable(r, scope, universe), scope
    assert ("run_code" in [s["name"] for s in r.schemas("a")]) == (mode == "both")


def test_SCOPE_2_code_mode_presents_only_run_code() -> None:
    """SCOPE-2: under code only run_code is directly callable; any other name is UNKNOWN_TOOL."""
    r = Registry(mode="code", code_runtime=code_runtime())
    r.register(tool("shared"))
    r.register(tool("a_only"), scope="a")
    for scope in ("a", None):
        assert [s["name"] for s in r.schemas(scope)] == ["run_code"]
        assert runnable(r, scope, ["shared", "a_only", "run_code"]) == {"run_code"}


def test_SCOPE_2_code_mode_catalog_is_the_scopes_native_view() -> None:
    """SCOPE-2: the documented SDK source (catalog) follows the same per-scope visibility view."""
    r = Registry(mode="code", code_runtime=code_runtime())
    r.register(tool("shared"))
    r.register(tool("a_only"), scope="a")
    assert {s["name"] for s in r.catalog("a")} == {"shared", "a_only"}
    assert {s["name"] for s in r.catalog("b")} == {"shared"}
    for entry in r.catalog("a"):
        assert set(entry) == {"name", "description", "parameters"}


def test_SCOPE_2_lookup_agrees_with_schemas() -> None:
    """SCOPE-2: lookup resolves through the same visibility view as schemas."""
    r = Registry()
    r.register(tool("shared"))
    r.register(tool("a_only"), scope="a")
    for scope in ("a", "b"):
        listed = {s["name"] for s in r.schemas(scope)}
        found = {n for n in ("shared", "a_only") if r.get(n, scope) is not None}
        assert listed == found


def test_SCOPE_2_visibility_tracks_registration_changes() -> None:
    """SCOPE-2: after a disposal, schemas and execution agree again."""
    r = Registry()
    dispose = r.register(tool("t"), scope="a")
    assert runnable(r, "a", ["t"]) == {s["name"] for s in r.schemas("a")} == {"t"}
    dispose()
    assert runnable(r, "a", ["t"]) == {s["name"] for s in r.schemas("a")} == set()
