"""What every test process shares."""
import itertools
import os
import sys

# logfire is a dev dependency (the trace tests make Logfire exports with it). It registers a pydantic plugin
# that imports logfire and OpenTelemetry into every process that builds a pydantic model: ~0.3 s more for
# each CLI run and each isolated agent worker a test starts, enough to miss a test's timeout on a loaded
# machine. The processes tests start inherit this, and run as they would where logfire is not installed.
os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "logfire-plugin")

# PYTHONDONTWRITEBYTECODE (set on machines that keep their source trees free of __pycache__) makes every run
# compile its ~470 test modules again (collection: 20 s of CPU per worker instead of 12), and every process a
# test starts compile runner again (~0.3 s each). The tests write bytecode as Python does by default, in the
# __pycache__ folders git ignores; the processes they start inherit that. (A pycache prefix elsewhere would
# compile every installed package once more: 31 s for the first collection.)
if sys.dont_write_bytecode:
    sys.dont_write_bytecode = False
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)


import signal
import threading
import warnings

import pytest

# A shell without job control starts a background command (`pytest ... &`, `nohup pytest &` in a script) with
# SIGINT ignored, and Python then installs no Ctrl-C handler: every process a test starts would inherit the
# ignored SIGINT, and each test of Ctrl-C would fail (the run goes on to the end, or hangs). The tests start
# their processes as a terminal would.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# hypothesis draws its examples from a seed of each test's own (derandomize): every run, CI's included, tries the
# same ones, and a failure comes back on the next run. HYPOTHESIS_PROFILE=explore draws new ones each run, to
# look further (what it finds is replayed from .hypothesis/ until fixed; then write it as an @example).
from hypothesis import settings as _hypothesis_settings

_hypothesis_settings.register_profile("seeded", derandomize=True)
_hypothesis_settings.register_profile("explore", derandomize=False)
_hypothesis_settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "seeded"))


# The `process` marker (pyproject.toml): a test that starts evalrun or pytest in a process of its own, which costs
# an interpreter's start and imports (1-2 s). Every CLI call that needs no process runs in this one (run_cli,
# the evalrun fixture), so `pytest -m "not process"` is the quick tier. The mark is kept honest here: a test that
# starts one unmarked fails, saying which command and what to do.
_started_commands: list[list[str]] | None = None


def _note_processes(event: str, args: tuple) -> None:
    if event == "subprocess.Popen" and _started_commands is not None:
        argv = args[1]
        _started_commands.append([os.fsdecode(argv)] if isinstance(argv, (str, bytes, os.PathLike))
                                 else [os.fsdecode(part) for part in argv])


def starts_evalrun_or_pytest(argv: list[str]) -> bool:
    """`python -m runner ...`, `python -m pytest ...` or the installed `evalrun` script."""
    if argv and os.path.basename(argv[0]) in ("evalrun", "pytest"):
        return True
    return any(flag == "-m" and module.split(".")[0] in ("runner", "pytest")
               for flag, module in itertools.pairwise(argv))


sys.addaudithook(_note_processes)  # an audit hook cannot be removed; it records only while a test runs


@pytest.fixture(autouse=True)
def _a_process_started_is_marked(request):
    global _started_commands
    _started_commands = []
    try:
        yield
    finally:
        started, _started_commands = _started_commands, None
    unmarked = [argv for argv in started if starts_evalrun_or_pytest(argv)]
    if unmarked and request.node.get_closest_marker("process") is None:
        command = " ".join(unmarked[0])
        pytest.fail(f"this test started `{command[:200]}` in a process of its own without the `process` marker: "
                    "call the CLI in this process (tests/helpers/cli_helpers.run_cli or the evalrun fixture), or, "
                    "where only a process shows what is tested (signals, exit status, stdin, forks, the console "
                    "script), mark the test @pytest.mark.process", pytrace=False)


@pytest.fixture
def evalrun():
    """The CLI in-process, started in `cwd`: `evalrun(cwd, *args)` -> (exit code, stdout, stderr). The same call as
    tests/helpers/cli_helpers.run_cli (its environment, captured descriptors and restored process state), shaped
    as a tuple. For the tests that need no real process (signals, stdin, the installed console script need one)."""
    from tests.helpers.cli_helpers import run_cli

    def call(cwd, *args: str) -> tuple[int, str, str]:
        done = run_cli(*args, cwd=cwd)
        return done.returncode, done.stdout, done.stderr

    return call



@pytest.fixture(scope="session")
def cluster(tmp_path_factory):
    """One local Ray cluster (tests.helpers.executor_ray.Cluster: `ray start --head`, 2 CPUs) for every test that
    runs on one it did not start (starting one costs ~12 s): tests/run's executor and chaos tests, the secrets
    sweep's Ray leg. Their tests run one at a time against it and kill only workers and drivers, which Ray
    replaces. Tests about starting a cluster (RAY_ADDRESS unset, a cluster that cannot start) start their own."""
    from importlib.util import find_spec

    if find_spec("ray") is None:
        pytest.skip("Ray is not installed (pip install 'evalrun[ray]')")
    from tests.helpers.executor_ray import Cluster, short_dir

    with short_dir() as temp:
        started = Cluster(tmp_path_factory.mktemp("ray"), temp / "t")
        try:
            yield started
        finally:
            started.end()

@pytest.fixture(scope="module")
def chromium():
    """One headless Chromium for a test module (tests.helpers.browser.Chromium): each test's page opened in it with
    Browser(chromium) gets a fresh browser context (its own storage), so only the process's start is shared."""
    from tests.helpers.browser import Chromium, chromium_or_skip

    shared = Chromium(chromium_or_skip())
    try:
        yield shared
    finally:
        shared.close()


_WATCHED_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))


def _signal_state() -> tuple:
    handlers = tuple(signal.getsignal(sig) for sig in _WATCHED_SIGNALS)
    return handlers, frozenset(signal.pthread_sigmask(signal.SIG_BLOCK, []))


@pytest.fixture(autouse=True)
def _signal_handling_left_as_found():
    """A test (or the evalrun code it runs in-process) must leave this process's signal handlers and mask as it
    found them: an ignored or blocked SIGINT is inherited by every process a later test starts, which then
    cannot be interrupted (a test of Ctrl-C far away fails, and only in a full run, by the luck of which worker
    ran what). Puts the state back, and names the test in the warnings summary: the leak is to be found and
    fixed there (in the product if the code it ran in-process leaks: evaluate() runs in a user's process)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = _signal_state()
    yield
    after = _signal_state()
    if after != before:
        for sig, handler in zip(_WATCHED_SIGNALS, before[0], strict=True):
            if handler is not None:
                signal.signal(sig, handler)
        signal.pthread_sigmask(signal.SIG_SETMASK, before[1])
        warnings.warn(SignalStateLeak(f"the test left the process's signal handling changed: handlers {before[0]} "
                                      f"-> {after[0]}, blocked {sorted(before[1])} -> {sorted(after[1])}"),
                      stacklevel=1)


class SignalStateLeak(UserWarning):
    """A test left this process's signal handlers or mask changed (put back by the fixture above)."""
