"""`evalrun record`: the console side (what is printed, the exit code); the work is in record.py and chat.py."""
from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TextIO

from .draft import DraftCase, DraftToolGoal


def record_command(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from .record import RecordError, record_from

    if args.sources:
        try:
            outcome = record_from(args.sources, args.output, agent=args.agent)
        except RecordError as exc:
            print(f"evalrun record: {exc}", file=err)
            print("nothing was written", file=err)
            return exc.exit_code
        for line in outcome.skipped:
            print(f"skipped {line}", file=err)
        print_written(outcome.written, outcome.drafts, args.output, out)
        return 0
    from .chat import chat_command

    return chat_command(args, out, err)


def print_written(written, drafts: list[DraftCase], target: Path, out: TextIO) -> None:
    from .output import is_folder_target

    for draft in drafts:
        calls = sum(isinstance(g, DraftToolGoal) for g in draft.goal_details)
        answers = len(draft.goal_details) - calls
        to_check = sum(1 for g in draft.goal_details if isinstance(g, DraftToolGoal) for c in g.choices if c.note) \
            + answers + len(draft.header)
        print(f"case '{draft.id}': {_count(calls, 'tool call goal')}, {_count(answers, 'text goal')}; "
              f"{_count(to_check, 'line')} to check", file=out)
    if written.appended_to is not None:
        print(f"added {_count(len(drafts), 'case')} to {_shown(written.appended_to)}", file=out)
    else:
        for path in written.suites:
            print(f"wrote {_shown(path)}", file=out)
    for path in written.transcripts:
        print(f"saved {_shown(path)}", file=out)
    targets = _shown(target) if is_folder_target(target) else _shown(written.suites[0])
    print(f"next: read the lines marked `check:`, then run `evalrun run {targets}`", file=out)


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _shown(path: Path) -> str:
    """A path as the person typed its folder: relative to the current folder when it is under it."""
    try:
        relative = os.path.relpath(path)
    except ValueError:
        return str(path)
    return str(path) if relative.startswith("..") else relative
