"""PIPE-1..6: the five-stage pipeline, and the disposers of its listeners and guards."""

from __future__ import annotations

import contextlib
import math
from typing import Any

import pytest
from conftest import Approval, code_of, execute, tool

from reference import Registry, allow, ask, thaw


def staged_registry(events: list[str], *, ask_first: bool = False) -> Registry:
    def body(args: Any, ctx: Any) -> str:
        events.append("body")
        return "ok"

    def finalize(execution: Any, result: Any) -> None:
        events.append("finalize")

    r = Registry(approval=Approval())
    r.register(tool("t", body, finalize_content=finalize))

    async def pre(execution: Any, next_: Any) -> Any:
        events.append("pre-execute")
        return ask("check") if ask_first else await next_()

    async def wrapper(dispatch: Any, next_: Any) -> Any:
        events.append("execute:before")
        result = await next_()
        events.append("execute:after")
        return result

    async def post(execution: Any, result: Any, next_: Any) -> Any:
        events.append("post-execute")
        return await next_()

    def guard(execution: Any) -> None:
        events.append("guard")

    r.on("tools/pre-execute", pre)
    r.guard(guard)
    r.on("tools/execute", wrapper)
    r.on("tools/post-execute", post)
    r.on("tools/result", lambda e, res: events.append("result"))
    return r


def test_PIPE_1_stage_order() -> None:
    """PIPE-1: pre -> guards -> wrappers -> body -> post -> finalize -> result."""
    events: list[str] = []
    result = execute(staged_registry(events), "t")
    assert not result.is_error
    assert events == [
        "pre-execute",
        "guard",
        "execute:before",
        "body",
        "execute:after",
        "post-execute",
        "finalize",
        "result",
    ]


def test_PIPE_1_approval_sits_between_waterfall_and_guards() -> None:
    """PIPE-1: an ask goes to approval after the waterfall and before the guards."""
    events: list[str] = []
    r = staged_registry(events, ask_first=True)
    approval = Approval()
    original = approval.request

    async def request(req: Any) -> Any:
        events.append("approval")
        return await original(req)

    approval.request = request  # type: ignore[method-assign]
    r.approval = approval
    execute(r, "t")
    assert events[:3] == ["pre-execute", "approval", "guard"]
    assert events.count("body") == 1


def test_PIPE_1_each_stage_runs_at_most_once_even_if_next_called_twice() -> None:
    """PIPE-1: calling next() twice does not run the rest of a chain twice."""
    events: list[str] = []
    r = staged_registry(events)

    async def greedy_pre(execution: Any, next_: Any) -> Any:
        await next_()
        return await next_()

    async def greedy_wrapper(dispatch: Any, next_: Any) -> Any:
        await next_()
        return await next_()

    async def greedy_post(execution: Any, result: Any, next_: Any) -> Any:
        await next_()
        return await next_()

    r.on("tools/pre-execute", greedy_pre, prepend=True)
    r.on("tools/execute", greedy_wrapper, prepend=True)
    r.on("tools/post-execute", greedy_post, prepend=True)
    assert not execute(r, "t").is_error
    for stage in ("pre-execute", "guard", "execute:before", "body", "post-execute", "finalize"):
        assert events.count(stage) == 1, stage
    assert events.count("result") == 1


def test_PIPE_2_arguments_are_snapshotted() -> None:
    """PIPE-2: later changes to the caller's object change nothing."""
    caller_args: dict[str, Any] = {"path": "a.txt", "opts": {"deep": [1]}}
    seen: list[Any] = []

    def pre(execution: Any, next_: Any) -> Any:
        caller_args["path"] = "evil.txt"  # the caller mutates its own object mid-call
        caller_args["opts"]["deep"].append(2)
        return allow()

    r = Registry()
    r.register(
        tool(
            "t",
            lambda a, c: seen.append(thaw(a)) or "ok",
            parameters={"type": "object"},
        )
    )
    r.on("tools/pre-execute", pre)
    execute(r, "t", caller_args)
    assert seen == [{"path": "a.txt", "opts": {"deep": [1]}}]


