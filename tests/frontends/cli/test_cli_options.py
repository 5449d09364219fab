"""The command line's shape, pinned: every command's options (their spellings, in order, and the attribute
each lands in, which the handlers read) against a table, so that moving parser code cannot drop, rename or
reorder an option unseen; and the options several commands share, alike wherever they appear."""
from __future__ import annotations

import argparse

import pytest

from runner.frontends import cli
from runner.results import summary

# command: its arguments in order; a positional by its destination, an option by its spellings joined
# with '/', and '>dest' where the destination is not the last spelling's.
OPTIONS = {
    "run": "paths --replay -c/--config --agent --cache>no_cache --no-cache --save-failures -k/--filter --tag "
           "-j/--concurrency --executor --output-dir -q/--quiet -v/--verbose --format>formats -x/--exitfirst "
           "--profile --min-pass-rate --repeat>repeats --repeat-policy --lf/--last-failed --shard --eval-config "
           "--baseline --otlp --max-regression --matrix",
    "quick": "paths --replay -c/--config --agent --cache>no_cache --no-cache -k/--filter --tag -j/--concurrency "
             "--executor --output-dir -q/--quiet -v/--verbose --format>formats -x/--exitfirst --profile "
             "--min-pass-rate --repeat>repeats --repeat-policy --lf/--last-failed --shard --eval-config --baseline "
             "--otlp --max-regression --matrix",
    "generate": "--stories --tools --tools-mcp -n/--cases>per_story -o/--output-dir -c/--config --cache>no_cache "
                "--no-cache",
    "rescore": "run_dir paths -c/--config --cache>no_cache --no-cache -k/--filter --tag -j/--concurrency --executor "
               "--output-dir -q/--quiet -v/--verbose --format>formats -x/--exitfirst --profile --min-pass-rate "
               "--repeat>repeats --repeat-policy --lf/--last-failed --shard --eval-config --baseline --otlp "
               "--max-regression",
    "report": "run_dir --format>formats -o/--output",
    "compare": "old new --format --max-regression",
    "merge": "reports -o/--output-dir --format>formats --min-pass-rate --baseline --max-regression",
    "validate": "paths --format --quick --eval-config",
    "list": "paths -c/--config -k/--filter --tag --format",
    "record": "--from>sources -o/--output --agent -c/--config --annotate",
    "simulate": "paths -k/--filter --tag --batch -o/--output --agent -c/--config --cache>no_cache --no-cache",
    "watch": "paths -c/--config -k/--filter --tag --agent",
    "schema": "kind",
    "calibrate": "labels -c/--config --cache>no_cache --no-cache --min-kappa --format",
    "init": "directory",
    "convert": "paths -o/--output-dir --eval-config --from>from_ --python --to",
    "import": "sources -o/--output --agent",
    "redteam list": "-c/--config",
    "redteam plan": "paths -o/--output-dir --attacks -n>variants --forbidden-tools --allow-tools --generate "
                    "--cache>no_cache --no-cache -c/--config",
    "cache info": "path -c/--config",
    "cache clear": "--older-than path -c/--config",
    "mutate": "paths -c/--config -k/--filter --tag --replay --judged --min-kill-rate --seed --mutants-per-case --format "
              "-o/--output -j/--concurrency --cache>no_cache --no-cache -v/--verbose",
    "view": "folder --port --host --export --open/--no-open>open",
}


def _commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    """(command words, its parser) for every command that takes options, sub-commands included."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from _commands(child, (*path, name))
            return
    yield " ".join(path), parser


def _arguments(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    return [action for action in parser._actions if not isinstance(action, argparse._HelpAction)]


def _spelled(action: argparse.Action) -> str:
    if not action.option_strings:
        return action.dest
    natural = action.option_strings[-1].lstrip("-").replace("-", "_")
    return "/".join(action.option_strings) + ("" if action.dest == natural else f">{action.dest}")


def test_every_command_has_the_options_of_the_table():
    found = {name: " ".join(_spelled(a) for a in _arguments(parser))
             for name, parser in _commands(cli.build_parser()) if name}
    assert found == OPTIONS


def test_the_commands_table_is_the_list_of_commands():
    parser = cli.build_parser()
    top = {name.split()[0] for name, _ in _commands(parser) if name}
    assert top == set(cli.COMMANDS) == {name.split()[0] for name in OPTIONS}


def test_a_shared_option_is_the_same_option_in_every_command():
    # -c/--config is a Path named FILE everywhere; -k/--filter and --tag collect; --agent is a NAME ...
    seen: dict[tuple[str, str], tuple[str, set[str]]] = {}
    for name, parser in _commands(cli.build_parser()):
        for action in _arguments(parser):
            if not action.option_strings:
                continue
            # what the handler receives (action, type) and how the help names it; required may differ
            shape = (type(action).__name__, getattr(action.type, "__name__", None), action.metavar)
            key = ("/".join(action.option_strings), action.dest)
            if key == ("-o/--output", "output"):  # a file, a folder or either: its metavar says which
                continue
            first, commands = seen.setdefault(key, (shape, set()))
            commands.add(name)
            assert shape == first, f"{key} in {name!r} differs from {sorted(commands - {name})}"
    shared = {key for key, (_, commands) in seen.items() if len(commands) > 1}
    assert {("-c/--config", "config"), ("-k/--filter", "filter"), ("--tag", "tag"), ("--agent", "agent"),
            ("--no-cache", "no_cache"), ("--cache", "no_cache"), ("-o/--output-dir", "output_dir"),
            ("--eval-config", "eval_config")} <= shared


@pytest.mark.parametrize("name", ["EXIT_OK", "EXIT_INTERRUPTED", "EXIT_USAGE"])
def test_the_exit_codes_of_main_are_the_runners(name):
    from runner import layout

    assert getattr(cli, name) is getattr(summary, name) is getattr(layout, name)  # runner/layout.py defines them once
