"""PIPE-4 (difference): a tool registered from a JSON schema (Tool.from_schema, the way to
register a JSON-schema tool) is not validated ("Schema validation of the arguments is
skipped"): the body runs on arguments the schema refuses. A typed tool given the same
arguments gets a retry instead. Exit 0 while it reproduces (pydantic-ai-slim 2.68.0)."""

import asyncio
import sys

from pydantic_ai import Agent, Tool
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import FunctionModel


def model(messages, info):
    if len(messages) == 1:
        return ModelResponse(parts=[ToolCallPart("read_file", {"file": "README.md"}, "c1")])
    return ModelResponse(parts=[TextPart("done")])


ran: list[dict] = []


async def read_file(**kwargs) -> str:
    ran.append(kwargs)
    return "contents"


schema = {
    "type": "object",
    "properties": {"path": {"type": "string"}},
    "required": ["path"],
    "additionalProperties": False,
}
tool = Tool.from_schema(read_file, name="read_file", description="Read a file.", json_schema=schema)
typed = Agent(FunctionModel(model))


@typed.tool_plain(name="read_file")
def typed_read_file(path: str) -> str:
    ran.append({"typed": path})
    return "contents"


def outcomes(agent: Agent) -> list[str]:
    result = asyncio.run(agent.run("go"))
    return [
        p.outcome for m in result.all_messages() for p in m.parts if isinstance(p, ToolReturnPart)
    ]


raw, checked = outcomes(Agent(FunctionModel(model), tools=[tool])), outcomes(typed)
print("ran:", ran, "from_schema outcome:", raw, "typed tool outcome:", checked)
if ran != [{"file": "README.md"}] or raw != ["success"] or checked != ["retried"]:
    sys.exit("PIPE-4 no longer reproduces: the from_schema tool refused the arguments")
