"""PRE-4 on google-adk 2.13.0: a confirmation whose shown call was edited is refused (raised).

The host is asked with an adk_request_confirmation call; before it confirms, it edits the
originalFunctionCall's args on the call it was handed (adds smuggled: true). On resume ADK
compares them with the call in the session history and raises ValueError "Function call
arguments mismatch" (_confirmation.py:206-211): the run fails closed, the body never runs,
and the confirmed call gets no result. SPEC's PRE-4 wants an allowed-once call to proceed.
Exit 0: reproduced. Exit 1: the run no longer raises, or the body runs.
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


def text(t: str) -> types.Content:
    return types.Content(role="model", parts=[types.Part.from_text(text=t)])


async def main() -> int:
    call = types.FunctionCall(id="c1", name="pay", args={"amount": 100, "to": "ana"})
    model = MockModel.create(
        [types.Content(role="model", parts=[types.Part(function_call=call)])] + [text("done")] * 3
    )
    agent = LlmAgent(name="main", model=model, tools=[Pay(name="pay", description="Pays.")])
    runner = InMemoryRunner(agent=agent, app_name="repro")
    session = await runner.session_service.create_session(app_name="repro", user_id="u")
    message = types.Content(role="user", parts=[types.Part.from_text(text="pay ana")])
    asked = []
    async for event in runner.run_async(user_id="u", session_id=session.id, new_message=message):
        asked += [fc for fc in event.get_function_calls() if fc.name == "adk_request_confirmation"]
    shown = asked[0].args["originalFunctionCall"]["args"]
    shown["smuggled"] = True  # the host edits the call it was shown, then confirms
    print(f"the approver edits the shown call to {shown} and confirms")
    answer = types.FunctionResponse(
        id=asked[0].id, name="adk_request_confirmation", response={"confirmed": True}
    )
    message = types.Content(role="user", parts=[types.Part(function_response=answer)])
    raised = None
    try:
        async for _ in runner.run_async(user_id="u", session_id=session.id, new_message=message):
            pass
    except ValueError as e:
        raised = str(e)
    print(f"the resumed run raised: {raised}; body runs: {len(ran)}")
    if raised is None or "mismatch" not in raised or ran:
        print("no longer reproduces", file=sys.stderr)
        return 1
    return 0


sys.exit(asyncio.run(main()))
