"""ruff finds nothing with the project's rule set (pyproject.toml [tool.ruff]), so the README's test command fails
on a lint finding as CI does. The rule set is checked too: a test that passes because no rule is selected is no
test."""
from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.external import missing

ROOT = Path(__file__).resolve().parents[1]


def _ruff() -> list[str]:
    if importlib.util.find_spec("ruff") is not None:  # the dev extra's, whichever venv the tests run in
        return [sys.executable, "-m", "ruff"]
    found = shutil.which("ruff")
    if found is None:
        missing("ruff is not installed here (it comes with the dev extra)", "EVALRUN_REQUIRE_RUFF")
    return [found]


def test_the_rule_set_is_a_real_one() -> None:
    tomllib = pytest.importorskip("tomllib", reason="tomllib is in the standard library from Python 3.11")
    lint = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["ruff"]["lint"]
    assert {"F", "E", "W", "I", "B", "UP"} <= set(lint["select"])
    assert "F401" not in lint["ignore"] and "B905" not in lint["ignore"]


def test_ruff_finds_nothing() -> None:
    done = subprocess.run([*_ruff(), "check", "--no-cache", "--output-format", "concise", "."], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert (done.returncode, done.stdout.strip().splitlines()[-1:]) == (0, ["All checks passed!"]), done.stdout
