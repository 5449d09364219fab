"""Agents given as Python objects (`runner.evaluate("suites/", agent=respond)`), held under a name for the
length of a run, so that a `python` or `adk` entry point names them like any importable object.

    entrypoint = hold(respond)      # "runner.run.agents._inline:respond_1"
    ...
    release(entrypoint)
"""
from __future__ import annotations

import itertools
import re
import sys
from typing import Any

_numbers = itertools.count(1)


def hold(target: Any) -> str:
    """Keep `target` in this module under a fresh name; the entry point that names it."""
    hint = str(getattr(target, "__name__", None) or getattr(target, "name", None) or type(target).__name__)
    word = re.sub(r"[^A-Za-z0-9_]", "_", hint).lstrip("_0123456789").rstrip("_") or "agent"  # <lambda> -> lambda
    name = f"{word}_{next(_numbers)}"
    setattr(sys.modules[__name__], name, target)
    return f"{__name__}:{name}"


def release(entrypoint: str) -> None:
    module, _, name = entrypoint.partition(":")
    if module == __name__:
        vars(sys.modules[__name__]).pop(name, None)
