"""`evalrun run`, `quick` and `rescore`: collect cases, play or replay them, score them, print them as they
finish and the summary at the end. The console around a run (saving failures, --otlp) is in run_output.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .options import (
    add_agent,
    add_config,
    add_eval_config,
    add_no_cache,
    add_output_dir,
    add_paths,
    add_report_formats,
    add_selection,
    at_least_one,
    eval_config_problem,
    format_help,
    shard,
    share,
)
from .run_output import CaseLines, diagnostic_line, export_spans, save_failures, shown


def add_run(sub) -> None:
    run = sub.add_parser("run", help="run and score suites (the default command)",
                         description="Collect the suites under PATH and check them. Cases with a recorded "
                                     "conversation (`transcript:` or --replay) are scored on it; every other case is "
                                     "played live against its agent (evalrun.yaml `agents:`) and its conversation "
                                     "saved. Results reach results.jsonl as each case finishes; report.json is "
                                     "written at the end, also when the run is interrupted.")
    add_paths(run, help="suite files or folders (searched recursively)")
    run.add_argument("--replay", type=Path, metavar="DIR",
                     help="score every case on DIR/<case id>.json instead of its own transcript or its agent (or on "
                          "its line of a live run's conversations.jsonl, given as DIR)")
    add_config(run, help="the evalrun.yaml to use (default: the first one next to or above PATH, up to the "
                         "repository root)")
    add_agent(run, help="play every live case with this agent from evalrun.yaml's `agents:`, whatever the case names")
    add_no_cache(run, help="ask the models again instead of answering from the disk cache (.evalrun/cache)")
    run.add_argument("--save-failures", type=Path, metavar="FILE",
                     help="write the cases that failed or ended in error to FILE as one suite (ids, tags and goals "
                          "unchanged, a comment with each failure, transcript paths relative to FILE), to rerun them "
                          "alone")
    _add_run_options(run)
    _add_matrix(run)


def add_quick(sub) -> None:
    quick = sub.add_parser("quick", help="run cases with checks that need no reference (valid tool calls, judged "
                                         "helpfulness and groundedness)",
                           description="Play the cases under PATH as `run` does (their starting sentence, scripted "
                                       "turns or story, their canned tool outputs) and score each conversation with "
                                       "the referenceless checks only: valid_tool_calls (every call names one of the "
                                       "agent's tools and its arguments fit the tool's JSON Schema), and the judged "
                                       "helpfulness and groundedness. Goals and the cases' own checks are not scored, "
                                       "so a case needs nothing but a starting sentence or a story. Without a judge "
                                       "(evalrun.yaml `judge:`) the judged checks are unscored and so is the case. "
                                       "Run folder, reports and exit codes as `run`.")
    add_paths(quick)
    quick.add_argument("--replay", type=Path, metavar="DIR",
                       help="score every case on DIR/<case id>.json (or its line of a run's conversations.jsonl) "
                            "instead of playing it")
    add_config(quick)
    add_agent(quick, help="play every case with this agent from evalrun.yaml")
    add_no_cache(quick, help="ask the models again instead of using the cache")
    _add_run_options(quick)
    _add_matrix(quick)
    quick.set_defaults(quick=True)


def add_rescore(sub) -> None:
    rescore = sub.add_parser("rescore", help="score a finished run's conversations again, calling no agent",
                             description="Score the conversations a finished run saved (RUN_DIR/conversations.jsonl, and "
                                         "the recordings its replayed cases used) against the suites as they are now: "
                                         "after changing an `arg_matching`, say. The cases are those the run selected "
                                         "(its -k, --tag, --shard, --last-failed, recorded in its report.json); -k and "
                                         "--tag narrow them further. No agent is called; the judge answers from its "
                                         "cache (a comparison it has not seen is asked). A case without a saved "
                                         "conversation ends in error. The suites and evalrun.yaml come from the "
                                         "command line or the current project, never from RUN_DIR: without PATH, the "
                                         "suites the run recorded are used when they lie inside the current project.")
    rescore.add_argument("run_dir", type=Path, metavar="RUN_DIR",
                         help="a run's folder (for example .evalrun/reports/latest)")
    rescore.add_argument("paths", nargs="*", type=Path, metavar="PATH",
                         help="the suites to score (default: those the run recorded, if inside the current project)")
    add_config(rescore, help="the evalrun.yaml to use (default: the first one next to or above PATH)")
    add_no_cache(rescore, help="ask the judge again instead of using its cache")
    _add_run_options(rescore)


def _add_run_options(command: argparse.ArgumentParser) -> None:
    """The options of every command that runs cases (run, quick, rescore): selection, execution, output."""
    add_selection(command, tag_help="only cases with this tag (Smoke and smoke are the same tag); repeatable")
    command.add_argument("-j", "--concurrency", type=at_least_one, default=8, metavar="N",
                         help="run at most N cases at once (default 8); also the limit on model calls in flight")
    command.add_argument("--executor", choices=("auto", "local", "processes", "ray"), default="auto",
                         help="what runs the cases: `local` (this process; live cases and judges), `processes` "
                              "(recorded cases scored in one process per CPU, at most -j), `auto` (default: "
                              "processes when the run only scores recordings, has no judge and enough cases; -j 1 "
                              "stays in one process), `ray` (the cases on the Ray cluster in RAY_ADDRESS, or a local "
                              "one, model calls within one cluster-wide -j; pip install 'evalrun[ray]')")
    add_output_dir(command, short=False,
                   help="where to write results.jsonl (as cases finish), report.json and the live "
                        "conversations (default: .evalrun/reports/<run id>/, with .evalrun/reports/latest "
                        "pointing at the newest complete report)")
    command.add_argument("-q", "--quiet", action="store_true", help="print only failures and the summary")
    command.add_argument("-v", "--verbose", action="store_true",
                         help="print every case with its goals: one line per goal with its status and why")
    add_report_formats(command, help="also write this report format into the run folder, beside report.json "
                                     "(" + format_help() + "); repeatable")
    command.add_argument("-x", "--exitfirst", action="store_true",
                         help="stop after the first failed or errored case; the cases not run are listed")
    command.add_argument("--profile", metavar="NAME",
                         help="run only the checks that evalrun.yaml's profile NAME selects (`profiles:`); the "
                              "others show as skipped")
    command.add_argument("--min-pass-rate", type=share, metavar="RATE",
                         help="exit 0 when at least this share (0-1) of the scored cases passed, even if some failed; "
                              "overrides evalrun.yaml's min_pass_rate")
    command.add_argument("--repeat", type=repeat_spec, default=1, metavar="N|auto", dest="repeats",
                         help="run every case N times (each run with its own model-cache slot, so a rerun replays the "
                              "same N answers); reports pass@k, pass^k and the flaky cases (default 1; rescore uses "
                              "the saved run's N). `auto[:max=10,confidence=0.95,min=3,threshold=0.5]` repeats each "
                              "case until its verdict is settled: it stops once it has at least `min` runs and the "
                              "Wilson interval of its pass rate at `confidence` lies entirely above or below "
                              "`threshold` (0.5: does it pass more often than not), else at `max`. With the defaults "
                              "a case whose true pass rate is on one side of 0.5 is settled on the other with chance "
                              "at most 7.8%% (under 1%% at 0.3 or 0.7); four agreeing runs are the fewest that settle; "
                              "the report adds the runs each case needed")
    command.add_argument("--repeat-policy", choices=("all", "majority", "any"), metavar="POLICY",
                         help="with --repeat: a case passes when all its runs pass, a majority, or any one "
                              "(all, majority, any; default evalrun.yaml's repeat_policy, else all)")
    command.add_argument("--lf", "--last-failed", dest="last_failed", action="store_true",
                         help="run only the cases that failed, ended in error or could not be scored in the latest "
                              "report (.evalrun/reports/latest)")
    command.add_argument("--shard", type=shard, metavar="I/N",
                         help="run only part I of N of the cases (1 <= I <= N), split by a hash of each case id so "
                              "every machine of a CI matrix agrees; join the parts with `evalrun merge`")
    add_eval_config(command, help="the Google ADK or Agentflow eval config (criteria) for every ADK/Agentflow eval "
                                  "set, instead of the test_config.json or eval_config.json beside each")
    command.add_argument("--baseline", type=Path, metavar="REPORT",
                         help="a saved run (its report.json or folder) this run must not fall behind: exit 1 when a "
                              "case that passed there now fails, or a metric mean drops by more than --max-regression")
    command.add_argument("--otlp", metavar="FILE|ENDPOINT",
                         help="also write the run as OpenTelemetry spans (a span per case, a gen_ai.evaluation.result "
                              "event per goal and check): OTLP/JSON to FILE (a .jsonl file gets one line per run), or "
                              "OTLP/HTTP to an http(s) ENDPOINT such as http://127.0.0.1:4318 (needs evalrun[otel])")
    command.add_argument("--max-regression", type=share, default=0.0, metavar="DROP",
                         help="with --baseline: how far a metric mean (journey_completion, tool_call_precision, "
                              "tool_call_recall; shares 0-1) may drop, in the metric's own unit: 0.05 allows five "
                              "percentage points (default 0.0)")


def repeat_spec(text: str):
    """--repeat's value: N, or auto[:KEY=VALUE,...] (runner.results.auto_repeat); a bad one is a usage error."""
    from ...results.auto_repeat import RepeatSpecError, parse_repeat

    try:
        return parse_repeat(text)
    except RepeatSpecError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _add_matrix(command: argparse.ArgumentParser) -> None:
    command.add_argument("--matrix", action="append", metavar="AXIS=V1,V2",
                         help="play every case once per variant, in one run: `agent=hr_v1,hr_v2` (agents of "
                              "evalrun.yaml) or `model=openai/a,openai/b` (the model of agents that take one); "
                              "repeatable, several axes make every combination; overrides evalrun.yaml's `matrix:`. "
                              "Reports show a grid: a row per case, a column per variant")


