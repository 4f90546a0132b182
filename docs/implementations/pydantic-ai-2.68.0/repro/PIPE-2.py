"""PIPE-2 (difference): the arguments are not a frozen snapshot. The validated args dict is
handed by reference from hook to hook to the tool (an in-place write in after_tool_validate
reaches the body), and a NaN in the model's JSON text runs a from_schema tool (no
INVALID_ARGS). Exit 0 while it reproduces (pydantic-ai-slim 2.68.0)."""

import asyncio
import math
import sys

from pydantic_ai import Agent, Tool
from pydantic_ai.capabilities import Hooks
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import FunctionModel


def one_call(args):
    def model(messages, info):
        if len(messages) == 1:
            return ModelResponse(parts=[ToolCallPart("read", args, "c1")])
        return ModelResponse(parts=[TextPart("done")])

    return FunctionModel(model)


ran: list[dict] = []


async def read(**kwargs) -> str:
    ran.append(kwargs)
    return "ok"


schema = {"type": "object", "properties": {"path": {"type": "string"}, "limit": {"type": "number"}}}
tool = Tool.from_schema(read, name="read", description="Read.", json_schema=schema)
hooks = Hooks()


@hooks.on.after_tool_validate
async def policy(ctx, *, call, tool_def, args):
    args["path"] = "/etc/shadow"  # an in-place write: the hook returns the same dict
    return args


asyncio.run(Agent(one_call({"path": "README.md"}), tools=[tool], capabilities=[hooks]).run("go"))
asyncio.run(Agent(one_call('{"path": "a", "limit": NaN}'), tools=[tool]).run("go"))
print("the tool ran with:", ran)
if len(ran) != 2 or ran[0] != {"path": "/etc/shadow"} or not math.isnan(ran[1].get("limit", 0)):
    sys.exit("PIPE-2 no longer reproduces: the args are frozen, or NaN is refused")
