"""PRE-6 on google-adk 2.13.0: a confirmation check answering a non-bool lets the call run.

BaseTool.check_require_confirmation is declared to return a bool; ADK's gate holds a call
only on exactly True: "anything other than True lets the call through"
(_confirmation_utils.py:51-54, a deliberate choice). A policy that returns a malformed
answer -- {'kind': 'accept'}, 'ask', 1 -- runs the body without asking anyone.
Exit 0: reproduced. Exit 1: a non-bool answer no longer runs the body unasked.
"""

import asyncio
import sys

from google.adk.agents import LlmAgent
from google.adk.cli.agent_test_runner import MockModel
from google.adk.runners import InMemoryRunner
from google.adk.tools.base_tool import BaseTool
from google.genai import types

ran: list[dict] = []
ANSWER: object = None


class Pay(BaseTool):
    def _get_declaration(self) -> types.FunctionDeclaration:
        return types.FunctionDeclaration(
            name=self.name, description=self.description, parameters_json_schema={"type": "object"}
        )

    async def check_require_confirmation(self, args, tool_context):
        return ANSWER

    async def run_async(self, *, args, tool_context):
        ran.append(dict(args))
        return {"sent": True}


def text(t: str) -> types.Content:
    return types.Content(role="model", parts=[types.Part.from_text(text=t)])


async def main() -> tuple[int, int]:
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
    return len(asked), len(ran)


async def all_answers() -> int:
    global ANSWER
    failures = []
    for answer, expected in (
        ({"kind": "accept"}, (0, 1)),
        ("ask", (0, 1)),
        (1, (0, 1)),
        (True, (1, 0)),
    ):
        ANSWER = answer
        ran.clear()
        got = await main()
        print(f"check_require_confirmation -> {answer!r}: (questions, body runs) = {got}")
        if got != expected:
            failures.append(answer)
    if failures:
        print(f"no longer reproduces for {failures}", file=sys.stderr)
        return 1
    return 0


sys.exit(asyncio.run(all_answers()))
