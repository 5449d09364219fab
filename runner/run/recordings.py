"""Which recordings a case is scored on (its `transcript:`, a --replay folder, a rescored run's saved
conversations), and the name a live conversation is saved under.
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..suite.models import Case
from ..transcripts.read import TranscriptError
from ..transcripts.recording import ConversationRef
from .run_options import RunOptions


def conversation_key(case_id: str, repeat: int | None) -> str:
    """The name a live conversation is saved under: the case id, and which repeat for --repeat N."""
    return case_id if repeat is None else f"{case_id} repeat {repeat}"


def recordings_of(case: Case, options: RunOptions, roots: Sequence[Path],
                  repeat: int | None = None) -> list[tuple[int | None, Path | ConversationRef]] | None:
    """The recordings a case is scored on as (run number, a file or one conversation of a file), or None when
    it is played live. `roots`: real paths (the run's suite roots). TranscriptError when a recording is named but
    cannot be used (missing, outside the suite roots)."""
    from ..suite.containment import recordings_for

    if options.replay_dir is not None or case.transcript:
        return recordings_for(case, roots=roots, replay_dir=options.replay_dir, roots_resolved=True)
    if options.conversations_dir is not None:  # rescore: the run saved this live case's conversation here
        return [(None, _saved_conversation(options.conversations_dir, conversation_key(case.id, repeat)))]
    return None


def _saved_conversation(saved: Path, key: str) -> Path | ConversationRef:
    """Where a rescored run saved the conversation `key`: a line of its conversations.jsonl, or a file of
    the conversations/ folder that earlier versions wrote."""
    found: Path | ConversationRef | None
    if saved.is_dir():
        from ..results.folder import conversation_file_name

        found = saved / conversation_file_name(key)
        found = found if found.is_file() else None
    else:
        from ..suite.containment import saved_ref

        found = saved_ref(saved, key)
    if found is None:
        raise TranscriptError(f"no saved conversation for this case in {saved} (it was not played live in that "
                              "run, or its agent failed before saying anything)")
    return found


def unsaved_note(exc: OSError) -> str:
    """What a case's result says when its live conversation could not be saved (its verdict stands)."""
    return f"the conversation could not be saved for `evalrun rescore`: {exc.strerror or exc}"
