"""The `evalrun` command: argument parsing and exit codes only; the work is in runner.session.

COMMANDS names every command with the function that adds its parser and the one that handles it; the
modules beside this one hold them, a module per group: run (run, quick, rescore), suites (validate, list,
schema, watch), reports (report, compare, merge, calibrate), authoring (init, generate, record, import,
convert, simulate), redteam, cache, mutate, view; options holds what several commands share.

Imports stay light here and in every command module (argparse, pathlib) so that `evalrun --help` answers at
once; the library is imported inside each handler.
"""
from __future__ import annotations

import argparse
import contextlib
import sys
import textwrap
from collections.abc import Callable, Iterator, Sequence
from typing import NamedTuple

from ... import __version__

# The exit codes main() decides itself; a command returns its own. Their one definition, with each one's
# meaning, is runner/layout.py (standard library only: cheap enough for `evalrun --help`).
from ...layout import EXIT_CODES, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE
from . import authoring, cache, mutate, redteam, reports, run, suites, view


class Command(NamedTuple):
    add_parser: Callable[[argparse._SubParsersAction], None]
    handle: Callable[[argparse.Namespace], int]


# In the order `evalrun --help` lists them.
COMMANDS: dict[str, Command] = {
    "run": Command(run.add_run, run.cmd_run),
    "quick": Command(run.add_quick, run.cmd_run),
    "generate": Command(authoring.add_generate, authoring.cmd_generate),
    "rescore": Command(run.add_rescore, run.cmd_rescore),
    "report": Command(reports.add_report, reports.cmd_report),
    "compare": Command(reports.add_compare, reports.cmd_compare),
    "merge": Command(reports.add_merge, reports.cmd_merge),
    "validate": Command(suites.add_validate, suites.cmd_validate),
    "list": Command(suites.add_list, suites.cmd_list),
    "record": Command(authoring.add_record, authoring.cmd_record),
    "simulate": Command(authoring.add_simulate, authoring.cmd_simulate),
    "watch": Command(suites.add_watch, suites.cmd_watch),
    "schema": Command(suites.add_schema, suites.cmd_schema),
    "calibrate": Command(reports.add_calibrate, reports.cmd_calibrate),
    "init": Command(authoring.add_init, authoring.cmd_init),
    "convert": Command(authoring.add_convert, authoring.cmd_convert),
    "import": Command(authoring.add_import, authoring.cmd_import),
    "redteam": Command(redteam.add_redteam, redteam.cmd_redteam),
    "cache": Command(cache.add_cache, cache.cmd_cache),
    "mutate": Command(mutate.add_mutate, mutate.cmd_mutate),
    "view": Command(view.add_view, view.cmd_view),
}

