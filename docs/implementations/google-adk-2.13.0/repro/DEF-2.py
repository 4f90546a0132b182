"""DEF-2 on google-adk 2.13.0: two tools of one name are both declared to the model.

An LlmAgent given two tools with the same name accepts both: the request the model gets
lists two function declarations named read_file (with different descriptions), while a
call can reach only the last (ADK logs "Duplicate tool name 'read_file': the previously
registered tool is shadowed and can no longer be called."; google/adk-python#2406). The
model is shown a tool that can never run.
Exit 0: reproduced. Exit 1: the request no longer carries both declarations.
"""

import asyncio
import sys

from google.adk.agents import LlmAgent
from google.adk.cli.agent_test_runner import MockModel
from google.adk.runners import InMemoryRunner
from google.adk.tools.base_tool import BaseTool
from google.genai import types


class SchemaTool(BaseTool):
    """A tool written by hand, as ADK's BaseTool documents: its declaration and its run."""

    def _get_declaration(self) -> types.FunctionDeclaration:
        return types.FunctionDeclaration(
            name=self.name, description=self.description, parameters_json_schema={"type": "object"}
        )

    async def run_async(self, *, args, tool_context):
        return self.description


async def main() -> int:
    model = MockModel.create([types.Content(role="model", parts=[types.Part.from_text(text="ok")])])
    tools = [
        SchemaTool(name="read_file", description="layer 0: loose global"),
        SchemaTool(name="read_file", description="layer 2: loose global"),
    ]
    agent = LlmAgent(name="main", model=model, tools=tools)
    runner = InMemoryRunner(agent=agent, app_name="repro")
    session = await runner.session_service.create_session(app_name="repro", user_id="u")
    message = types.Content(role="user", parts=[types.Part.from_text(text="list")])
    async for _ in runner.run_async(user_id="u", session_id=session.id, new_message=message):
        pass
    config = model.requests[0].config
    declared = [
        (d.name, d.description) for t in config.tools or [] for d in t.function_declarations or []
    ]
    print(f"declarations sent to the model: {declared}")
    if [name for name, _ in declared] != ["read_file", "read_file"]:
        print("no longer reproduces: not two read_file declarations", file=sys.stderr)
        return 1
    return 0


sys.exit(asyncio.run(main()))
