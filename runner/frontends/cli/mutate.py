"""`evalrun mutate`: how strong a suite is. Each case that passes on its recording is scored again on plausible
wrong versions of that conversation (mutants); a suite that lets them pass could not tell. The work is in
runner.mutate; this module parses and prints. Imports stay light (argparse, pathlib) for `evalrun --help`."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .options import add_config, add_no_cache, add_paths, add_selection, at_least_one, share

HELP = """\
Score each case that passes on its recording (its `transcript:`, or --replay RUN_DIR's conversations) on
mutants of that conversation: a tool call dropped, duplicated, swapped or made to a sibling tool, an extra
write-like call; an argument changed by type (a date moved a day, a number off by one or 10 %, an id with a
character changed, another value of the conversation, a key or list item dropped); the answer negated, a fact
in it changed, a keyword removed, replaced or emptied; the last turn cut. A mutant that still passes survives:
the report names what changed, where, and the suite line that let it through with the fix to consider.
Equivalent mutants (an argument the suite declares `ignore` or `optional`) are named, not counted.

Offline and deterministic (seeded); judged checks are left out unless --judged. Writes mutate.json, mutate.md
and mutate.html to .evalrun/reports/mutate-<time>/ (or --output). Exit codes: 0 done, 1 below --min-kill-rate
(naming the weakest cases), 3 internal error, 4 usage error or invalid suites, 5 nothing to mutate.
"""


def add_mutate(sub: argparse._SubParsersAction) -> None:
    command = sub.add_parser("mutate", help="measure a suite's strength: mutants of each recorded conversation "
                             "it should fail", description=HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_paths(command)
    add_config(command)
    add_selection(command)
    command.add_argument("--replay", type=Path, metavar="DIR",
                         help="mutate the conversations this run folder saved (its conversations.jsonl), or those of a "
                         "folder of <case id>.json transcripts")
    command.add_argument("--judged", action="store_true",
                         help="ask evalrun.yaml's judge for judged checks and fuzzy values (cached); default: offline")
    command.add_argument("--min-kill-rate", type=share, metavar="X",
                         help="exit 1 when a case's (or the suite's) kill rate is below X (0-1), naming the weakest")
    command.add_argument("--seed", type=int, default=0, metavar="N", help="which mutants are chosen (default 0)")
    command.add_argument("--mutants-per-case", type=at_least_one, default=20, metavar="N",
                         help="at most N mutants per case, the families taking turns (default 20)")
    command.add_argument("--format", choices=("console", "json", "md", "html"), default="console",
                         help="what to print (default console); the folder gets json, md and html whatever this says")
    command.add_argument("-o", "--output", type=Path, metavar="DIR", help="the folder to write the report files into")
    command.add_argument("-j", "--concurrency", type=at_least_one, default=None, metavar="N",
                         help="worker processes (default: every core)")
    add_no_cache(command, help="score every mutant again (a case's outcome is cached, keyed on the case, its "
                 "recording, the config, the seed and evalrun's version; with --judged the judge's answers too)")
    command.add_argument("-v", "--verbose", action="store_true", help="list every survivor and equivalent mutant")


def cmd_mutate(args: argparse.Namespace) -> int:
    import json
    import os

    from ...mutate.case_run import MutateOptions
    from ...mutate.render import console, html_page, markdown
    from ...mutate.session import EXIT_USAGE, run_mutate

    replay = args.replay
    if replay is not None and (replay / "conversations.jsonl").is_file():
        replay = replay / "conversations.jsonl"  # a run folder: the conversations its live cases saved
    if replay is not None and not replay.exists():
        print(f"evalrun mutate: --replay {replay}: no such folder (give a run folder of .evalrun/reports, a "
              "conversations.jsonl, or a folder of <case id>.json transcripts)", file=sys.stderr)
        return EXIT_USAGE
    options = MutateOptions(seed=args.seed, per_case=args.mutants_per_case, judged=args.judged,
                            replay_dir=replay, no_cache=args.no_cache or False)
    outcome = run_mutate(args.paths, options, jobs=args.concurrency or os.cpu_count() or 1, filters=args.filter,
                         tags=args.tag, config_path=args.config, output=args.output, min_kill_rate=args.min_kill_rate)
    for diagnostic in outcome.diagnostics:
        print(diagnostic, file=sys.stderr)
    if outcome.problem:
        print(f"evalrun mutate: {outcome.problem}", file=sys.stderr)
    if outcome.report is not None and outcome.report.folder is not None:
        data = json.loads((Path(outcome.report.folder) / "mutate.json").read_text(encoding="utf-8"))  # redacted
        render = {"console": lambda d: console(d, args.verbose), "json": lambda d: json.dumps(d, indent=1) + "\n",
                  "md": markdown, "html": html_page}[args.format]
        sys.stdout.write(render(data))
        print(f"report: {outcome.report.folder}", file=sys.stderr)
    return outcome.exit_code
