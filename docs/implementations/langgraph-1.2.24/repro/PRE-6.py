"""PRE-6 on langgraph 1.2.24 + langchain 1.5.2: a HITL `when` predicate's answer is tested
for truth, so a predicate that returns None (a buggy policy: an unhandled branch) means
"auto-approve" and the gated tool runs without any interrupt.

`InterruptOnConfig.when` "Receives a `ToolCallRequest` and returns `True` to interrupt or
`False` to auto-approve" (langchain/agents/middleware/human_in_the_loop.py:365-366); the
middleware tests `not when(request)` (:746). None is outside that declared contract;
tracked as langchain-ai/langchain#40200 (closed).
Exit 0: reproduced. Exit 1: a None predicate no longer runs the tool unreviewed.
"""

import asyncio
import sys

from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.tools import StructuredTool
from langgraph.checkpoint.memory import InMemorySaver


class Model(GenericFakeChatModel):
    def bind_tools(self, tools, **kwargs):  # the scripted model has none; create_agent needs it
        return self


async def outcome(answer: object) -> tuple[int, int]:
    """(interrupts, body runs) of one gated call whose predicate returns ``answer``."""
    ran: list[dict] = []

    async def edit(**kwargs):
        ran.append(kwargs)
        return "edited"

    tool = StructuredTool.from_function(
        coroutine=edit,
        name="edit",
        description="Edits.",
        args_schema={"type": "object", "properties": {}},
    )
    call = {"name": "edit", "args": {}, "id": "c1"}
    model = Model(messages=iter([AIMessage("", tool_calls=[call]), "done"]))
    gate = {"allowed_decisions": ["approve", "reject"], "when": lambda request: answer}
    hitl = HumanInTheLoopMiddleware({"edit": gate}, interrupt_mode="per_call")
    agent = create_agent(model, tools=[tool], middleware=[hitl], checkpointer=InMemorySaver())
    interrupts = 0
    config = {"configurable": {"thread_id": "1"}}
    async for update in agent.astream(
        {"messages": [("user", "go")]}, config, stream_mode="updates"
    ):
        interrupts += len(update.get("__interrupt__", ()))
    return interrupts, len(ran)


async def main() -> int:
    gated, unreviewed = await outcome(True), await outcome(None)
    print(f"when -> True: {gated[0]} interrupt(s), body ran {gated[1]} time(s)")
    print(f"when -> None: {unreviewed[0]} interrupt(s), body ran {unreviewed[1]} time(s)")
    return 0 if gated == (1, 0) and unreviewed == (0, 1) else 1


sys.exit(asyncio.run(main()))
