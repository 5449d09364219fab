"""docs/reference/cli.md: every `evalrun` command and its arguments, from the argparse parsers the CLI builds
(runner.frontends.cli.build_parser, walked through its subcommands): each command's help line, description, usage and
arguments, in the order `evalrun --help` lists them."""
from __future__ import annotations

import argparse
import os
from collections.abc import Iterator

from reference_md import Problems, cell, code, header, prose, table

INTRO = """\
# The evalrun command

`evalrun PATH...` is `evalrun run PATH...`. Every command answers `--help` with what this page shows. Exit codes:
[Exit codes](exit-codes.md).
"""
WIDTH = "100"  # usage lines are wrapped at this width whatever the terminal (the page must not depend on it)


def render() -> str:
    from runner.frontends.cli import build_parser

    problems = Problems()
    saved = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = WIDTH
    try:
        commands = list(_commands(build_parser(), "evalrun", None))
        lines = [header("the argparse parsers, runner/frontends/cli/"), INTRO, "| command | what it does |", "|---|---|"]
        sections: list[str] = ["", "## evalrun", "", "With no command: `--version`, or `--help` for the overview (its "
                               "exit codes are on [their page](exit-codes.md)).", "", "```text",
                               commands[0][1].format_usage().strip(), "```", ""]
        sections += table(["argument", "default", "what it does"],
                          [[_names(a), _default(a), _expanded(commands[0][1], a)] for a in commands[0][1]._actions
                           if not isinstance(a, (argparse._HelpAction, argparse._SubParsersAction))])
        for path, parser, help_line in commands[1:]:
            summary = problems.need(help_line or parser.description, f"`{path}` has no help line nor description")
            lines.append(f"| [{path}](#{_anchor(path)}) | {cell(summary)} |")
            sections += ["", *_command(path, parser, summary, problems)]
    finally:
        if saved is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = saved
    problems.raise_if_any()
    return "\n".join(lines + sections).rstrip("\n") + "\n"


def _commands(parser: argparse.ArgumentParser, path: str, help_line: str | None
              ) -> Iterator[tuple[str, argparse.ArgumentParser, str | None]]:
    yield path, parser, help_line
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help for choice in action._choices_actions}
            for name, sub in action.choices.items():
                yield from _commands(sub, f"{path} {name}", helps.get(name))


def _anchor(path: str) -> str:
    return path.replace(" ", "-")


def _command(path: str, parser: argparse.ArgumentParser, summary: str, problems: Problems) -> list[str]:
    depth = "#" * min(path.count(" ") + 1, 3)
    sentence = summary[:1].upper() + summary[1:] + ("" if summary.endswith(".") else ".")
    lines = [f"{depth} {path}", "", prose(sentence), ""]
    if parser.description and " ".join(parser.description.split()) != summary:
        lines += [_paragraphs(parser.description), ""]
    usage = parser.format_usage().strip()
    lines += ["```text", usage, "```", ""]
    rows = []
    for action in parser._actions:
        if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)) or action.help == argparse.SUPPRESS:
            continue
        what = problems.need(action.help, f"`{path}`: argument {'/'.join(action.option_strings) or action.dest} "
                                          "has no help")
        if what:
            what = _expanded(parser, action)
        rows.append([_names(action), _default(action), what])
    subcommands = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if rows:
        lines += table(["argument", "default", "what it does"], rows)
    for action in subcommands:
        lines += ["", "Commands: " + ", ".join(f"[{name}](#{_anchor(f'{path} {name}')})" for name in action.choices)
                  + "."]
    return lines


def _paragraphs(text: str) -> str:
    """A description as argparse keeps it: blank lines part paragraphs; indented lines are an example block."""
    blocks = []
    for block in text.strip("\n").split("\n\n"):
        if any(line.startswith("  ") for line in block.splitlines()):
            blocks.append("```text\n" + block + "\n```")
        else:
            blocks.append(prose(block))
    return "\n\n".join(blocks)


def _expanded(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    return " ".join(parser._get_formatter()._expand_help(action).split())


def _names(action: argparse.Action) -> str:
    if not action.option_strings:
        return code(action.metavar or action.dest)
    takes = action.nargs != 0
    metavar = ""
    if takes:
        metavar = action.metavar if isinstance(action.metavar, str) else (
            "{" + ",".join(map(str, action.choices)) + "}" if action.choices else action.dest.upper())
    return ", ".join(code(f"{flag} {metavar}".strip()) for flag in action.option_strings)


def _default(action: argparse.Action) -> str:
    value = action.default
    if value in (None, False, argparse.SUPPRESS, []):
        return "-"
    if isinstance(action, argparse._StoreTrueAction) or action.nargs == 0:
        return "-"
    return code(str(value)) if not isinstance(value, (list, tuple)) else code(list(map(str, value)))
