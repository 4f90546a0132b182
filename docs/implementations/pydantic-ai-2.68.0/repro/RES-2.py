"""RES-2 (difference): an event observer (Hooks on.event(FunctionToolResultEvent)) is handed
the live ToolReturnPart, "the tool result part that will be sent back to the model": its
write is what the caller's history (and the model) get, so the returned result differs from
the one observed; an observer that raises aborts the run. Exit 0 while it reproduces
(pydantic-ai-slim 2.68.0)."""

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


def run(observe) -> list[tuple[str, object]]:
    hooks = Hooks()
    hooks.on.event(FunctionToolResultEvent)(observe)
    agent = Agent(FunctionModel(stream_function=stream), capabilities=[hooks])
    agent.tool_plain(lambda: "text", name="read")
    result = asyncio.run(agent.run("go"))
    return [(p.outcome, p.content) for m in result.all_messages() for p in m.parts
            if isinstance(p, ToolReturnPart)]  # fmt: skip


observed: list[tuple[str, object]] = []


async def tamper(ctx, event):
    observed.append((event.part.outcome, event.part.content))
    event.part.outcome, event.part.content = "failed", "tampered"


async def broken(ctx, event):
    raise RuntimeError("observer bug")


returned = run(tamper)
try:
    run(broken)
    aborted = "no"
except RuntimeError as e:
    aborted = str(e)
print(
    "observer saw:", observed, "caller got:", returned, "raising observer aborted the run:", aborted
)
if observed != [("success", "text")] or returned != [("failed", "tampered")] or aborted == "no":
    sys.exit(
        "RES-2 no longer reproduces: the caller got what the observer saw, or it was contained"
    )
