"""Shared by several test modules (once in tests/session/test_run_shards.py): FAILING, IDS, project."""
from __future__ import annotations

from tests.helpers.cli_helpers import tool_call_messages, write, write_json

IDS = [f"case-{n:02d}" for n in range(12)]


FAILING = {"case-03", "case-07", "case-10"}


def project(root, ids=IDS, config="embeddings: {enabled: false}\n", failing=frozenset(FAILING)):
    write(root / "evalrun.yaml", config)
    cases = "".join(f"""
          - id: {case_id}
            transcript: t.json
            goal_details:
              - {{type: tool_call, name: get_id, tool_name: get_assignment_id,
                 args: {{username: {"nken" if case_id in failing else "nwaters"}}}}}""" for case_id in ids)
    write(root / "suites" / "s.yaml", "cases:" + cases + "\n")
    write_json(root / "suites" / "t.json", [{"role": "user", "content": "hi"},
                                            *tool_call_messages("get_assignment_id", {"username": "nwaters"})])
