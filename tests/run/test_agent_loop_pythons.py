"""The agent loop (runner.run.agents._agent_loop) on every Python evalrun supports: it starts the agent's
task with the API of the oldest one. On 3.10, `loop.create_task(..., context=)` (3.11+) raised inside the
loop's callback, which the loop swallows: every async agent hung. The module needs only the standard
library, so each interpreter found runs it from its file in a real subprocess."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.helpers.external import missing

MODULE = Path(__file__).resolve().parents[2] / "runner" / "run" / "agents" / "_agent_loop.py"

PROGRAM = """
import asyncio, contextvars, importlib.util, sys
spec = importlib.util.spec_from_file_location("agent_loop", sys.argv[1])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
case = contextvars.ContextVar("case", default="none")

async def agent():
    await asyncio.sleep(0)
    return "answered in " + case.get()

async def main():
    case.set("case-7")
    loop = module.AgentLoop("agent")
    try:
        print(await asyncio.wait_for(loop.call(agent), 30))
    finally:
        await loop.close()

asyncio.run(main())
"""


def _interpreter(name: str) -> str | None:
    """`name` (python3.10, say) as pyenv installs it, else on PATH; None when none runs (a pyenv shim of a
    version not selected fails)."""
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    candidates = sorted(pyenv.glob(f"*/bin/{name}")) + [Path(p) for p in [shutil.which(name)] if p]
    for candidate in candidates:
        if subprocess.run([str(candidate), "-c", "pass"], capture_output=True).returncode == 0:
            return str(candidate)
    return None


@pytest.mark.parametrize("python", ["python3.10", "python3.13"])
def test_an_async_agent_answers_on_its_own_loop_in_the_callers_context(python: str) -> None:
    found = _interpreter(python)
    if found is None:
        missing(f"{python} is not installed", "EVALRUN_REQUIRE_PYTHONS")
    done = subprocess.run([found, "-c", PROGRAM, str(MODULE)], capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout, done.stderr) == (0, "('answered in case-7', False)\n", "")
