"""A mutant: a recorded conversation changed in one place, the way an agent could plausibly have gone wrong,
and the helpers the operators share to find and change that place (a conversation's tool calls, their
arguments, the assistant's texts). Messages are OpenAI's form, as transcripts are normalised to; a mutant
never shares a dict with the recording it was made from.
"""
from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Mutant:
    """One change: its family (calls, arguments, answer, turns), its operator, what changed in words, and
    where (the message numbered from 1 as explanations number them, the call index from 0 in call order,
    the argument's dot path)."""

    family: str
    operator: str
    change: str
    make: Callable[[], list[dict]] = field(repr=False)  # the mutated conversation, made when first asked for
    message: int | None = None
    call_index: int | None = None
    arg_path: str | None = None
    before: Any = None
    after: Any = None
    _messages: list[dict] | None = field(default=None, init=False, repr=False)

    @property
    def messages(self) -> list[dict]:
        """Made lazily: a case has many more candidates than are chosen, and copying is most of their cost."""
        if self._messages is None:
            self._messages = self.make()
        return self._messages

    def fingerprint(self) -> str:
        """The mutated conversation as text: two operators that make the same conversation are one mutant."""
        return json.dumps(self.messages, sort_keys=True, ensure_ascii=False, default=str)


@dataclass(frozen=True)
class CallSite:
    """A tool call of the conversation: the message holding it (index from 0), its place in that message's
    `tool_calls`, its index in call order, its tool name and its arguments parsed (None when not an object)."""

    message_index: int
    position: int
    call_index: int
    name: str
    arguments: dict | None


def call_sites(messages: list[dict]) -> list[CallSite]:
    sites: list[CallSite] = []
    for index, message in enumerate(messages):
        if message.get("role") != "assistant":
            continue
        for position, call in enumerate(message.get("tool_calls") or ()):
            function = call.get("function") or {}
            sites.append(CallSite(index, position, len(sites), str(function.get("name", "")),
                                  parse_arguments(function.get("arguments"))))
    return sites


def parse_arguments(raw: Any) -> dict | None:
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str):
        try:
            value = json.loads(raw)
        except ValueError:
            return None
        return value if isinstance(value, dict) else None
    return None


def copied(messages: list[dict]) -> list[dict]:
    """A deep copy. Messages read from a transcript are JSON, and a JSON round trip copies them in a third of
    deepcopy's time (every operator copies the conversation: this is most of the cost of making mutants)."""
    try:
        return json.loads(json.dumps(messages, ensure_ascii=False))
    except (TypeError, ValueError):  # not JSON after all (a NaN, an object): copied the slow way
        return copy.deepcopy(messages)


def call_of(messages: list[dict], site: CallSite) -> dict:
    return messages[site.message_index]["tool_calls"][site.position]


def set_arguments(messages: list[dict], site: CallSite, arguments: dict) -> None:
    call_of(messages, site)["function"]["arguments"] = json.dumps(arguments, ensure_ascii=False)


def result_index(messages: list[dict], site: CallSite) -> int | None:
    """The index of the tool message answering the call, or None."""
    call_id = call_of(messages, site).get("id")
    if call_id is None:
        return None
    for index in range(site.message_index + 1, len(messages)):
        if messages[index].get("role") == "tool" and messages[index].get("tool_call_id") == call_id:
            return index
    return None


def assistant_texts(messages: list[dict]) -> list[int]:
    """Indexes of the assistant messages that say something (text content)."""
    return [i for i, m in enumerate(messages)
            if m.get("role") == "assistant" and isinstance(m.get("content"), str) and m["content"].strip()]


def leaves(value: Any, path: tuple = ()) -> Iterator[tuple[tuple, Any]]:
    """Every (path, value) of a JSON value, containers included (their path first), the root excepted."""
    if path:
        yield path, value
    if isinstance(value, dict):
        for key, item in value.items():
            yield from leaves(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from leaves(item, (*path, index))


def dotted(path: tuple) -> str:
    return ".".join(str(part) for part in path)


def replaced_at(value: Any, path: tuple, new: Any) -> Any:
    """A copy of `value` with the item at `path` replaced by `new`."""
    out = copy.deepcopy(value)
    target = out
    for part in path[:-1]:
        target = target[part]
    target[path[-1]] = new
    return out


def dropped_at(value: Any, path: tuple) -> Any:
    """A copy of `value` without the key or list item at `path`."""
    out = copy.deepcopy(value)
    target = out
    for part in path[:-1]:
        target = target[part]
    del target[path[-1]]
    return out
