"""The seed's worked example, steps 8-10, as a runnable module.

Run it with ``python -m reference.example``. It builds one registry the way a
host would -- a file-policy listener, a permission listener, a guard, the
timeout policy, tracing at every stage -- and walks three calls through it:

* step 8: ``read_file({"path": "package.json"})`` is allowed by a file-policy
  listener that delegates with ``next()``, passes the guard, runs inside the
  timeout wrapper, and returns a canonical JSON value that ``output.render``
  turns into model content (PIPE-1, PRE-1, GUARD-1, EXEC-5, OUT-1, OUT-2);
* step 9: ``edit_file`` attaches a diff to ``meta`` (OUT-3) and its
  ``present_result`` is pure, so the live view and the view replayed from the
  serialized log entry are identical (OUT-4);
* step 10: ``bash("pnpm lint")`` is a side-effecting command: the permission
  listener short-circuits with ``ask``; the approval service sees the call id
  and the reason but no arguments (PRE-5); ``allowed-once`` lets it run and
  ``finalize_content`` caps the content (FIN-3); with the service
  ``unavailable`` the same call is denied and the body never runs (PRE-4).

Everything is in memory: the "file system" is a dict and the "shell" is a
canned lint run. No real I/O happens.
"""

from __future__ import annotations

import asyncio
import difflib
import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from reference._signal import AbortController
from reference._types import (
    ApprovalRequest,
    DispatchExecution,
    ToolExecution,
    ToolExecutionInput,
    ToolResult,
    ask,
)
from reference.registry import Registry

__all__ = [
    "MAX_BASH_CONTENT",
    "RecordingApproval",
    "StepOutcome",
    "World",
    "bash_tool",
    "build_registry",
    "edit_file_tool",
    "main",
    "present_result_edit",
    "read_file_tool",
    "run",
    "step_8_read_file",
    "step_9_edit_file",
    "step_10_bash",
]

MAX_BASH_CONTENT = 120  # the bash tool's own cap on model-visible content (FIN-3)

Next = Callable[[], Awaitable[Any]]


def _initial_files() -> dict[str, str]:
    return {
        "package.json": json.dumps(
            {"name": "demo", "version": "1.0.0", "scripts": {"lint": "eslint ."}}, indent=2
        ),
        "README.md": "# demo\n\nA demo project.\n",
    }


@dataclass
class World:
    """The in-memory environment of one example run."""

    files: dict[str, str] = field(default_factory=_initial_files)
    trace: list[str] = field(default_factory=list)  # stages entered, in order
    session_log: list[dict[str, Any]] = field(default_factory=list)  # `tool/result` entries
    bash_runs: list[str] = field(default_factory=list)  # commands the bash body really ran


class RecordingApproval:
    """An approval service with a fixed answer that records every request (PRE-4, PRE-5)."""

    def __init__(self, answer: str, trace: list[str] | None = None) -> None:
        self.answer = answer
        self.trace = trace
        self.requests: list[ApprovalRequest] = []

    async def request(self, request: ApprovalRequest) -> str:
        self.requests.append(request)
        if self.trace is not None:
            self.trace.append(f"approval:{self.answer}")
        return self.answer


def _text(value: str) -> list[dict[str, str]]:
    return [{"type": "text", "text": value}]


# ------------------------------------------------------------------------ tools


def read_file_tool(world: World) -> dict[str, Any]:
    """Step 8's tool: returns ``{"path", "content"}`` from the fake file system."""

    async def execute(args: Mapping[str, Any], ctx: Any) -> dict[str, Any]:
        world.trace.append("body")
        return {"path": args["path"], "content": world.files[args["path"]]}

    return {
        "name": "read_file",
        "description": "Read a UTF-8 text file from the workspace.",
        "parameters": {
            "type": "object",
            "properties": {"path": {"type": "string"}},
            "required": ["path"],
            "additionalProperties": False,
        },
        "output": {
            "schema": {
                "type": "object",
                "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
                "required": ["path", "content"],
            },
            "render": lambda args, value: _text(value["content"]),
        },
        "execute": execute,
        "timeout_ms": 5_000,
        "is_concurrency_safe": lambda args: True,
        "present_call": lambda args: {"title": f"Read {args['path']}"},
    }


def _diff(path: str, before: str, after: str) -> str:
    lines = difflib.unified_diff(
        before.splitlines(keepends=True),
        after.splitlines(keepends=True),
        fromfile=f"a/{path}",
        tofile=f"b/{path}",
    )
    return "".join(lines)


def present_result_edit(args: Mapping[str, Any], result: Mapping[str, Any]) -> dict[str, Any]:
    """Step 9's pure presentation: a diff card from the arguments and the result JSON only."""
    if result.get("isError"):
        return {"title": f"Edit {args['path']} failed", "body": result["error"]["message"]}
    meta = result.get("meta") or {}
    return {
        "title": f"Edited {args['path']}",
        "diff": meta.get("diff", ""),
        "changed": result["value"]["changed"],
    }


