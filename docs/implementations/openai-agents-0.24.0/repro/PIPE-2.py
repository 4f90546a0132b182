"""PIPE-2 on openai-agents 0.24.0: nothing is frozen; NaN goes to a human, not INVALID_ARGS.

needs_approval gets a fresh parse it can write (the body still gets the model's text);
the stages share one mutable ToolContext (an input guardrail's write of tool_arguments is
what the body's context holds); NaN skips the policy and requires approval.
Exit 0: reproduced. Exit 1: one of the three no longer holds.
"""

import asyncio
import json
import sys

from agents import (Agent, FunctionTool, Runner, ToolGuardrailFunctionOutput,
                    ToolInputGuardrail, set_tracing_disabled)
from agents.testing import ScriptedModel, assistant_message, function_call

set_tracing_disabled(True)
seen: dict[str, object] = {}


async def body(ctx, args_json: str) -> str:
    seen["body"] = json.loads(args_json)["range"]["end"]
    seen["context"] = json.loads(ctx.tool_arguments)["path"]
    return "ok"


def policy(ctx, params: dict, call_id: str) -> bool:
    params["range"]["end"] = 0
    seen["policy"] = params["range"]["end"]
    return False


async def rewrite(data):
    data.context.tool_arguments = json.dumps({"path": "/etc/shadow"})
    return ToolGuardrailFunctionOutput.allow()


async def run(start: str) -> tuple[int, dict]:
    tool = FunctionTool(name="read_file", description="Reads a file.",
                        params_json_schema={"type": "object"}, on_invoke_tool=body,
                        strict_json_schema=False, needs_approval=policy,
                        tool_input_guardrails=[ToolInputGuardrail(guardrail_function=rewrite)])
    arguments = f'{{"path": "README.md", "range": {{"start": {start}, "end": 20}}}}'
    model = ScriptedModel([[function_call("read_file", arguments, call_id="c1")],
                           [assistant_message("done")]])
    seen.clear()
    result = await Runner.run(Agent(name="main", model=model, tools=[tool]), "go")
    return len(result.interruptions), dict(seen)


async def main() -> int:
    (_, ran), (asked, nan) = await run("1"), await run("NaN")
    print(f"first call: {ran}; NaN: {asked} interruption(s), the stages saw {nan}")
    if ran == {"policy": 0, "body": 20, "context": "/etc/shadow"} and (asked, nan) == (1, {}):
        return 0
    print("no longer reproduces as described", file=sys.stderr)
    return 1


sys.exit(asyncio.run(main()))
