"""RES-1 on openai-agents 0.24.0: no tool_output event for a call whose run has no result.

The per-result notification is the streamed run's `tool_output` event. A guardrail
rejection gets one; a call whose run the caller cancels (RunResultStreaming.cancel) or a
raising guardrail fails (the stream raises UserError) has no result and no event.
Exit 0: reproduced. Exit 1: that changed.
"""

import asyncio
import sys

from agents import (Agent, FunctionTool, Runner, ToolGuardrailFunctionOutput,
                    ToolInputGuardrail, UserError, set_tracing_disabled)
from agents.testing import ScriptedModel, assistant_message, function_call

set_tracing_disabled(True)
streams: list = []


async def crunch(ctx, args_json: str) -> int:
    streams[-1].cancel()  # the caller aborts while the body runs
    return 42


async def reject(data):
    return ToolGuardrailFunctionOutput.reject_content("not allowed")


async def crash(data):
    raise RuntimeError("quota service down")


async def tool_outputs(guardrail=None) -> tuple[int, str]:
    guards = [ToolInputGuardrail(guardrail_function=guardrail)] if guardrail else None
    tool = FunctionTool(name="crunch", description="Crunches.",
                        params_json_schema={"type": "object"}, on_invoke_tool=crunch,
                        strict_json_schema=False, tool_input_guardrails=guards)
    model = ScriptedModel([[function_call("crunch", "{}", call_id="c1")],
                           [assistant_message("done")]])
    result = Runner.run_streamed(Agent(name="main", model=model, tools=[tool]), "go")
    streams.append(result)
    events = 0
    try:
        async for event in result.stream_events():
            events += getattr(event, "name", None) == "tool_output"
    except UserError as e:
        return events, f"raised {e}"
    return events, "completed"


async def main() -> int:
    got = {"rejected": await tool_outputs(reject), "cancelled": await tool_outputs(),
           "guard raised": await tool_outputs(crash)}
    print(f"(tool_output events, ending) per call: {got}")
    ok = [n for n, _ in got.values()] == [1, 0, 0] and "raised" in got["guard raised"][1]
    print("" if ok else "no longer reproduces as described", file=sys.stderr)
    return 0 if ok else 1


sys.exit(asyncio.run(main()))
