"""`evalrun cache info` (where the disk cache is and what it holds) and `evalrun cache clear` (forget it, or the
part older than an age)."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .options import add_config


def add_cache(sub) -> None:
    cache = sub.add_parser("cache", help="where the disk cache of model answers is, what it holds, and clearing it",
                           description="Runs answer model calls (the judge, the simulated user, model agents) from a "
                                       "disk cache when the same request was answered before: evalrun.yaml's "
                                       "`cache_dir`, default .evalrun/cache beside evalrun.yaml (or in the project's "
                                       "folder without one). It also keeps the embedding stage's similarity scores. "
                                       "`run --cache refresh` asks the models again and saves their answers; this "
                                       "command shows the cache and clears it.")
    action = cache.add_subparsers(dest="cache_command", metavar="ACTION", required=True)
    info = action.add_parser("info", help="print where the cache is and how many answers it holds")
    clear = action.add_parser("clear", help="forget the cached answers and scores (all, or those older than AGE)")
    clear.add_argument("--older-than", metavar="AGE", type=_age,
                       help="only what was saved longer ago than AGE: a number and a unit, such as 12h, 7d or 2w "
                            "(answers saved by versions that did not note the time count as older)")
    for parser in (info, clear):
        parser.add_argument("path", nargs="?", type=Path, default=Path("."), metavar="PATH",
                            help="a suite file or folder of the project (default: the current folder); its "
                                 "evalrun.yaml says where the cache is")
        add_config(parser, help="the evalrun.yaml whose cache_dir to use (default: the first one next to or above "
                                "PATH)")


def _age(text: str) -> float:
    from ...llm.cache_folder import age

    try:
        return age(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def cmd_cache(args: argparse.Namespace) -> int:
    import sqlite3

    from ...config.load import cache_folder
    from ...llm.cache_folder import clear, contents
    from ...util.files import display_path

    folder, problems = cache_folder([args.path], args.config)
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        print(f"evalrun cache {args.cache_command}: fix evalrun.yaml first: it says where the cache is",
              file=sys.stderr)
        return 4
    shown = display_path(folder) or "."
    try:
        if args.cache_command == "clear":
            answers, scores = clear(folder, args.older_than)
            which = "" if args.older_than is None else f" saved more than {_duration(args.older_than)} ago"
            print(f"cleared {answers} model answer(s) and {scores} similarity score(s){which} from {shown}")
            return 0
        held = contents(folder)
    except (OSError, sqlite3.Error) as exc:
        print(f"evalrun cache {args.cache_command}: cannot read {shown}: {getattr(exc, 'strerror', None) or exc}",
              file=sys.stderr)
        return 3
    print(f"cache: {shown}")
    when = ""
    if held.oldest is not None:
        when = f", saved {_date(held.oldest)} .. {_date(held.newest or held.oldest)}"
    print(f"model answers: {held.answers}{when}")
    print(f"similarity scores: {held.similarities}")
    print(f"size: {held.size / 1e6:.1f} MB")
    return 0


def _date(stamp: float) -> str:
    import datetime

    return datetime.datetime.fromtimestamp(stamp).strftime("%Y-%m-%d %H:%M")


def _duration(seconds: float) -> str:
    for unit, size in (("w", 7 * 86400), ("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size and seconds % size == 0:
            return f"{int(seconds // size)}{unit}"
    return f"{seconds:g}s"