DESCRIPTION = """\
evalrun runs declarative agent test suites written in YAML (or watsonx Orchestrate JSON datasets):
it talks to the agent under test (or reads a recorded conversation), plays the user, scores each
conversation against its goals and reports the result.

  evalrun suites/                  run every case under suites/ (same as `evalrun run suites/`)
  evalrun quick cases/              run cases that have only a starting sentence or story, with checks
                                   that need no reference (valid tool calls, helpfulness, groundedness)
  evalrun generate --stories S --tools T -o DIR
                                   write suites from user stories and the agent's tools with a model
  evalrun rescore RUN_DIR          score a finished run's saved conversations again, calling nothing
  evalrun report RUN_DIR           write a report format (--format html|junit|md) from a finished run
  evalrun compare OLD NEW          what changed between two runs, and whether it is more than chance
  evalrun merge A B -o DIR         join the reports of a CI matrix's shards (--shard I/N) into one
  evalrun validate suites/         check the suites and print every problem with its line and column
  evalrun list suites/             the cases a run would collect: id, file:line, format, tags, agent, turns
  evalrun record -o suites/        chat with an agent in the terminal; /save writes the chat as a draft suite
  evalrun record --from chat.json  draft a suite from recorded conversations (one case per conversation)
  evalrun simulate suites/x.yaml   play the simulated user against the agent and print the conversation
  evalrun watch suites/            run, then rerun the cases a change affects whenever a file changes
  evalrun schema suite             print the JSON Schema that editors use to check suites as you type
  evalrun init my-evals            write a starter folder with an example suite
  evalrun import traces.jsonl      one transcript + draft suite per conversation of a trace file (-o DIR)
  evalrun calibrate LABELS.yaml    measure a judged check against examples people labelled (kappa)
  evalrun convert eval/ -o suites/ write Google ADK or Agentflow eval sets as evalrun YAML (they also run as they are)
  evalrun redteam list             the red-team attack catalogue, one line per attack
  evalrun redteam plan suites/ -o suites/redteam/   attack suites made from your cases
  evalrun mutate suites/           how strong the suites are: mutants of each recording they should fail
  evalrun cache info               where the disk cache of model answers is (`evalrun cache clear` forgets it)
  evalrun view                     browse the project's runs in a local web app (--export DIR: as static files)

Exit codes (as pytest):
""" + "".join(textwrap.fill(meaning, width=100, initial_indent=f"  {code}  ", subsequent_indent="     ") + "\n"
             for code, _, meaning in EXIT_CODES)


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The command's parser; with `only`, holding that one command: it parses that command's arguments, and
    says their errors and help, exactly as the whole parser does (the usage line names no command, COMMAND
    stands for them), for a fraction of the cost (18 ms of each start for the twenty)."""
    parser = argparse.ArgumentParser(prog="evalrun", description=DESCRIPTION,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"evalrun {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, command in COMMANDS.items():
        if only is None or name == only:
            command.add_parser(sub)
    return parser


def _with_default_command(argv: Sequence[str]) -> list[str]:
    """`evalrun suites/` means `evalrun run suites/`, and so does `evalrun -k lookup suites/`: anything
    that does not start with a command name, -h/--help or --version is a `run`."""
    args = list(argv)
    if not args or args[0] in COMMANDS or args[0] in ("-h", "--help", "--version"):
        return args
    return ["run", *args]


def main(argv: Sequence[str] | None = None) -> int:
    from ...util.signals import stops_like_ctrl_c
    from .streams import usable_standard_streams

    # a command started with stderr (or stdout) closed still runs; SIGTERM and SIGHUP stop it as Ctrl-C does
    with usable_standard_streams(), stops_like_ctrl_c():
        return _main(argv)


def _main(argv: Sequence[str] | None) -> int:
    from .startup import skip_pydantic_plugins

    skip_pydantic_plugins()  # 0.2-0.3 s of every start with logfire installed (runner/frontends/cli/startup.py)
    argv = _with_default_command(sys.argv[1:] if argv is None else argv)
    parser = build_parser(only=argv[0] if argv and argv[0] in COMMANDS else None)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits 2 on usage errors; evalrun's usage code is 4
        return EXIT_OK if exc.code in (0, None) else EXIT_USAGE
    if args.command is None:
        parser.print_help()
        return EXIT_USAGE
    with _redacted_streams():  # every byte a command prints passes the redactor (runner/util/secrets.py)
        try:
            return COMMANDS[args.command].handle(args)
        except KeyboardInterrupt:  # outside a run (which handles its own signals): nothing to keep
            print("interrupted", file=sys.stderr)
            return EXIT_INTERRUPTED


@contextlib.contextmanager
def _redacted_streams() -> Iterator[None]:
    from ...util.secrets import RedactingStream, remember

    remember()  # the providers' own keys in the environment, before the command prints anything
    out, err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = [None if s is None else RedactingStream(s) for s in (out, err)]  # None: fd closed
    try:
        yield
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                if stream is not None:
                    stream.flush()
            except (OSError, ValueError):  # a closed pipe: what was left of a line is lost with it
                pass
        sys.stdout, sys.stderr = out, err
