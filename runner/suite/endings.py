"""How a conversation can end: the one list of termination reasons.

The conversation engine (runner/run/conversation.py, the simulated user, the agent kinds) ends every
conversation with one of these, and a case's `termination:` lists the ones it accepts. The suite's models
read this list for the enum of `termination` (so `validate` refuses a misspelt ending, with a did-you-mean),
which is why it lives in a module that imports nothing.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Literal

TERMINATION_REASONS: dict[str, str] = {
    "user_stop": "the simulated user said it was done",
    "script_end": "the scripted user messages ran out (no simulator, or no story)",
    "max_turns": "max_user_turns user messages were sent",
    "repeating": "the simulated user started repeating itself",
    "agent_stop": "the agent ended the conversation (a reply with \"stop\": true)",
    "max_tool_rounds": "a model target kept calling tools for max_tool_rounds rounds",
    "agent_error": "the agent failed (see error)",
    "simulator_error": "the simulated user could not produce a message (see error)",
    "timeout": "the case took longer than its timeout",
    "no_user_message": "the case has no starting_sentence, user_prompts or story to start with",
}

ENDINGS_HELP = "; ".join(f"{name}: {meaning}" for name, meaning in TERMINATION_REASONS.items())  # for the schema
if TYPE_CHECKING:  # a Literal built at run time is a str to the type checker
    Ending = str
else:
    Ending = Literal[tuple(TERMINATION_REASONS)]  # what `termination:` may list
