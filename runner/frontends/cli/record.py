"""`evalrun record`: the console side (what is printed, the exit code); the work is in record.py and chat.py."""
from __future__ import annotations

import argparse
from typing import TextIO

from .record_console import load_record_config, print_written


def record_command(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from ...authoring.record.from_files import RecordError, record_from
    from ...authoring.write.output import suite_ids

    if args.sources:
        loaded = load_record_config(args, err)
        if loaded is None:
            return 4
        annotate = None
        if args.annotate:
            from ...authoring.record.annotate import NoJudge, annotator_for

            try:
                annotate = annotator_for(loaded)
            except NoJudge as exc:
                print(f"evalrun record: {exc}", file=err)
                return 4
        try:
            outcome = record_from(args.sources, args.output, agent=args.agent, annotate=annotate,
                                  taken_ids=suite_ids(loaded, args.output))
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


