"""OpenTelemetry traces (OTLP/JSON) as transcripts: one file may hold many conversations.

`read_trace_conversations` turns decoded JSON documents into conversations of OpenAI-style messages;
`select_conversation` picks the one a case names as `FILE#ID` (its conversation id, or a trace id as 32
lowercase hex digits). The modules read as the steps: spans (the OTLP encoding), dialects (what a
span says, whoever instrumented it), rebuild (spans -> messages in conversation order).
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..recording import Recording, TranscriptError
from ..state import ReportedState
from .rebuild import Conversation, rebuild_conversations
from .spans import Problem, decode_documents, is_otlp_document

__all__ = ["Conversation", "Problem", "is_otlp", "read_trace_conversations", "select_conversation", "select_recording",
           "trace_recordings"]


def is_otlp(data: Any) -> bool:
    """Decoded JSON (one document, or the list of a JSON Lines file's lines) shaped like OTLP traces."""
    if isinstance(data, list):
        return bool(data) and all(is_otlp_document(item) for item in data)
    return is_otlp_document(data)


def read_trace_conversations(data: Any) -> tuple[list[Conversation], list[Problem]]:
    """Every conversation in the file, in the order they started, and the problems no span owns."""
    documents = data if isinstance(data, list) else [data]
    decoded = decode_documents(documents)
    conversations = rebuild_conversations(decoded.spans)
    return conversations, decoded.problems


def select_conversation(conversations: Sequence[tuple[str, Sequence[str]]], selection: str | None) -> int:
    """Which of `conversations` (each as its id and trace ids) `selection` names: a conversation id, else
    a trace id in any case; without a selection, the only one. Raises LookupError with the ids a person
    can choose from."""
    if selection is not None:
        wanted = selection.strip()
        for number, (conversation_id, _) in enumerate(conversations):
            if conversation_id == wanted:
                return number
        for number, (_, trace_ids) in enumerate(conversations):
            if wanted.lower() in trace_ids:
                return number
        raise LookupError(f"no conversation '{wanted}' in the file (it holds: {_ids(conversations)})")
    if len(conversations) == 1:
        return 0
    if not conversations:
        raise LookupError("the file holds no spans")
    raise LookupError(f"the file holds {len(conversations)} conversations; name one as FILE#ID "
                      f"(ids: {_ids(conversations)})")


def _ids(conversations: Sequence[tuple[str, Sequence[str]]], shown: int = 10) -> str:
    ids = [conversation_id for conversation_id, _ in conversations[:shown]]
    more = len(conversations) - shown
    return ", ".join(ids) + (f" and {more} more" if more > 0 else "")


def trace_recordings(data: Any, path: Path) -> list[tuple[str | None, Recording]]:
    """Every conversation of a decoded trace file as (conversation id, recording); the problems no
    span owns go to every conversation (none of them is then passed on what remains)."""
    conversations, file_problems = read_trace_conversations(data)
    if not conversations:
        reasons = "; ".join(str(p) for p in file_problems[:5])
        raise TranscriptError(f"{path}: the trace file holds no spans" + (f" ({reasons})" if reasons else ""))
    no_state = ReportedState.none(f"the trace {path} carries no state of the world after the conversation (a "
                                  "case's `final_state:` needs a transcript with a `state` entry or a live run)")
    return [(c.id, Recording(messages=c.messages, problems=[str(p) for p in [*file_problems, *c.problems]],
                             conversation_id=c.id, trace_ids=c.trace_ids, state=no_state)) for c in conversations]


def select_recording(found: list[tuple[str | None, Recording]], selection: str | None, path: Path) -> Recording:
    """The recording `FILE#ID` names; a conversation without any message is an error, never an empty pass."""
    try:
        number = select_conversation([(str(cid), rec.trace_ids) for cid, rec in found], selection)
    except LookupError as exc:
        raise TranscriptError(f"{path}: {exc}") from None
    conversation_id, recording = found[number]
    if not any(m.get("role") in ("user", "assistant", "tool") for m in recording.messages):
        reasons = "; ".join(recording.problems[:5]) or "no span holds any message content"
        raise TranscriptError(f"{path}#{conversation_id}: the trace has no messages to score ({reasons})")
    return recording
