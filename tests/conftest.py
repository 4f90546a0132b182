"""Shared helpers for the reference's own tests (no pytest-asyncio: ``asyncio.run``)."""

from __future__ import annotations

import asyncio
import functools
import json
from collections.abc import Callable, Coroutine, Mapping
from typing import Any

import pytest

from conformance.adapters.reference import ReferenceAdapter
from conformance.running.runner import run_suite
from reference import (
    AbortController,
    AbortSignal,
    ExecutionToken,
    Registry,
    ToolExecutionInput,
    ToolResult,
    thaw,
)
from tests.kit.support import ReferenceRun, quiet


def asynctest(fn: Callable[..., Coroutine[Any, Any, Any]]) -> Callable[..., Any]:
    """Run an ``async def`` test body under ``asyncio.run``."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return asyncio.run(fn(*args, **kwargs))

    return wrapper


def render_json(_args: Any, value: Any) -> list[dict[str, str]]:
    return [{"type": "text", "text": json.dumps(thaw(value), sort_keys=True)}]


def tool(
    name: str = "t",
    execute: Callable[[Any, Any], Any] | None = None,
    *,
    output_schema: Any = None,
    parameters: Any = None,
    **extra: Any,
) -> dict[str, Any]:
    """A minimal valid definition. Default body returns ``"ok"``."""
    definition: dict[str, Any] = {
        "name": name,
        "description": f"the {name} tool",
        "parameters": parameters
        if parameters is not None
        else {"type": "object", "properties": {"path": {"type": "string"}}},
        "output": {"schema": {} if output_schema is None else output_schema, "render": render_json},
        "execute": execute if execute is not None else (lambda args, ctx: "ok"),
    }
    definition.update(extra)
    return definition


def call(
    name: str = "t",
    arguments: Any = None,
    *,
    signal: AbortSignal | None = None,
    agent: str | None = "main",
    call_id: str = "c1",
    parent: ExecutionToken | None = None,
) -> ToolExecutionInput:
    return ToolExecutionInput(
        call_id=call_id,
        name=name,
        arguments={} if arguments is None else arguments,
        signal=signal if signal is not None else AbortController().signal,
        agent=agent,
        parent=parent,
    )


def execute(registry: Registry, *args: Any, **kwargs: Any) -> ToolResult:
    """Synchronously run one call through ``registry.execute``."""
    return asyncio.run(registry.execute(call(*args, **kwargs)))


def code_of(result: ToolResult) -> str | None:
    """The error code at ``result.info.code`` (None for successes and uncoded failures)."""
    info = getattr(result, "info", None)
    return info.code if info is not None else None


def text_of(result: ToolResult) -> str:
    return "".join(b["text"] for b in result.content if b.get("type") == "text")


class Approval:
    """An approval service that records requests and gives a fixed answer."""

    def __init__(self, answer: Any = "allowed-once", *, raises: Exception | None = None) -> None:
        self.answer = answer
        self.raises = raises
        self.requests: list[Any] = []

    async def request(self, req: Any) -> Any:
        self.requests.append(req)
        if self.raises is not None:
            raise self.raises
        return self.answer


class Counter:
    """Counts calls of a callable attached to a definition (finalizers, observers)."""

    def __init__(self, returns: Any = None) -> None:
        self.calls: list[tuple[Any, ...]] = []
        self.returns = returns

    def __call__(self, *args: Any) -> Any:
        self.calls.append(args)
        return self.returns

    @property
    def count(self) -> int:
        return len(self.calls)


def as_mapping(value: Any) -> Mapping[str, Any]:
    assert isinstance(value, Mapping)
    return value


async def yield_many(n: int = 10) -> None:
    """Let other tasks run without relying on wall-clock time."""
    for _ in range(n):
        await asyncio.sleep(0)


@pytest.fixture(scope="session")
def reference_quick_run(tmp_path_factory: pytest.TempPathFactory) -> ReferenceRun:
    """The reference against every rule in the quick profile, once per test process (an xdist
    worker is one): the run that every rule passes on the reference (test_reference_passes) and
    the corpus the correct variants replay (test_mutants) are this one run, not one each.

    Only for what does not compare check counts with a run made elsewhere:
    tests/kit/test_shard.py makes its own, back to back (its comparison once differed by one
    check, under a load of 3.4 on 2 cores; the cause is not established -- the drawn
    scenarios do not depend on the local modules loaded, checked by hand on every focus)."""
    corpus = tmp_path_factory.mktemp("reference-quick") / "corpus.jsonl"
    with quiet():  # the reference logs its scripted failures
        result = run_suite(ReferenceAdapter(), profile="quick", write_corpus=corpus)
    return ReferenceRun(result, corpus)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests marked ``long(SECONDS)`` (five seconds or more of wall time, waiting included, as
    measured here) start first, the longest first: under ``-n 2`` the other core works while
    one waits on a deadline, and no long test is left to run alone at the session's end."""

    def seconds(item: pytest.Item) -> float:
        marker = item.get_closest_marker("long")
        return float(marker.args[0]) if marker is not None else 0.0

    items.sort(key=seconds, reverse=True)  # stable: the others keep their order
