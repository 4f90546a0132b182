"""POST-4 on openai-agents 0.24.0: a ToolOutputGuardrail that raises fails the whole run.

The body runs, then the output guardrail raises: Runner.run raises
UserError("Error running tool edit: scanner crashed") (agents/run_internal/
tool_execution.py:1859-1861). The call gets no result; nothing turns into a success. The
SDK's convention: exceptions from guardrails and hooks propagate out of the run.
Exit 0: reproduced. Exit 1: the run no longer raises (e.g. an error result instead).
"""

import asyncio
import sys

from agents import Agent, FunctionTool, Runner, ToolOutputGuardrail, UserError, set_tracing_disabled
from agents.testing import ScriptedModel, assistant_message, function_call

set_tracing_disabled(True)
ran: list[str] = []


async def edit(ctx, args_json: str) -> str:
    ran.append(args_json)
    return "edited"


async def scanner(data):
    raise RuntimeError("scanner crashed")


async def main() -> int:
    tool = FunctionTool(name="edit", description="Edits a file.",
                        params_json_schema={"type": "object"}, on_invoke_tool=edit,
                        strict_json_schema=False,
                        tool_output_guardrails=[ToolOutputGuardrail(guardrail_function=scanner)])
    model = ScriptedModel([[function_call("edit", '{"path": "a"}', call_id="c1")],
                           [assistant_message("done")]])
    try:
        result = await Runner.run(Agent(name="main", model=model, tools=[tool]), "go")
    except UserError as e:
        print(f"the body ran {len(ran)} time(s); Runner.run raised UserError: {e}")
        if ran and "scanner crashed" in str(e):
            return 0
        print("no longer reproduces: not the guardrail's error after the body", file=sys.stderr)
        return 1
    print(f"no longer reproduces: the run completed ({result.final_output!r})", file=sys.stderr)
    return 1


sys.exit(asyncio.run(main()))
