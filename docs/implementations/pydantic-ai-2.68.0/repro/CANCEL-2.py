"""CANCEL-2 (difference): a run cancelled while a tool's after_tool_validate hook (the policy)
runs still starts that tool once the hook returns the args: the async body runs to completion,
then the run ends with RunCancelled, whose history keeps the call but not its result, so a run
resumed from it runs the body again. Routes: the caller's CancellationToken fired while the hook
runs (on the loop, or from a thread), the hook's ctx.cancel(). Exit 0 while it reproduces."""

import asyncio
import sys
import threading

from pydantic_ai import Agent, CancellationToken
from pydantic_ai.capabilities import Hooks
from pydantic_ai.exceptions import RunCancelled
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import FunctionModel


def model(messages, info):  # one tool call, then the final text
    if len(messages) == 1:
        return ModelResponse(parts=[ToolCallPart("bash", {"command": "make"}, "c1")])
    return ModelResponse(parts=[TextPart("done")])


async def cancelled_during_policy(route: str) -> tuple[str, int, int]:
    ran: list[str] = []
    token = CancellationToken()
    hooks = Hooks()

    @hooks.on.after_tool_validate
    async def policy(ctx, *, call, tool_def, args):
        if not ran and route == "thread":  # the caller presses stop while a policy check blocks
            caller = threading.Thread(target=token.cancel)
            caller.start()
            caller.join()
        elif not ran:  # cancelled while it decides (nobody cancels the resumed run)
            {"token": token.cancel, "ctx": ctx.cancel}[route]()
        return args  # ...and then it allows

    agent = Agent(FunctionModel(model), capabilities=[hooks])

    @agent.tool_plain
    async def bash(command: str) -> dict:  # an async tool runs on the run's loop
        ran.append(command)
        return {"exitCode": 0}

    try:
        await agent.run("build", cancellation_token=token)
        return "completed", len(ran), len(ran)
    except RunCancelled as e:
        after_cancel = len(ran)
        await agent.run(message_history=e.all_messages())  # the documented resume
        return "RunCancelled", after_cancel, len(ran)


for route in ("token", "thread", "ctx"):
    ended, cancelled, resumed = asyncio.run(cancelled_during_policy(route))
    print(f"cancelled ({route}) in the policy: {ended}; body runs {cancelled}, resumed {resumed}")
    if (ended, cancelled, resumed) != ("RunCancelled", 1, 2):
        sys.exit(f"CANCEL-2 no longer reproduces ({route}): the cancelled run ran no body")
