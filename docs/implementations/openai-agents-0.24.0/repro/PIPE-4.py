"""PIPE-4 on openai-agents 0.24.0: a FunctionTool built from a JSON schema validates nothing.

The tool's params_json_schema requires `path` and allows no other key; the model sends
{"file": "README.md"}. The raw FunctionTool's body runs with it: on_invoke_tool gets
"The arguments from the LLM, as a JSON string" (agents/tool.py:473). The same call to a
@function_tool (whose pydantic model validates) returns an error to the model instead.
Exit 0: reproduced. Exit 1: the raw tool no longer runs on refused arguments.
"""

import asyncio
import sys

from agents import Agent, FunctionTool, Runner, function_tool, set_tracing_disabled
from agents.testing import ScriptedModel, assistant_message, function_call

set_tracing_disabled(True)
SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}},
          "required": ["path"], "additionalProperties": False}
ran: list[str] = []


async def read_file_raw(ctx, args_json: str) -> str:
    ran.append(f"raw {args_json}")
    return "contents"


@function_tool
def read_file(path: str) -> str:
    """Reads a file."""
    ran.append(f"typed {path}")
    return "contents"


async def call(tool) -> None:
    model = ScriptedModel([[function_call("read_file", '{"file": "README.md"}', call_id="c1")],
                           [assistant_message("done")]])
    await Runner.run(Agent(name="main", model=model, tools=[tool]), "go")


async def main() -> int:
    raw = FunctionTool(name="read_file", description="Reads a file.",
                       params_json_schema=SCHEMA, on_invoke_tool=read_file_raw,
                       strict_json_schema=False)
    await call(raw)
    await call(read_file)
    print(f"bodies run: {ran}")
    if ran == ['raw {"file": "README.md"}']:
        return 0
    print("no longer reproduces: expected only the raw tool's body to run", file=sys.stderr)
    return 1


sys.exit(asyncio.run(main()))
