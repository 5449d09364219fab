"""Shared by several test modules (once in tests/frontends/cli/test_checks_cli.py): TRANSCRIPT, replay_project."""
from __future__ import annotations

from pathlib import Path

from tests.helpers.cli_helpers import write, write_json

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
