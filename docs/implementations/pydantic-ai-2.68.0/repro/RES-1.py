"""RES-1 (difference): result observers (Hooks on.event(FunctionToolResultEvent)) are not
frozen out and not always told. The published case: an after_tool_execute hook raises, the
run aborts, and the observer gets no notification (the run has no result). And an observer
is handed the ToolReturnPart that is in the caller's history itself, so its write changes
what the caller is told. Exit 0 while it reproduces (pydantic-ai-slim 2.68.0)."""

import asyncio
import sys

from pydantic_ai import Agent
from pydantic_ai.capabilities import Hooks
from pydantic_ai.messages import FunctionToolResultEvent, ToolReturnPart
from pydantic_ai.models.function import DeltaToolCall, FunctionModel


async def stream(messages, info):  # observers listen to a streamed run
    if len(messages) == 1:
        yield {0: DeltaToolCall("read", "{}", tool_call_id="c1")}
    else:
        yield "done"


def run(post_raises: bool) -> tuple[list[ToolReturnPart], list[ToolReturnPart] | str]:
    hooks, told = Hooks(), []

    @hooks.on.event(FunctionToolResultEvent)
    async def observer(ctx, event):
        told.append(event.part)
        event.part.content = "rewritten by the observer"

    async def scanner(ctx, *, call, tool_def, args, result):
        raise RuntimeError("crash")

    if post_raises:
        hooks.on.after_tool_execute(scanner)
    agent = Agent(FunctionModel(stream_function=stream), capabilities=[hooks])
    agent.tool_plain(lambda: "text", name="read")
    try:
        result = asyncio.run(agent.run("go"))
    except RuntimeError as e:
        return told, f"raised {e}"
    return told, [
        p for m in result.all_messages() for p in m.parts if isinstance(p, ToolReturnPart)
    ]


told, outcome = run(post_raises=True)
notified = len(told)
print("after_tool_execute raised:", outcome, "| notifications:", notified)
told, history = run(post_raises=False)
same = len(told) == 1 and len(history) == 1 and told[0] is history[0]
print("observer got the history's own part:", same, "| caller got:", [p.content for p in history])
if (
    outcome != "raised crash"
    or notified
    or not same
    or told[0].content != "rewritten by the observer"
):
    sys.exit("RES-1 no longer reproduces: observers are told of every call and cannot change it")
