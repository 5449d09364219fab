"""Shared by several test modules (once in tests/frontends/cli/test_checks_cli.py): TRANSCRIPT, replay_project."""
from __future__ import annotations
import json
from pathlib import Path
import pytest
from runner.checks import families, registry
from tests.helpers.cli_helpers import run_cli, write, write_json
from tests.helpers.run_live import LOOKUP_AGENT, live_project, report_of


TRANSCRIPT = [
    {"role": "user", "content": "Look up nwaters please."},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "get_assignment_id", "arguments": "{\"username\": \"nwaters\"}"}}]},
    {"role": "tool", "tool_call_id": "c1", "content": "15778303"},
    {"role": "assistant", "content": "The assignment id of nwaters is 15778303."},
]


def replay_project(root: Path, checks: str, *, goals: str = "goal_details: []") -> None:
    write(root / "evalrun.yaml", "embeddings: {enabled: false}\n")
    write_json(root / "suites" / "t.json", TRANSCRIPT)
    write(root / "suites" / "case.yaml", f"""
        id: lookup
        starting_sentence: Look up nwaters please.
        transcript: t.json
        {goals}
        checks:
        {checks}
        """)
