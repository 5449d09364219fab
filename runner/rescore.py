"""`evalrun rescore RUN_DIR`: what a finished run folder may decide when its conversations are scored
again, and what it may not.

A run folder is data, and it may come from anywhere (a CI artifact of a fork's pull request, a
colleague's upload). Its report.json may say which cases the run selected (-k, --tag, --shard,
--last-failed) and how many repeats it played: rescoring the same cases the same way needs that. It
may not choose what runs or where keys go: the suites (whose `python` checks are code) and the
evalrun.yaml (whose judge receives the user's API key at its `api_base`) come from the command line
or the current project. The suite paths the report recorded are used only when they lie inside the
project the command is started in; any other is refused, naming it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Sequence

from .results.models import Selection
from .transcripts.saved_conversations import FILE_NAME as CONVERSATIONS_FILE

REPORT_NAME = "report.json"
_CASES_MARKER = b', "cases": ['  # where evalrun's report.json ends its header (a string cannot hold it unescaped)
_HEADER_LIMIT = 64 << 20  # a header (config, summary, ids not run) far beyond any real one is refused
_CHUNK = 1 << 20


class NotRescorable(ValueError):
    """The folder cannot be rescored; the message says why and what to give instead."""


@dataclass
class SavedRun:
    """What rescoring takes from a finished run folder: data only."""

    folder: Path
    paths: list[Path]  # the suites as the run recorded them: a hint, used only inside the current project
    conversations: Path  # its conversations.jsonl, or the conversations/ folder of an earlier version
    repeats: int = 1  # the run's --repeat N: its live conversations were saved per repeat
    shard: Optional[str] = None  # the run's --shard I/N: rescore the same part
    selection: Selection = field(default_factory=Selection)  # its -k, --tag, --last-failed


def read_saved_run(folder: Path) -> SavedRun:
    """The run saved in `folder`, from its report.json header, checked as any saved report is
    (runner.report.saved). NotRescorable with a reason people can act on."""
    from .report.saved import parse_report_json, report_problems

    report = folder / REPORT_NAME
    if not report.is_file():
        raise NotRescorable(f"{folder} holds no {REPORT_NAME}: give the folder of a finished run "
                            "(for example .evalrun/reports/latest)")
    try:
        header = parse_report_json(_header_bytes(report) + b"}")
    except (OSError, ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise NotRescorable(f"{report} is not a report evalrun wrote: {exc}") from None
    problems = report_problems(header, with_cases=False)
    if problems:
        raise NotRescorable(f"{report} is not a valid evalrun report: {'; '.join(problems[:3])}")
    if not header.get("paths"):
        raise NotRescorable(f"{report} does not say which suites it ran: give them, as in "
                            f"`evalrun rescore {folder} suites/`")
    repeats = (header["summary"].get("repeats") or {}).get("runs") or 1
    conversations = folder / CONVERSATIONS_FILE  # else the folder of one file per conversation, as earlier versions saved them
    if not conversations.is_file():
        conversations = folder / "conversations"
    return SavedRun(folder, [Path(p) for p in header["paths"]], conversations, int(repeats),
                    header.get("shard"), Selection.model_validate(header.get("selection") or {}))


def _header_bytes(report: Path) -> bytes:
    """report.json up to its list of cases, read in chunks: the cases come after and may be gigabytes."""
    head = b""
    with report.open("rb") as source:
        while _CASES_MARKER not in head:
            chunk = source.read(_CHUNK)
            if not chunk or len(head) > _HEADER_LIMIT:
                raise ValueError("it has no list of cases after its summary")
            head += chunk
    return head.split(_CASES_MARKER, 1)[0]


def suites_to_rescore(saved: SavedRun, given: Sequence[Path], project: Path) -> list[Path]:
    """The suites to score: those given on the command line; else the recorded ones, each of which
    must lie inside `project` (the folder the command runs in: its evalrun.yaml's folder, or its
    repository). NotRescorable names the first recorded path that does not."""
    if given:
        return list(given)
    from .suite.files import display_path, real_path

    for path in saved.paths:
        if not real_path(path).is_relative_to(project):
            raise NotRescorable(
                f"{saved.folder / REPORT_NAME} names suites outside this project ({display_path(project)}): "
                f"'{path}'. A run folder cannot choose what runs (its suites may hold `python` checks, its "
                f"config a judge to send your API key to): give the suites to score, as in "
                f"`evalrun rescore {saved.folder} suites/`")
    return saved.paths


def current_project(cwd: Optional[Path] = None) -> Path:
    """The project the command is started in: the folder of the evalrun.yaml that applies to the
    current folder, else the repository holding it, else the current folder itself."""
    from .config import find_config, project_home

    here = cwd or Path.cwd()
    return project_home([here], find_config([here], here))
