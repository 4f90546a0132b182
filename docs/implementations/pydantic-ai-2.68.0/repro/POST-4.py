"""POST-4 (difference from SPEC's error-result form): an after_tool_execute hook that raises
is not turned into an error result for the call: the exception propagates out of Agent.run
("hook failures ... propagate"), so the caller gets no result for the call (none, and no
success either); only ToolFailed / ModelRetry from a hook become a tool result. Exit 0 while
it reproduces (pydantic-ai-slim 2.68.0)."""

import asyncio
import sys

from pydantic_ai import Agent
from pydantic_ai.capabilities import Hooks
from pydantic_ai.exceptions import ToolFailed
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import FunctionModel


def model(messages, info):
    if len(messages) == 1:
        return ModelResponse(parts=[ToolCallPart("read", {}, "c1")])
    return ModelResponse(parts=[TextPart("done")])


def run(error: Exception) -> str:
    hooks = Hooks()

    @hooks.on.after_tool_execute
    async def scanner(ctx, *, call, tool_def, args, result):
        raise error

    agent = Agent(FunctionModel(model), capabilities=[hooks])
    agent.tool_plain(lambda: "contents", name="read")
    try:
        result = asyncio.run(agent.run("go"))
    except Exception as e:
        return f"raised {type(e).__name__}: {e}"
    parts = [p for m in result.all_messages() for p in m.parts if isinstance(p, ToolReturnPart)]
    return f"result {[(p.outcome, p.content) for p in parts]}"


crash, failed = run(RuntimeError("scanner crashed")), run(ToolFailed("blocked"))
print("a raising hook:", crash, "| ToolFailed from the hook:", failed)
if crash != "raised RuntimeError: scanner crashed" or "failed" not in failed:
    sys.exit("POST-4 no longer reproduces: a raising after_tool_execute hook became a tool result")
