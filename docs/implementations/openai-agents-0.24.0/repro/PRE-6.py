"""PRE-6 on openai-agents 0.24.0: a needs_approval policy's answer is bool()-coerced.

A callable needs_approval declared to return a bool that returns None, 0, '' or {}
(a buggy policy: an unhandled branch) means "no approval needed": the tool runs without
an interruption. A truthy non-bool ('deny', {'kind': 'deny'}) interrupts. The maintainers
closed openai/openai-agents-python#4845 on exactly this: "values outside the declared
boolean callback contract".
Exit 0: reproduced. Exit 1: a falsy non-bool no longer runs the tool.
"""

import asyncio
import sys

from agents import Agent, FunctionTool, Runner, set_tracing_disabled
from agents.testing import ScriptedModel, assistant_message, function_call

set_tracing_disabled(True)


async def outcome(answer: object) -> tuple[int, int]:
    """(interruptions, body runs) of one call whose policy returns ``answer``."""
    ran: list[str] = []

    async def edit(ctx, args_json: str) -> str:
        ran.append(args_json)
        return "edited"

    tool = FunctionTool(name="edit", description="Edits a file.",
                        params_json_schema={"type": "object"}, on_invoke_tool=edit,
                        strict_json_schema=False,
                        needs_approval=lambda ctx, params, call_id: answer)
    model = ScriptedModel([[function_call("edit", '{"path": "a"}', call_id="c1")],
                           [assistant_message("done")]])
    result = await Runner.run(Agent(name="main", model=model, tools=[tool]), "go")
    return len(result.interruptions), len(ran)


async def main() -> int:
    failures = []
    for answer in (None, 0, "", {}):
        got = await outcome(answer)
        print(f"needs_approval -> {answer!r}: (interruptions, runs) = {got}")
        if got != (0, 1):
            failures.append(f"{answer!r} no longer runs the tool unapproved: {got}")
    for answer in ("deny", {"kind": "deny"}):
        got = await outcome(answer)
        print(f"needs_approval -> {answer!r}: (interruptions, runs) = {got}")
        if got != (1, 0):
            failures.append(f"{answer!r} no longer interrupts: {got}")
    for failure in failures:
        print(f"no longer reproduces: {failure}", file=sys.stderr)
    return 1 if failures else 0


sys.exit(asyncio.run(main()))
