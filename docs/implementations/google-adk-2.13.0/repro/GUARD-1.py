"""GUARD-1 on google-adk 2.13.0: the before-tool callbacks run before the confirmation gate.

SPEC puts guards after the permission waterfall and its approval. ADK runs an agent's
before_tool_callback first and consults the tool's confirmation gate only when no callback
answered the call (_caller.py:505-570: "No before-tool callback answered the call, so
proceed calling the tool normally. A tool that requires confirmation is answered by the
gate instead"). A guard that objects therefore closes the call before anyone is asked, and
a guard that lets it through runs again on the resumed, confirmed run.
Exit 0: reproduced. Exit 1: the order changed.
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
        order.append("confirmation check")
        return True

    async def run_async(self, *, args, tool_context):
        order.append("body")
        ran.append(dict(args))
        return {"sent": True}


order: list[str] = []


def guard(tool, args, tool_context):
    order.append("guard")
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
        before_tool_callback=guard,
    )
    runner = InMemoryRunner(agent=agent, app_name="repro")
    session = await runner.session_service.create_session(app_name="repro", user_id="u")
    message = types.Content(role="user", parts=[types.Part.from_text(text="pay ana")])
    asked = []
    async for event in runner.run_async(user_id="u", session_id=session.id, new_message=message):
        asked += [fc for fc in event.get_function_calls() if fc.name == "adk_request_confirmation"]
    shown = asked[0].args["originalFunctionCall"]["args"]
    order.append("host asked")
    print(f"the approver is shown {shown} and confirms")
    answer = types.FunctionResponse(
        id=asked[0].id, name="adk_request_confirmation", response={"confirmed": True}
    )
    message = types.Content(role="user", parts=[types.Part(function_response=answer)])
    async for _ in runner.run_async(user_id="u", session_id=session.id, new_message=message):
        pass
    print(f"order: {order}")
    if order[:3] != ["guard", "confirmation check", "host asked"] or "guard" not in order[3:]:
        print("no longer reproduces", file=sys.stderr)
        return 1
    return 0


sys.exit(asyncio.run(main()))
