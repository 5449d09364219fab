"""Run the real CLI as a user would: in this process (`run_cli`: main(argv), the way pytest's own pytester and
click's CliRunner call a CLI), or in a process of its own (`run_cli_process`) where only a process shows it."""
from __future__ import annotations

import contextlib
import json
import logging
import os
import subprocess
import sys
import tempfile
import textwrap
import threading
import traceback
import warnings
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def cli_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "ANTHROPIC"))}
    env.update(LITELLM_LOCAL_MODEL_COST_MAP="True", HF_HUB_OFFLINE="1", NO_COLOR="1", PYTHONPATH=str(REPO))
    env.update(extra)
    return env


def run_cli_process(*args: str, cwd: Path, timeout: float = 300, env: dict[str, str] | None = None
                    ) -> subprocess.CompletedProcess:
    """`python -m runner ARGS` in a real process: for what only a process shows (its exit status, signals, stdin,
    what its children inherit). `env`: variables set on top of cli_env()'s."""
    return subprocess.run([sys.executable, "-m", "runner", *args], cwd=cwd, env=cli_env(**(env or {})),
                          capture_output=True, text=True, timeout=timeout)


def stop_process(process: subprocess.Popen, grace_s: float = 10) -> None:
    """SIGTERM, `grace_s` seconds to leave, then SIGKILL: how a helper ends a server or browser it started."""
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def run_cli(*args: str, cwd: Path, timeout: float | None = None, env: dict[str, str] | None = None
            ) -> subprocess.CompletedProcess:
    """`evalrun ARGS` started in CWD, run in this process: what `python -m runner ARGS` would give (exit code,
    stdout, stderr) without a new interpreter's 1-2 s of start and imports.

    It runs as the process would: with cli_env()'s environment (and `env`'s variables on top), sys.argv as `python -m runner` sets it, stdin
    empty, and stdout and stderr captured at their file descriptors (what a process the CLI starts writes
    there is captured too). The process-wide state a command may change (environment, working directory,
    sys.path, sys.argv, the modules it imported from the test's folders, logging, warnings filters) is put
    back after. Signal handlers are not: the autouse guard in tests/conftest.py reports a command that leaves
    them changed, which would be a product bug (evaluate() runs in its caller's process). One call at a time
    per process. `timeout` is accepted for run_cli_process's signature and unused: a call in this process
    cannot be cut short from outside, and a hang is caught by the run's own limits and pytest's."""
    del timeout
    with _ONE_AT_A_TIME, _process_state_kept(args), _environment(cli_env(**(env or {}))), _working_directory(cwd), \
            _captured_descriptors() as captured:
        code = _exit_code(args)
    return subprocess.CompletedProcess([sys.executable, "-m", "runner", *args], code, captured["stdout"],
                                       captured["stderr"])


_ONE_AT_A_TIME = threading.Lock()
# What a command imports stays imported (the libraries, runner, the tests' own packages): anything else (an
# agent.py or checks.py in a test's folder) is forgotten after the call, as the next process would not have it,
# and the next test's module of the same name must not be this one.
_INSTALLED = tuple({os.path.realpath(p) + os.sep for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)})


def _kept_module(name: str, module: object) -> bool:
    if name.partition(".")[0] in ("runner", "tests"):
        return True
    where = getattr(module, "__file__", None)
    if not where:
        return True  # built in, or a namespace package
    where = os.path.realpath(where)
    return where.startswith(_INSTALLED) or f"{os.sep}site-packages{os.sep}" in where


def _exit_code(args: tuple[str, ...]) -> int:
    """main's return value, or what the interpreter would make of how it ended: SystemExit's code, 1 with the
    traceback on stderr for an exception."""
    from runner.frontends.cli import main

    try:
        return main(list(args))
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int):
            return exc.code or 0
        print(exc.code, file=sys.stderr)
        return 1
    except Exception:
        traceback.print_exc()
        return 1


@contextlib.contextmanager
def _environment(environ: dict[str, str]) -> Iterator[None]:
    kept = dict(os.environ)
    os.environ.clear()
    os.environ.update(environ)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(kept)


@contextlib.contextmanager
def _working_directory(cwd: Path) -> Iterator[None]:
    kept = os.getcwd()
    os.chdir(cwd)
    try:
        yield
    finally:
        os.chdir(kept)


@contextlib.contextmanager
def _process_state_kept(args: tuple[str, ...]) -> Iterator[None]:
    kept_path, kept_argv, kept_modules = list(sys.path), sys.argv, set(sys.modules)
    root = logging.getLogger()
    kept_handlers, kept_level = list(root.handlers), root.level
    sys.argv = [str(REPO / "runner" / "__main__.py"), *args]
    try:
        with warnings.catch_warnings():
            yield
    finally:
        sys.path[:], sys.argv = kept_path, kept_argv
        root.handlers[:], root.level = kept_handlers, kept_level
        for name in set(sys.modules) - kept_modules:
            if not _kept_module(name, sys.modules.get(name)):
                del sys.modules[name]


@contextlib.contextmanager
def _captured_descriptors() -> Iterator[dict[str, str]]:
    """Descriptors 0, 1 and 2 pointed at /dev/null and two temporary files, with sys.stdin/stdout/stderr made on
    them as Python makes a process's; the files' text in the dict after."""
    captured: dict[str, str] = {}
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError, AttributeError):
            stream.flush()
    kept_streams = sys.stdin, sys.stdout, sys.stderr
    kept_fds = [os.dup(fd) for fd in (0, 1, 2)]
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, open(os.devnull, "rb") as nothing:
        try:
            for source, fd in ((nothing, 0), (out, 1), (err, 2)):
                os.dup2(source.fileno(), fd)
            sys.stdin = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115 - closed below
            sys.stdout = open(1, "w", encoding="utf-8", closefd=False)  # noqa: SIM115 - closed below
            sys.stderr = open(2, "w", encoding="utf-8", errors="backslashreplace", buffering=1,  # noqa: SIM115
                              closefd=False)
            yield captured
        finally:
            for stream in (sys.stdin, sys.stdout, sys.stderr):
                with contextlib.suppress(OSError, ValueError, AttributeError):
                    stream.close()
            sys.stdin, sys.stdout, sys.stderr = kept_streams
            for fd, kept in enumerate(kept_fds):
                os.dup2(kept, fd)
                os.close(kept)
        for name, file in (("stdout", out), ("stderr", err)):
            file.seek(0)
            captured[name] = file.read().decode("utf-8", "replace")


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
