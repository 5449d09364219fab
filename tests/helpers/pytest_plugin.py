"""Shared by several test modules (once in tests/frontends/pytest/test_pytest_plugin.py): AGENT, GOALS, project, pytest_in."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.helpers.cli_helpers import cli_env, write

AGENT = """
    import json, os, time

    def respond(messages, context):
        said = messages[-1]["content"]
        if "crash" in said:
            time.sleep(2)       # the others finish first
            os._exit(1)         # the process dies in the middle of the case
        if "dunno" in said:
            return "I do not know."
        call = {"id": "c1", "type": "function",
                "function": {"name": "get_assignment_id", "arguments": json.dumps({"username": "nwaters"})}}
        return [{"role": "assistant", "content": None, "tool_calls": [call]},
                {"role": "tool", "tool_call_id": "c1", "content": "15778303"},
                {"role": "assistant", "content": "The assignment id of nwaters is 15778303."}]
    """


GOALS = ("goal_details: [{type: tool_call, name: get_id, tool_name: get_assignment_id, args: {username: nwaters}}, "
         "{type: text, name: tell, keywords: ['15778303']}]")


def project(root: Path, *, failing: bool = True, crash: bool = False) -> Path:
    """A project with a python agent and two suite files: five passing cases (two tagged smoke), one
    failing, one skipped; and files that are no suites."""
    write(root / "evalrun.yaml", """
        embeddings: {enabled: false}
        agents:
          bot: {type: python, entrypoint: agents.bot:respond}
        """)
    write(root / "agents" / "__init__.py", "")
    write(root / "agents" / "bot.py", AGENT)
    write(root / "suites" / "lookups.yaml", "agent: bot\ncases:\n" + "".join(
        f"  - id: lookup-{n}\n    tags: [{'smoke' if n < 2 else 'slow-path'}]\n"
        f"    starting_sentence: Look up nwaters please ({n}).\n    {GOALS}\n" for n in range(5)))
    more = [("skipped-one", "hi\n    skip: not ready yet")]
    if failing:
        more.append(("does-not-know", "dunno"))
    if crash:
        more.append(("dies", "crash now"))
    write(root / "suites" / "more.yaml", "agent: bot\ncases:\n" + "".join(
        f"  - id: {case_id}\n    starting_sentence: {said}\n    {GOALS}\n" for case_id, said in more))
    write(root / "docker-compose.yaml", "services: {web: {image: nginx}}\n")  # another tool's YAML
    write(root / "suites" / "notes.json", '{"owner": "team-a"}\n')
    return root


def pytest_in(cwd: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    # langsmith's plugin (installed with langchain-openai, for the README's LangGraph example) is not under test
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:langsmith_plugin",
                           *args], cwd=cwd, env=cli_env(), capture_output=True, text=True, timeout=timeout)