def test_PIPE_2_arguments_are_deep_frozen_for_every_stage() -> None:
    """PIPE-2: no stage can change the arguments, at any depth."""
    attempts: list[str] = []

    def try_mutate(where: str, args: Any) -> None:
        for mutate in (
            lambda: args.__setitem__("path", "x"),
            lambda: args.__delitem__("path"),
            lambda: args["opts"].__setitem__("k", 1),
            lambda: args["opts"]["deep"].append(2),
        ):
            try:
                mutate()
            except (TypeError, AttributeError):
                attempts.append(where)
            else:
                attempts.append(f"{where}: MUTATED")

    def body(args: Any, ctx: Any) -> str:
        try_mutate("body", args)
        return "ok"

    def pre(execution: Any, next_: Any) -> Any:
        try_mutate("pre", execution.arguments)
        return allow()

    def post(execution: Any, result: Any, next_: Any) -> Any:
        try_mutate("post", execution.arguments)
        return next_()

    r = Registry()
    r.register(tool("t", body, parameters={"type": "object"}))
    r.on("tools/pre-execute", pre)
    r.guard(lambda e: try_mutate("guard", e.arguments))
    r.on("tools/post-execute", post)
    result = execute(r, "t", {"path": "a", "opts": {"deep": [1]}})
    assert not result.is_error
    assert not [a for a in attempts if "MUTATED" in a]
    assert attempts.count("body") == 4 and attempts.count("pre") == 4


@pytest.mark.parametrize(
    "arguments",
    [{"x": math.nan}, {"x": {1, 2}}, {1: "key"}, {"f": print}],
    ids=["nan", "set", "int-key", "function"],
)
def test_PIPE_2_non_lossless_arguments_error_before_policy(arguments: Any) -> None:
    """PIPE-2: non-lossless arguments are an error result that reaches neither policy nor body."""
    events: list[str] = []
    results: list[Any] = []
    r = Registry()
    r.register(tool("t", lambda a, c: events.append("body") or "ok", parameters={"type": "object"}))
    r.on("tools/pre-execute", lambda e, n: events.append("pre") or allow())
    r.guard(lambda e: events.append("guard"))
    r.on("tools/result", lambda e, res: results.append(res))
    result = execute(r, "t", arguments)
    assert result.is_error
    assert code_of(result) == "INVALID_ARGS"
    assert events == []
    assert results == [result]  # the normal result path: exactly one tools/result


def test_PIPE_2_cyclic_arguments_error() -> None:
    """PIPE-2: cyclic arguments are not lossless JSON."""
    arguments: dict[str, Any] = {}
    arguments["me"] = arguments
    r = Registry()
    r.register(tool("t", parameters={"type": "object"}))
    assert code_of(execute(r, "t", arguments)) == "INVALID_ARGS"


def test_PIPE_3_pre_execute_cannot_rewrite_arguments() -> None:
    """PIPE-3: what pre-execute saw (and what is logged) is what runs."""
    seen: list[Any] = []
    r = Registry()
    r.register(tool("t", lambda a, c: seen.append(thaw(a)) or "ok"))
    r.on("tools/pre-execute", lambda e, n: {"kind": "allow", "arguments": {"path": "/etc/passwd"}})
    result = execute(r, "t", {"path": "a.txt"})
    assert seen in ([], [{"path": "a.txt"}])  # either fails closed or runs the original
    assert {"path": "/etc/passwd"} not in seen
    assert result.is_error or seen == [{"path": "a.txt"}]


def test_PIPE_3_wrapper_cannot_rewrite_arguments() -> None:
    """PIPE-3: the tools/execute view's arguments are not replaceable."""
    errors: list[type[BaseException]] = []
    seen: list[Any] = []

    async def wrapper(dispatch: Any, next_: Any) -> Any:
        try:
            dispatch.arguments = {"path": "evil"}
        except AttributeError as e:
            errors.append(type(e))
        return await next_()

    r = Registry()
    r.register(tool("t", lambda a, c: seen.append(thaw(a)) or "ok"))
    r.on("tools/execute", wrapper)
    execute(r, "t", {"path": "a.txt"})
    assert errors and seen == [{"path": "a.txt"}]


def test_PIPE_3_every_stage_sees_the_same_arguments() -> None:
    """PIPE-3: pre-execute, guard, wrapper, body, post-execute, finalizer and observers agree."""
    seen: dict[str, Any] = {}
    r = Registry()

    def body(args: Any, ctx: Any) -> str:
        seen["body"] = thaw(args)
        return "ok"

    def finalize(e: Any, res: Any) -> None:
        seen["finalize"] = thaw(e.arguments)

    r.register(tool("t", body, finalize_content=finalize))
    r.on("tools/pre-execute", lambda e, n: seen.__setitem__("pre", thaw(e.arguments)) or n())
    r.guard(lambda e: seen.__setitem__("guard", thaw(e.arguments)))

    async def wrapper(d: Any, n: Any) -> Any:
        seen["execute"] = thaw(d.arguments)
        return await n()

    r.on("tools/execute", wrapper)
    r.on("tools/post-execute", lambda e, res, n: seen.__setitem__("post", thaw(e.arguments)) or n())
    r.on("tools/result", lambda e, res: seen.__setitem__("result", thaw(e.arguments)))
    execute(r, "t", {"path": "a.txt"})
    assert len(seen) == 7
    assert all(v == {"path": "a.txt"} for v in seen.values())


