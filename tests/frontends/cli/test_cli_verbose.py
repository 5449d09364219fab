"""`-v`: every case with its goals, one line per goal (name, status, explanation), through the real CLI."""
from __future__ import annotations

from tests.helpers.cli_helpers import run_cli, tool_call_messages, write, write_json


def test_verbose_prints_every_case_and_every_goal(tmp_path):
    write(tmp_path / "evalrun.yaml", "embeddings: {enabled: false}\n")
    write(tmp_path / "suites" / "s.yaml", """
        cases:
          - id: good
            transcript: t.json
            goal_details:
              - {type: tool_call, name: get_id, tool_name: get_assignment_id, args: {username: nwaters}}
          - id: bad
            transcript: t.json
            goal_details:
              - {type: tool_call, name: get_id, tool_name: get_assignment_id, args: {username: nwaters}}
              - {type: tool_call, name: "get_off\\u001b[2K", tool_name: get_timeoff, args: {username: nwaters}}
              - {type: text, name: said, keywords: ["15778303"]}
        """)
    write_json(tmp_path / "suites" / "t.json",
               [{"role": "user", "content": "hi"}, *tool_call_messages("get_assignment_id", {"username": "nwaters"}),
                {"role": "assistant", "content": "The id is 15778303."}])
    done = run_cli("suites", "-v", "-q", "-j", "1", "--output-dir", "out", cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[:5] == [
        "PASS  good [replayed]  completion 1.00, precision 1.00, recall 1.00",
        "    ✓ get_id: achieved at message 2: called get_assignment_id with matching arguments",
        "FAIL  bad [replayed]  completion 0.67, precision 1.00, recall 0.50",
        "    ✓ get_id: achieved at message 2: called get_assignment_id with matching arguments",
        lines[4],
    ]
    assert lines[4] == "    ✗ get_off\\x1b[2K: not called: the agent never called get_timeoff"  # its escape made visible
    assert lines[5] == "    ✓ said: achieved at message 4: said"  # the status once, not "achieved — achieved"
    assert "\x1b" not in done.stdout
    quiet = run_cli("suites", "-q", "-j", "1", "--output-dir", "out2", cwd=tmp_path)
    assert not any(line.startswith(("PASS", "    ✓")) for line in quiet.stdout.splitlines())
