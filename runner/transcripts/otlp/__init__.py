"""OpenTelemetry traces (OTLP/JSON) as transcripts: one file may hold many conversations.

`read_trace_conversations` turns decoded JSON documents into conversations of OpenAI-style messages;
`select_conversation` picks the one a case names as `FILE#ID` (its conversation id, or a trace id as 32
lowercase hex digits). The modules read as the steps: spans (the OTLP encoding), dialects (what a
span says, whoever instrumented it), rebuild (spans -> messages in conversation order).
"""
from __future__ import annotations

from typing import Any, Optional

from .rebuild import Conversation, rebuild_conversations
from .spans import Problem, decode_documents, is_otlp_document

__all__ = ["Conversation", "Problem", "is_otlp", "read_trace_conversations", "select_conversation"]


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


def select_conversation(conversations: list[Conversation], selection: Optional[str]) -> Conversation:
    """The conversation `selection` names; without one, the only conversation. Raises LookupError with
    the ids a person can choose from."""
    if selection is not None:
        wanted = selection.strip()
        for conversation in conversations:
            if conversation.id == wanted:
                return conversation
        for conversation in conversations:
            if wanted.lower() in conversation.trace_ids:
                return conversation
        raise LookupError(f"no conversation '{wanted}' in the file (it holds: {_ids(conversations)})")
    if len(conversations) == 1:
        return conversations[0]
    if not conversations:
        raise LookupError("the file holds no spans")
    raise LookupError(f"the file holds {len(conversations)} conversations; name one as FILE#ID "
                      f"(ids: {_ids(conversations)})")


def _ids(conversations: list[Conversation], shown: int = 10) -> str:
    ids = [c.id for c in conversations[:shown]]
    more = len(conversations) - shown
    return ", ".join(ids) + (f" and {more} more" if more > 0 else "")
