"""Commands that read suites without scoring a run: `evalrun validate`, `list`, `schema`, and `watch` (which
reruns what a changed file affects)."""
from __future__ import annotations

import argparse
import sys

from .options import (
    add_agent,
    add_config,
    add_eval_config,
    add_paths,
    add_print_format,
    add_selection,
    eval_config_problem,
)


def add_validate(sub) -> None:
    validate = sub.add_parser("validate", help="check suites without running them",
                              description="Check suite files: YAML syntax, the schema and the semantic rules. Prints "
                                          "every problem as path:line:col: severity: message. Exit 0 when all are "
                                          "valid, 4 on any error.")
    add_paths(validate)
    add_print_format(validate, help="how to print the diagnostics")
    validate.add_argument("--quick", action="store_true",
                          help="check the suites as `evalrun quick` reads them: a case needs nothing to check of its "
                               "own (a starting sentence or a story is enough)")
    add_eval_config(validate, help="the Google ADK or Agentflow eval config for every ADK/Agentflow eval set, instead "
                                   "of the one beside each")


def add_list(sub) -> None:
    listing = sub.add_parser("list", help="print the cases a run would collect, without running them",
                             description="Collect the suites under PATH as a run would (evalrun.yaml's `exclude`, "
                                         "-k, --tag) and print each case: its id, where it is written (file:line), the "
                                         "file's format, its tags, the agent that would play it (or the transcript "
                                         "it replays) and its scripted user turns. Exit 0; 4 when a suite is invalid; "
                                         "5 when no case is selected.")
    add_paths(listing)
    add_config(listing)
    add_selection(listing)
    add_print_format(listing, help="how to print the cases")


def add_schema(sub) -> None:
    schema = sub.add_parser("schema", help="print a JSON Schema",
                            description="Print the JSON Schema of suite files, of evalrun.yaml, of report.json, or of "
                                        "the Google ADK / Agentflow eval files evalrun reads as they are.")
    schema.add_argument("kind", nargs="?", default="suite",
                        choices=("suite", "config", "report", "adk-evalset", "adk-eval-config"),
                        help="which schema: suite (suite files), config (evalrun.yaml), report (report.json), "
                             "adk-evalset (ADK's and Agentflow's eval sets), adk-eval-config (their eval configs, "
                             "test_config.json / eval_config.json); default: %(default)s")


def add_watch(sub) -> None:
    watching = sub.add_parser(
        "watch", help="rerun the cases a changed file affects, as files change",
        description="Run the suites under PATH, then watch them: when a file changes, rerun the cases it affects "
                    "(a suite: its cases; a recorded conversation: the cases that replay it; an agent's source: "
                    "its live cases; evalrun.yaml or a prompt template: every case) and say what changed since the "
                    "last run. Each rerun is a fresh `evalrun run`. Needs `pip install 'evalrun[watch]'`. Ctrl-C "
                    "stops watching (exit 0); 4 on invalid suites.")
    add_paths(watching)
    add_config(watching)
    add_selection(watching, filter_help="only cases whose id matches GLOB; repeatable",
                  tag_help="only cases with this tag")
    add_agent(watching, help="play every live case with this agent")


def cmd_validate(args: argparse.Namespace) -> int:
    import json

    from ...config.load import config_line
    from ...results.verdict import EXIT_USAGE
    from ...session.collect import validate
    from ...util.diagnostics import has_errors

    print(config_line(list(args.paths)), file=sys.stderr)
    problem = eval_config_problem(args.eval_config)
    if problem:
        print(f"evalrun validate: {problem}", file=sys.stderr)
        return EXIT_USAGE
    diagnostics = validate(args.paths, eval_config=args.eval_config, quick=args.quick)
    if args.format == "json":
        print(json.dumps({"valid": not has_errors(diagnostics), "diagnostics": [d.to_json() for d in diagnostics]},
                         indent=2))
    else:
        for diagnostic in diagnostics:
            print(diagnostic)
        errors = sum(1 for d in diagnostics if d.severity == "error")
        warnings = len(diagnostics) - errors
        print(f"{errors} error(s), {warnings} warning(s)" if diagnostics else "all suites are valid",
              file=sys.stderr)
    return EXIT_USAGE if has_errors(diagnostics) else 0


def cmd_list(args: argparse.Namespace) -> int:
    import json

    from ...report.console import visible
    from ...results.verdict import EXIT_NO_CASES
    from ...session.collect import list_cases

    listing = list_cases(args.paths, config_path=args.config, filters=args.filter, tags=args.tag)
    for diagnostic in listing.diagnostics:
        print(diagnostic, file=sys.stderr)
    if listing.exit_code == EXIT_NO_CASES:
        print("no cases collected" + (" (check -k/--tag)" if args.filter or args.tag else ""), file=sys.stderr)
    if args.format == "json":
        print(json.dumps([case.to_json() for case in listing.cases], indent=1))
        return listing.exit_code
    rows = [[case.id, case.source, case.format, ",".join(case.tags) or "-",
             f"replay {case.transcript}" if case.transcript else f"agent {case.agent or '(none)'}",
             f"{case.turns} turn{'' if case.turns == 1 else 's'}" + (" + simulated" if case.simulated else "")]
            for case in listing.cases]
    widths = [max(len(row[i]) for row in rows) for i in range(5)] if rows else []
    for row in rows:
        print(visible("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=False)) + "  " + row[5]))
    if rows:
        print(f"{len(rows)} case{'' if len(rows) == 1 else 's'}", file=sys.stderr)
    return listing.exit_code


def cmd_schema(args: argparse.Namespace) -> int:
    from ...util.resources import schema_path

    sys.stdout.write(schema_path(args.kind).read_text(encoding="utf-8"))
    return 0


def cmd_watch(args: argparse.Namespace) -> int:
    from ..watch import WatchOptions, watch

    return watch(WatchOptions(args.paths, args.config, args.filter, args.tag, args.agent), sys.stdout, sys.stderr)
