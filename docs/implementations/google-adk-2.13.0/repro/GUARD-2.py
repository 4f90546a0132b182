"""GUARD-2 on google-adk 2.13.0: an objecting before_tool_callback's answer is a success.

ADK has no denial type: a before_tool_callback's non-None return skips the tool and *is*
the call's response ("Any non-None response, including an empty dict, stops the callback
chain and skips the tool call", agents/llm_agent.py:552-554). A callback that returns a
value outside its declared Optional[dict] -- True, meaning "fine" or "objecting" -- skips
the tool as promised, and the model gets {'result': True}: nothing marks it an error.
Exit 0: reproduced. Exit 1: the body runs, or the response is no longer {'result': True}.
"""

import asyncio
import sys

from google.adk.agents import LlmAgent
from google.adk.cli.agent_test_runner import MockModel
from google.adk.runners import InMemoryRunner
from google.genai import types

ran: list[str] = []


def read_file(path: str) -> str:
    """Reads a file."""
    ran.append(path)
    return "contents"


async def main() -> int:
    call = types.Part(
        function_call=types.FunctionCall(id="c1", name="read_file", args={"path": "a"})
    )
    model = MockModel.create(
        [
            types.Content(role="model", parts=[call]),
            types.Content(role="model", parts=[types.Part.from_text(text="done")]),
        ]
    )
    agent = LlmAgent(
        name="main",
        model=model,
        tools=[read_file],
        before_tool_callback=lambda tool, args, tool_context: True,
    )
    runner = InMemoryRunner(agent=agent, app_name="repro")
    session = await runner.session_service.create_session(app_name="repro", user_id="u")
    message = types.Content(role="user", parts=[types.Part.from_text(text="go")])
    responses = []
    async for event in runner.run_async(user_id="u", session_id=session.id, new_message=message):
        responses += [r.response for r in event.get_function_responses()]
    print(f"body runs: {len(ran)}; responses the model got: {responses}")
    if ran or responses != [{"result": True}]:
        print("no longer reproduces", file=sys.stderr)
        return 1
    return 0


sys.exit(asyncio.run(main()))
