"""Commands that write suites or help write them: `evalrun init`, `generate`, `record`, `import`, `convert`,
and `simulate` (a story played out, unscored, before its goals are written)."""
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
    add_selection,
    eval_config_problem,
)


def add_generate(sub) -> None:
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
    add_output_dir(generate, required=True, help="where to write the suites (one file per story)")
    add_config(generate, help="the evalrun.yaml with `generator:` or `judge:` (default: the first one next to or "
                              "above the stories file)")
    add_no_cache(generate, help="ask the model again instead of using its cache")


def add_record(sub) -> None:
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
    # text, not Path: a Path folds the `//` of a FILE#KEY's key (a run's conversations.jsonl#<case id>)
    record.add_argument("--from", dest="sources", nargs="+", metavar="FILE",
                        help="recorded conversations to draft instead of chatting")
    record.add_argument("-o", "--output", type=Path, default=Path("."), metavar="FILE|DIR",
                        help="a folder (one suite file per draft; the default is the current folder), a new .yaml "
                             "file, or an existing suite file the drafts are added to as new cases")
    add_agent(record, help="the agent of evalrun.yaml to chat with (default: default_agent, or the only one); "
                           "with --from, the agent the drafts name")
    add_config(record, help="the evalrun.yaml to use (default: the first one next to or above the output)")
    record.add_argument("--annotate", action="store_true",
                        help="ask evalrun.yaml's judge for a story, the keywords and each argument's mode "
                             "(prompts/annotate_draft.j2); the draft says which lines the judge wrote")


def add_simulate(sub) -> None:
    simulate = sub.add_parser(
        "simulate", help="play the simulated user against the agent, printed unscored",
        description="Play each selected case live against its agent, as a run would (its scripted messages, then "
                    "evalrun.yaml's simulator from its `story`), even when it names a transcript, and print the "
                    "conversation without scoring it: to see a story play out before writing its goals. --batch N "
                    "plays N conversations per case; -o DIR saves each as DIR/<case id>-<n>.json for `evalrun "
                    "record --from`. Exit 0; 3 when a conversation ended in an error; 4 on invalid suites or "
                    "options; 5 when no case is selected.")
    add_paths(simulate, metavar="SUITE")
    add_selection(simulate, tag_help="only cases with this tag")
    simulate.add_argument("--batch", type=int, default=1, metavar="N", help="conversations per case (default 1)")
    simulate.add_argument("-o", "--output", type=Path, metavar="DIR",
                          help="save each conversation as a transcript in DIR")
    add_agent(simulate, help="play every case with this agent of evalrun.yaml")
    add_config(simulate)
    add_no_cache(simulate, help="ask the simulator again instead of its cache")


def add_init(sub) -> None:
    init = sub.add_parser("init", help="write a starter folder",
                          description="Write an example suite (with the schema modeline), an evalrun.yaml and editor "
                                      "settings that map suites to the schema. Existing files are never overwritten.")
    init.add_argument("directory", nargs="?", default=Path("."), type=Path, metavar="DIR",
                      help="the folder to write into, made if missing (default: the current folder)")


def add_convert(sub) -> None:
    convert = sub.add_parser("convert", help="write ADK or Agentflow eval sets as evalrun YAML",
                             description="Write the evalrun YAML equivalent of Google ADK eval files (*.evalset.json, "
                                         "*.test.json, ADK's older list formats) and Agentflow eval sets, with the "
                                         "criteria of their eval config (test_config.json, eval_config.json) as checks. "
                                         "evalrun runs the JSON files as they are too; the YAML gives the same "
                                         "verdicts and takes what JSON cannot say (fuzzy, optional, one_of, regex "
                                         "arguments per turn, per-turn checks). Existing files are never overwritten.")
    add_paths(convert, help="eval files, or folders searched for them")
    add_output_dir(convert, help="where to write the YAML (a folder keeps its layout under DIR; default: beside each "
                                 "file)")
    add_eval_config(convert, help="the eval config to convert with, instead of the one beside each file")
    convert.add_argument("--from", dest="from_", choices=("eval-files", "agentflow-python"), default="eval-files",
                         help="agentflow-python: import a 10xGraph project's Python evals (*_eval.py, eval_*.py, "
                              "confeval.py) with --python and write them as Agentflow JSON files under -o DIR. It runs "
                              "the project's code, so only when asked")
    convert.add_argument("--python", metavar="PY", help="with --from agentflow-python: the project's interpreter, which "
                                                        "has Agentflow or 10xGraph (default: this one)")
    convert.add_argument("--to", choices=("evalrun", "agentflow"), default="evalrun",
                         help="agentflow: write evalrun YAML suites as Agentflow eval sets and eval configs "
                              "(DIR/<name>/<name>.evalset.json and eval_config.json), saying what they cannot carry")


