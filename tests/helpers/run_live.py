"""Shared by several test modules (once in tests/run/test_run_live.py): LOOKUP_AGENT, live_project, report_of."""
from __future__ import annotations

import json

from tests.helpers.cli_helpers import write


def live_project(root, agent_body: str, *, cases: str = "", config_extra: str = ""):
    """A project with one python agent (agents/bot.py: respond(messages, context)) and one suite file."""
    write(root / "evalrun.yaml", f"""
        embeddings: {{enabled: false}}
        agents:
          bot:
            type: python
            entrypoint: agents.bot:respond
        {config_extra}
        """)
    write(root / "agents" / "__init__.py", "")
    write(root / "agents" / "bot.py", agent_body)
    write(root / "suites" / "live.yaml", cases or """
        agent: bot
        cases:
          - id: lookup
            starting_sentence: Look up nwaters please.
            goal_details:
              - type: tool_call
                name: get_id
                tool_name: get_assignment_id
                args: {username: nwaters}
              - {type: text, name: tell, keywords: ["15778303"]}
        """)


LOOKUP_AGENT = """
    import json, pathlib

    CALLS = pathlib.Path(__file__).with_name("calls.log")

    def respond(messages, context):
        with CALLS.open("a") as log:
            log.write(context.case_id + "\\n")
        call = {"id": "c1", "type": "function",
                "function": {"name": "get_assignment_id", "arguments": json.dumps({"username": "nwaters"})}}
        return [{"role": "assistant", "content": None, "tool_calls": [call]},
                {"role": "tool", "tool_call_id": "c1", "content": "15778303"},
                {"role": "assistant", "content": "The assignment id of nwaters is 15778303."}]
    """


def report_of(root, folder="out"):
    return json.loads((root / folder / "report.json").read_text())
