"""Shared by several test modules (once in tests/frontends/cli/test_cli_run.py): NO_EMBEDDINGS, lookup_suite, report_of."""
from __future__ import annotations

import json

from tests.helpers.cli_helpers import tool_call_messages, write, write_json

NO_EMBEDDINGS = "embeddings: {enabled: false}\n"


def lookup_suite(tmp_path, *, case_id="lookup", username="nwaters", extra=""):
    write(tmp_path / "evalrun.yaml", NO_EMBEDDINGS)
    write(tmp_path / "suites" / f"{case_id}.yaml", f"""
        id: {case_id}
        tags: [hr]
        goal_details:
          - type: tool_call
            name: get_id
            tool_name: get_assignment_id
            args: {{username: {username}}}
        transcript: t/{case_id}.json
        {extra}
        """)
    write_json(tmp_path / "suites" / "t" / f"{case_id}.json",
               [{"role": "user", "content": "hi"}, *tool_call_messages("get_assignment_id", {"username": "nwaters"})])


def report_of(tmp_path):
    return json.loads((tmp_path / "out" / "report.json").read_text())