def add_import(sub) -> None:
    imports = sub.add_parser(
        "import", help="draft suites from the conversations of trace files (or any transcript)",
        description="Read every conversation of each FILE (OpenTelemetry traces as OTLP/JSON, one request or the "
                    "collector's JSON lines; or any transcript evalrun reads) and write, per conversation, its "
                    "transcript and a draft suite that replays it: one tool_call goal per call, the last answer as a "
                    "text goal, comments on the lines to check (the drafts of `evalrun record --from`). Exit 0 when "
                    "written; 4 on bad input (nothing is written); 3 when the files cannot be written.")
    imports.add_argument("sources", nargs="+", metavar="FILE",  # text: see record --from
                         help="trace files or transcripts (FILE#ID: one conversation of a file of many)")
    imports.add_argument("-o", "--output", type=Path, default=Path("suites/imported"), metavar="DIR|FILE",
                         help="a folder (one suite per conversation; default suites/imported), a new .yaml file, "
                              "or an existing suite the drafts join as new cases")
    add_agent(imports, help="the agent of evalrun.yaml the drafts name")


def cmd_init(args: argparse.Namespace) -> int:
    from ...authoring.init import InitError, write_starter

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


def cmd_generate(args: argparse.Namespace) -> int:
    from ...authoring.generate.cases import GenerateError, generate_suites
    from ...config.load import config_line

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


def cmd_record(args: argparse.Namespace) -> int:
    from .record import record_command

    return record_command(args, sys.stdout, sys.stderr)


def cmd_import(args: argparse.Namespace) -> int:
    from .imports import import_command

    return import_command(args, sys.stdout, sys.stderr)


def cmd_simulate(args: argparse.Namespace) -> int:
    from .simulate import simulate_command

    return simulate_command(args, sys.stdout, sys.stderr)


def cmd_convert(args: argparse.Namespace) -> int:
    from ...authoring.convert import convert
    from ...results.verdict import EXIT_USAGE
    from ...util.files import display_path

    problem = eval_config_problem(args.eval_config)
    if problem:
        print(f"evalrun convert: {problem}", file=sys.stderr)
        return EXIT_USAGE
    if args.from_ == "agentflow-python":
        return _convert_python_evals(args)
    if args.to == "agentflow":
        return _convert_to_agentflow(args)
    result = convert(args.paths, args.output_dir, args.eval_config)
    for diagnostic in result.diagnostics:
        print(diagnostic, file=sys.stderr)
    for done in result.written:
        print(f"wrote {display_path(done.target)}: {done.cases} case(s) from {display_path(done.source)} {done.note}")
    return 0 if result.ok else EXIT_USAGE


def _convert_to_agentflow(args: argparse.Namespace) -> int:
    from ...authoring.agentflow.to_agentflow import write_agentflow
    from ...results.verdict import EXIT_USAGE
    from ...util.files import display_path

    written, diagnostics = write_agentflow(args.paths, args.output_dir)
    for diagnostic in diagnostics:
        print(diagnostic, file=sys.stderr)
    for target, cases in written:
        print(f"wrote {display_path(target)} and its eval_config.json: {cases} case(s)")
    return EXIT_USAGE if any(d.severity == "error" for d in diagnostics) or not written else 0


def _convert_python_evals(args: argparse.Namespace) -> int:
    from ...authoring.agentflow.from_python import export_python_evals
    from ...results.verdict import EXIT_USAGE
    from ...util.files import display_path

    if args.output_dir is None or len(args.paths) != 1:
        print("evalrun convert --from agentflow-python: name one evals folder (or file) and the output folder, "
              "-o DIR", file=sys.stderr)
        return EXIT_USAGE
    written, diagnostics = export_python_evals(args.paths[0], args.output_dir, args.python)
    for diagnostic in diagnostics:
        print(diagnostic, file=sys.stderr)
    for target, cases, config in written:
        print(f"wrote {display_path(target)}: {cases} case(s), config from {config}")
    return EXIT_USAGE if any(d.severity == "error" for d in diagnostics) or not written else 0
