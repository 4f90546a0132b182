"""DEF-2 on openai-agents 0.24.0: a tool's wire entry holds the tool's own schema dict.

Converter.convert_tools (what the Responses model sends, agents/models/openai_responses.py:
2211-2217) puts `"parameters": tool.params_json_schema` into the entry, not a copy: code
that edits a converted entry in place (a provider adapter, a request hook) edits the
FunctionTool, and every later request carries the edit. The whitelist half of DEF-2 holds:
a host field set on the FunctionTool does not reach the entry (printed, not asserted: the
finding is the aliasing).
Exit 0: reproduced. Exit 1: the entry's parameters are a copy.
"""

import sys

from agents import FunctionTool
from agents.models.openai_responses import Converter

SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}


async def read_file(ctx, args_json: str) -> str:
    return "contents"


def main() -> int:
    tool = FunctionTool(name="read_file", description="Reads a file.",
                        params_json_schema=SCHEMA, on_invoke_tool=read_file,
                        strict_json_schema=False)
    tool.x_owner = "host-team"  # a host-only field on the tool object
    (first,) = Converter.convert_tools([tool], []).tools
    keys = sorted(first)
    aliased = first["parameters"] is tool.params_json_schema
    first["parameters"]["properties"]["path"]["type"] = "number"  # an in-place edit
    (second,) = Converter.convert_tools([tool], []).tools
    later = second["parameters"]["properties"]["path"]["type"]
    print(f"entry keys {keys}; parameters is the tool's dict: {aliased}; "
          f"the next request's path type: {later!r}")
    if aliased and later == "number":
        return 0
    print("no longer reproduces: the entry's parameters are a copy", file=sys.stderr)
    return 1


sys.exit(main())