def cmd_rescore(args: argparse.Namespace) -> int:
    from ...results.verdict import EXIT_USAGE
    from ...session.rescore import NotRescorable, current_project, read_saved_run, suites_to_rescore

    try:
        saved = read_saved_run(args.run_dir)
        args.paths = suites_to_rescore(saved, args.paths, current_project(), config=args.config)
    except NotRescorable as exc:
        print(f"evalrun rescore: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if args.shard is not None and saved.shard is not None and args.shard != saved.shard:
        print(f"evalrun rescore: error: --shard: the run was shard {saved.shard}; its conversations are of that part",
              file=sys.stderr)
        return EXIT_USAGE
    args.replay, args.agent = None, None  # nothing is played: the saved conversations are scored
    args.repeats = saved.repeat_auto or saved.repeats  # the saved conversations are per repeat
    args.shard = saved.shard or args.shard  # the same part of the suite
    return cmd_run(args, conversations_dir=saved.conversations, saved_selection=saved.selection)


# RunRequest's field <- the argparse destination of its flag: the one mapping from the command line to a run
_FLAGS = {"config_path": "config", "replay_dir": "replay", "filters": "filter", "tags": "tag",
          "output_dir": "output_dir", "concurrency": "concurrency", "no_cache": "no_cache", "agent": "agent",
          "formats": "formats", "min_pass_rate": "min_pass_rate", "exitfirst": "exitfirst", "baseline": "baseline",
          "max_regression": "max_regression", "repeats": "repeats", "repeat_policy": "repeat_policy",
          "shard": "shard", "last_failed": "last_failed", "profile": "profile", "eval_config": "eval_config",
          "quick": "quick", "executor": "executor", "matrix": "matrix"}


def request_from_args(args: argparse.Namespace, conversations_dir: Path | None = None, saved_selection=None):
    """The run's RunRequest from `evalrun run`'s (or quick's, rescore's) arguments; a flag a command lacks
    keeps RunRequest's default."""
    from ...session.request import RunRequest

    options = {field: getattr(args, dest) for field, dest in _FLAGS.items() if hasattr(args, dest)}
    return RunRequest(args.paths, conversations_dir=conversations_dir, saved_selection=saved_selection, **options)


def cmd_run(args: argparse.Namespace, conversations_dir: Path | None = None, saved_selection=None) -> int:
    from ...config.load import config_line
    from ...report.console import Console, print_failures, print_summary, visible
    from ...results.verdict import EXIT_NO_CASES, EXIT_USAGE
    from ...session.run import run_request

    out, err = Console(sys.stdout), Console(sys.stderr)
    if args.otlp:
        from ...report.otlp import missing_otel

        problem = missing_otel()  # said before the run, not after it
        if problem is not None:
            err.line(f"evalrun: {problem}")
            return 4
    err.line(config_line(list(args.paths), args.config))  # which evalrun.yaml (judge, agents, keys) this run obeys
    cases = CaseLines(out, verbose=args.verbose, quiet=args.quiet, err=err)
    problem = eval_config_problem(args.eval_config)
    if problem:
        err.line(f"evalrun: {problem}")
        return EXIT_USAGE
    if getattr(args, "save_failures", None) is not None:
        from ...authoring.write.failures import target_problem

        problem = target_problem(args.save_failures)  # said before the run, not after it
        if problem:
            err.line(f"evalrun {args.command}: error: --save-failures: {problem}")
            return EXIT_USAGE
    outcome = run_request(request_from_args(args, conversations_dir, saved_selection), cases)
    cases.finish()
    out.redact = err.redact = outcome.redact
    for diagnostic in outcome.diagnostics:
        err.line(diagnostic_line(diagnostic, args.command))
    if outcome.summary is None:
        for note in outcome.notes:
            err.line(note)
        if outcome.exit_code == EXIT_NO_CASES:
            err.line("no cases collected" + (" (check -k/--tag)" if args.filter or args.tag else ""))
        elif outcome.exit_code == EXIT_USAGE:
            err.line("nothing was run: fix the problems above")
        return outcome.exit_code
    if getattr(args, "save_failures", None) is not None:
        save_failures(args.save_failures, outcome, err, list(args.paths), args.config)
    try:
        try:
            print_failures(out, outcome.results(only_problems=True))
        except (OSError, ValueError) as exc:  # the results file went away after the run: the summary stands
            err.line(f"cannot read the results back for the failure details: {exc}")
        print_summary(out, outcome.summary, notes=[*cases.stage_notes.lines(), *outcome.notes],
                      report_path=shown(outcome.report_path) if outcome.report_path is not None else None,
                      agent=args.agent)
        if outcome.matrix is not None:  # --matrix: the grid, read back from the saved results
            from ...report.grid import console_lines, grid_of

            grid = grid_of({"matrix": outcome.matrix, "summary": outcome.summary.model_dump()}, outcome.results())
            for line in console_lines(grid, clean=visible) if grid is not None else ():
                out.line(line)
        for path in outcome.extra_reports:
            out.line(f"{path.name}: {shown(path)}")
    except KeyboardInterrupt:  # Ctrl-C while the details scroll by: the run and its report are complete
        err.line(f"stopped printing; {outcome.summary.exit_reason}")
    if out.lost is not None:
        err.line(f"console output stopped ({out.lost}); the run went on: "
                 f"{outcome.report_path or 'see results.jsonl'} has every finished case")
    if args.otlp and outcome.report_path is not None:
        return export_spans(outcome.report_path, args.otlp, outcome.exit_code, out, err)
    return outcome.exit_code
