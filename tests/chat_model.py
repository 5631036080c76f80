"""A chat model for agent tests: it answers by a rule of the conversation it is sent, so
concurrent runs never take each other's replies, and it records every request."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import Field

Rule = Callable[[Sequence[BaseMessage]], AIMessage]


@dataclass(frozen=True)
class Request:
    """What the model was sent once: the messages (the system message first) and tool names."""

    messages: list[BaseMessage]
    tools: list[str]

    @property
    def system(self) -> str:
        first = self.messages[0] if self.messages else None
        return first.text if isinstance(first, SystemMessage) else ""

    @property
    def human(self) -> str:
        """The latest human message as the model saw it (recalled memory included)."""
        return next(m.text for m in reversed(self.messages) if isinstance(m, HumanMessage))


def tool_call(name: str, **args: Any) -> AIMessage:
    return AIMessage("", tool_calls=[{"name": name, "args": args, "id": uuid.uuid4().hex}])


def remember_or_answer(messages: Sequence[BaseMessage]) -> AIMessage:
    """``remember: FACT`` saves FACT to the user's profile, then answers; anything else is
    answered at once. Only the first line counts: recalled memory follows it."""
    last = messages[-1]
    if isinstance(last, ToolMessage):
        return AIMessage(f"Noted ({last.name}).")
    said = next(m for m in reversed(messages) if isinstance(m, HumanMessage)).text.split("\n")[0]
    if said.startswith("remember: "):
        fact = said.removeprefix("remember: ")
        return tool_call("memory", action="add", target="user", content=fact)
    return AIMessage(f"You said: {said}")


class ScriptedModel(GenericFakeChatModel):
    """``bind_tools`` returns a copy that knows the tools and shares the record of requests."""

    messages: Iterator[AIMessage | str] = Field(default_factory=lambda: iter(()))
    rule: Rule = remember_or_answer
    requests: list[Request] = Field(default_factory=list)
    bound: list[str] = Field(default_factory=list)

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedModel:
        names = [convert_to_openai_tool(tool)["function"]["name"] for tool in tools]
        return self.model_copy(update={"bound": names})

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.requests.append(Request(list(messages), list(self.bound)))
        return ChatResult(generations=[ChatGeneration(message=self.rule(messages))])

    def sent_to(self, words: str) -> list[Request]:
        """The requests whose latest human message starts with ``words``."""
        return [r for r in self.requests if r.human.startswith(words)]
