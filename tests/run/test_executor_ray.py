"""`--executor ray`: recorded cases scored as Ray tasks, on a Ray cluster the tests start in a temporary folder.

The cluster is `ray start --head` with two CPUs, its temp folder and HOME under tmp_path and token
authentication off, so nothing lands in ~/.ray; it is ended by killing the processes it started (never
`ray stop`, which stops every cluster of the user).
"""
from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from runner.config.model import Config
from runner.run.executors.ray_cluster import batches_by_hash, live_batches_by_hash, worker_env
from tests.helpers.cli_helpers import REPO, cli_env, run_cli, saved_conversations, write
from tests.helpers.executor_ray import RAY_BIN, RAY_CLI, Cluster, _cmdline, _descendants, _free_port, short_dir  # noqa: F401 - shared with other test modules
from tests.helpers.executors import CASES, _tool_messages, differences, generate, verdicts

ray = pytest.importorskip("ray")
# `ray` beside this interpreter, or Ray's own entry point run by it (a virtualenv sharing another's packages)


def run_local(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """The local executor's run the Ray run is compared with, in this process (run_cli: what `python -m runner`
    gives, without an interpreter's start and imports; nothing of it is about a process)."""
    return run_cli(*args, cwd=cwd, env=env)


def _finished(run: subprocess.Popen) -> subprocess.CompletedProcess:
    out, err = run.communicate(timeout=600)
    return subprocess.CompletedProcess(run.args, run.returncode, out, err)


@pytest.mark.process
def test_ray_gives_the_verdicts_of_the_local_executor_case_by_case_on_420_generated_cases_repeated_and_redacted(
        cluster, tmp_path):
    """420 generated cases of every kind, --repeat 2, on Ray: the same results as local, case by case and repeat by
    repeat; a secret (an api_key_env's value) in a recorded conversation is masked where the line is made, on the
    worker, as the local run masks it. (One pair of runs for both points: a Ray run costs seconds of joining and
    starting workers whatever its size.)"""
    secret = "sk-team-judge-0123456789"
    generate(tmp_path, CASES)
    # the key of an agent no case plays: the redactor masks every api_key_env's value (no judge, which would be
    # asked about the fuzzy text answers and answers nowhere here)
    write(tmp_path / "evalrun.yaml", """
        embeddings: {enabled: false}
        agents:
          unused: {type: model, model: openai/x, api_base: "http://127.0.0.1:9/v1", api_key_env: TEAM_JUDGE_KEY}
        """)
    transcript = tmp_path / "suites" / "t" / "case-00000.json"
    transcript.write_text(transcript.read_text().replace("ABC123", secret))
    env = {**cluster.env, "TEAM_JUDGE_KEY": secret}
    ray_run = subprocess.Popen([sys.executable, "-m", "runner", "suites", "-q", "--repeat", "2", "--executor", "ray",
                                "--output-dir", "ray"], cwd=tmp_path, env={**env, "RAY_ADDRESS": cluster.address},
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # the local run while the Ray run waits for its workers (each in its own folder)
    local = run_local("suites", "-q", "--repeat", "2", "--executor", "local", "--output-dir", "local", cwd=tmp_path,
                      env=env)
    on_ray = _finished(ray_run)
    assert local.returncode == on_ray.returncode == 3, local.stdout[-800:] + on_ray.stdout[-800:] + on_ray.stderr
    assert f"running the cases on the Ray cluster at {cluster.address} (RAY_ADDRESS)" in on_ray.stderr
    one, many = verdicts(tmp_path / "local" / "report.json"), verdicts(tmp_path / "ray" / "report.json")
    assert len(one) == len(many) == 2 * CASES, "every case, each of its two repeats"
    assert many == one  # every field of every case but its duration
    lines = (tmp_path / "ray" / "results.jsonl").read_text().splitlines()
    assert sorted(json.loads(line)["id"] for line in lines) == sorted(2 * [f"case-{n:05d}" for n in range(CASES)])
    # the console's tally is the local run's
    tally = [line.split(" in ")[0] for line in local.stdout.splitlines() if " passed" in line and " failed" in line]
    assert tally and tally[-1] in on_ray.stdout, (tally, on_ray.stdout[-600:])
    assert not (cluster.home / ".ray").exists()
    saved = (tmp_path / "ray" / "results.jsonl").read_text()
    assert secret not in saved and secret not in (tmp_path / "ray" / "report.json").read_text(), "the secret unmasked"
    assert "***" in saved, "the secret's conversation is not in the results, masked"


@pytest.mark.process
def test_ray_gives_the_verdicts_of_the_local_executor_on_the_bundled_recorded_suites(cluster, tmp_path):
    """Every bundled suite folder in one run per executor (a Ray run costs seconds of joining and starting
    workers whatever its size; the folders share suites/evalrun.yaml): the recorded suites (airline, hr, ...) and
    the live ones (python agents, ADK eval sets), compared case by case."""
    quick_only = {"quick"}  # cases with nothing but a story, for `evalrun quick` (a run refuses them, exit 4)
    folders = sorted(p.name for p in (REPO / "suites").iterdir()
                     if p.is_dir() and p.name[0] not in "._" and p.name not in quick_only)
    assert len(folders) >= 6
    ray_run = subprocess.Popen([sys.executable, "-m", "runner", *folders, "-q", "--executor", "ray", "--output-dir",
                                str(tmp_path / "r")], cwd=REPO / "suites", stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env={**cluster.env, "RAY_ADDRESS": cluster.address})
    # the local run while the Ray run waits for its workers (each into its own folder)
    local = run_local(*folders, "-q", "--executor", "local", "--output-dir", str(tmp_path / "l"), cwd=REPO / "suites")
    on_ray = _finished(ray_run)
    assert on_ray.returncode == local.returncode, on_ray.stdout + on_ray.stderr + local.stdout
    on_ray_cases, local_cases = live_verdicts(tmp_path / "r" / "report.json"), live_verdicts(tmp_path / "l" / "report.json")
    assert not differences(on_ray_cases, local_cases)  # on a cold similarity cache, each run computes its scores
    assert sorted({case["source"].split("/")[0] for case in local_cases}) == folders  # every folder's cases compared


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


# A Ray worker killed from outside while it scores a batch costs no case (Ray runs the batch again): the chaos run
# kills one so, and one just after it sent its batch, and asserts every case passed and the run exits 0
# (tests/run/test_chaos_ray.py::test_ray_workers_killed_while_scoring_and_just_after_sending_cost_no_case).


# A scoring batch and a live batch that each fail twice: one run, recorded and live cases side by side
# (test_a_recorded_and_a_live_batch_that_fail_twice_make_only_their_cases_errors_with_the_cause, below).


@pytest.mark.process
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


@pytest.mark.process
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
    from runner.util.shard import shard_of

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


@pytest.mark.process
def test_without_ray_address_the_run_starts_a_local_cluster_in_ray_tmpdir_and_leaves_no_key_in_its_files(tmp_path):
    """The one run here that starts a local cluster (starting one costs ~12 s), so it proves two things: the
    cluster is started in RAY_TMPDIR, said so, gives the local verdicts and is stopped with the run; and the keys
    in the run's environment (which the cluster, its child, inherits) reach the workers inside the run's object in
    Ray's object store, never in a runtime_env that Ray writes in clear to runtime_env_agent.log (readable by
    anyone on the node): no file of the cluster's temp folder or of the run folder holds one
    (tests/util/test_secrets_ray.py; the secrets sweep plays live cases on a cluster whose workers have no key)."""
    with short_dir() as ray_tmp:
        _a_local_cluster_in_ray_tmpdir(tmp_path, ray_tmp / "rt")


def _a_local_cluster_in_ray_tmpdir(tmp_path: Path, ray_tmp: Path) -> None:
    from tests.helpers.executor_ray import KEYED_CONFIG, KEYS
    from tests.helpers.secrets_sweep_project import leaks_in_tree

    generate(tmp_path, 50)
    write(tmp_path / "evalrun.yaml", KEYED_CONFIG)  # the judge's api_key_env and a provider's key: sent to workers
    env = cli_env(**KEYS, HOME=str(tmp_path / "home"), RAY_AUTH_MODE="disabled", RAY_TMPDIR=str(ray_tmp),
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
        assert list(ray_tmp.rglob("runtime_env_agent.log")), "Ray's logs are not where this test reads them"
        found = leaks_in_tree(ray_tmp, KEYS) + leaks_in_tree(tmp_path / "out", KEYS)
        assert found == [], "\n".join(found)
        local = run_local("suites", "-q", "--executor", "local", "--output-dir", "local", cwd=tmp_path, env=env)
        assert local.returncode == 3, local.stdout + local.stderr
        assert verdicts(tmp_path / "out" / "report.json") == verdicts(tmp_path / "local" / "report.json")
        assert not (tmp_path / "home" / ".ray").exists()
    finally:  # the run stops the cluster it started; should it not have, nothing of it outlives the test
        left = [int(p) for p in os.listdir("/proc") if p.isdigit() and str(ray_tmp) in _cmdline(int(p))]
        for pid in left:
            os.kill(pid, signal.SIGKILL)
    assert left == [], "the local cluster outlived its run"


def _started(tmp_path: Path, cluster: Cluster) -> subprocess.Popen:
    """A run of 400 cases (8 batches of 50, 1 s of scoring each at 0.02 s a case: 4 s on the cluster's two CPUs),
    once its first batch is saved (0.05 s a case made the tests wait 1.5 s more for it, and proved nothing more)."""
    _slow_suite(tmp_path, 400, """
        import time

        def check(case):
            time.sleep(0.02)
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


@pytest.mark.process
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


@pytest.mark.process
def test_a_ray_run_killed_outright_keeps_every_finished_case(cluster, tmp_path):
    process = _started(tmp_path, cluster)
    time.sleep(0.5)
    process.kill()
    process.communicate(timeout=60)
    lines = (tmp_path / "out" / "results.jsonl").read_text().splitlines()
    assert 0 < len(lines) < 400
    assert all(json.loads(line)["status"] == "passed" for line in lines)  # every line whole
    assert len({json.loads(line)["id"] for line in lines}) == len(lines)


@pytest.mark.process
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


# ------------------------------------------------------------------------------------------------ live cases

CITIES = ["Paris", "Oslo", "Lima", "Cairo", "Quito", "Dakar", "Hanoi", "Perth"]
LEAKED_KEY = "sk-weather-secret-42"  # the agent's api_key_env value in the tests that set it
WEATHER_TOOL = {"type": "function", "function": {
    "name": "get_weather", "description": "The weather in a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}


class InFlight:
    """Requests the fake model holds at once, counted from its arrival until its answer is ready (the server's own
    count ends after the answer is sent: a client already sending the next request then counts twice)."""

    def __init__(self) -> None:
        import threading

        self.now = self.most = 0
        self._lock = threading.Lock()

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        with self._lock:
            self.now += 1
            self.most = max(self.most, self.now)
        try:
            yield
        finally:
            with self._lock:
                self.now -= 1


def weather_reply(latency_s: float = 0.0, in_flight: InFlight | None = None):
    """The fake model of the weather shape: a question gets a get_weather call for its city, a tool result the
    answer, after `latency_s`. Case 'c0003' is answered with the wrong city, so the runs hold a failed case too."""
    from tests.fakes.openai_server import Reply

    def answer(request: dict) -> Reply:
        if in_flight is None:
            return _weather_answer(request, latency_s)
        with in_flight.held():
            time.sleep(latency_s)
            return _weather_answer(request, 0.0)

    return answer


def _weather_answer(request: dict, latency_s: float):
    from tests.fakes.openai_server import Reply, tool_call

    messages = request.get("messages") or [{}]
    first = next((str(m.get("content")) for m in messages if m.get("role") == "user"), "")
    number = int(first.split(":", 1)[0].split()[-1]) if first.startswith("Case ") else 0
    city = first.rsplit(" ", 1)[-1].strip("?.") or "Paris"
    if messages[-1].get("role") == "tool":
        leak = f" (key {LEAKED_KEY})" if number == 5 else ""  # a careless agent repeats its API key
        return Reply(content=f"It is 21 degrees in {city}.{leak}", delay_s=latency_s,
                     usage={"prompt_tokens": 30 + number % 7, "completion_tokens": 9, "total_tokens": 39})
    asked = "Atlantis" if number == 3 else city
    return Reply(tool_calls=[tool_call("get_weather", {"city": asked}, f"call_{number}")], delay_s=latency_s,
                 usage={"prompt_tokens": 20 + number % 5, "completion_tokens": 8, "total_tokens": 28})


def weather_project(root: Path, base_url: str, count: int, extra: str = "") -> None:
    """`count` live cases of a `model` agent (the bundled weather shape) against the fake server at `base_url`."""
    write(root / "evalrun.yaml", f"""
        embeddings: {{enabled: false}}
        agents:
          bot:
            type: model
            model: openai/fake
            api_base: {base_url}
            api_key_env: WEATHER_KEY
            timeout_s: 60
            tools: [{json.dumps(WEATHER_TOOL)}]
        """ + extra)
    (root / "suites").mkdir(exist_ok=True)
    for n in range(count):
        city = CITIES[n % len(CITIES)]
        (root / "suites" / f"c{n:04d}.yaml").write_text(
            f"id: c{n:04d}\nagent: bot\nstarting_sentence: 'Case {n}: what is the weather in {city}?'\n"
            f"tool_outputs: {{get_weather: {{temp_c: 21}}}}\n"
            f"goal_details:\n  - {{type: tool_call, name: look, tool_name: get_weather, args: {{city: {city}}}}}\n"
            f"  - {{type: text, name: answer, keywords: ['21']}}\n")


def live_verdicts(report: Path) -> list[dict]:
    """Every field of every case but what differs between two runs of it: its duration, the run folder its
    conversation was saved in, and the time its model calls took."""
    cases = verdicts(report)
    for case in cases:
        if case.get("transcript_path"):
            case["transcript_path"] = Path(case["transcript_path"]).name
        usage = case.get("model_usage") or {}
        usage.pop("latency_s", None)
        for role in (usage.get("by_role") or {}).values():
            role.pop("latency_s", None)
    return cases


def usage_totals(report: Path) -> dict:
    usage = json.loads(report.read_text())["summary"]["model_usage"]
    usage.pop("latency_s", None)
    for role in usage.get("by_role", {}).values():
        role.pop("latency_s", None)
    return usage


@pytest.mark.process
def test_live_cases_on_two_ray_workers_give_the_local_verdicts_within_one_budget_of_j4(cluster, tmp_path):
    """Live cases (a model agent against the fake server) on Ray, played by two worker processes: each case's
    verdict, conversation file and model usage are the local executor's, and so are the run's usage totals. Each
    worker could send -j requests at once: the run's one budget (the limiter actor) holds the whole run to -j 4,
    and a model's max_concurrency to its own limit (every other case asks a second model, whose max_concurrency
    is 2). One Ray run for all these points (a Ray run costs seconds of joining and starting workers); 96 cases are
    6 batches of 16, 3 for each worker (160, 10 batches, proved nothing more)."""
    from tests.fakes.openai_server import FakeOpenAI

    in_flight, second = InFlight(), InFlight()  # all requests; the second model's
    slow = weather_reply(0.05, in_flight)  # the Ray run's: each request held a moment, so -j 4 is reached
    reply = [weather_reply()]  # the local run's first: its verdicts are compared, its concurrency is not

    def answer(request: dict):
        if request.get("model") == "fake2":
            with second.held():
                return reply[0](request)
        return reply[0](request)

    with FakeOpenAI(answer) as fake:
        weather_project(tmp_path, fake.base_url, 96)
        config = (tmp_path / "evalrun.yaml").read_text()
        bot2 = config.split("agents:\n", 1)[1].replace("  bot:", "  bot2:", 1).replace(
            "model: openai/fake", "model: openai/fake2").replace("timeout_s: 60", "timeout_s: 60\n    max_concurrency: 2")
        (tmp_path / "evalrun.yaml").write_text(config + bot2)
        for case in sorted((tmp_path / "suites").glob("c*.yaml"))[1::2]:  # every other case asks the second model
            case.write_text(case.read_text().replace("agent: bot\n", "agent: bot2\n"))
        env = {**cluster.env, "WEATHER_KEY": LEAKED_KEY}
        local = run_local("suites", "-q", "--no-cache", "-j", "4", "--executor", "local", "--output-dir", "local",
                          cwd=tmp_path, env=env)
        assert len(fake.requests) == 96 * 2, "every case asked the model twice in the local run"
        reply[0], second.most = slow, 0
        run = subprocess.Popen([sys.executable, "-m", "runner", "suites", "-q", "--no-cache", "-j", "4", "--executor",
                                "ray", "--output-dir", "ray"], cwd=tmp_path, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True,
                               env={**env, "RAY_ADDRESS": cluster.address, "EVALRUN_RAY_LIVE_ACTORS": "2"})
        players = set()
        while run.poll() is None:
            players.update(pid for pid in cluster.workers() if "LiveWorker" in _cmdline(pid))
            time.sleep(0.05)
        out, err = run.communicate()
        on_ray = fake.requests[96 * 2:]
    assert local.returncode == run.returncode == 1, local.stdout[-800:] + out[-1500:] + err
    # one budget
    assert len(players) == 2, players  # two processes played the cases
    assert len(on_ray) == 192, "every case asked the model twice on Ray"
    assert sum(request.get("model") == "fake2" for request in on_ray) == 96, "half asked the second model"
    assert in_flight.most == 4, in_flight.most  # the run's -j: reached, never passed
    assert second.most == 2, second.most  # the second model's max_concurrency: reached, never passed
    # the local verdicts
    one, many = live_verdicts(tmp_path / "local" / "report.json"), live_verdicts(tmp_path / "ray" / "report.json")
    assert len(one) == len(many) == 96
    assert many == one
    assert [case["id"] for case in many if case["status"] != "passed"] == ["c0003"]
    saved = saved_conversations(tmp_path / "ray")
    assert sorted(saved) == sorted(saved_conversations(tmp_path / "local")) and len(saved) == 96
    for case in json.loads((tmp_path / "ray" / "report.json").read_text())["cases"]:
        assert case["transcript_path"] == f"ray/conversations.jsonl#{case['id']}"  # as the local run names it
        assert saved[case["id"]]["messages"]
    assert usage_totals(tmp_path / "ray" / "report.json") == usage_totals(tmp_path / "local" / "report.json")
    leaked = next(case for case in json.loads((tmp_path / "ray" / "report.json").read_text())["cases"]
                  if case["id"] == "c0005")
    assert "(key ***)" in json.dumps(leaked["transcript"])  # the agent's words, its key masked
    for path in (tmp_path / "ray").rglob("*"):
        assert not path.is_file() or LEAKED_KEY not in path.read_text(errors="replace"), path
    assert usage_totals(tmp_path / "ray" / "report.json")["calls"] == 192
    assert out.splitlines()[-1] == local.stdout.splitlines()[-1].replace(
        local.stdout.splitlines()[-1].rsplit(" in ", 1)[-1], out.splitlines()[-1].rsplit(" in ", 1)[-1])


def test_the_llm_layer_takes_its_limits_from_the_factory_it_is_configured_with():
    """The seam a Ray run plugs its cluster-wide budget into: the run-wide limit is made as (None, -j), a model's
    own as ((model, api_base, max_concurrency), max_concurrency), once per model."""
    from runner.llm.limits import Limiter
    from runner.llm.runtime import LLMRuntime
    from runner.llm.settings import ModelSettings

    made = []

    def factory(key, limit):
        made.append((key, limit))
        return Limiter(limit)

    runtime = LLMRuntime(concurrency=6, limits=factory)
    settings = ModelSettings(model="openai/fake", api_base="http://h/v1", max_concurrency=2)
    assert runtime.model_limiter(settings) is runtime.model_limiter(settings)
    assert runtime.model_limiter(ModelSettings(model="openai/fake")) is None
    assert made == [(None, 6), (("openai/fake", "http://h/v1", 2), 2)]
    assert isinstance(LLMRuntime(concurrency=3).limiter, Limiter)


@pytest.mark.process
def test_an_unreachable_ray_address_exits_4_within_the_connect_timeout(tmp_path):
    generate(tmp_path, 3)
    port = _free_port()  # nothing listens there
    env = cli_env(HOME=str(tmp_path), RAY_ADDRESS=f"127.0.0.1:{port}", EVALRUN_RAY_CONNECT_TIMEOUT="1",
                  RAY_AUTH_MODE="disabled")
    started = time.monotonic()
    result = subprocess.run([sys.executable, "-m", "runner", "suites", "-q", "--executor", "ray", "--output-dir",
                             "out"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    took = time.monotonic() - started
    assert result.returncode == 4, result.stdout + result.stderr
    assert (f"--executor ray cannot run this run: the Ray cluster at 127.0.0.1:{port} (RAY_ADDRESS) could not be "
            "reached in 1 s (Connection refused); start it, fix RAY_ADDRESS, unset it to start a local cluster, or "
            "wait longer with EVALRUN_RAY_CONNECT_TIMEOUT=SECONDS") in result.stdout + result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    assert 1 <= took < 20, took  # it waited the 1 s it names (2 s proved no more), and ended
    assert not (tmp_path / "out").exists()  # refused before anything ran


def test_a_ray_address_without_a_port_is_left_to_ray_and_one_that_answers_is_reachable():
    from runner.run.executors.ray_cluster import unreachable

    with socket.socket() as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen()
        port = listening.getsockname()[1]
        assert unreachable(f"127.0.0.1:{port}", 1) is None
        assert unreachable(f"ray://127.0.0.1:{port}", 1) is None
    assert unreachable("auto", 1) is None
    assert "could not be reached in 0.6 s" in unreachable(f"ray://127.0.0.1:{port}", 0.6)


def test_an_unreachable_address_is_tried_for_the_whole_timeout_it_names():
    from runner.run.executors.ray_cluster import unreachable

    port = _free_port()  # nothing listens there: each try is refused at once
    started = time.monotonic()
    why = unreachable(f"127.0.0.1:{port}", 0.7)
    took = time.monotonic() - started
    assert "could not be reached in 0.7 s" in why
    assert took >= 0.7, took  # it gave up with 0.5 s left (at 0.5 s of 0.7; at 0.7 s of 1.2) and said 0.7
    assert took < 0.7 + 10, took  # it ends: a bound a loaded machine keeps (the last retry sleeps at most 0.5 s)


def test_the_result_serialiser_a_run_hands_its_executor_pickles_and_redacts_where_it_runs(tmp_path):
    """Work.serialise travels to Ray workers by pickle: it is the run folder's own (not a private attribute read
    from it), and makes the same line, secret masked, after the trip."""
    import pickle

    from runner.results.folder import RunFolder
    from runner.results.models import CaseResult
    from runner.util.secrets import Redactor

    folder, _ = RunFolder.open(tmp_path / "run", "r1", redact=Redactor(["sk-hush-123"]))
    folder.start_results()  # as a run hands it over: writing results.jsonl
    result = CaseResult(id="a", status="failed", source="s.yaml:1:1", failures=["the agent said sk-hush-123"])
    travelled = pickle.loads(pickle.dumps(folder.serialise))
    assert travelled(result)[1] == folder.serialise(result)[1]
    assert "sk-hush-123" not in travelled(result)[1] and "the agent said ***" in travelled(result)[1]


@pytest.mark.process
def test_a_live_worker_killed_mid_run_costs_no_case(cluster, tmp_path):
    """The process of a live worker killed from outside while it plays its batch: Ray starts the worker again and
    plays the batch once more; every case has its verdict, the local executor's."""
    from tests.fakes.openai_server import FakeOpenAI

    with FakeOpenAI(weather_reply(latency_s=0.1)) as fake:
        # 5 live batches of 16 (-j 8), 0.4 s of playing each: the kill comes once the first is saved, 4 still to play
        # (160 cases played 5 more batches after the kill, which proved no more)
        weather_project(tmp_path, fake.base_url, 80)
        env = {**cluster.env, "RAY_ADDRESS": cluster.address, "WEATHER_KEY": "k"}
        run = subprocess.Popen([sys.executable, "-m", "runner", "suites", "-q", "--no-cache", "--executor", "ray",
                                "--output-dir", "out"], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
        killed = None
        deadline = time.monotonic() + 120
        while killed is None and time.monotonic() < deadline and run.poll() is None:
            results = tmp_path / "out" / "results.jsonl"
            if results.exists() and results.read_text().count("\n") >= 16:  # mid-run: a batch saved
                players = [pid for pid in cluster.workers() if "LiveWorker" in _cmdline(pid)]  # (/proc: only then)
                if players:
                    killed = players[0]
                    os.kill(killed, signal.SIGKILL)
            time.sleep(0.02)
        out, err = run.communicate(timeout=600)
    assert killed is not None, "no live worker was seen mid-run" + out + err
    assert run.returncode == 1, out + err
    cases = json.loads((tmp_path / "out" / "report.json").read_text())["cases"]
    assert len(cases) == 80
    assert [case["id"] for case in cases if case["status"] != "passed"] == ["c0003"]
    assert len(saved_conversations(tmp_path / "out")) == 80


@pytest.mark.process
def test_a_recorded_and_a_live_batch_that_fail_twice_make_only_their_cases_errors_with_the_cause(cluster, tmp_path):
    """One run for both kinds (a Ray run costs seconds of joining and starting workers whatever its size): a python
    check that kills its scoring worker on one recorded case, and a python agent that kills its live worker on one
    live case. Each case's batch fails on both tries and its cases are errors that say so, naming the task that
    failed; every other batch, on the same workers, is scored or played."""
    _slow_suite(tmp_path, 200, """
        import os, signal

        def check(case):
            if case.id == "case-0100":
                os.kill(os.getpid(), signal.SIGKILL)
            return True
        """)
    write(tmp_path / "evalrun.yaml", """
        embeddings: {enabled: false}
        agents:
          echo: {type: python, entrypoint: "team.agent:respond"}
        """)
    write(tmp_path / "team" / "agent.py", """
        import os, signal

        def respond(messages, context):
            said = messages[-1]["content"]
            if said == "case 37":
                os.kill(os.getpid(), signal.SIGKILL)
            return "heard " + said
        """)
    for n in range(80):
        (tmp_path / "suites" / f"e{n:03d}.yaml").write_text(
            f"id: e{n:03d}\nagent: echo\nstarting_sentence: 'case {n}'\n"
            f"goal_details:\n  - {{type: text, name: answer, keywords: ['heard case {n}']}}\n")
    result = cluster.run("suites", "-q", "-j", "4", "--executor", "ray", "--output-dir", "out", cwd=tmp_path)
    assert result.returncode == 3, result.stdout[-2000:] + result.stderr
    cases = json.loads((tmp_path / "out" / "report.json").read_text())["cases"]
    recorded = [case for case in cases if case["id"].startswith("case-")]
    live = [case for case in cases if case["id"].startswith("e")]
    assert [case["id"] for case in recorded] == [f"case-{n:04d}" for n in range(200)], "every recorded case"
    assert [case["id"] for case in live] == [f"e{n:03d}" for n in range(80)], "every live case"

    class _Work:  # the batches as the run made them: two CPUs in the cluster, -j 4
        def __init__(self, kind: list[dict]):
            self.refs = [type("Ref", (), {"id": case["id"]})() for case in kind]
        repeats, concurrency = 1, 4

    scored = next(b for b in batches_by_hash(_Work(recorded), 2) if (100, 0) in b)
    played = next(b for b in live_batches_by_hash(_Work(live), list(range(80))) if (37, 0) in b)
    # the recorded batch
    assert {case["id"] for case in recorded if case["status"] == "error"} == {f"case-{p:04d}" for p, _ in scored}
    errors = {case["error"] for case in recorded if case["status"] == "error"}
    assert len(errors) == 1, errors
    error = errors.pop()
    assert error.startswith(f"the Ray task scoring this case's batch of {len(scored)} failed 2 times ("), error
    assert "the other cases went on" in error and "died" in error.lower(), error
    assert sum(case["status"] == "passed" for case in recorded) == 200 - len(scored)
    # the live batch
    assert {case["id"] for case in live if case["status"] == "error"} == {f"e{p:03d}" for p, _ in played}
    errors = {case["error"] for case in live if case["status"] == "error"}
    assert len(errors) == 1, errors
    error = errors.pop()
    assert error.startswith(f"the Ray task playing this case's batch of {len(played)} failed 2 times ("), error
    assert "the other cases went on" in error
    assert sum(case["status"] == "passed" for case in live) == 80 - len(played)


def test_the_run_limits_free_what_a_lost_worker_held_and_refuse_what_it_still_waited_for():
    """RunLimits (the limiter actor's class, run here on a plain event loop): a worker restarted by Ray registers
    its new incarnation; the slots the lost one held go to those waiting, and its own pending asks are refused."""
    import asyncio

    from runner.run.executors.ray_limits import RUN, RunLimits

    async def scenario() -> None:
        limits = RunLimits(2)
        limits.register("live0:a")
        limits.register("live1:x")
        assert await limits.acquire(RUN, 2, "live0:a") and await limits.acquire(RUN, 2, "live0:a")
        other = asyncio.ensure_future(limits.acquire(RUN, 2, "live1:x"))
        lost_ask = asyncio.ensure_future(limits.acquire(RUN, 2, "live0:a"))
        await asyncio.sleep(0.01)
        assert not other.done() and not lost_ask.done()  # the budget of 2 is spent
        limits.register("live0:b")  # live0 was restarted: "live0:a" is gone
        assert await asyncio.wait_for(other, 1) is True
        assert await asyncio.wait_for(lost_ask, 1) is False
        assert limits.state() == {"peak": 2, "in_use": 1, "limit": 2, "throttled": 0}
        limits.release(RUN, "live0:a")  # a late release from the lost incarnation frees nothing twice
        assert limits.state()["in_use"] == 1
        assert await limits.acquire(RUN, 2, "live0:b")
        assert limits.state()["in_use"] == 2

    asyncio.run(scenario())


@pytest.mark.process
def test_ctrl_c_stops_a_live_ray_run_and_keeps_what_finished(cluster, tmp_path):
    from tests.fakes.openai_server import FakeOpenAI

    with FakeOpenAI(weather_reply(latency_s=0.2)) as fake:
        weather_project(tmp_path, fake.base_url, 160)
        run = subprocess.Popen([sys.executable, "-m", "runner", "suites", "-q", "--no-cache", "--executor", "ray",
                                "--output-dir", "out"], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, env={**cluster.env, "RAY_ADDRESS": cluster.address, "WEATHER_KEY": "k"})
        results = tmp_path / "out" / "results.jsonl"
        deadline = time.monotonic() + 120
        while not (results.exists() and results.read_text().count("\n") >= 16) and time.monotonic() < deadline:
            time.sleep(0.05)
        run.send_signal(signal.SIGINT)
        out, err = run.communicate(timeout=120)
    assert run.returncode == 2, out + err
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    finished = len(report["cases"])
    assert 16 <= finished < 160
    assert len(report["summary"]["not_run"]) == 160 - finished
    assert all(case["status"] in ("passed", "failed") for case in report["cases"])  # none cut short into an error
    assert "Traceback" not in err
