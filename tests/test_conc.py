"""CONC-1..3: concurrency classification and the batch scheduler."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from conftest import asynctest, call, tool, yield_many

from conformance.adapters.reference import code_runtime
from reference import Registry, run_batch, thaw


def mode_of(classifier: Any, arguments: Any = None, **kw: Any) -> str:
    r = Registry()
    extra = {} if classifier == "omitted" else {"is_concurrency_safe": classifier}
    r.register(tool("t", **extra))
    return r.execution_mode(call("t", arguments, **kw))


def test_CONC_1_exactly_true_is_parallel() -> None:
    """CONC-1: parallel only when isConcurrencySafe(args) returns exactly True."""
    assert mode_of(lambda a: True) == "parallel"


def raising(a: Any) -> Any:
    raise RuntimeError("classifier bug")


@pytest.mark.parametrize(
    "classifier",
    [
        "omitted",
        raising,
        lambda a: 1,
        lambda a: "true",
        lambda a: {"yes": 1},
        lambda a: [True],
        lambda a: None,
        lambda a: False,
        lambda a: 1.0,
    ],
    ids=[
        "omitted",
        "throwing",
        "one",
        "string-true",
        "truthy-object",
        "list",
        "none",
        "false",
        "float-one",
    ],
)
def test_CONC_1_anything_else_is_exclusive(classifier: Any) -> None:
    """CONC-1: omitted, throwing, or any non-True return is exclusive."""
    assert mode_of(classifier) == "exclusive"


def test_CONC_1_classifier_sees_arguments() -> None:
    """CONC-1: the decision is per call, from that call's arguments."""
    classifier = lambda a: a.get("path") == "ro"  # noqa: E731
    assert mode_of(classifier, {"path": "ro"}) == "parallel"
    assert mode_of(classifier, {"path": "rw"}) == "exclusive"


@pytest.mark.parametrize("arguments", [{"path": 5}, {"path": float("nan")}], ids=["schema", "nan"])
def test_CONC_1_invalid_arguments_are_exclusive(arguments: Any) -> None:
    """CONC-1: invalid arguments are exclusive (the classifier is not trusted with them)."""
    assert mode_of(lambda a: True, arguments) == "exclusive"


def test_CONC_1_unknown_or_hidden_tool_is_exclusive() -> None:
    """CONC-1: an unknown tool, or one hidden from the caller's scope, is exclusive."""
    r = Registry()
    r.register(tool("secret", is_concurrency_safe=lambda a: True), scope="a")
    assert r.execution_mode(call("secret", agent="a")) == "parallel"
    assert r.execution_mode(call("secret", agent="b")) == "exclusive"
    assert r.execution_mode(call("nowhere")) == "exclusive"


def test_CONC_1_uses_the_visible_definition() -> None:
    """CONC-1: classification follows the visible (shadowing) definition."""
    r = Registry()
    r.register(tool("t", is_concurrency_safe=lambda a: True))
    r.register(tool("t"), scope="a")
    assert r.execution_mode(call("t", agent="b")) == "parallel"
    assert r.execution_mode(call("t", agent="a")) == "exclusive"


def test_CONC_1_code_mode_direct_native_call_is_exclusive() -> None:
    """CONC-1: under code mode a model-direct native call is not visible: exclusive."""
    r = Registry(mode="code", code_runtime=code_runtime())
    r.register(tool("t", is_concurrency_safe=lambda a: True))
    assert r.execution_mode(call("t")) == "exclusive"


@asynctest
async def test_CONC_2_parallel_bodies_overlap() -> None:
    """CONC-2: consecutive parallel calls overlap: both bodies arrive before either proceeds."""
    arrived: list[str] = []
    both = asyncio.Event()

    async def body(a: Any, c: Any) -> str:
        arrived.append(c.call_id)
        if len(arrived) == 2:
            both.set()
        await asyncio.wait_for(both.wait(), 5)  # fails cleanly if bodies do not overlap
        return c.call_id

    r = Registry()
    r.register(tool("p", body, is_concurrency_safe=lambda a: True))
    results = await run_batch(r, [call("p", call_id="1"), call("p", call_id="2")], max_parallel=2)
    assert [thaw(x.value) for x in results] == ["1", "2"]


