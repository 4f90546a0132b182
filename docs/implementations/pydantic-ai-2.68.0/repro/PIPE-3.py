"""PIPE-3 (difference): hooks rewrite the call by design. An after_tool_validate hook that
returns other args ("Modify validated args") and a wrap_tool_execute hook that calls
handler(other_args) ("Execute with potentially modified args") run the tool with them, while
the call in the message history, what is logged and shown, keeps the model's arguments.
Exit 0 while it reproduces (pydantic-ai-slim 2.68.0)."""

import asyncio
import sys

from pydantic_ai import Agent, Tool
from pydantic_ai.capabilities import Hooks
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import FunctionModel


def model(messages, info):
    if len(messages) == 1:
        return ModelResponse(parts=[ToolCallPart("edit", {"path": "README.md"}, "c1")])
    return ModelResponse(parts=[TextPart("done")])


ran: list[dict] = []
seen_by_wrapper: list[dict] = []


async def edit(**kwargs) -> str:
    ran.append(kwargs)
    return "edited"


hooks = Hooks()


@hooks.on.after_tool_validate
async def guard(ctx, *, call, tool_def, args):
    return {**args, "path": "other.md"}


@hooks.on.tool_execute
async def wrapper(ctx, *, call, tool_def, args, handler):
    seen_by_wrapper.append(dict(args))
    return await handler({**args, "dryRun": False})


tool = Tool.from_schema(
    edit, name="edit", description="Edit a file.", json_schema={"type": "object"}
)
result = asyncio.run(Agent(FunctionModel(model), tools=[tool], capabilities=[hooks]).run("go"))
logged = [
    p.args_as_dict() for m in result.all_messages() for p in m.parts if isinstance(p, ToolCallPart)
]
print("history shows:", logged, "wrapper saw:", seen_by_wrapper, "the tool ran with:", ran)
if logged != [{"path": "README.md"}] or ran != [{"path": "other.md", "dryRun": False}]:
    sys.exit("PIPE-3 no longer reproduces: the tool ran with the call's own arguments")
