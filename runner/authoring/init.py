"""`evalrun init DIR`: a starter folder that validates and runs as written.

It holds an example suite with its recorded conversation (replayed, which the suite says where a copy of it would
keep the recording by mistake), an evalrun.yaml, copies of the JSON
Schemas (so the editor modelines work offline), VS Code settings mapping the suites to them and a
recommendation of the YAML extension that reads those settings. Existing files are never
overwritten, and nothing is written outside the folder: a symlink that leads out is refused.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

from ..util.files import real_path
from ..util.resources import schema_path

EXAMPLE_SUITE = """\
# yaml-language-server: $schema=../schemas/suite.schema.json
# A first evalrun suite. Edit it, then run `evalrun suites/` (or `evalrun validate suites/`).
id: order-status
description: A customer asks where their order is.
tags: [example]
story: You ordered a lamp last week (order A-1042) and want to know when it arrives.
starting_sentence: Hi, where is my order?
goals:
  lookup_order: [tell_delivery_date]     # look the order up before answering
goal_details:
  - type: tool_call
    name: lookup_order
    tool_name: get_order_status
    args:
      order_id: A-1042
    output: {status: shipped, delivery_date: "2025-06-12"}
  - type: text
    name: tell_delivery_date
    keywords: [June 12]
# The recorded conversation this case is scored on: it is replayed, and no agent is called (the run's line
# says `[replayed]`). To test your agent instead, declare it in evalrun.yaml (`agents:`), name it here
# (`agent: my_agent`) and delete the next line: a case with both is still replayed, and validate warns.
transcript: transcripts/order-status.json
"""

EXAMPLE_TRANSCRIPT = [
    {"role": "user", "content": "Hi, where is my order?"},
    {"role": "assistant", "content": "I can check that. What is your order number?"},
    {"role": "user", "content": "It's A-1042."},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_1", "type": "function",
         "function": {"name": "get_order_status", "arguments": "{\"order_id\": \"A-1042\"}"}}]},
    {"role": "tool", "tool_call_id": "call_1", "content": "{\"status\": \"shipped\", \"delivery_date\": \"2025-06-12\"}"},
    {"role": "assistant", "content": "Your lamp has shipped and should arrive on June 12."},
]

EXAMPLE_CONFIG = """\
# yaml-language-server: $schema=schemas/config.schema.json
# evalrun settings. Uncomment `judge` to let an LLM decide fuzzy matches first.
similarity_threshold: 0.74   # offline stages (embeddings, rapidfuzz); see evalrun's docs/explanation/fuzzy-cascade.md
# judge:
#   model: openai/gpt-4o-mini
#   api_key_env: OPENAI_API_KEY

# Calls no goal asks for (cancelling an order when asked where it is) only lower precision, and a
# passing case names them on its line ("1 extra call: cancel_order"). Uncomment to fail such cases
# in every suite (true: any such call; a list: calls to these tools). A file's or case's own
# `forbid_extra_calls` wins.
# forbid_extra_calls: [cancel_*, issue_refund]

# Your agent, for cases without a `transcript:` (they are played live against it: `agent: my_agent`).
# agents:
#   my_agent:
#     type: python                      # or http, command, model, adk
#     entrypoint: my_agent:respond      # my_agent.py beside this file: respond(messages, context)
"""

VSCODE_SETTINGS = {
    "yaml.schemas": {
        "./schemas/suite.schema.json": ["suites/**/*.yaml", "suites/**/*.yml"],
        "./schemas/config.schema.json": ["evalrun.yaml"],
    },
    # Google ADK's and Agentflow's eval files, which evalrun runs as they are
    "json.schemas": [
        {"fileMatch": ["*.evalset.json", "*.test.json"], "url": "./schemas/adk-evalset.schema.json"},
        {"fileMatch": ["test_config.json", "eval_config.json"], "url": "./schemas/adk-eval-config.schema.json"},
    ],
}


VSCODE_EXTENSIONS = {"recommendations": ["redhat.vscode-yaml"]}  # the extension that reads yaml.schemas


class InitError(Exception):
    """The starter folder cannot be written there; the message says why, `lines` what was done before."""

    def __init__(self, message: str, lines: list[str] | None = None):
        super().__init__(message)
        self.lines = lines or []


def write_starter(directory: Path) -> list[str]:
    """Write the starter files under `directory`; returns one line per file (written or kept).

    Raises InitError when `directory` is not a folder or a file cannot be written."""
    if directory.exists() and not directory.is_dir():
        raise InitError(f"'{directory}' exists and is not a folder")
    files = {
        "suites/order-status.yaml": EXAMPLE_SUITE,
        "suites/transcripts/order-status.json": json.dumps(EXAMPLE_TRANSCRIPT, indent=2) + "\n",
        "evalrun.yaml": EXAMPLE_CONFIG,
        "schemas/suite.schema.json": schema_path("suite").read_text(encoding="utf-8"),
        "schemas/config.schema.json": schema_path("config").read_text(encoding="utf-8"),
        "schemas/adk-evalset.schema.json": schema_path("adk-evalset").read_text(encoding="utf-8"),
        "schemas/adk-eval-config.schema.json": schema_path("adk-eval-config").read_text(encoding="utf-8"),
        ".vscode/settings.json": json.dumps(VSCODE_SETTINGS, indent=2) + "\n",
        ".vscode/extensions.json": json.dumps(VSCODE_EXTENSIONS, indent=2) + "\n",
    }
    lines: list[str] = []
    for relative, content in files.items():
        target = directory / relative
        _refuse_links_out(directory, target, lines)
        if target.exists():
            lines.append(f"kept    {target} (already exists)")
            continue
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            _refuse_links_out(directory, target, lines)  # a folder just made could not be a link, but check anyway
            _create(target, content)
        except FileExistsError:
            raise InitError(f"cannot write {target}: it appeared while evalrun init was writing; nothing was overwritten",
                            lines) from None
        except OSError as exc:
            raise InitError(f"cannot write {target}: {exc.strerror or exc}", lines) from None
        lines.append(f"wrote   {target}")
    lines.append("editor: open the folder in VS Code and install the recommended YAML extension (redhat.vscode-yaml)")
    lines.append(f"next: evalrun validate {directory / 'suites'}  and  evalrun {directory / 'suites'}")
    return lines


def _refuse_links_out(directory: Path, target: Path, lines: list[str]) -> None:
    """init writes only inside `directory`: a symlink on the way to a file (the file itself, dangling or
    not, or a folder above it) that leads elsewhere is refused, never followed."""
    base = real_path(directory)
    current = directory
    for part in target.relative_to(directory).parts:
        current = current / part
        if current.is_symlink():
            destination = real_path(current)
            if not (destination == base or base in destination.parents) or not current.exists():
                raise InitError(f"{current} is a symbolic link to {os.readlink(current)}; evalrun init writes only "
                                f"inside {directory} and does not follow it (remove the link, or choose another folder)",
                                lines)


def _create(target: Path, content: str) -> None:
    """Create `target` new: never through a link, never over a file that appeared meanwhile."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
    fd = os.open(target, flags, 0o644)
    with os.fdopen(fd, "w", encoding="utf-8", newline="") as out:
        out.write(content)
