"""Shared by several test modules (once in tests/report/test_report_formats.py): DESCRIPTION, HOSTILE, make_run."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.helpers.cli_helpers import run_cli, tool_call_messages, write, write_json

HOSTILE = ("x</failure><script>alert(1)</script> | `tick` \x1b[2K\x07 &amp; ]]> \u2028<!-- *bold* [a](b)\n"
           "second line")


DESCRIPTION = "<img src=x onerror=alert(1)> | `x`"


def make_run(root: Path, *extra_args: str) -> subprocess.CompletedProcess:
    """Three cases in two files: `lookup` passes, `wrong-user` fails twice over (a wrong, hostile argument
    and a missing keyword), `broken` ends in error (its transcript is missing)."""
    write(root / "evalrun.yaml", "embeddings: {enabled: false}\n")
    write(root / "suites" / "hr.yaml", f"""
        cases:
          - id: lookup
            goal_details:
              - {{type: tool_call, name: get_id, tool_name: get_assignment_id, args: {{username: nwaters}}}}
            transcript: t/lookup.json
          - id: wrong-user
            description: {json.dumps(DESCRIPTION)}
            goal_details:
              - {{type: tool_call, name: get_id, tool_name: get_assignment_id, args: {{username: nwaters}}}}
              - {{type: text, name: tell_id, keywords: ["15009911"]}}
            transcript: t/wrong-user.json
        """)
    write(root / "suites" / "other.yaml", """
        id: broken
        goal_details: []
        forbid_extra_calls: true
        transcript: t/nowhere.json
        """)
    write_json(root / "suites" / "t" / "lookup.json",
               [{"role": "user", "content": "hi"}, *tool_call_messages("get_assignment_id", {"username": "nwaters"})])
    write_json(root / "suites" / "t" / "wrong-user.json",
               [{"role": "user", "content": "my id?"},
                *tool_call_messages("get_assignment_id", {"username": HOSTILE}),
                {"role": "assistant", "content": HOSTILE}])
    return run_cli("suites", "--output-dir", "out", *extra_args, cwd=root)
