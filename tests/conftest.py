"""What every test process shares."""
import os

# logfire is a dev dependency (the trace tests make Logfire exports with it). It registers a pydantic plugin
# that imports logfire and OpenTelemetry into every process that builds a pydantic model: ~0.3 s more for
# each CLI run and each isolated agent worker a test starts, enough to miss a test's timeout on a loaded
# machine. The processes tests start inherit this, and run as they would where logfire is not installed.
os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "logfire-plugin")


import pytest


@pytest.fixture
def evalrun(monkeypatch, capsys):
    """The CLI in-process, started in `cwd`: `evalrun(cwd, *args)` -> (exit code, stdout, stderr), colour off.
    For the tests that need no real process (signals, stdin, the installed console script need one)."""
    from runner.frontends.cli import main

    monkeypatch.setenv("NO_COLOR", "1")

    def call(cwd, *args: str) -> tuple[int, str, str]:
        monkeypatch.chdir(cwd)
        code = main(list(args))
        out, err = capsys.readouterr()
        return code, out, err

    return call