def edit_file_tool(world: World) -> dict[str, Any]:
    """Step 9's tool: replaces text in a file; ``presentation_meta`` attaches a diff (OUT-3)."""

    async def execute(args: Mapping[str, Any], ctx: Any) -> dict[str, Any]:
        world.trace.append("body")
        before = world.files[args["path"]]
        after = before.replace(args["old"], args["new"], 1)
        world.files[args["path"]] = after
        return {"path": args["path"], "changed": before != after, "before": before, "after": after}

    def presentation_meta(args: Mapping[str, Any], value: Mapping[str, Any]) -> dict[str, Any]:
        return {"diff": _diff(value["path"], value["before"], value["after"])}

    return {
        "name": "edit_file",
        "description": "Replace the first occurrence of `old` with `new` in a file.",
        "parameters": {
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "old": {"type": "string"},
                "new": {"type": "string"},
            },
            "required": ["path", "old", "new"],
            "additionalProperties": False,
        },
        "output": {
            "schema": {
                "type": "object",
                "properties": {
                    "path": {"type": "string"},
                    "changed": {"type": "boolean"},
                    "before": {"type": "string"},
                    "after": {"type": "string"},
                },
                "required": ["path", "changed", "before", "after"],
            },
            "render": lambda args, value: _text(
                f"edited {value['path']}" if value["changed"] else f"no change in {value['path']}"
            ),
            "presentation_meta": presentation_meta,
        },
        "execute": execute,
        "present_call": lambda args: {"title": f"Edit {args['path']}"},
        "present_result": present_result_edit,
    }


LINT_OUTPUT = "\n".join(
    ["> demo@1.0.0 lint", "> eslint ."]
    + [f"src/module{i}.ts: ok" for i in range(12)]
    + ["", "0 problems"]
)


def bash_tool(world: World) -> dict[str, Any]:
    """Step 10's tool: a canned shell; ``finalize_content`` caps the content it shows."""

    async def execute(args: Mapping[str, Any], ctx: Any) -> dict[str, Any]:
        world.trace.append("body")
        world.bash_runs.append(args["command"])
        return {"exitCode": 0, "stdout": LINT_OUTPUT}

    def finalize_content(execution: ToolExecution, result: ToolResult) -> Any:
        world.trace.append("finalize")
        text = "".join(b.get("text", "") for b in result.content)
        if len(text) <= MAX_BASH_CONTENT:
            return None  # FIN-3: nothing returned keeps the content
        omitted = len(text) - MAX_BASH_CONTENT
        return _text(text[:MAX_BASH_CONTENT] + f"\n[... {omitted} characters truncated]")

    return {
        "name": "bash",
        "description": "Run a shell command in the workspace.",
        "parameters": {
            "type": "object",
            "properties": {"command": {"type": "string"}},
            "required": ["command"],
            "additionalProperties": False,
        },
        "output": {
            "schema": {
                "type": "object",
                "properties": {"exitCode": {"type": "integer"}, "stdout": {"type": "string"}},
                "required": ["exitCode", "stdout"],
            },
            "render": lambda args, value: _text(
                f"exit code {value['exitCode']}\n{value['stdout']}"
            ),
        },
        "execute": execute,
        "finalize_content": finalize_content,
        "timeout_ms": 60_000,
        "present_call": lambda args: {"title": f"$ {args['command']}"},
    }


# --------------------------------------------------------------------- registry


def build_registry(world: World, approval: RecordingApproval | None) -> Registry:
    """One host's registry: policy listeners, a guard, the timeout policy, stage tracing."""
    registry = Registry(mode="native", approval=approval)
    registry.register(read_file_tool(world))
    registry.register(edit_file_tool(world))
    registry.register(bash_tool(world))

    async def file_policy(execution: ToolExecution, next_: Next) -> Any:
        world.trace.append("pre-execute:file-policy")
        return await next_()  # PRE-1: no opinion here, delegate down the waterfall

    async def permission(execution: ToolExecution, next_: Next) -> Any:
        world.trace.append("pre-execute:permission")
        if execution.name == "bash":  # session policy `ask` for side-effecting commands
            return ask("side-effecting command")  # short-circuits the rest (PRE-1)
        return await next_()

    def workspace_guard(execution: ToolExecution) -> str | None:
        world.trace.append("guard")
        path = (execution.arguments or {}).get("path")
        if isinstance(path, str) and (path.startswith("/") or ".." in path):
            return "path outside the workspace"
        return None  # GUARD-1: no objection

    async def tracing(dispatch: DispatchExecution, next_: Next) -> Any:
        world.trace.append("execute:timeout-wrapped")
        return await next_()

    async def post(execution: ToolExecution, result: ToolResult, next_: Next) -> Any:
        world.trace.append("post-execute")
        return await next_()

    def observe(execution: ToolExecution, result: ToolResult) -> None:
        world.trace.append("tools/result")
        world.session_log.append(
            {
                "type": "tool/result",
                "id": execution.call_id,
                "name": execution.name,
                "arguments": json.loads(json.dumps(_plain(execution.arguments))),
                "result": result.to_json(),
            }
        )

    registry.on("tools/pre-execute", file_policy)
    registry.on("tools/pre-execute", permission)
    registry.guard(workspace_guard)
    registry.use_timeout_policy()  # EXEC-5: the outermost tools/execute wrapper
    registry.on("tools/execute", tracing)
    registry.on("tools/post-execute", post)
    registry.on("tools/result", observe)
    return registry


