"""DEF-2 (difference): the ToolDefinition a model receives holds the tool's own parameters
dict (the one given to Tool.from_schema), not a copy: a model that edits it in place changes
what every later request, of every run and agent with that tool, carries. Models whose
profile has a json_schema_transformer get a deep copy instead; FunctionModel and a custom
Model without one do not. Exit 0 while it reproduces (pydantic-ai-slim 2.68.0)."""

import asyncio
import sys

from pydantic_ai import Agent, Tool
from pydantic_ai.messages import ModelResponse, TextPart
from pydantic_ai.models.function import FunctionModel

schema = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}


async def read_file(path: str) -> str:
    return "contents"


tool = Tool.from_schema(read_file, name="read_file", description="Read a file.", json_schema=schema)
seen: list[tuple[bool, dict]] = []


def model(messages, info):
    (definition,) = info.function_tools
    parameters = definition.parameters_json_schema
    seen.append((parameters is schema, dict(parameters["properties"]["path"])))
    parameters["properties"]["path"]["type"] = "number"  # a model editing its request in place
    return ModelResponse(parts=[TextPart("done")])


async def main() -> None:
    await Agent(FunctionModel(model), tools=[tool]).run("first")
    await Agent(FunctionModel(model), tools=[tool]).run("second, another agent")


asyncio.run(main())
print("(the definition's parameters are the tool's own dict, path schema seen):", seen)
if seen != [(True, {"type": "string"}), (True, {"type": "number"})]:
    sys.exit("DEF-2 no longer reproduces: each request carries its own copy of the parameters")
