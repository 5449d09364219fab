"""Shared by several test modules (once in tests/frontends/pytest/test_pytest_plugin.py): AGENT, GOALS, project,
and the three ways to run pytest on a project: pytest_in (a process of its own), pytest_here (this process) and
pytest_command (the command line, for a test that starts the process itself)."""
from __future__ import annotations

import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from tests.helpers.cli_helpers import (
    _ONE_AT_A_TIME,
    _captured_descriptors,
    _environment,
    _process_state_kept,
    _working_directory,
    cli_env,
    write,
)

AGENT = """
    import glob, json, os, time

    def respond(messages, context):
        said = messages[-1]["content"]
        if "crash" in said:
            # the others finish first (the lookups mark that they were played; the dying case is collected
            # last, so none waits behind it in its worker): the crash then leaves no case to a new worker
            deadline = time.monotonic() + 10
            while len(glob.glob(".played-lookup-*")) < 5 and time.monotonic() < deadline:
                time.sleep(0.02)
            os._exit(1)         # the process dies in the middle of the case
        open(f".played-{context.case_id}", "w").close()
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


# The pytest plugins under test: evalrun's (loaded through its `pytest11` entry point, as users get it) and
# pytest-xdist's (the `-n` rows). Every other installed one is turned off in the pytest runs the tests make: each
# costs its imports in every such run and in each of its xdist workers (langsmith, installed with langchain-openai
# for the README's LangGraph example, logfire's two, hypothesis, anyio, platformdirs: 2.1 s of CPU for an empty
# pytest run instead of 0.5 s on the machine this was measured on), and none is what these tests are about.
UNDER_TEST = ("runner", "xdist")
NOT_UNDER_TEST = tuple(arg for ep in sorted(entry_points(group="pytest11"), key=lambda ep: ep.name)
                       if ep.value.partition(".")[0].partition(":")[0] not in UNDER_TEST for arg in ("-p", f"no:{ep.name}"))


def pytest_command(*args: str, cache: bool = False) -> list[str]:
    """`python -m pytest ARGS` with only the plugins under test (and no cache folder unless `cache`)."""
    return [sys.executable, "-m", "pytest", *pytest_options(*args, cache=cache)]


def pytest_options(*args: str, cache: bool = False) -> list[str]:
    return [*(() if cache else ("-p", "no:cacheprovider")), *NOT_UNDER_TEST, *args]


def pytest_in(cwd: Path, *args: str, timeout: float = 300, cache: bool = False) -> subprocess.CompletedProcess:
    """pytest ARGS started in CWD in a process of its own: for what needs one (xdist's workers, signals, what a
    fresh interpreter has imported)."""
    return subprocess.run(pytest_command(*args, cache=cache), cwd=cwd, env=cli_env(), capture_output=True,
                          text=True, timeout=timeout)


class _NoForcedCollection:
    """What pytester does for its in-process runs: pytest's unraisableexception plugin ends every run with a full
    gc.collect() (two, in fact), whose cost grows with this process's heap: ~0.1 s in a fresh interpreter, 1.5 s and
    more per run late in a whole-suite run. The run's unraisable exceptions still reach the hook it installs as they
    are freed by reference counting; cycles among them are left to the collector, as pytester leaves them."""

    @staticmethod
    def pytest_configure(config: pytest.Config) -> None:
        from _pytest import unraisableexception

        key = getattr(unraisableexception, "gc_collect_iterations_key", None)  # a pytest without the key: nothing to turn off
        if key is not None:
            config.stash[key] = 0


def pytest_here(cwd: Path, *args: str, cache: bool = False) -> subprocess.CompletedProcess:
    """pytest ARGS started in CWD, run in this process (pytest.main, as pytest's own pytester runs it in-process):
    what `python -m pytest ARGS` would give (its exit status is pytest.main's value; stdout and stderr captured at
    their file descriptors) without a new interpreter's start and imports. The plugins load as in a process of its
    own (entry points, then the project's conftest files); the process-wide state a run changes (environment,
    working directory, sys.path, the modules it imported from the project's folders, logging) is put back after,
    as run_cli does for the CLI."""
    options = pytest_options(*args, cache=cache)
    with _ONE_AT_A_TIME, _process_state_kept(tuple(options)), _environment(cli_env()), _working_directory(cwd), \
            _captured_descriptors() as captured:
        sys.argv = [str(Path(pytest.__file__).parent / "__main__.py"), *options]  # as `python -m pytest` sets it
        code = int(pytest.main(options, plugins=[_NoForcedCollection()]))
    return subprocess.CompletedProcess([sys.executable, "-m", "pytest", *options], code, captured["stdout"],
                                       captured["stderr"])
