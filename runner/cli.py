"""The `evalrun` command: argument parsing and exit codes only; the work is in runner.api.

Imports stay light here (argparse only) so that `evalrun --help` answers at once; the library is
imported inside each command.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Optional, Sequence

from . import __version__

COMMANDS = ("run", "quick", "generate", "rescore", "report", "compare", "merge", "validate", "list", "record",
            "simulate", "watch", "schema", "init", "calibrate", "convert", "import", "redteam")

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

Exit codes (as pytest): 0 all passed, 1 some failed, 2 interrupted, 3 errors kept cases from being
scored, 4 usage error or invalid suites, 5 no cases collected.
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="evalrun", description=DESCRIPTION,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"evalrun {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    run = sub.add_parser("run", help="run and score suites (the default command)",
                         description="Collect the suites under PATH and check them. Cases with a recorded "
                                     "conversation (`transcript:` or --replay) are scored on it; every other case is "
                                     "played live against its agent (evalrun.yaml `agents:`) and its conversation "
                                     "saved. Results reach results.jsonl as each case finishes; report.json is "
                                     "written at the end, also when the run is interrupted.")
    run.add_argument("paths", nargs="+", type=Path, metavar="PATH", help="suite files or folders (searched recursively)")
    run.add_argument("--replay", type=Path, metavar="DIR",
                     help="score every case on DIR/<case id>.json instead of its own transcript or its agent")
    run.add_argument("-c", "--config", type=Path, metavar="FILE",
                     help="the evalrun.yaml to use (default: the first one next to or above PATH, up to the "
                          "repository root)")
    run.add_argument("--agent", metavar="NAME",
                     help="play every live case with this agent from evalrun.yaml's `agents:`, whatever the case names")
    run.add_argument("--no-cache", action="store_true",
                     help="ask the models again instead of answering from the disk cache (.evalrun/cache)")
    run.add_argument("--save-failures", type=Path, metavar="FILE",
                     help="write the cases that failed or ended in error to FILE as one suite (ids, tags and goals "
                          "unchanged, a comment with each failure, transcript paths relative to FILE), to rerun them "
                          "alone")
    _add_run_options(run)

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
    quick.add_argument("paths", nargs="+", type=Path, metavar="PATH", help="suite files or folders")
    quick.add_argument("--replay", type=Path, metavar="DIR",
                       help="score every case on DIR/<case id>.json instead of playing it")
    quick.add_argument("-c", "--config", type=Path, metavar="FILE", help="the evalrun.yaml to use")
    quick.add_argument("--agent", metavar="NAME", help="play every case with this agent from evalrun.yaml")
    quick.add_argument("--no-cache", action="store_true", help="ask the models again instead of using the cache")
    _add_run_options(quick)
    quick.set_defaults(quick=True)

    generate = sub.add_parser(
        "generate", help="write suites from user stories and the agent's tools, with a model",
        description="For each user story (a CSV with watsonx's `story,agent` header, `starting_sentence` allowed, or "
                    "a YAML/JSON list of the same keys) the generator model (evalrun.yaml `generator:`, else its "
                    "`judge:`) writes N cases: a starting sentence, the expected tool calls in a goal graph, plausible "
                    "tool outputs and a text goal. Each answer is checked as a hand-written suite is, and against the "
                    "tools; an invalid one is asked again with the problems, then reported and never written. Same "
                    "inputs give the same files (the model cache). Exit 0 when every story gave its suite, 1 when some "
                    "could not, 4 on bad input or no model configured.")
    generate.add_argument("--stories", type=Path, required=True, metavar="FILE",
                          help="the stories: .csv (story,agent[,starting_sentence]) or .yaml/.json (a list)")
    generate.add_argument("--tools", metavar="TOOLS",
                          help="the agent's tools: a Python module (.py), an OpenAPI document, a JSON/YAML list of "
                               "OpenAI-style definitions, or `agent:NAME` for an agent's tools in evalrun.yaml")
    generate.add_argument("--tools-mcp", metavar="COMMAND",
                          help="list the tools of an MCP server started with COMMAND (stdio), e.g. "
                               "\"python server.py\"; needs `pip install 'evalrun[mcp]'`")
    generate.add_argument("-n", "--cases", type=int, default=2, metavar="N", dest="per_story",
                          help="cases per story (default 2)")
    generate.add_argument("-o", "--output-dir", type=Path, required=True, metavar="DIR",
                          help="where to write the suites (one file per story)")
    generate.add_argument("-c", "--config", type=Path, metavar="FILE",
                          help="the evalrun.yaml with `generator:` or `judge:` (default: the first one next to or "
                               "above the stories file)")
    generate.add_argument("--no-cache", action="store_true", help="ask the model again instead of using its cache")

    rescore = sub.add_parser("rescore", help="score a finished run's conversations again, calling no agent",
                             description="Score the conversations a finished run saved (RUN_DIR/conversations/, and "
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
    rescore.add_argument("-c", "--config", type=Path, metavar="FILE",
                         help="the evalrun.yaml to use (default: the first one next to or above PATH)")
    rescore.add_argument("--no-cache", action="store_true", help="ask the judge again instead of using its cache")
    _add_run_options(rescore)

    report = sub.add_parser("report", help="write a report format from a finished run",
                            description="Render a finished run's report.json again in another format, without "
                                        "running or scoring anything: " + _format_help() + ".")
    report.add_argument("run_dir", type=Path, metavar="RUN_DIR",
                        help="a run's folder (for example .evalrun/reports/latest) or its report.json")
    report.add_argument("--format", dest="formats", action="append", required=True, choices=_format_names(),
                        metavar="FMT", help="the format to write (" + ", ".join(_format_names()) + "); repeatable")
    report.add_argument("-o", "--output", type=Path, metavar="PATH",
                        help="where to write it (default: the format's file name in the run folder); only with "
                             "one --format")

    compare = sub.add_parser("compare", help="compare two finished runs",
                             description="Compare two finished runs case by case: the cases newly failing and newly "
                                         "passing, the change of each metric mean (over the cases scored in both), and "
                                         "an exact McNemar test on the cases that flipped, which says whether the "
                                         "change is more than chance. Exit 0 when nothing regressed, 1 when a case "
                                         "that passed in OLD does not pass in NEW or a metric mean dropped by more "
                                         "than --max-regression, 4 when OLD or NEW is not a report.")
    compare.add_argument("old", type=Path, metavar="OLD", help="the earlier run: its folder or its report.json")
    compare.add_argument("new", type=Path, metavar="NEW", help="the later run: its folder or its report.json")
    compare.add_argument("--format", choices=("text", "md"), default="text",
                         help="text for the console, md for a pull-request comment")
    compare.add_argument("--max-regression", type=_share, default=0.0, metavar="DROP",
                         help="how far a metric mean (a share 0-1) may drop before it counts as a regression "
                              "(default 0.0)")

    merge = sub.add_parser("merge", help="join the shards of a run into one report",
                           description="Join the reports of the shards of one run (each run with --shard I/N, on the "
                                       "machines of a CI matrix) into one report.json with one verdict and exit code, "
                                       "as if it had been a single run. Shards of different suites or configurations, "
                                       "or with a case in two shards, are refused (exit 4); a missing shard exits 3.")
    merge.add_argument("reports", nargs="+", type=Path, metavar="REPORT",
                       help="each shard's run folder or report.json")
    merge.add_argument("-o", "--output-dir", type=Path, required=True, metavar="DIR",
                       help="where to write the merged report.json (and the --format files)")
    merge.add_argument("--format", dest="formats", action="append", default=[], choices=_format_names(),
                       metavar="FMT", help="also write this format of the merged report (" + _format_help() +
                                           "); repeatable")
    merge.add_argument("--min-pass-rate", type=_share, metavar="RATE",
                       help="as for run: overrides the min_pass_rate of the shards' evalrun.yaml")
    merge.add_argument("--baseline", type=Path, metavar="REPORT",
                       help="as for run: exit 1 when the merged run falls behind this saved run")
    merge.add_argument("--max-regression", type=_share, default=0.0, metavar="DROP",
                       help="with --baseline: how far a metric mean (a share 0-1) may drop (default 0.0)")

    validate = sub.add_parser("validate", help="check suites without running them",
                              description="Check suite files: YAML syntax, the schema and the semantic rules. Prints "
                                          "every problem as path:line:col: severity: message. Exit 0 when all are "
                                          "valid, 4 on any error.")
    validate.add_argument("paths", nargs="+", type=Path, metavar="PATH", help="suite files or folders")
    validate.add_argument("--format", choices=("text", "json"), default="text", help="how to print the diagnostics")
    validate.add_argument("--quick", action="store_true",
                          help="check the suites as `evalrun quick` reads them: a case needs nothing to check of its "
                               "own (a starting sentence or a story is enough)")
    validate.add_argument("--eval-config", type=Path, metavar="FILE",
                          help="the Google ADK or Agentflow eval config for every ADK/Agentflow eval set, instead of "
                               "the one beside each")

    listing = sub.add_parser("list", help="print the cases a run would collect, without running them",
                             description="Collect the suites under PATH as a run would (evalrun.yaml's `exclude`, "
                                         "-k, --tag) and print each case: its id, where it is written (file:line), the "
                                         "file's format, its tags, the agent that would play it (or the transcript "
                                         "it replays) and its scripted user turns. Exit 0; 4 when a suite is invalid; "
                                         "5 when no case is selected.")
    listing.add_argument("paths", nargs="+", type=Path, metavar="PATH", help="suite files or folders")
    listing.add_argument("-c", "--config", type=Path, metavar="FILE", help="the evalrun.yaml to use")
    listing.add_argument("-k", "--filter", action="append", default=[], metavar="GLOB",
                         help="only cases whose id matches GLOB (a plain word matches ids containing it); repeatable")
    listing.add_argument("--tag", action="append", default=[], metavar="TAG", help="only cases with this tag; repeatable")
    listing.add_argument("--format", choices=("text", "json"), default="text", help="how to print the cases")

    record = sub.add_parser(
        "record", help="write a draft suite from a chat or from recorded conversations",
        description="Without --from: chat with an agent of evalrun.yaml in the terminal. You type the user's "
                    "messages; each agent turn shows its text and its tool calls with their arguments and results. "
                    "/save, Ctrl-D or Ctrl-C ends the chat and writes it as a draft suite (and the conversation "
                    "beside it, under transcripts/). With --from: one draft per conversation of each FILE (any "
                    "transcript evalrun reads). A draft has the user's messages, one tool_call goal per call in "
                    "order, each argument's mode chosen by rule, and the last answer as a text goal with its facts as "
                    "keywords; comments mark the lines to check. Exit 0 when written; 4 on bad input (nothing is "
                    "written); 3 when the files cannot be written.")
    record.add_argument("--from", dest="sources", nargs="+", type=Path, metavar="FILE",
                        help="recorded conversations to draft instead of chatting")
    record.add_argument("-o", "--output", type=Path, default=Path("."), metavar="FILE|DIR",
                        help="a folder (one suite file per draft; the default is the current folder), a new .yaml "
                             "file, or an existing suite file the drafts are added to as new cases")
    record.add_argument("--agent", metavar="NAME",
                        help="the agent of evalrun.yaml to chat with (default: default_agent, or the only one); "
                             "with --from, the agent the drafts name")
    record.add_argument("-c", "--config", type=Path, metavar="FILE",
                        help="the evalrun.yaml to use (default: the first one next to or above the output)")
    record.add_argument("--annotate", action="store_true",
                        help="ask evalrun.yaml's judge for a story, the keywords and each argument's mode "
                             "(prompts/annotate_draft.j2); the draft says which lines the judge wrote")

    simulate = sub.add_parser(
        "simulate", help="play the simulated user against the agent, printed unscored",
        description="Play each selected case live against its agent, as a run would (its scripted messages, then "
                    "evalrun.yaml's simulator from its `story`), even when it names a transcript, and print the "
                    "conversation without scoring it: to see a story play out before writing its goals. --batch N "
                    "plays N conversations per case; -o DIR saves each as DIR/<case id>-<n>.json for `evalrun "
                    "record --from`. Exit 0; 3 when a conversation ended in an error; 4 on invalid suites or "
                    "options; 5 when no case is selected.")
    simulate.add_argument("paths", nargs="+", type=Path, metavar="SUITE", help="suite files or folders")
    simulate.add_argument("-k", "--filter", action="append", default=[], metavar="GLOB",
                          help="only cases whose id matches GLOB (a plain word matches ids containing it); repeatable")
    simulate.add_argument("--tag", action="append", default=[], metavar="TAG", help="only cases with this tag")
    simulate.add_argument("--batch", type=int, default=1, metavar="N", help="conversations per case (default 1)")
    simulate.add_argument("-o", "--output", type=Path, metavar="DIR",
                          help="save each conversation as a transcript in DIR")
    simulate.add_argument("--agent", metavar="NAME", help="play every case with this agent of evalrun.yaml")
    simulate.add_argument("-c", "--config", type=Path, metavar="FILE", help="the evalrun.yaml to use")
    simulate.add_argument("--no-cache", action="store_true", help="ask the simulator again instead of its cache")

    watching = sub.add_parser(
        "watch", help="rerun the cases a changed file affects, as files change",
        description="Run the suites under PATH, then watch them: when a file changes, rerun the cases it affects "
                    "(a suite: its cases; a recorded conversation: the cases that replay it; an agent's source: "
                    "its live cases; evalrun.yaml or a prompt template: every case) and say what changed since the "
                    "last run. Each rerun is a fresh `evalrun run`. Needs `pip install 'evalrun[watch]'`. Ctrl-C "
                    "stops watching (exit 0); 4 on invalid suites.")
    watching.add_argument("paths", nargs="+", type=Path, metavar="PATH", help="suite files or folders")
    watching.add_argument("-c", "--config", type=Path, metavar="FILE", help="the evalrun.yaml to use")
    watching.add_argument("-k", "--filter", action="append", default=[], metavar="GLOB",
                          help="only cases whose id matches GLOB; repeatable")
    watching.add_argument("--tag", action="append", default=[], metavar="TAG", help="only cases with this tag")
    watching.add_argument("--agent", metavar="NAME", help="play every live case with this agent")

    schema = sub.add_parser("schema", help="print a JSON Schema",
                            description="Print the JSON Schema of suite files, of evalrun.yaml or of report.json.")
    schema.add_argument("kind", nargs="?", default="suite",
                        choices=("suite", "config", "report", "adk-evalset", "adk-eval-config"))

    calibrate = sub.add_parser(
        "calibrate", help="measure a judged check against examples people labelled",
        description="Run the check of LABELS (a labels file: `check:` and `examples:` labelled pass or fail; see the "
                    "README) on every example with evalrun.yaml's judge, and print how often it agrees with the "
                    "labels, Cohen's kappa and the confusion table. Exit 0; 1 when --min-kappa is not reached; 3 when "
                    "the check decided no example (no judge, or no usable answer); 4 on an invalid file.")
    calibrate.add_argument("labels", type=Path, metavar="LABELS", help="the labels file (YAML or JSON)")
    calibrate.add_argument("-c", "--config", type=Path, metavar="FILE",
                           help="the evalrun.yaml with the judge (default: the first one next to or above LABELS)")
    calibrate.add_argument("--no-cache", action="store_true", help="ask the judge again instead of using its cache")
    calibrate.add_argument("--min-kappa", type=float, metavar="K", help="exit 1 when Cohen's kappa is below K")
    calibrate.add_argument("--format", choices=("text", "json"), default="text", help="how to print the result")

    init = sub.add_parser("init", help="write a starter folder",
                          description="Write an example suite (with the schema modeline), an evalrun.yaml and editor "
                                      "settings that map suites to the schema. Existing files are never overwritten.")
    init.add_argument("directory", nargs="?", default=Path("."), type=Path, metavar="DIR")

    convert = sub.add_parser("convert", help="write ADK or Agentflow eval sets as evalrun YAML",
                             description="Write the evalrun YAML equivalent of Google ADK eval files (*.evalset.json, "
                                         "*.test.json, ADK's older list formats) and Agentflow eval sets, with the "
                                         "criteria of their eval config (test_config.json, eval_config.json) as checks. "
                                         "evalrun runs the JSON files as they are too; the YAML gives the same "
                                         "verdicts and takes what JSON cannot say (fuzzy, optional, one_of, regex "
                                         "arguments per turn, per-turn checks). Existing files are never overwritten.")
    convert.add_argument("paths", nargs="+", type=Path, metavar="PATH", help="eval files, or folders searched for them")
    convert.add_argument("-o", "--output-dir", type=Path, metavar="DIR",
                         help="where to write the YAML (a folder keeps its layout under DIR; default: beside each file)")
    convert.add_argument("--eval-config", type=Path, metavar="FILE",
                         help="the eval config to convert with, instead of the one beside each file")

    imports = sub.add_parser(
        "import", help="draft suites from the conversations of trace files (or any transcript)",
        description="Read every conversation of each FILE (OpenTelemetry traces as OTLP/JSON, one request or the "
                    "collector's JSON lines; or any transcript evalrun reads) and write, per conversation, its "
                    "transcript and a draft suite that replays it: one tool_call goal per call, the last answer as a "
                    "text goal, comments on the lines to check (the drafts of `evalrun record --from`). Exit 0 when "
                    "written; 4 on bad input (nothing is written); 3 when the files cannot be written.")
    imports.add_argument("sources", nargs="+", type=Path, metavar="FILE", help="trace files or transcripts")
    imports.add_argument("-o", "--output", type=Path, default=Path("suites/imported"), metavar="DIR|FILE",
                         help="a folder (one suite per conversation; default suites/imported), a new .yaml file, "
                              "or an existing suite the drafts join as new cases")
    imports.add_argument("--agent", metavar="NAME", help="the agent of evalrun.yaml the drafts name")
    _add_redteam(sub)
    return parser


def _add_redteam(sub) -> None:
    redteam = sub.add_parser("redteam", help="red-team attacks: the catalogue, and attack suites planned from cases",
                             description="`evalrun redteam list` prints the attack catalogue; `evalrun redteam plan` "
                                         "writes, for each case and attack, a suite whose user carries out the attack "
                                         "and whose checks say what a safe agent does. Run the planned suites as any "
                                         "suite: `evalrun suites/redteam/`.")
    action = redteam.add_subparsers(dest="redteam_command", metavar="ACTION", required=True)
    listing = action.add_parser("list", help="print the attack catalogue")
    listing.add_argument("-c", "--config", type=Path, metavar="FILE",
                         help="the evalrun.yaml whose prompts_dir may hold its own redteam/catalogue.yaml")
    planning = action.add_parser(
        "plan", help="write attack suites made from existing cases",
        description="For each case under SUITES and each attack, write one suite (per variant) to -o DIR: the "
                    "attacking user's turns, a canary planted in the agent's context that no reply may contain, the "
                    "forbidden tools in forbid_extra_calls and, for attacks judged on words, a `refusal` check. "
                    "Every planned suite is validated before any is written; on a failure nothing is written. "
                    "Exit 0; 3 when --generate's model gives no usable attack; 4 on invalid suites or a usage error; "
                    "5 when there is no case to attack.")
    planning.add_argument("paths", nargs="+", type=Path, metavar="SUITES", help="suite files or folders")
    planning.add_argument("-o", "--output-dir", type=Path, required=True, metavar="DIR",
                          help="where to write the attack suites (files of the same name are replaced)")
    planning.add_argument("--attacks", type=_names, metavar="A,B", help="only these attacks (default: all)")
    planning.add_argument("-n", type=int, default=1, metavar="N", dest="variants",
                          help="variants per attack, up to the number each attack has (default 1)")
    planning.add_argument("--forbidden-tools", type=_names, metavar="T1,T2",
                          help="the tools the agent must never call (default: each case's write-like tools that its "
                               "goals never call: names with verbs such as create, update, delete, cancel, send, pay)")
    planning.add_argument("--generate", action="store_true",
                          help="have the generator model (evalrun.yaml's `generator:`, else its `judge:`) write each "
                               "attack's user turns in its own words, seeded with the built-in template (replies are "
                               "cached: the same inputs give the same files); without it the templates write them, "
                               "offline")
    planning.add_argument("--no-cache", action="store_true", help="with --generate: ask the model again")
    planning.add_argument("-c", "--config", type=Path, metavar="FILE",
                          help="the evalrun.yaml to use (default: the first one next to or above SUITES)")


def _names(text: str) -> list[str]:
    names = [part.strip() for part in text.split(",") if part.strip()]
    if not names:
        raise argparse.ArgumentTypeError("give at least one name")
    return names


def _add_run_options(command: argparse.ArgumentParser) -> None:
    command.add_argument("-k", "--filter", action="append", default=[], metavar="GLOB",
                         help="only cases whose id matches GLOB (a plain word matches ids containing it); repeatable")
    command.add_argument("--tag", action="append", default=[], metavar="TAG",
                         help="only cases with this tag (Smoke and smoke are the same tag); repeatable")
    command.add_argument("-j", "--concurrency", type=_at_least_one, default=8, metavar="N",
                         help="run at most N cases at once (default 8); also the limit on model calls in flight")
    command.add_argument("--executor", choices=("auto", "local", "processes", "ray"), default="auto",
                         help="what runs the cases: `local` (this process; live cases and judges), `processes` "
                              "(recorded cases scored in one process per CPU, at most -j), `auto` (default: "
                              "processes when the run only scores recordings, has no judge and enough cases; -j 1 "
                              "stays in one process), `ray` (recorded cases scored on the Ray cluster in "
                              "RAY_ADDRESS, or a local one; pip install 'evalrun[ray]')")
    command.add_argument("--output-dir", type=Path, metavar="DIR",
                         help="where to write results.jsonl (as cases finish), report.json and the live "
                              "conversations (default: .evalrun/reports/<run id>/, with .evalrun/reports/latest "
                              "pointing at the newest complete report)")
    command.add_argument("-q", "--quiet", action="store_true", help="print only failures and the summary")
    command.add_argument("-v", "--verbose", action="store_true",
                         help="print every case with its goals: one line per goal with its status and why")
    command.add_argument("--format", dest="formats", action="append", default=[], choices=_format_names(),
                         metavar="FMT", help="also write this report format into the run folder, beside report.json "
                                             "(" + _format_help() + "); repeatable")
    command.add_argument("-x", "--exitfirst", action="store_true",
                         help="stop after the first failed or errored case; the cases not run are listed")
    command.add_argument("--profile", metavar="NAME",
                         help="run only the checks that evalrun.yaml's profile NAME selects (`profiles:`); the "
                              "others show as skipped")
    command.add_argument("--min-pass-rate", type=_share, metavar="RATE",
                         help="exit 0 when at least this share (0-1) of the scored cases passed, even if some failed; "
                              "overrides evalrun.yaml's min_pass_rate")
    command.add_argument("--repeat", type=_at_least_one, default=1, metavar="N", dest="repeats",
                         help="run every case N times (each run with its own model-cache slot, so a rerun replays the "
                              "same N answers); reports pass@k, pass^k and the flaky cases (default 1; rescore uses "
                              "the saved run's N)")
    command.add_argument("--repeat-policy", choices=("all", "majority", "any"), metavar="POLICY",
                         help="with --repeat: a case passes when all its runs pass, a majority, or any one "
                              "(all, majority, any; default evalrun.yaml's repeat_policy, else all)")
    command.add_argument("--lf", "--last-failed", dest="last_failed", action="store_true",
                         help="run only the cases that failed, ended in error or could not be scored in the latest "
                              "report (.evalrun/reports/latest)")
    command.add_argument("--shard", type=_shard, metavar="I/N",
                         help="run only part I of N of the cases (1 <= I <= N), split by a hash of each case id so "
                              "every machine of a CI matrix agrees; join the parts with `evalrun merge`")
    command.add_argument("--eval-config", type=Path, metavar="FILE",
                         help="the Google ADK or Agentflow eval config (criteria) for every ADK/Agentflow eval set, "
                              "instead of the test_config.json or eval_config.json beside each")
    command.add_argument("--baseline", type=Path, metavar="REPORT",
                         help="a saved run (its report.json or folder) this run must not fall behind: exit 1 when a "
                              "case that passed there now fails, or a metric mean drops by more than --max-regression")
    command.add_argument("--otlp", metavar="FILE|ENDPOINT",
                         help="also write the run as OpenTelemetry spans (a span per case, a gen_ai.evaluation.result "
                              "event per goal and check): OTLP/JSON to FILE (a .jsonl file gets one line per run), or "
                              "OTLP/HTTP to an http(s) ENDPOINT such as http://127.0.0.1:4318 (needs evalrun[otel])")
    command.add_argument("--max-regression", type=_share, default=0.0, metavar="DROP",
                         help="with --baseline: how far a metric mean (journey_completion, tool_call_precision, "
                              "tool_call_recall; shares 0-1) may drop, in the metric's own unit: 0.05 allows five "
                              "percentage points (default 0.0)")


def _eval_config_problem(path: Optional[Path]) -> Optional[str]:
    if path is None or path.is_file():
        return None
    return f"--eval-config {path}: {'no such file' if not path.exists() else 'not a file'}"


def _format_names() -> tuple[str, ...]:
    from .report.formats import names

    return names()


def _format_help() -> str:
    from .report.formats import get

    return ", ".join(f"{name} → {get(name).file_name}" for name in _format_names())


def _share(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: '{text}'") from None
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"must be between 0 and 1, got {text}")
    return value


def _at_least_one(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: '{text}'") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _shard(text: str) -> str:
    from .shard import parse_shard

    try:
        return str(parse_shard(text))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _with_default_command(argv: Sequence[str]) -> list[str]:
    """`evalrun suites/` means `evalrun run suites/`, and so does `evalrun -k lookup suites/`: anything
    that does not start with a command name, -h/--help or --version is a `run`."""
    args = list(argv)
    if not args or args[0] in COMMANDS or args[0] in ("-h", "--help", "--version"):
        return args
    return ["run", *args]


def main(argv: Optional[Sequence[str]] = None) -> int:
    from .plugins import skip_pydantic_plugins

    skip_pydantic_plugins()  # 0.2-0.3 s of every start with logfire installed (runner/plugins.py)
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    try:
        args = parser.parse_args(_with_default_command(argv))
    except SystemExit as exc:  # argparse exits 2 on usage errors; evalrun's usage code is 4
        return 0 if exc.code in (0, None) else 4
    if args.command is None:
        parser.print_help()
        return 4
    try:
        return _COMMANDS[args.command](args)
    except KeyboardInterrupt:  # outside a run (which handles its own signals): nothing to keep
        print("interrupted", file=sys.stderr)
        return 2


def _cmd_validate(args: argparse.Namespace) -> int:
    import json

    from .api import EXIT_USAGE, validate
    from .config import config_line
    from .suite.diagnostics import has_errors

    print(config_line(list(args.paths)), file=sys.stderr)
    problem = _eval_config_problem(args.eval_config)
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


def _cmd_rescore(args: argparse.Namespace) -> int:
    from .api import EXIT_USAGE
    from .rescore import NotRescorable, current_project, read_saved_run, suites_to_rescore

    try:
        saved = read_saved_run(args.run_dir)
        args.paths = suites_to_rescore(saved, args.paths, current_project())
    except NotRescorable as exc:
        print(f"evalrun rescore: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if args.shard is not None and saved.shard is not None and args.shard != saved.shard:
        print(f"evalrun rescore: error: --shard: the run was shard {saved.shard}; its conversations are of that part",
              file=sys.stderr)
        return EXIT_USAGE
    args.replay, args.agent = None, None  # nothing is played: the saved conversations are scored
    args.repeats = saved.repeats  # the saved conversations are per repeat
    args.shard = saved.shard or args.shard  # the same part of the suite
    return _cmd_run(args, conversations_dir=saved.conversations, saved_selection=saved.selection)


def _cmd_run(args: argparse.Namespace, conversations_dir: Optional[Path] = None, saved_selection=None) -> int:
    from .api import EXIT_NO_CASES, EXIT_USAGE, run
    from .config import config_line
    from .report.console import Console, Progress, StageNotes, case_line, goal_lines, print_failures, print_summary

    out, err = Console(sys.stdout), Console(sys.stderr)
    if args.otlp:
        from .report.otlp import missing_otel

        problem = missing_otel()  # said before the run, not after it
        if problem is not None:
            err.line(f"evalrun: {problem}")
            return 4
    err.line(config_line(list(args.paths), args.config))  # which evalrun.yaml (judge, agents, keys) this run obeys
    stage_notes = StageNotes()
    bar: list[Progress] = []

    def on_start(total: int) -> None:
        bar.append(Progress(out, total))

    def on_result(result) -> None:
        stage_notes.add(result)
        shown = args.verbose or not args.quiet or result.status in ("failed", "error", "unscored") \
            or result.judge_fallbacks
        line = case_line(result, out.color)
        if args.verbose:
            line = "\n".join([line, *goal_lines(result)])
        if bar:
            bar[0].case(line if shown else None, result.status)
        elif shown:
            out.line(line)

    problem = _eval_config_problem(args.eval_config)
    if problem:
        err.line(f"evalrun: {problem}")
        return EXIT_USAGE
    outcome = run(args.paths, config_path=args.config, replay_dir=args.replay, filters=args.filter, tags=args.tag,
                  output_dir=args.output_dir, concurrency=args.concurrency, no_cache=args.no_cache,
                  agent=args.agent, conversations_dir=conversations_dir, formats=args.formats,
                  min_pass_rate=args.min_pass_rate, exitfirst=args.exitfirst, baseline=args.baseline,
                  max_regression=args.max_regression, repeats=args.repeats, repeat_policy=args.repeat_policy,
                  shard=args.shard, last_failed=args.last_failed, profile=args.profile,
                  saved_selection=saved_selection, eval_config=args.eval_config, quick=getattr(args, "quick", False),
                  executor=getattr(args, "executor", "auto"), on_notice=err.line, on_start=on_start,
                  on_result=on_result)
    if bar:
        bar[0].finish()
    out.redact = err.redact = outcome.redact
    for diagnostic in outcome.diagnostics:
        err.line(_diagnostic_line(diagnostic, args.command))
    if outcome.summary is None:
        for note in outcome.notes:
            err.line(note)
        if outcome.exit_code == EXIT_NO_CASES:
            err.line("no cases collected" + (" (check -k/--tag)" if args.filter or args.tag else ""))
        elif outcome.exit_code == EXIT_USAGE:
            err.line("nothing was run: fix the problems above")
        return outcome.exit_code
    if getattr(args, "save_failures", None) is not None:
        _save_failures(args.save_failures, outcome, err)
    try:
        try:
            print_failures(out, outcome.results(only_problems=True))
        except (OSError, ValueError) as exc:  # the results file went away after the run: the summary stands
            err.line(f"cannot read the results back for the failure details: {exc}")
        print_summary(out, outcome.summary, notes=[*stage_notes.lines(), *outcome.notes],
                      report_path=_shown(outcome.report_path) if outcome.report_path is not None else None,
                      agent=args.agent)
        for path in outcome.extra_reports:
            out.line(f"{path.name}: {_shown(path)}")
    except KeyboardInterrupt:  # Ctrl-C while the details scroll by: the run and its report are complete
        err.line(f"stopped printing; {outcome.summary.exit_reason}")
    if out.lost is not None:
        err.line(f"console output stopped ({out.lost}); the run went on: "
                 f"{outcome.report_path or 'see results.jsonl'} has every finished case")
    if args.otlp and outcome.report_path is not None:
        return _export_spans(outcome.report_path, args.otlp, outcome.exit_code, out, err)
    return outcome.exit_code


def _save_failures(target: Path, outcome, err) -> None:
    from .authoring.failures import save_failures
    from .results.folder import describe_os_error

    command = "evalrun " + " ".join(sys.argv[1:])
    try:
        saved = save_failures(outcome.results(only_problems=True), target, command)
    except OSError as exc:
        err.line(f"--save-failures: cannot write {target}: {describe_os_error(exc)}")
        return
    except ValueError as exc:  # the results file went away after the run
        err.line(f"--save-failures: cannot read the results back: {exc}")
        return
    if saved:
        err.line(f"saved {len(saved)} case{'' if len(saved) == 1 else 's'} that did not pass to {target}: "
                 f"evalrun run {target}")
    else:
        err.line(f"--save-failures: no case failed or ended in error; {target} was not written")


def _shown(path: Path) -> str:
    """A path as the console shows it: relative to the current folder when it lies below it."""
    import os

    relative = os.path.relpath(path)
    return str(path) if relative.startswith("..") else relative


def _diagnostic_line(diagnostic, command: str) -> str:
    """A problem with a file as a compiler prints it (path:line:col: error: ...); a problem with a
    command-line option as a usage error that names the option (evalrun run: error: --agent: ...)."""
    if diagnostic.path.startswith("-"):
        said = diagnostic.message if diagnostic.message.startswith(diagnostic.path) \
            else f"{diagnostic.path}: {diagnostic.message}"
        return f"evalrun {command}: {diagnostic.severity}: {said}"
    return str(diagnostic)


def _export_spans(report_path: Path, target: str, exit_code: int, out, err) -> int:
    """--otlp: the saved report as spans. A failed export is said, and a run that would exit 0 exits 3:
    spans a team counts on did not arrive."""
    from .report.otlp import OtlpExportError, export_report
    from .report.saved import NotAReport, load_report

    try:
        out.line(export_report(load_report(report_path), target))
    except (OtlpExportError, NotAReport) as exc:
        err.line(f"evalrun: --otlp: {exc}")
        return exit_code or 3
    return exit_code


def _cmd_report(args: argparse.Namespace) -> int:
    from .report.render import render_many
    from .report.saved import NotAReport

    if args.output is not None and len(set(args.formats)) > 1:
        print("evalrun report: -o/--output names one file: give one --format with it", file=sys.stderr)
        return 4
    try:
        written = render_many(args.formats, args.run_dir, {args.formats[0]: args.output} if args.output else None)
    except NotAReport as exc:
        print(f"evalrun report: {exc}", file=sys.stderr)
        return 4
    except OSError as exc:
        from .results.folder import describe_os_error

        print(f"evalrun report: cannot write the report: {describe_os_error(exc)}", file=sys.stderr)
        return 3
    for path in written:
        print(path)
    return 0


def _cmd_compare(args: argparse.Namespace) -> int:
    from .report.compare import as_markdown, as_text, compare_reports
    from .report.saved import NotAReport

    try:
        comparison = compare_reports(args.old, args.new)
    except NotAReport as exc:
        print(f"evalrun compare: {exc}", file=sys.stderr)
        return 4
    render = as_markdown if args.format == "md" else as_text
    sys.stdout.write(render(comparison, args.max_regression))
    regressions = comparison.regressions(args.max_regression)
    print("; ".join(regressions) + ": exit 1" if regressions else "no regression: exit 0", file=sys.stderr)
    return 1 if regressions else 0


def _cmd_merge(args: argparse.Namespace) -> int:
    from .report.merge import MergeError, check_baseline, merge_reports, write_merged
    from .report.console import Console, print_summary
    from .report.render import render_many
    from .report.saved import NotAReport
    from .results.models import Summary
    from .results.folder import describe_os_error

    try:
        merged = merge_reports(args.reports, min_pass_rate=args.min_pass_rate)
        if args.baseline is not None:
            check_baseline(merged, args.baseline, args.max_regression)
    except (NotAReport, MergeError) as exc:
        print(f"evalrun merge: {exc}", file=sys.stderr)
        return 4
    try:
        target = write_merged(merged, args.output_dir)
        written = render_many(args.formats, target) if args.formats else []
    except OSError as exc:
        print(f"evalrun merge: cannot write the merged report: {describe_os_error(exc)}", file=sys.stderr)
        return 3
    summary = Summary.model_validate(merged["summary"])
    out = Console(sys.stdout)
    print_summary(out, summary, notes=[f"merged {len(merged['merged_from'])} shard(s): "
                                       + ", ".join(merged["merged_from"])], report_path=str(target),
                  agent=merged.get("agent"))
    for path in written:
        if path != target:  # --format json: the merged report.json itself
            out.line(f"{path.name}: {path}")
    return summary.exit_code


def _cmd_schema(args: argparse.Namespace) -> int:
    from .resources import schema_path

    sys.stdout.write(schema_path(args.kind).read_text(encoding="utf-8"))
    return 0


def _cmd_init(args: argparse.Namespace) -> int:
    from .authoring.init import InitError, write_starter

    try:
        lines = write_starter(args.directory)
    except InitError as exc:
        for line in exc.lines:
            print(line)
        print(f"evalrun init: {exc}", file=sys.stderr)
        return 4  # a usage error
    for line in lines:
        print(line)
    return 0


def _cmd_calibrate(args: argparse.Namespace) -> int:
    import json

    from .checks.calibrate import calibrate, render

    agreement, problems = calibrate(args.labels, config_path=args.config, no_cache=args.no_cache)
    for problem in problems:
        print(problem, file=sys.stderr)
    if agreement is None:
        return 4
    if args.format == "json":
        print(json.dumps(agreement.model_dump(), indent=1))
    else:
        print("\n".join(render(agreement)))
    if agreement.decided == 0:
        print("the check decided none of the examples (see why above): exit 3", file=sys.stderr)
        return 3
    if args.min_kappa is not None and (agreement.kappa is None or agreement.kappa < args.min_kappa):
        kappa = "undefined" if agreement.kappa is None else f"{agreement.kappa:.3f}"
        print(f"Cohen's kappa {kappa} is below --min-kappa {args.min_kappa:g}: exit 1", file=sys.stderr)
        return 1
    return 0


def _cmd_import(args: argparse.Namespace) -> int:
    from .authoring.imports import import_command

    return import_command(args, sys.stdout, sys.stderr)


def _cmd_list(args: argparse.Namespace) -> int:
    import json

    from .api import EXIT_NO_CASES, list_cases
    from .report.console import visible

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
        print(visible("  ".join(cell.ljust(width) for cell, width in zip(row, widths)) + "  " + row[5]))
    if rows:
        print(f"{len(rows)} case{'' if len(rows) == 1 else 's'}", file=sys.stderr)
    return listing.exit_code


def _cmd_record(args: argparse.Namespace) -> int:
    from .authoring.record_cli import record_command

    return record_command(args, sys.stdout, sys.stderr)


def _cmd_simulate(args: argparse.Namespace) -> int:
    from .authoring.simulate_cli import simulate_command

    return simulate_command(args, sys.stdout, sys.stderr)


def _cmd_watch(args: argparse.Namespace) -> int:
    from .watch import WatchOptions, watch

    return watch(WatchOptions(args.paths, args.config, args.filter, args.tag, args.agent), sys.stdout, sys.stderr)


def _cmd_convert(args: argparse.Namespace) -> int:
    from .api import EXIT_USAGE
    from .authoring.convert import convert
    from .suite.files import display_path

    problem = _eval_config_problem(args.eval_config)
    if problem:
        print(f"evalrun convert: {problem}", file=sys.stderr)
        return EXIT_USAGE
    result = convert(args.paths, args.output_dir, args.eval_config)
    for diagnostic in result.diagnostics:
        print(diagnostic, file=sys.stderr)
    for done in result.written:
        print(f"wrote {display_path(done.target)}: {done.cases} case(s) from {display_path(done.source)} {done.note}")
    return 0 if result.ok else EXIT_USAGE


def _cmd_generate(args: argparse.Namespace) -> int:
    from .authoring.generate import GenerateError, generate_suites
    from .config import config_line

    print(config_line([args.stories], args.config), file=sys.stderr)  # which generator and cache it uses
    try:
        report = generate_suites(args.stories, tools=args.tools, tools_mcp=args.tools_mcp,
                                 per_story=args.per_story, output_dir=args.output_dir, config_path=args.config,
                                 no_cache=args.no_cache, on_line=print)
    except GenerateError as exc:
        print(f"evalrun generate: {exc}", file=sys.stderr)
        return 4
    for problem in report.problems:
        print(problem, file=sys.stderr)
    print(report.summary_line(), file=sys.stderr)
    return 1 if report.problems else 0



def _cmd_redteam(args: argparse.Namespace) -> int:
    from .authoring.redteam.catalogue import CatalogueError, catalogue_lines, load_catalogue
    from .authoring.redteam.plan import PlanError, plan

    if args.redteam_command == "list":
        from .config import find_config, load_config

        loaded, _ = load_config(args.config or find_config([Path.cwd()]))
        try:
            catalogue = load_catalogue(loaded.resolve(loaded.config.prompts_dir))
        except CatalogueError as exc:
            print(f"evalrun redteam list: {exc}", file=sys.stderr)
            return 4
        print("\n".join(catalogue_lines(catalogue)))
        return 0
    try:
        result = plan(args.paths, args.output_dir, attacks=args.attacks, variants=args.variants,
                      forbidden_tools=args.forbidden_tools, config_path=args.config, generate=args.generate,
                      no_cache=args.no_cache)
    except PlanError as exc:
        for diagnostic in exc.diagnostics:
            print(diagnostic, file=sys.stderr)
        print(f"evalrun redteam plan: {exc}", file=sys.stderr)
        return exc.exit_code
    for note in result.notes:
        print(f"note: {note}", file=sys.stderr)
    for suite, path in zip(result.suites, result.written):
        print(f"{path}  ({suite.attack}, {suite.category})")
    print(f"planned {len(result.written)} attack suite(s) from {result.cases} case(s); run them with: evalrun "
          f"{args.output_dir}", file=sys.stderr)
    return 0


_COMMANDS = {"run": _cmd_run, "quick": _cmd_run, "generate": _cmd_generate, "rescore": _cmd_rescore,
             "report": _cmd_report, "compare": _cmd_compare, "merge": _cmd_merge, "validate": _cmd_validate,
             "list": _cmd_list, "record": _cmd_record, "simulate": _cmd_simulate, "watch": _cmd_watch,
             "schema": _cmd_schema, "init": _cmd_init, "calibrate": _cmd_calibrate, "convert": _cmd_convert,
             "import": _cmd_import, "redteam": _cmd_redteam}
