"""CANCEL-4 on google-adk 2.13.0: after_tool_callback runs for a call that has not run yet.

A tool that requires confirmation is held: ADK's gate answers the call with
{'error': 'This tool call requires confirmation, please approve or reject.'}
(_confirmation_utils.py:65-69) and that answer goes through the after-tool callbacks like
a tool's result (_caller.py:597-625). An after_tool_callback is therefore called for the
call before the human answered and before the body ran, then again after the confirmed
body ran. The kit reads this as post-execute running before the body settled.
Exit 0: reproduced. Exit 1: the callback is no longer called for the held call.
"""

import asyncio
import sys

from google.adk.agents import LlmAgent
from google.adk.cli.agent_test_runner import MockModel
from google.adk.runners import InMemoryRunner
from google.adk.tools.base_tool import BaseTool
from google.genai import types

ran: list[dict] = []


class Pay(BaseTool):
    def _get_declaration(self) -> types.FunctionDeclaration:
        return types.FunctionDeclaration(
            name=self.name, description=self.description, parameters_json_schema={"type": "object"}
        )

    async def check_require_confirmation(self, args, tool_context) -> bool:
        return True

    async def run_async(self, *, args, tool_context):
        ran.append(dict(args))
        return {"sent": True}


seen: list[tuple[int, object]] = []


def after(tool, args, tool_context, tool_response):
    seen.append((len(ran), tool_response))  # (body runs so far, the response it is handed)
    return None


def text(t: str) -> types.Content:
    return types.Content(role="model", parts=[types.Part.from_text(text=t)])


async def main() -> int:
    call = types.FunctionCall(id="c1", name="pay", args={"amount": 100, "to": "ana"})
    model = MockModel.create(
        [types.Content(role="model", parts=[types.Part(function_call=call)])] + [text("done")] * 3
    )
    agent = LlmAgent(
        name="main",
        model=model,
        tools=[Pay(name="pay", description="Pays.")],
        after_tool_callback=after,
    )
    runner = InMemoryRunner(agent=agent, app_name="repro")
    session = await runner.session_service.create_session(app_name="repro", user_id="u")
    message = types.Content(role="user", parts=[types.Part.from_text(text="pay ana")])
    asked = []
    async for event in runner.run_async(user_id="u", session_id=session.id, new_message=message):
        asked += [fc for fc in event.get_function_calls() if fc.name == "adk_request_confirmation"]
    shown = asked[0].args["originalFunctionCall"]["args"]
    print(f"the approver is shown {shown} and confirms")
    answer = types.FunctionResponse(
        id=asked[0].id, name="adk_request_confirmation", response={"confirmed": True}
    )
    message = types.Content(role="user", parts=[types.Part(function_response=answer)])
    async for _ in runner.run_async(user_id="u", session_id=session.id, new_message=message):
        pass
    print(f"after_tool_callback calls (body runs so far, response): {seen}")
    first = seen[0] if seen else (None, None)
    held = isinstance(first[1], dict) and "requires confirmation" in str(first[1].get("error"))
    if first[0] != 0 or not held or len(ran) != 1:
        print("no longer reproduces", file=sys.stderr)
        return 1
    return 0


sys.exit(asyncio.run(main()))
