"""A recorded conversation -> a draft case: what the user said, what the agent did, what it answered.

The draft is the conversation written as goals, so that it passes against its own recording and a
person only has to look at the lines marked in comments:

- `starting_sentence` and `user_prompts`: the user's messages, in order;
- one `tool_call` goal per call, in call order, chained in `goals`; each argument's mode chosen by the
  rules of argmodes.py; the call's result as its `output` (what a model target's played tool returns);
- calls that failed, calls whose arguments could not be read, and exact repeats of an earlier call are
  left out (as watsonx Orchestrate's `record` does), each named in the header;
- the last thing the agent said as a `text` goal: the answer itself as `response`, and the facts in it
  (dates, amounts, numbers, codes, names) as `keywords`.

Rendering to YAML text (with the comments) is draft_text.py's job.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

from ...transcripts.read import ToolCall, Trajectory, content_text
from ...util.secrets import clip
from .answer import answer_keywords
from .argmodes import ArgChoice, Evidence, choose_modes

ANSWER_GOAL = "answer"


class NothingToCheck(Exception):
    """The conversation holds no successful call and no answer: a draft of it could check nothing."""


@dataclass
class DraftToolGoal:
    name: str
    tool_name: str
    args: dict
    choices: list[ArgChoice]
    output: Any = None
    has_output: bool = False
    message_number: int = 0  # the recorded message (from 1) that made the call
    notes: list[str] = field(default_factory=list)  # comments on the goal's first line

    @property
    def arg_matching(self) -> dict[str, str]:
        return {c.path: c.mode for c in self.choices if c.mode != "strict"}


@dataclass
class DraftTextGoal:
    name: str
    response: str
    keywords: list[str]
    message_number: int = 0
    notes: list[str] = field(default_factory=list)


@dataclass
class DraftCase:
    id: str
    starting_sentence: str | None
    user_prompts: list[str]
    goal_details: list[DraftToolGoal | DraftTextGoal]
    order: list[str]  # goal names in the order the conversation achieved them: chained in `goals`
    header: list[str] = field(default_factory=list)  # comment lines above the case
    description: str | None = None
    story: str | None = None
    agent: str | None = None
    transcript: str | None = None  # path relative to the suite file
    judge_wrote: set[str] = field(default_factory=set)  # which parts --annotate's judge wrote: story, keywords, ...

    @property
    def goals(self) -> dict[str, list[str]]:
        return {a: [b] for a, b in pairwise(self.order)}

    def as_data(self) -> dict:
        """The case as suite data (what the loader builds a Case from), without comments."""
        data: dict[str, Any] = {"id": self.id}
        if self.description:
            data["description"] = self.description
        if self.agent:
            data["agent"] = self.agent
        if self.story:
            data["story"] = self.story
        if self.starting_sentence is not None:
            data["starting_sentence"] = self.starting_sentence
        if self.user_prompts:
            data["user_prompts"] = list(self.user_prompts)
        if self.goals:
            data["goals"] = self.goals
        details = []
        for goal in self.goal_details:
            if isinstance(goal, DraftToolGoal):
                item: dict[str, Any] = {"type": "tool_call", "name": goal.name, "tool_name": goal.tool_name,
                                        "args": goal.args}
                if goal.arg_matching:
                    item["arg_matching"] = goal.arg_matching
                if goal.has_output:
                    item["output"] = goal.output
            else:
                item = {"type": "text", "name": goal.name, "response": goal.response}
                if goal.keywords:
                    item["keywords"] = list(goal.keywords)
            details.append(item)
        data["goal_details"] = details
        if self.transcript:
            data["transcript"] = self.transcript
        return data


def draft_case(trajectory: Trajectory, case_id: str) -> DraftCase:
    """The draft of one conversation (see the module's docstring); NothingToCheck when it would be empty."""
    messages = trajectory.messages
    user_messages = [content_text(m.get("content")) for m in messages if m.get("role") == "user"]
    header: list[str] = []
    goals: list[DraftToolGoal | DraftTextGoal] = []
    names: set[str] = set()
    seen: dict[str, int] = {}  # an exact call (name + arguments) -> the message that first made it
    results: list[tuple[str, str]] = []
    positioned: list[tuple[tuple[int, int], str]] = []

    for call in trajectory.tool_calls:
        number = call.message_index + 1
        left_out = _left_out(call, seen)
        if call.answered:
            results.append((call.name, content_text(call.result)))
        if left_out:
            header.append(f"left out: message {number}'s call to {call.name}: {left_out}")
            continue
        user_before = "\n".join(content_text(m.get("content")) for m in messages[:call.message_index]
                                if m.get("role") == "user")
        evidence = Evidence(user_before, tuple(results[:-1] if call.answered else results))
        goal = DraftToolGoal(name=_unique(call.name, names), tool_name=call.name, args=call.arguments or {},
                             choices=choose_modes(call.arguments or {}, evidence), message_number=number)
        if call.answered:
            goal.output, goal.has_output = _output(call.result), True
        else:
            goal.notes.append("the recording has no result for this call")
        goals.append(goal)
        positioned.append((call.position, goal.name))

    final = trajectory.texts[-1] if trajectory.texts else None
    if final is not None:
        keywords = answer_keywords(final.text)
        answer = DraftTextGoal(name=_unique(ANSWER_GOAL, names), response=final.text, keywords=keywords,
                               message_number=final.message_index + 1)
        answer.notes.append(f"check: the agent's last answer (message {answer.message_number}); keep the facts "
                            "that matter in keywords")
        goals.append(answer)
        positioned.append((final.position, answer.name))
    if not goals:
        reason = "; ".join(header) if header else "the agent called no tool"
        raise NothingToCheck(f"the agent said nothing and made no call a goal could check ({reason})")
    order = [name for _, name in sorted(positioned)]
    return DraftCase(id=case_id, starting_sentence=user_messages[0] if user_messages else None,
                     user_prompts=user_messages[1:], goal_details=goals, order=order, header=header)


def _left_out(call: ToolCall, seen: dict[str, int]) -> str:
    """Why the call is not a goal ("" when it is one): it failed, or repeats an earlier call exactly."""
    if call.arguments_error:
        return f"its {call.arguments_error}"
    if call.is_error:
        return "it failed (" + _short(content_text(call.result)) + ")"
    key = json.dumps([call.name, call.arguments], sort_keys=True, ensure_ascii=False, default=str)
    if key in seen:
        return f"it repeats the call of message {seen[key]} exactly"
    seen[key] = call.message_index + 1
    return ""


def _output(result: Any) -> Any:
    """The recorded result as the tool's `output`: a JSON object or list written as text is kept as data."""
    if isinstance(result, str) and result.lstrip()[:1] in ("{", "["):
        try:
            parsed = json.loads(result)
        except ValueError:
            return result
        if isinstance(parsed, (dict, list)):
            return parsed
    return result


def _unique(name: str, taken: set[str]) -> str:
    candidate, n = name, 1
    while candidate in taken:
        n += 1
        candidate = f"{name}_{n}"
    taken.add(candidate)
    return candidate


def _short(text: str, limit: int = 60) -> str:
    return clip(" ".join(text.split()), limit)
