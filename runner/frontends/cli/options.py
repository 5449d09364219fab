"""The options several commands share, each added in one place so that its name, destination, type and
metavar cannot drift between commands; a command that words the help its own way passes the words.
Also the argument types (a share 0-1, a count >= 1, a shard I/N, a list of names) and the report formats.

Imports stay light (argparse, pathlib): this module is read for every `evalrun --help`.
"""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

CONFIG_HELP = "the evalrun.yaml to use"
FILTER_HELP = "only cases whose id matches GLOB (a plain word matches ids containing it); repeatable"
TAG_HELP = "only cases with this tag; repeatable"
SUITES_HELP = "suite files or folders"


def add_paths(parser: argparse.ArgumentParser, help: str = SUITES_HELP, metavar: str = "PATH") -> None:
    """The suites (or other files) a command reads: one or more, files or folders."""
    parser.add_argument("paths", nargs="+", type=Path, metavar=metavar, help=help)


def add_config(parser: argparse.ArgumentParser, help: str = CONFIG_HELP) -> None:
    """-c/--config: the evalrun.yaml, when not the one found next to or above the files."""
    parser.add_argument("-c", "--config", type=Path, metavar="FILE", help=help)


def add_selection(parser: argparse.ArgumentParser, filter_help: str = FILTER_HELP, tag_help: str = TAG_HELP) -> None:
    """-k/--filter and --tag: which cases of the suites a command takes (both repeatable)."""
    parser.add_argument("-k", "--filter", action="append", default=[], metavar="GLOB", help=filter_help)
    parser.add_argument("--tag", action="append", default=[], metavar="TAG", help=tag_help)


def add_agent(parser: argparse.ArgumentParser, help: str) -> None:
    """--agent: an agent of evalrun.yaml's `agents:` by name."""
    parser.add_argument("--agent", metavar="NAME", help=help)


def add_no_cache(parser: argparse.ArgumentParser, help: str) -> None:
    """--cache MODE and --no-cache (`--cache refresh`), one or the other: how the disk cache of model answers is
    used. Both set `no_cache`, which every command hands to the LLM layer as it is (runner.llm.runtime.cache_mode:
    False, the default, is `on`)."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--cache", dest="no_cache", choices=("on", "refresh", "off"), metavar="MODE",
                       help="how to use the disk cache of model answers (evalrun.yaml's cache_dir, default "
                            ".evalrun/cache; `evalrun cache info` shows it, `evalrun cache clear` forgets it): `on` "
                            "answers from it (default), `refresh` asks the models again and saves their answers for "
                            "the next run, `off` neither reads nor writes it")
    group.add_argument("--no-cache", dest="no_cache", action="store_const", const="refresh",
                       help=f"{help} (the same as --cache refresh: the fresh answers are saved, so the next run "
                            "does not answer with older ones)")


def add_output_dir(parser: argparse.ArgumentParser, help: str, required: bool = False, short: bool = True) -> None:
    """(-o) --output-dir DIR: the folder a command writes into."""
    names = ("-o", "--output-dir") if short else ("--output-dir",)
    parser.add_argument(*names, type=Path, required=required, metavar="DIR", help=help)


def add_report_formats(parser: argparse.ArgumentParser, help: str, required: bool = False) -> None:
    """--format FMT (repeatable): report formats to write, by name (json, junit, html, md, ...)."""
    defaults: dict[str, Any] = {"required": True} if required else {"default": []}
    parser.add_argument("--format", dest="formats", action="append", type=report_format, metavar="FMT",
                        help=help, **defaults)


def report_format(name: str) -> str:
    """A report format's name: evalrun's own, or an installed plugin's (whose metadata is read only then)."""
    from ...report.formats import builtin_names, names

    if name in builtin_names() or name in (known := names()):
        return name
    raise argparse.ArgumentTypeError(f"invalid choice: {name!r} (choose from {', '.join(map(repr, known))})")


def add_print_format(parser: argparse.ArgumentParser, help: str, choices: tuple[str, ...] = ("text", "json")) -> None:
    """--format: how a command prints its answer (text by default)."""
    parser.add_argument("--format", choices=choices, default="text", help=help)


def add_eval_config(parser: argparse.ArgumentParser, help: str) -> None:
    """--eval-config: a Google ADK or Agentflow eval config instead of the one beside each eval set."""
    parser.add_argument("--eval-config", type=Path, metavar="FILE", help=help)


def eval_config_problem(path: Path | None) -> str | None:
    """Why --eval-config cannot be read, said before anything runs; None when it can (or is not given)."""
    if path is None or path.is_file():
        return None
    return f"--eval-config {path}: {'no such file' if not path.exists() else 'not a file'}"


def format_names() -> tuple[str, ...]:
    """evalrun's own report formats (an installed plugin's are accepted too: see report_format)."""
    from ...report.formats import builtin_names

    return builtin_names()


def format_help() -> str:
    """Each of evalrun's report formats with the file it writes: `json → report.json, junit → junit.xml, ...`
    (an installed plugin's formats are not looked for: that costs each start of the command 20-60 ms)."""
    from ...report.formats import builtin_names, file_name

    return ", ".join(f"{name} → {file_name(name)}" for name in builtin_names())


def share(text: str) -> float:
    """A share from 0 to 1 (a pass rate, a drop of a metric mean)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: '{text}'") from None
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"must be between 0 and 1, got {text}")
    return value


def at_least_one(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: '{text}'") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def shard(text: str) -> str:
    """I/N, checked and written back in its one spelling."""
    from ...util.shard import parse_shard

    try:
        return str(parse_shard(text))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def names(text: str) -> list[str]:
    """A comma-separated list of names (attacks, tools), at least one."""
    found = [part.strip() for part in text.split(",") if part.strip()]
    if not found:
        raise argparse.ArgumentTypeError("give at least one name")
    return found
