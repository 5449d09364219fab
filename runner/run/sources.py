"""Where a case's conversation comes from (its agent, live; its own recording; --replay's; a saved run's), and
what `validate` says when that source is not what the case seems to say.

- A case that names an agent and a `transcript:` replays the recording: its agent is never called. That may be
  meant (a draft keeps its recording until someone removes the line), so it is a warning, printed by validate
  and by every run; a `replay` agent says the same thing twice and is not warned about.
- A recording whose first user message is not the case's `starting_sentence` is another conversation
  (runner.transcripts.opening): an error in validate, and the case's error when it is run, never a verdict.
  An error, not a warning: scoring another conversation gives verdicts about that other conversation, and a
  pass among them is false; the fix is one line (the path, or the sentence, which a replayed case may drop).
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..util.diagnostics import Diagnostic

if TYPE_CHECKING:
    from ..config.model import Config
    from ..suite.models import Case


def conversation_source(case: Any, replay_dir: Path | None, conversations_dir: Path | None) -> str:
    """Where the case's conversation comes from (runner.results.models.ConversationSource): the choice
    runner.run.execute.recordings_of makes, as the word every report shows."""
    if replay_dir is not None:
        return "replay"
    if case.transcript:
        return "transcript"
    return "rescore" if conversations_dir is not None else "live"


def replayed_agent_warnings(cases: Iterable[Any], config: Config) -> list[Diagnostic]:
    """A warning for each case (a Case, or a run's CaseRef: `recorded`) that names an agent and replays a
    recording, so that agent is never called."""
    found = []
    for case in cases:
        agent = getattr(case, "agent", None)
        recorded = getattr(case, "recorded", None) or getattr(case, "transcript", None)
        if not agent or not recorded or getattr(config.agents.get(agent), "type", None) == "replay":
            continue
        found.append(Diagnostic(case.source.path, case.source.line, case.source.column, "warning",
                                f"case '{case.id}' names agent '{agent}' and has a `transcript:`: its recording is "
                                f"replayed and '{agent}' is never called (its lines say `replayed`); remove "
                                "`transcript:` to play it live against the agent, or `agent:` to say it is replayed",
                                "agent-and-transcript"))
    return found


def opening_errors(cases: Iterable[Case], roots: Sequence[Path]) -> list[Diagnostic]:
    """An error for each case whose own recording does not open with its starting_sentence. Reads the
    recordings (validate only: a run compares each when it replays it); one that cannot be read is left to
    the loader's diagnostics and the run's error."""
    from ..suite.containment import recordings_for
    from ..transcripts.opening import opening_problem
    from ..transcripts.recording import TranscriptError
    from ..transcripts.transcript_file import read_recording

    found = []
    for case in cases:
        if not case.transcript or not case.starting_sentence:
            continue
        try:
            recordings = recordings_for(case, roots=roots)
            problem = next(filter(None, (opening_problem(case.starting_sentence, read_recording(path).messages)
                                         for _, path in recordings)), None)
        except (TranscriptError, OSError):
            continue
        if problem is not None:
            found.append(Diagnostic(case.source.path, case.source.line, case.source.column, "error",
                                    f"case '{case.id}': {problem}", "not-this-conversation"))
    return found
