"""DEF-1..6: the three layers of a tool definition."""

from __future__ import annotations

import asyncio
import math

import pytest
from conftest import code_of, execute, tool

from reference import AbortController, RegistrationError, Registry

HOST_AND_PRESENTATION = {
    "execute",
    "output",
    "finalize_content",
    "timeout_ms",
    "is_concurrency_safe",
    "present_call",
    "present_result",
}


def full_definition() -> dict[str, object]:
    return tool(
        "read_file",
        finalize_content=lambda e, r: None,
        timeout_ms=1000,
        is_concurrency_safe=lambda a: True,
        present_call=lambda a: {"title": "read"},
        present_result=lambda a, r: {"card": "x"},
    )


def test_DEF_1_schemas_carry_only_the_model_visible_layer() -> None:
    """DEF-1: host-only and presentation fields are never sent to a model."""
    r = Registry()
    r.register(full_definition())
    (schema,) = r.schemas()
    assert set(schema) == {"name", "description", "parameters"}
    assert not HOST_AND_PRESENTATION & set(schema)


def test_DEF_1_host_keeps_its_layers_for_itself() -> None:
    """DEF-1: the host side still reaches execute/output/presentation through lookup."""
    r = Registry()
    definition = full_definition()
    r.register(definition)
    found = r.get("read_file")
    assert found is not None
    for key in HOST_AND_PRESENTATION:
        assert key in found


def test_DEF_1_non_callable_host_field_fails_registration() -> None:
    """DEF-1: host-only callables must be callables."""
    r = Registry()
    with pytest.raises(RegistrationError):
        r.register(tool("x", finalize_content="not callable"))
    with pytest.raises(RegistrationError):
        r.register(tool("y", execute=None) | {"execute": 42})


def test_DEF_2_whitelist_drops_future_fields() -> None:
    """DEF-2: a field a future version adds to definitions never reaches schemas()."""
    r = Registry()
    r.register(tool("t", secret_field="s3cret", annotations={"x": 1}, title="T", timeout_ms=5))
    (schema,) = r.schemas()
    assert set(schema) == {"name", "description", "parameters"}
    assert "s3cret" not in repr(schema)


def test_DEF_2_schemas_are_copies() -> None:
    """DEF-2: mutating returned schemas changes nothing in the registry."""
    r = Registry()
    r.register(tool("t"))
    first = r.schemas()
    before = r.schemas()
    first[0]["name"] = "hacked"
    first[0]["parameters"]["properties"]["injected"] = {"type": "string"}
    first[0]["extra"] = 1
    first.append({"name": "ghost"})
    assert r.schemas() == before
    assert code_of(execute(r, "t", {"path": "p"})) is None
    assert code_of(execute(r, "hacked")) == "UNKNOWN_TOOL"


def test_DEF_2_caller_mutating_its_definition_changes_no_schema() -> None:
    """DEF-2: the registry snapshots parameters; the caller's dict is not shared."""
    r = Registry()
    definition = tool("t")
    r.register(definition)
    definition["parameters"]["properties"]["leak"] = {"type": "string"}
    assert "leak" not in r.schemas()[0]["parameters"]["properties"]


@pytest.mark.parametrize(
    "output",
    [None, {}, {"schema": {}}, {"render": lambda a, v: []}, {"schema": {}, "render": "no"}],
    ids=["missing", "empty", "no-render", "no-schema", "render-not-callable"],
)
def test_DEF_3_output_is_mandatory(output: object) -> None:
    """DEF-3: registering without output.schema and output.render fails."""
    definition = tool("t")
    if output is None:
        del definition["output"]
    else:
        definition["output"] = output
    r = Registry()
    with pytest.raises(RegistrationError):
        r.register(definition)
    assert r.schemas() == []


@pytest.mark.parametrize("timeout_ms", [0, -1, math.inf, math.nan, "5", True, [5]], ids=repr)
def test_DEF_4_timeout_must_be_positive_finite(timeout_ms: object) -> None:
    """DEF-4: a present timeout_ms must be a positive finite number."""
    with pytest.raises(RegistrationError):
        Registry().register(tool("t", timeout_ms=timeout_ms))