@pytest.mark.parametrize(
    "arguments", [{"path": 3}, {"path": None}, {"path": "x", "extra": 1}, []], ids=repr
)
def test_PIPE_4_schema_violation_is_invalid_args(arguments: Any) -> None:
    """PIPE-4: the body never runs with arguments violating `parameters`; INVALID_ARGS instead."""
    entered: list[str] = []
    results: list[Any] = []
    fin: list[Any] = []
    r = Registry()
    r.register(
        tool(
            "t",
            lambda a, c: entered.append("body") or "ok",
            parameters={
                "type": "object",
                "properties": {"path": {"type": "string"}},
                "additionalProperties": False,
            },
            finalize_content=lambda e, res: fin.append(res) and None,
        )
    )
    r.on("tools/result", lambda e, res: results.append(res))
    result = execute(r, "t", arguments)
    assert result.is_error
    assert code_of(result) == "INVALID_ARGS"
    assert entered == []
    assert results == [result] and len(fin) == 1  # the normal result path


def test_PIPE_4_valid_arguments_run() -> None:
    """PIPE-4: arguments satisfying the schema reach the body."""
    r = Registry()
    r.register(tool("t", parameters={"type": "object", "required": ["path"]}))
    assert not execute(r, "t", {"path": "x"}).is_error
    assert code_of(execute(r, "t", {})) == "INVALID_ARGS"


def test_PIPE_6_a_disposer_removes_exactly_its_registration_of_the_same_listener() -> None:
    """PIPE-6: the same function registered twice is two registrations; each disposer
    removes its own, and a spent one run again removes nothing."""
    seen: list[str] = []

    async def pre(execution: Any, next_: Any) -> Any:
        seen.append("pre")
        return await next_()

    r = Registry()
    r.register(tool("t", lambda a, c: "ok"))
    first = r.on("tools/pre-execute", pre)
    second = r.on("tools/pre-execute", pre)
    execute(r, "t")
    assert seen == ["pre", "pre"]
    second()
    second()  # spent: removes nothing, not the first registration of the same function
    seen.clear()
    execute(r, "t")
    assert seen == ["pre"]
    first()
    seen.clear()
    execute(r, "t")
    assert seen == []


def test_PIPE_6_guard_and_observer_disposers_leave_their_neighbours() -> None:
    """PIPE-6: disposing one guard or observer, out of order and twice, leaves the others of
    any scope where they were."""
    seen: list[str] = []

    def guard(name: str) -> Any:
        return lambda execution: seen.append(name)

    def observer(name: str) -> Any:
        return lambda execution, result: seen.append(name)

    r = Registry()
    r.register(tool("t", lambda a, c: "ok"))
    a = r.guard(guard("guard-a"))
    r.guard(guard("guard-scoped"), scope="main")
    r.guard(guard("guard-b"))
    r.on("tools/result", observer("log"))
    audit = r.on("tools/result", observer("audit"))
    audit()
    a()
    a()
    audit()
    execute(r, "t", agent="main")
    assert sorted(seen[:2]) == ["guard-b", "guard-scoped"]  # (their order is GUARD-3's)
    assert seen[2:] == ["log"]


@pytest.mark.parametrize("stage", ["guard", "wrapper"])
def test_PIPE_7_a_rename_after_approval_does_not_run_another_body(stage: str) -> None:
    """PIPE-7: the approver consented to ``read_file``; a guard or wrapper that then writes
    another tool's name on the execution does not make ``write_file``'s body run."""
    ran: list[str] = []

    def body(name: str) -> Any:
        return lambda args, ctx: ran.append(name) or name

    r = Registry(approval=Approval("allowed-once"))
    r.register(tool("read_file", body("read_file")))
    r.register(tool("write_file", body("write_file")))
    r.on("tools/pre-execute", lambda execution, next_: ask("reads your files"))

    def rename(execution: Any) -> None:
        with contextlib.suppress(AttributeError, TypeError):  # refused: as good as ignored
            execution.name = "write_file"

    if stage == "guard":
        r.guard(lambda execution: rename(execution))
    else:

        async def wrapper(dispatch: Any, next_: Any) -> Any:
            rename(dispatch)
            return await next_()

        r.on("tools/execute", wrapper)
    execute(r, "read_file", {"path": "notes.md"}, agent="main")
    assert "write_file" not in ran
