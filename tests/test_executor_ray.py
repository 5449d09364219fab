"""`--executor ray`: recorded cases scored as Ray tasks, on a Ray cluster the tests start in a temporary folder.

The cluster is `ray start --head` with two CPUs, its temp folder and HOME under tmp_path and token
authentication off, so nothing lands in ~/.ray; it is ended by killing the processes it started (never
`ray stop`, which stops every cluster of the user).
"""
from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Iterator

import pytest

from tests.cli_helpers import REPO, cli_env, write
from tests.test_executors import _tool_messages, generate, verdicts
from runner.config import Config
from runner.run.executors.ray_cluster import batches_by_hash, worker_env

ray = pytest.importorskip("ray")
RAY_BIN = Path(sys.executable).with_name("ray")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            parent = int(stat.rsplit(")", 1)[1].split()[1])
            children.setdefault(parent, []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


@contextlib.contextmanager
def short_dir() -> Iterator[Path]:
    """A folder for Ray's files: its socket paths under it must fit in 107 bytes, and pytest's tmp paths
    (more so under xdist, or for a long user name) may not leave room for them."""
    path = Path(tempfile.mkdtemp(prefix="evr-", dir="/tmp"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


class Cluster:
    def __init__(self, root: Path, temp: Path):
        self.root = root
        self.temp = temp
        self.home = root / "home"
        self.home.mkdir()
        self.port = _free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.env = cli_env(HOME=str(self.home), RAY_AUTH_MODE="disabled", RAY_TMPDIR=str(self.temp),
                           RAY_USAGE_STATS_ENABLED="0")
        started = subprocess.run(
            [str(RAY_BIN), "start", "--head", "--num-cpus", "2", "--port", str(self.port), "--temp-dir",
             str(self.temp), "--include-dashboard=false", "--disable-usage-stats",
             "--dashboard-agent-listen-port", str(_free_port()),
             "--metrics-export-port", str(_free_port()), "--node-ip-address", "127.0.0.1"],
            env=self.env, capture_output=True, text=True, timeout=120, start_new_session=True)
        assert started.returncode == 0, started.stdout + started.stderr

    def processes(self) -> list[int]:
        """Every process of this cluster: those naming its temp folder, and their descendants."""
        mine = [int(p) for p in os.listdir("/proc") if p.isdigit() and str(self.temp) in _cmdline(int(p))]
        return sorted({*mine, *(d for pid in mine for d in _descendants(pid))})

    def workers(self) -> list[int]:
        raylets = [pid for pid in self.processes() if "raylet" in _cmdline(pid).split(" ")[0]]
        return [pid for raylet in raylets for pid in _descendants(raylet) if _cmdline(pid).startswith("ray::")]

    def run(self, *args: str, cwd: Path, **popen) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "runner", *args], cwd=cwd, capture_output=True, text=True,
                              timeout=600, env={**self.env, "RAY_ADDRESS": self.address}, **popen)

    def end(self) -> None:
        for pid in self.processes():
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with short_dir() as temp:
        started = Cluster(tmp_path_factory.mktemp("ray"), temp / "t")
        try:
            yield started
        finally:
            started.end()


def run_local(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "runner", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=600, env=cli_env())


def test_ray_gives_the_verdicts_of_the_local_executor_case_by_case_on_2000_generated_cases(cluster, tmp_path):
    generate(tmp_path, 2000)
    local = run_local("suites", "-q", "--executor", "local", "--output-dir", "local", cwd=tmp_path)
    on_ray = cluster.run("suites", "-q", "--executor", "ray", "--output-dir", "ray", cwd=tmp_path)
    assert local.returncode == on_ray.returncode == 3, local.stdout[-800:] + on_ray.stdout[-800:] + on_ray.stderr
    assert f"running the cases on the Ray cluster at {cluster.address} (RAY_ADDRESS)" in on_ray.stderr
    one, many = verdicts(tmp_path / "local" / "report.json"), verdicts(tmp_path / "ray" / "report.json")
    assert len(one) == len(many) == 2000
    assert many == one  # every field of every case but its duration
    lines = (tmp_path / "ray" / "results.jsonl").read_text().splitlines()
    assert sorted(json.loads(line)["id"] for line in lines) == [f"case-{n:05d}" for n in range(2000)]
    # the console's tally is the local run's
    tally = [line.split(" in ")[0] for line in local.stdout.splitlines() if " passed" in line and " failed" in line]
    assert tally and tally[-1] in on_ray.stdout, (tally, on_ray.stdout[-600:])
    assert not (cluster.home / ".ray").exists()


def test_ray_gives_the_verdicts_of_the_local_executor_on_the_bundled_recorded_suites(cluster, tmp_path):
    compared = 0
    quick_only = {"quick"}  # cases with nothing but a story, for `evalrun quick` (a run refuses them, exit 4)
    for folder in sorted(p for p in (REPO / "suites").iterdir()
                         if p.is_dir() and p.name[0] not in "._" and p.name not in quick_only):
        on_ray = cluster.run(str(folder), "-q", "--executor", "ray", "--output-dir", str(tmp_path / folder.name / "r"),
                             cwd=REPO / "suites")
        if on_ray.returncode == 4:
            assert "--executor ray cannot run this run: case '" in on_ray.stdout + on_ray.stderr
            assert "is played live and Ray runs recorded cases only (so far); use --executor local" in on_ray.stderr
            continue
        local = run_local(str(folder), "-q", "--executor", "local", "--output-dir", str(tmp_path / folder.name / "l"),
                          cwd=REPO / "suites")
        assert on_ray.returncode == local.returncode, on_ray.stdout + on_ray.stderr + local.stdout
        assert verdicts(tmp_path / folder.name / "r" / "report.json") == \
            verdicts(tmp_path / folder.name / "l" / "report.json")
        compared += 1
    assert compared >= 2  # airline and hr are recorded


def _slow_suite(root: Path, count: int, check: str) -> None:
    write(root / "evalrun.yaml", "embeddings: {enabled: false}\n")
    write(root / "team" / "__init__.py", "")
    write(root / "team" / "checks.py", check)
    (root / "suites" / "t").mkdir(parents=True)
    for n in range(count):
        case = {"id": f"case-{n:04d}", "transcript": f"t/{n}.json", "goals": {"cancel": []},
                "goal_details": [{"type": "tool_call", "name": "cancel", "tool_name": "cancel_booking",
                                  "args": {"booking": "B1"}}],
                "checks": [{"type": "python", "function": "team.checks:check"}]}
        (root / "suites" / f"case-{n:04d}.json").write_text(json.dumps(case))
        (root / "suites" / "t" / f"{n}.json").write_text(
            json.dumps(_tool_messages("cancel_booking", {"booking": "B1"}, "ok")))


def test_a_worker_killed_mid_run_costs_no_case(cluster, tmp_path):
    """A Ray worker process killed from outside while it scores a batch: Ray runs the batch again, every case
    is scored."""
    _slow_suite(tmp_path, 400, """
        import time

        def check(case):
            time.sleep(0.01)
            return True
        """)
    env = {**cluster.env, "RAY_ADDRESS": cluster.address, "PYTHONPATH": f"{tmp_path}{os.pathsep}{REPO}"}
    run = subprocess.Popen([sys.executable, "-m", "runner", "suites", "-q", "--executor", "ray", "--output-dir", "out"],
                           cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    killed = None
    deadline = time.monotonic() + 120
    while killed is None and time.monotonic() < deadline and run.poll() is None:
        busy = [pid for pid in cluster.workers() if "_score_batch" in _cmdline(pid)]
        results = tmp_path / "out" / "results.jsonl"
        if busy and results.exists() and results.read_text().count("\n") >= 20:  # mid-run: some cases saved
            killed = busy[0]
            os.kill(killed, signal.SIGKILL)
        time.sleep(0.02)
    out, err = run.communicate(timeout=600)
    assert killed is not None, "no worker was seen scoring a batch mid-run" + out + err
    assert run.returncode == 0, out + err
    cases = json.loads((tmp_path / "out" / "report.json").read_text())["cases"]
    assert len(cases) == 400 and all(case["status"] == "passed" for case in cases)


def test_a_batch_that_fails_twice_makes_its_cases_errors_with_the_cause(cluster, tmp_path):
    _slow_suite(tmp_path, 200, """
        import os, signal

        def check(case):
            if case.id == "case-0100":
                os.kill(os.getpid(), signal.SIGKILL)
            return True
        """)
    result = cluster.run("suites", "-q", "--executor", "ray", "--output-dir", "out", cwd=tmp_path)
    assert result.returncode == 3, result.stdout + result.stderr
    cases = json.loads((tmp_path / "out" / "report.json").read_text())["cases"]
    assert len(cases) == 200
    lost = {case["id"] for case in cases if case["status"] == "error"}

    class _Work:  # the batches as the run made them: two CPUs in the cluster
        refs = [type("Ref", (), {"id": case["id"]})() for case in cases]
        repeats, jobs = 1, 200
    batch = next(b for b in batches_by_hash(_Work(), 2) if (100, 0) in b)
    assert lost == {f"case-{p:04d}" for p, _ in batch}
    errors = {case["error"] for case in cases if case["status"] == "error"}
    assert len(errors) == 1
    error = errors.pop()
    assert error.startswith(f"the Ray task scoring this case's batch of {len(batch)} failed 2 times (")
    assert "the other cases went on" in error and "died" in error.lower(), error
    assert sum(case["status"] == "passed" for case in cases) == 200 - len(batch)


def test_without_ray_installed_the_run_exits_4_with_the_install_line(tmp_path):
    generate(tmp_path, 3)
    hide = tmp_path / "hide"
    write(hide / "sitecustomize.py", """
        import sys

        class _NoRay:
            def find_spec(self, name, path=None, target=None):
                if name == "ray" or name.startswith("ray."):
                    raise ModuleNotFoundError("No module named 'ray'")
                return None

        sys.meta_path.insert(0, _NoRay())
        """)
    env = cli_env(PYTHONPATH=f"{hide}{os.pathsep}{REPO}")
    result = subprocess.run([sys.executable, "-m", "runner", "suites", "--executor", "ray"], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 4, result.stdout + result.stderr
    assert "--executor ray needs Ray, which is not installed: pip install 'evalrun[ray]'" in result.stdout + result.stderr


def test_a_run_without_ray_asked_for_never_imports_it(tmp_path):
    generate(tmp_path, 3)
    probe = tmp_path / "probe"
    write(probe / "sitecustomize.py", """
        import atexit, sys

        atexit.register(lambda: print("RAY IMPORTED" if "ray" in sys.modules else "no ray", file=sys.stderr))
        """)
    env = cli_env(PYTHONPATH=f"{probe}{os.pathsep}{REPO}")
    for args in (["suites", "-q"], ["suites", "-q", "--executor", "processes"], ["--help"]):
        result = subprocess.run([sys.executable, "-m", "runner", *args], cwd=tmp_path, env=env, capture_output=True,
                                text=True, timeout=120)
        assert "no ray" in result.stderr and "RAY IMPORTED" not in result.stderr, (args, result.stderr)


def test_batches_follow_the_shard_hash_and_hold_every_job_once():
    from runner.shard import shard_of

    class _Work:
        refs = [type("Ref", (), {"id": f"case-{n}"})() for n in range(1000)]
        repeats, jobs = 3, 3000
    batches = batches_by_hash(_Work(), 2)
    assert sorted(job for batch in batches for job in batch) == [(p, r) for p in range(1000) for r in range(3)]
    count = len(batches)
    assert 3000 / 256 <= count <= 3000 / 16
    for batch in batches:
        assert len({shard_of(_Work.refs[p].id, count) for p, _ in batch}) == 1  # one shard of `count`
        assert batch == sorted(batch)  # in the run's order


def test_workers_get_only_the_variables_of_the_models_the_configuration_names():
    config = Config.model_validate({
        "judge": {"model": "openai/gpt-4o-mini", "api_key_env": "TEAM_JUDGE_KEY"},
        "simulator": {"model": "anthropic/claude-3-5-haiku"}})
    environ = {"TEAM_JUDGE_KEY": "k1", "OPENAI_BASE_URL": "http://x", "ANTHROPIC_API_KEY": "k2",
               "AWS_SECRET_ACCESS_KEY": "no", "HOME": "/root", "GEMINI_API_KEY": "no", "UNSET_KEY_ENV": "no"}
    assert worker_env(config, environ) == {"ANTHROPIC_API_KEY": "k2", "OPENAI_BASE_URL": "http://x",
                                           "TEAM_JUDGE_KEY": "k1"}
    assert worker_env(Config.model_validate({}), environ) == {}


def test_without_ray_address_the_run_starts_a_local_cluster_in_ray_tmpdir_and_says_so(tmp_path):
    with short_dir() as ray_tmp:
        _a_local_cluster_in_ray_tmpdir(tmp_path, ray_tmp / "rt")


def _a_local_cluster_in_ray_tmpdir(tmp_path: Path, ray_tmp: Path) -> None:
    generate(tmp_path, 50)
    env = cli_env(HOME=str(tmp_path / "home"), RAY_AUTH_MODE="disabled", RAY_TMPDIR=str(ray_tmp),
                  RAY_USAGE_STATS_ENABLED="0")
    env.pop("RAY_ADDRESS", None)
    (tmp_path / "home").mkdir()
    result = subprocess.run([sys.executable, "-m", "runner", "suites", "-q", "--executor", "ray", "--output-dir",
                             "out"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600,
                            start_new_session=True)
    try:
        assert result.returncode == 3, result.stdout + result.stderr
        assert "RAY_ADDRESS is not set: started a local Ray cluster (" in result.stderr
        assert "CPUs) for this run; set RAY_ADDRESS to use a running cluster" in result.stderr
        assert list((ray_tmp / "ray").glob("session_*")), "Ray's files went elsewhere than RAY_TMPDIR"
        run_local("suites", "-q", "--executor", "local", "--output-dir", "local", cwd=tmp_path)
        assert verdicts(tmp_path / "out" / "report.json") == verdicts(tmp_path / "local" / "report.json")
        assert not (tmp_path / "home" / ".ray").exists()
    finally:  # the run stops the cluster it started; should it not have, nothing of it outlives the test
        left = [int(p) for p in os.listdir("/proc") if p.isdigit() and str(ray_tmp) in _cmdline(int(p))]
        for pid in left:
            os.kill(pid, signal.SIGKILL)
    assert left == [], "the local cluster outlived its run"


def _started(tmp_path: Path, cluster: Cluster) -> subprocess.Popen:
    _slow_suite(tmp_path, 400, """
        import time

        def check(case):
            time.sleep(0.05)
            return True
        """)
    process = subprocess.Popen([sys.executable, "-m", "runner", "suites", "-q", "--executor", "ray", "--output-dir",
                                "out"], cwd=tmp_path, env={**cluster.env, "RAY_ADDRESS": cluster.address},
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    results = tmp_path / "out" / "results.jsonl"
    deadline = time.monotonic() + 120
    while not (results.exists() and results.stat().st_size) and time.monotonic() < deadline:
        time.sleep(0.05)
    return process


def test_ctrl_c_stops_a_ray_run_and_keeps_what_finished(cluster, tmp_path):
    process = _started(tmp_path, cluster)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=120)
    assert process.returncode == 2, out + err
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    finished = len(report["cases"])
    assert 0 < finished < 400
    assert len(report["summary"]["not_run"]) == 400 - finished
    assert len((tmp_path / "out" / "results.jsonl").read_text().splitlines()) == finished
    assert "Traceback" not in err


def test_a_ray_run_killed_outright_keeps_every_finished_case(cluster, tmp_path):
    process = _started(tmp_path, cluster)
    time.sleep(0.5)
    process.kill()
    process.communicate(timeout=60)
    lines = (tmp_path / "out" / "results.jsonl").read_text().splitlines()
    assert 0 < len(lines) < 400
    assert all(json.loads(line)["status"] == "passed" for line in lines)  # every line whole
    assert len({json.loads(line)["id"] for line in lines}) == len(lines)


def test_a_cluster_that_cannot_start_makes_every_case_an_error_that_says_so(tmp_path):
    generate(tmp_path, 5)
    deep = tmp_path / ("d" * 60)  # Ray's socket paths under it exceed the 107 bytes a Unix socket allows
    env = cli_env(HOME=str(tmp_path / "home"), RAY_AUTH_MODE="disabled", RAY_TMPDIR=str(deep),
                  RAY_USAGE_STATS_ENABLED="0")
    env.pop("RAY_ADDRESS", None)
    result = subprocess.run([sys.executable, "-m", "runner", "suites", "-q", "--executor", "ray", "--output-dir",
                             "out"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 3, result.stdout + result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    cases = json.loads((tmp_path / "out" / "report.json").read_text())["cases"]
    assert len(cases) == 5 and all(case["status"] == "error" for case in cases)
    assert all(case["error"].startswith("a local Ray cluster could not be started: OSError: ") for case in cases), \
        cases[0]["error"]
    assert "AF_UNIX path length cannot exceed 107 bytes" in cases[0]["error"]


def test_repeats_and_redaction_are_those_of_the_local_executor(cluster, tmp_path):
    """--repeat 2 on Ray: the same results as local, case by case; a secret (an api_key_env's value) in a
    recorded conversation is masked where the line is made, on the worker, as the local run masks it."""
    secret = "sk-team-judge-0123456789"
    generate(tmp_path, 40)
    write(tmp_path / "evalrun.yaml", """
        embeddings: {enabled: false}
        enable_fuzzy_matching: false
        judge: {model: openai/gpt-4o-mini, api_key_env: TEAM_JUDGE_KEY}
        """)
    transcript = tmp_path / "suites" / "t" / "case-00000.json"
    transcript.write_text(transcript.read_text().replace("ABC123", secret))
    env = {**cluster.env, "TEAM_JUDGE_KEY": secret}
    local = subprocess.run([sys.executable, "-m", "runner", "suites", "-q", "--repeat", "2", "--executor", "local",
                            "--output-dir", "local"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    on_ray = subprocess.run([sys.executable, "-m", "runner", "suites", "-q", "--repeat", "2", "--executor", "ray",
                             "--output-dir", "ray"], cwd=tmp_path, env={**env, "RAY_ADDRESS": cluster.address},
                            capture_output=True, text=True, timeout=600)
    assert local.returncode == on_ray.returncode, local.stdout + on_ray.stdout + on_ray.stderr
    assert verdicts(tmp_path / "ray" / "report.json") == verdicts(tmp_path / "local" / "report.json")
    assert len(verdicts(tmp_path / "ray" / "report.json")) == 80
    saved = (tmp_path / "ray" / "results.jsonl").read_text()
    assert secret not in saved and secret not in (tmp_path / "ray" / "report.json").read_text()
    assert "***" in saved
