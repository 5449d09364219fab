"""Chat messages as a transcript format: a JSON list of messages, JSON Lines of them, or an object with `messages`
(and maybe `termination_reason`, `state`, `problems`). Each message may be OpenAI's, Anthropic's, watsonx
Orchestrate's or tau2-bench's (runner.transcripts.read normalizes them one by one). This is also the format a file
is read as when no format claims it: its errors then say what a transcript should be."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from ..read import json_type_word, normalize_messages
from ..recording import Recording, TranscriptError
from ..state import ReportedState
from .base import Conversations, TranscriptFormat


def sniff(data: Any) -> bool:
    """An object with `messages`, or a list of message-like objects (each with a `role` or a watsonx `type`)."""
    if isinstance(data, dict):
        return "messages" in data
    return isinstance(data, list) and all(isinstance(m, dict) and ("role" in m or "type" in m) for m in data)


def normalize(data: Any) -> list:
    return data["messages"] if isinstance(data, dict) else data


def conversations(data: Any, path: Path) -> Conversations:
    return [(None, message_recording(data, path))]


def message_recording(data: Any, path: Path | str) -> Recording:
    termination = None
    state = ReportedState.none(f"the transcript {path} has no `state` entry (a live run saves the state its agent "
                               "reported there; a hand-written transcript can add `\"state\": {...}`)")
    problems: list[str] = []
    if isinstance(data, dict):
        if "state" in data:
            state = ReportedState(value=data["state"], source=f"the `state` saved in {path}")
        if "messages" not in data:
            raise TranscriptError(f"{path}: JSON object has no 'messages' key")
        if isinstance(data.get("problems"), list):  # a saved replay of a trace that could not be read whole
            problems = [str(p) for p in data["problems"]]
        termination = data.get("termination_reason")
        if termination is not None and not isinstance(termination, str):
            raise TranscriptError(f"{path}: 'termination_reason' must be text, got {json_type_word(termination)}")
        data = data["messages"]
        if not isinstance(data, list):
            raise TranscriptError(
                f"{path}: 'messages' must be a list, got {json_type_word(data)}")
    elif not isinstance(data, list):
        raise TranscriptError(f"{path}: expected a JSON list of messages or an object "
                              f"with a 'messages' list, got {json_type_word(data)}")
    if not data:
        raise TranscriptError(f"{path}: the transcript has no messages")
    try:
        return Recording(messages=normalize_messages(data), termination_reason=termination, state=state,
                         problems=problems)
    except TranscriptError as e:
        raise TranscriptError(f"{path}: {e}") from None


FORMAT = TranscriptFormat("messages", "chat messages (OpenAI, Anthropic, watsonx Orchestrate, tau2-bench): a JSON "
                          "list, JSON Lines, or an object with `messages`", sniff, normalize, markers=(b'"messages"',),
                          conversations=conversations)