def _plain(value: Any) -> Any:
    from reference._json import thaw

    return thaw(value)


# ------------------------------------------------------------------------ steps


@dataclass
class StepOutcome:
    """What one step produced, for the narrative and for tests."""

    title: str
    result: ToolResult
    trace: list[str]
    approval_requests: list[ApprovalRequest] = field(default_factory=list)
    bash_runs: list[str] = field(default_factory=list)
    live_view: Any = None
    replayed_view: Any = None


async def _call(registry: Registry, call_id: str, name: str, arguments: Any) -> ToolResult:
    signal = AbortController().signal  # CANCEL-1: every call has a caller-owned signal
    return await registry.execute(
        ToolExecutionInput(call_id, name, arguments, signal, agent="main")
    )


async def step_8_read_file() -> StepOutcome:
    """Step 8: ``read_file({"path": "package.json"})`` end to end."""
    world = World()
    registry = build_registry(world, RecordingApproval("allowed-once"))
    raw = '{"path": "package.json"}'  # what the model streamed
    result = await _call(registry, "call_8", "read_file", json.loads(raw))
    return StepOutcome("step 8: read_file package.json", result, world.trace)


async def step_9_edit_file() -> StepOutcome:
    """Step 9: ``edit_file`` on README.md; the diff card is identical on replay."""
    world = World()
    registry = build_registry(world, RecordingApproval("allowed-once"))
    args = {"path": "README.md", "old": "A demo project.", "new": "A demo project, edited."}
    result = await _call(registry, "call_9", "edit_file", args)
    definition = registry.get("edit_file")
    assert definition is not None
    present = definition["present_result"]
    live = present(args, result.to_json())  # while streaming
    entry = json.loads(json.dumps(world.session_log[-1]))  # the durable log, read back
    replayed = present(entry["arguments"], entry["result"])  # when replaying the session
    return StepOutcome(
        "step 9: edit_file README.md", result, world.trace, live_view=live, replayed_view=replayed
    )


async def step_10_bash(answer: str = "allowed-once") -> StepOutcome:
    """Step 10: ``bash("pnpm lint")`` under policy ``ask``; the service answers ``answer``."""
    world = World()
    approval = RecordingApproval(answer, world.trace)
    registry = build_registry(world, approval)
    result = await _call(registry, "call_10", "bash", {"command": "pnpm lint"})
    return StepOutcome(
        f"step 10: bash pnpm lint (approval answers {answer!r})",
        result,
        world.trace,
        approval_requests=list(approval.requests),
        bash_runs=list(world.bash_runs),
    )


async def run() -> list[StepOutcome]:
    """All steps, in the seed's order."""
    return [
        await step_8_read_file(),
        await step_9_edit_file(),
        await step_10_bash("allowed-once"),
        await step_10_bash("unavailable"),
    ]


def _narrate(outcome: StepOutcome) -> str:
    lines = [f"== {outcome.title}", "stages: " + " -> ".join(outcome.trace)]
    for request in outcome.approval_requests:
        lines.append(
            f"approval asked: call_id={request.call_id!r} reason={request.reason!r} "
            "(no arguments in the request)"
        )
    if outcome.approval_requests:
        ran = ", ".join(outcome.bash_runs) or "nothing"
        lines.append(f"body ran: {ran}")
    lines.append("result: " + json.dumps(outcome.result.to_json(), ensure_ascii=False))
    if outcome.live_view is not None:
        same = outcome.live_view == outcome.replayed_view
        lines.append(f"live view == replayed view: {same}")
        lines.append(str(outcome.live_view["diff"]).rstrip())
    return "\n".join(lines)


def main() -> int:
    """Print the narrative of steps 8-10; exit status 0."""
    for outcome in asyncio.run(run()):
        print(_narrate(outcome))
        print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
