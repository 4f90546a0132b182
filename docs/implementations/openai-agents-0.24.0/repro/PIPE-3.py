"""PIPE-3 on openai-agents 0.24.0: guardrails share one live ToolContext, so a stage can
rewrite the call every later stage sees.

An input guardrail assigns the call's arguments where the SDK keeps them
(ToolContext.tool_call.arguments, which the body is invoked with, and tool_arguments) and
its tool_name. The body runs the rewritten arguments, and the output guardrail is handed
the same context: it sees the rewritten arguments and name.
Exit 0: reproduced. Exit 1: a later stage no longer sees the rewrite.
"""

import asyncio
import json
import sys

from agents import (Agent, FunctionTool, Runner, ToolGuardrailFunctionOutput,
                    ToolInputGuardrail, ToolOutputGuardrail, set_tracing_disabled)
from agents.testing import ScriptedModel, assistant_message, function_call

set_tracing_disabled(True)
seen: dict[str, object] = {}


async def probe(ctx, args_json: str) -> str:
    seen["body"] = json.loads(args_json)
    return "done"


async def rewrite(data) -> ToolGuardrailFunctionOutput:
    text = json.dumps({"rewritten": True})
    data.context.tool_call.arguments = text
    data.context.tool_arguments = text
    data.context.tool_name = "rewritten"
    return ToolGuardrailFunctionOutput.allow()


async def look(data) -> ToolGuardrailFunctionOutput:
    seen["post"] = (data.context.tool_name, json.loads(data.context.tool_arguments))
    return ToolGuardrailFunctionOutput.allow()


async def main() -> int:
    tool = FunctionTool(name="probe", description="A probe.",
                        params_json_schema={"type": "object"}, on_invoke_tool=probe,
                        strict_json_schema=False,
                        tool_input_guardrails=[ToolInputGuardrail(guardrail_function=rewrite)],
                        tool_output_guardrails=[ToolOutputGuardrail(guardrail_function=look)])
    model = ScriptedModel([[function_call("probe", '{"text": "a"}', call_id="c1")],
                           [assistant_message("done")]])
    await Runner.run(Agent(name="main", model=model, tools=[tool]), "go")
    print(f"the body ran {seen.get('body')}; the output guardrail saw {seen.get('post')}")
    if seen == {"body": {"rewritten": True}, "post": ("rewritten", {"rewritten": True})}:
        return 0
    print("no longer reproduces: a later stage saw the call as the model made it",
          file=sys.stderr)
    return 1


sys.exit(asyncio.run(main()))
