"""A LangChain agent with memsvc memory: two turns, two sessions, no LLM needed.

    uv sync --extra langchain && uv run python examples/langgraph_agent.py

Turn 1 tells the agent a preference; the model saves it with the ``memory`` tool.
Turn 2 runs in a new thread (a new session): the saved fact is now in the frozen
snapshot the middleware puts into the system message. The model here is scripted;
swap in a real one with a single line (see ``model =`` below). Without
``MEMSVC_REDIS_URL`` memsvc runs an embedded worker in this process, on a throwaway
data dir unless ``MEMSVC_DATA_DIR`` names one.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from memsvc.client import MemoryClient
from memsvc.integrations.langchain import MemoryContext, MemoryMiddleware
from memsvc.logs import configure_logging
from memsvc.settings import ServiceSettings


class ScriptedModel(GenericFakeChatModel):
    """Replies from a script; shows the system message it is sent, as a real model reads it."""

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedModel:
        return self  # a real model binds the memory tools here

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        _say("  model's system message: " + messages[0].text.replace("\n", "\n  | "))
        return super()._generate(messages, *args, **kwargs)


def _say(text: str) -> None:
    sys.stdout.write(text + "\n")


async def main() -> None:
    with tempfile.TemporaryDirectory(prefix="memsvc-example-") as tmp:
        settings = ServiceSettings()
        configure_logging(settings.log_level)  # memsvc's own lines go to stderr
        if "MEMSVC_DATA_DIR" not in os.environ:
            settings = settings.model_copy(update={"data_dir": Path(tmp)})
        async with MemoryClient(settings=settings) as mem:
            save = {"action": "add", "target": "user", "content": "Prefers short answers"}
            model = ScriptedModel(
                messages=iter(
                    [
                        AIMessage("", tool_calls=[{"name": "memory", "args": save, "id": "c1"}]),
                        AIMessage("Noted: short answers from now on."),
                        AIMessage("Hi Alice. Short answer: yes."),
                    ]
                )
            )
            # model = init_chat_model("openai:gpt-5-mini")  # a real model: this line instead
            agent = create_agent(
                model,
                tools=[],
                system_prompt="You are a helpful assistant.",
                middleware=[MemoryMiddleware(mem)],
                context_schema=MemoryContext,
                checkpointer=InMemorySaver(),
            )
            alice = MemoryContext(user_id="alice", agent_id="assistant")
            for n, text in enumerate(["I prefer short answers.", "Can you help me?"], start=1):
                _say(f"turn {n}, a new thread: {text}")
                out = await agent.ainvoke(
                    {"messages": [HumanMessage(text)]},
                    config={"configurable": {"thread_id": uuid.uuid4().hex}},
                    context=alice,
                )
                _say(f"  answer: {out['messages'][-1].text}")


if __name__ == "__main__":
    asyncio.run(main())
