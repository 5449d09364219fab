"""What a file found in a suites folder is, by its shape: a suite, a broken suite, or another tool's file.

A folder of suites also holds other things (an agent definition, another tool's config, a report,
recordings), which are passed over with a note. But a suite whose keys are all misspelt
(`starting_sentance`, `goal_detail`, `case:`) has no suite key either: passing it over would let its
cases silently never run. So a file with no suite key is still read as a (broken) suite when it has an
`id` or a key one edit away from a suite key, unless something marks it as another tool's file.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

# Keys only an evalrun (or watsonx) suite has: a mapping with one of them is a suite.
SUITE_KEYS = frozenset({"goal_details", "goals", "cases", "starting_sentence", "story", "user_prompts",
                        "transcript", "forbid_extra_calls", "termination", "tool_outputs", "file_upload",
                        "max_user_turns", "turns"})
_REPORT_KEYS = ("evalrun_version", "started_at")  # an evalrun report.json also has `cases`

# Keys that mark another tool's file, and what that file is.
_OTHER_TOOLS_KEYS = {
    "evalrun_version": "an evalrun report", "started_at": "an evalrun report",
    "eval_set_id": "an ADK eval set", "eval_cases": "an ADK eval set", "criteria": "an ADK eval config",
    "spec_version": "a watsonx Orchestrate agent or tool definition", "kind": "a definition of another tool",
    "test_paths": "a watsonx Orchestrate evaluation config", "choices": "a model's reply",
    "openapi": "an OpenAPI document", "swagger": "an OpenAPI document", "apiVersion": "a Kubernetes manifest",
}
# File names other tools give their files: Google ADK's eval sets and configs.
_OTHER_TOOLS_NAMES = ((re.compile(r".*\.(evalset|test)\.json$"), "an ADK eval set"),
                      (re.compile(r"(test|eval)_config\.json$"), "an ADK eval config"))


def is_report(data: dict) -> bool:
    return any(key in data for key in _REPORT_KEYS)


def other_tools_file(path: Path, data: Any) -> str | None:
    """What another tool's file this is (`an ADK eval set`), when its name or keys say so; else None."""
    for pattern, what in _OTHER_TOOLS_NAMES:
        if pattern.fullmatch(path.name):
            return what
    if isinstance(data, dict):
        for key in data:
            if key in _OTHER_TOOLS_KEYS:
                return _OTHER_TOOLS_KEYS[key]
        schema = data.get("$schema")
        if isinstance(schema, str) and "json-schema.org" in schema:
            return "a JSON Schema"
    return None


def suite_like_key(key: str) -> str | None:
    """The suite key that `key` looks like a misspelling of (one edit away, case aside), or None."""
    lowered = key.lower()
    for suite_key in sorted(SUITE_KEYS):
        if one_edit_apart(lowered, suite_key):
            return suite_key
    return None


def why_a_broken_suite(data: dict) -> tuple[str, str] | None:
    """(key, why) when a mapping without suite keys is still a suite, a broken one: it has an `id`, or a
    key one edit away from a suite key. None when nothing in it looks like a suite."""
    for key in data:
        if not isinstance(key, str):
            continue
        resembled = suite_like_key(key)
        if resembled is not None:
            return key, f"'{key}' looks like the suite key '{resembled}'"
    if "id" in data:
        return "id", "it has an `id`"
    return None


def one_edit_apart(a: str, b: str) -> bool:
    """At most one insertion, deletion, substitution or swap of neighbours turns `a` into `b`."""
    if a == b:
        return True
    if abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diffs = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
        return len(diffs) == 1 or (len(diffs) == 2 and diffs[1] == diffs[0] + 1
                                   and a[diffs[0]] == b[diffs[1]] and a[diffs[1]] == b[diffs[0]])
    shorter, longer = (a, b) if len(a) < len(b) else (b, a)
    i = next((i for i, (x, y) in enumerate(zip(shorter, longer, strict=False)) if x != y), len(shorter))
    return shorter[i:] == longer[i + 1:]


def conversation_shaped(path: Path, raw: bytes) -> bool:
    """Whether a JSON file found in a folder is sure to yield no case whatever else is true of it: a
    recorded conversation (a list, or an object with `messages`), not an eval set. What this quick parse
    cannot tell (a file it cannot parse, an eval set's or eval config's name) is read in full."""
    from ..transcripts.formats import marked
    from .formats import EVAL_SET_SUFFIXES, is_eval_config_name
    from .formats.kinds import shape_of

    start = _FIRST_NON_SPACE.match(raw)
    first = raw[start.end():start.end() + 1] if start else b""
    if first not in (b"[", b"{"):
        return False
    if first == b"{" and not marked(raw):
        return False  # no transcript format's mark in it: not parsed twice
    if is_eval_config_name(path) or path.name.lower().endswith(EVAL_SET_SUFFIXES):
        return False
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        return False
    return looks_like_transcript(data) and shape_of(data) is None


_FIRST_NON_SPACE = re.compile(rb"[ \t\r\n]*")


def looks_like_transcript(data: Any) -> bool:
    """A list (never a suite) or what a transcript format claims (runner.transcripts.formats)."""
    from ..transcripts.formats import sniffed

    return isinstance(data, list) or sniffed(data)