@pytest.mark.parametrize("timeout_ms", [1, 0.5, 30_000])
def test_DEF_4_positive_finite_timeout_registers(timeout_ms: float) -> None:
    """DEF-4: a positive finite timeout registers."""
    Registry().register(tool("t", timeout_ms=timeout_ms))


def test_DEF_4_omitted_timeout_means_no_deadline() -> None:
    """DEF-4: without timeout_ms even the timeout policy leaves the caller's signal alone."""
    seen = []

    async def body(args: object, ctx: object) -> str:
        seen.append(ctx.signal)  # type: ignore[attr-defined]
        return "ok"

    r = Registry()
    r.use_timeout_policy()
    r.register(tool("t", body))
    controller = AbortController()
    result = execute(r, "t", signal=controller.signal)
    assert not result.is_error
    assert seen == [controller.signal]


def test_DEF_4_registry_itself_never_enforces_timeout() -> None:
    """DEF-4: with no timeout policy installed, a body outliving timeout_ms is not aborted."""
    observed = []

    async def body(args: object, ctx: object) -> str:
        await asyncio.sleep(0.05)  # 50x the declared deadline
        observed.append(ctx.signal.aborted)  # type: ignore[attr-defined]
        return "ok"

    r = Registry()
    r.register(tool("t", body, timeout_ms=1))
    result = execute(r, "t")
    assert not result.is_error
    assert observed == [False]


def test_DEF_5_duplicate_global_name_fails() -> None:
    """DEF-5: a duplicate name within the global layer fails at registration."""
    r = Registry()
    r.register(tool("t"))
    with pytest.raises(RegistrationError):
        r.register(tool("t"))


def test_DEF_5_duplicate_name_within_one_agent_fails() -> None:
    """DEF-5: a duplicate name within one agent's scope fails; other layers are separate."""
    r = Registry()
    r.register(tool("t"), scope="a")
    with pytest.raises(RegistrationError):
        r.register(tool("t"), scope="a")
    r.register(tool("t"), scope="b")
    r.register(tool("t"))


def test_DEF_5_agent_registration_shadows_global_for_that_agent_only() -> None:
    """DEF-5: an agent-scoped tool shadows the global one for that agent only."""
    r = Registry()
    r.register(tool("t", lambda a, c: "global"))
    r.register(tool("t", lambda a, c: "scoped", description="scoped one"), scope="a")
    assert execute(r, "t", agent="a").value == "scoped"
    assert execute(r, "t", agent="b").value == "global"
    assert execute(r, "t", agent=None).value == "global"
    assert [s["description"] for s in r.schemas("a")] == ["scoped one"]
    assert [s["description"] for s in r.schemas("b")] == ["the t tool"]


def test_DEF_6_disposer_hides_and_disables_the_tool() -> None:
    """DEF-6: after the disposer runs the tool is neither visible nor executable."""
    entered = []
    r = Registry()
    dispose = r.register(tool("t", lambda a, c: entered.append(1) or "ok"))
    assert [s["name"] for s in r.schemas()] == ["t"]
    dispose()
    assert r.schemas() == []
    assert r.get("t") is None
    result = execute(r, "t")
    assert code_of(result) == "UNKNOWN_TOOL"
    assert entered == []


def test_DEF_6_disposer_is_idempotent_and_only_removes_its_registration() -> None:
    """DEF-6: a stale disposer does not remove a later registration of the same name."""
    r = Registry()
    dispose = r.register(tool("t", lambda a, c: "first"))
    dispose()
    r.register(tool("t", lambda a, c: "second"))
    dispose()
    assert execute(r, "t").value == "second"


def test_DEF_6_scoped_disposer_unshadows_global() -> None:
    """DEF-6: disposing an agent-scoped tool leaves the global one visible again."""
    r = Registry()
    r.register(tool("t", lambda a, c: "global"))
    dispose = r.register(tool("t", lambda a, c: "scoped"), scope="a")
    dispose()
    assert execute(r, "t", agent="a").value == "global"
