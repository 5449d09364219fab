"""What `evalrun record` prints and the config it reads, shared by the chat and `--from`."""
from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TextIO

from ...authoring.record.draft import DraftCase, DraftToolGoal


def load_record_config(args: argparse.Namespace, err: TextIO):
    """The evalrun.yaml for `record` (next to or above the output, else the current folder), or None after
    printing its problems. --agent must name one of its agents when it declares any."""
    from ...config.discovery import find_config
    from ...config.load import config_line, load_config
    from ...run.agent_choice import check_agent_override

    search_from = [args.output, Path.cwd()]
    loaded, problems = load_config(args.config or find_config(search_from), for_run=args.annotate)
    if args.annotate or not args.sources:  # the judge or the agent comes from it: say which file
        print(config_line(search_from, args.config), file=err)
    errors = [str(p) for p in problems if p.severity == "error"]
    if args.agent and (loaded.config.agents or not args.sources):
        problem = check_agent_override(args.agent, loaded.config)
        if problem:
            errors.append(f"evalrun record: {problem}")
    for error in errors:
        print(error, file=err)
    return None if errors else loaded


def print_written(written, drafts: list[DraftCase], target: Path, out: TextIO) -> None:
    from ...authoring.write.output import is_folder_target

    for draft in drafts:
        calls = sum(isinstance(g, DraftToolGoal) for g in draft.goal_details)
        answers = len(draft.goal_details) - calls
        to_check = sum(1 for g in draft.goal_details if isinstance(g, DraftToolGoal) for c in g.choices if c.note) \
            + answers + len(draft.header)
        print(f"case '{draft.id}': {_count(calls, 'tool call goal')}, {_count(answers, 'text goal')}; "
              f"{_count(to_check, 'line')} to check", file=out)
    if written.appended_to is not None:
        print(f"added {_count(len(drafts), 'case')} to {shown(written.appended_to)}", file=out)
    else:
        for path in written.suites:
            print(f"wrote {shown(path)}", file=out)
    for path in written.transcripts:
        print(f"saved {shown(path)}", file=out)
    targets = shown(target) if is_folder_target(target) else shown(written.suites[0])
    print(f"next: read the lines marked `check:`, then run `evalrun run {targets}`", file=out)


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def shown(path: Path) -> str:
    """A path as the person typed its folder: relative to the current folder when it is under it."""
    try:
        relative = os.path.relpath(path)
    except ValueError:
        return str(path)
    return str(path) if relative.startswith("..") else relative