@asynctest
async def test_CONC_2_exclusive_call_is_a_barrier_and_order_is_kept() -> None:
    """CONC-2: an exclusive call runs alone; results and pre-execute keep model order."""
    events: list[str] = []
    pre: list[str] = []
    release = {k: asyncio.Event() for k in ("1", "2", "4", "5")}

    async def parallel_body(a: Any, c: Any) -> str:
        events.append(f"enter {c.call_id}")
        await yield_many()
        # finish in reverse model order within a group to prove results are re-ordered
        if c.call_id in ("1", "4"):
            await asyncio.wait_for(release[c.call_id].wait(), 5)
        events.append(f"exit {c.call_id}")
        if c.call_id in ("2", "5"):
            release[str(int(c.call_id) - 1)].set()
        return c.call_id

    async def exclusive_body(a: Any, c: Any) -> str:
        events.append(f"enter {c.call_id}")
        await yield_many()
        events.append(f"exit {c.call_id}")
        return c.call_id

    r = Registry()
    r.register(tool("p", parallel_body, is_concurrency_safe=lambda a: True))
    r.register(tool("x", exclusive_body))
    r.on("tools/pre-execute", lambda e, n: pre.append(e.call_id) or n())
    calls = [
        call(n, call_id=i) for i, n in (("1", "p"), ("2", "p"), ("3", "x"), ("4", "p"), ("5", "p"))
    ]
    results = await asyncio.wait_for(run_batch(r, calls, max_parallel=4), 10)
    assert [thaw(x.value) for x in results] == ["1", "2", "3", "4", "5"]
    assert pre == ["1", "2", "3", "4", "5"]
    i3, o3 = events.index("enter 3"), events.index("exit 3")
    assert o3 == i3 + 1  # nothing else ran while the exclusive body ran
    assert all(events.index(f"exit {k}") < i3 for k in ("1", "2"))
    assert all(events.index(f"enter {k}") > o3 for k in ("4", "5"))
    assert events.index("exit 2") < events.index("exit 1")  # they really overlapped


@asynctest
async def test_CONC_2_pool_is_bounded() -> None:
    """CONC-2: the rolling pool never runs more than max_parallel bodies at once."""
    active = 0
    peak = 0

    async def body(a: Any, c: Any) -> str:
        nonlocal active, peak
        active += 1
        peak = max(peak, active)
        await yield_many()
        active -= 1
        return "ok"

    r = Registry()
    r.register(tool("p", body, is_concurrency_safe=lambda a: True))
    calls = [call("p", call_id=str(i)) for i in range(6)]
    results = await asyncio.wait_for(run_batch(r, calls, max_parallel=2), 10)
    assert len(results) == 6 and not any(x.is_error for x in results)
    assert peak == 2


@asynctest
async def test_CONC_2_contexts_and_completion_keep_model_order() -> None:
    """CONC-2: completion (post-execute, tools/result) and contexts follow model order."""
    post: list[str] = []
    published: list[str] = []
    gate = asyncio.Event()

    async def body(a: Any, c: Any) -> str:
        c.defer_context(f"ctx {c.call_id}")
        if c.call_id == "1":
            await asyncio.wait_for(gate.wait(), 5)  # the first finishes last
        else:
            gate.set()
        return "ok"

    r = Registry()
    r.register(tool("p", body, is_concurrency_safe=lambda a: True))
    r.on("tools/post-execute", lambda e, res, n: post.append(e.call_id) or n())
    r.on("tools/result", lambda e, res: published.append(e.call_id))
    results = await run_batch(r, [call("p", call_id="1"), call("p", call_id="2")], max_parallel=2)
    assert post == ["1", "2"] and published == ["1", "2"]
    assert [list(x.additional_contexts) for x in results] == [["ctx 1"], ["ctx 2"]]


def test_CONC_3_tool_author_obligation() -> None:
    """CONC-3: opted-in executions must not mutate parent-owned state (an author obligation)."""
    pytest.skip(
        "CONC-3 binds tool authors (no parent-state mutation, commuting recorders); "
        "the registry cannot observe it, so there is nothing to assert about the reference"
    )
