"""Run the real CLI in a subprocess, as a user would."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def cli_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "ANTHROPIC"))}
    env.update(LITELLM_LOCAL_MODEL_COST_MAP="True", HF_HUB_OFFLINE="1", NO_COLOR="1", PYTHONPATH=str(REPO))
    env.update(extra)
    return env


def run_cli_process(*args: str, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    """`python -m runner ARGS` in a real process: for what only a process shows (its exit status, signals, stdin,
    what its children inherit)."""
    return subprocess.run([sys.executable, "-m", "runner", *args], cwd=cwd, env=cli_env(), capture_output=True,
                          text=True, timeout=timeout)


def run_cli(*args: str, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    return run_cli_process(*args, cwd=cwd, timeout=timeout)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def write_json(path: Path, data) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")
    return path


def tool_call_messages(name: str, args: dict, result: str = "ok", call_id: str = "c1") -> list[dict]:
    return [
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}]},
        {"role": "tool", "tool_call_id": call_id, "content": result},
    ]


def saved_conversations(run_dir: Path) -> dict[str, dict]:
    """The conversations a live run saved in RUN_DIR/conversations.jsonl, by key (the case id), read as
    anyone would read the file: line by line, each a JSON object that starts with its key."""
    found: dict[str, dict] = {}
    for line in (run_dir / "conversations.jsonl").read_text(encoding="utf-8").splitlines():
        data = json.loads(line)
        assert next(iter(data)) == "conversation", line[:80]
        found[data.pop("conversation")] = data
    return found
