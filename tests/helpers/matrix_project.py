"""A small project with two bank agents that answer alike but for one case: the --matrix tests' fixture."""
from __future__ import annotations

from pathlib import Path

from tests.helpers.cli_helpers import write

AGENTS = '''
def polite(messages, context):
    return "Hello! Your balance is 42 euros."


def terse(messages, context):
    said = messages[-1]["content"]
    return "42." if "balance" in said else "Hello! Your balance is 42 euros."
'''

CONFIG = """agents:
  polite: {type: python, entrypoint: "bank_agents:polite"}
  terse: {type: python, entrypoint: "bank_agents:terse"}
default_agent: polite
"""

SUITE = """cases:
  - id: greets
    starting_sentence: hi there
    goal_details:
      - {type: text, name: hello, keywords: [Hello]}
  - id: balance
    starting_sentence: what is my balance?
    goal_details:
      - {type: text, name: hello, keywords: [Hello, euros]}
  - id: amount
    starting_sentence: my balance please
    goal_details:
      - {type: text, name: amount, keywords: ["42"]}
"""


def project(tmp_path: Path, config: str = CONFIG) -> Path:
    write(tmp_path / "bank_agents.py", AGENTS)
    write(tmp_path / "evalrun.yaml", config)
    write(tmp_path / "suite.yaml", SUITE)
    return tmp_path
