"""`type: echo`: an agent that says back what the user said, in capital letters."""
from typing import Literal

from pydantic import BaseModel, ConfigDict

from runner.run.agents import Agent, TurnContext

KIND = "echo"


class Options(BaseModel):
    model_config = ConfigDict(extra="forbid")

    type: Literal["echo"]
    prefix: str = ""


class EchoAgent(Agent):
    kind = KIND

    def __init__(self, name: str, options: Options):
        self.name = name
        self.options = options

    async def turn(self, messages: list[dict], ctx: TurnContext) -> list[dict]:
        said = next((m.get("content") or "" for m in reversed(messages) if m.get("role") == "user"), "")
        return [{"role": "assistant", "content": (self.options.prefix + str(said)).upper()}]


def create(name: str, definition: Options, env: object) -> EchoAgent:
    return EchoAgent(name, definition)
