"""Executors (runner.run.executors): the replay process pool gives the verdicts one process gives, case by
case; it streams every result to results.jsonl; a worker that dies costs only its batch; a stop keeps what
finished; the choice between executors follows the run."""
from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from runner.config.model import Config
from runner.run.execute import RunOptions
from runner.run.executors import MIN_POOL_JOBS, ExecutorUnavailable, choose_executor, usable_cpus
from runner.run.executors.local import LocalExecutor
from runner.run.executors.replay_pool import ReplayPoolExecutor, _batches
from tests.helpers.cli_helpers import REPO, cli_env, run_cli, run_cli_process, write
from tests.helpers.executors import ANSWER, CASES, _tool_messages, differences, generate, verdicts  # noqa: F401 - shared with other test modules


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("generated")
    generate(root, CASES)
    return root


def _cli(*args: str, cwd: Path):
    """A pool run in a process of its own, any other in this one: the pool forks its workers only from a process
    that runs no other thread, and pytest's worker runs several (in-process, --executor processes refuses)."""
    return (run_cli_process if "processes" in args else run_cli)(*args, cwd=cwd)


@pytest.mark.process
def test_the_pool_gives_the_verdicts_of_one_process_case_by_case_on_420_generated_cases(generated):
    single = run_cli("suites", "-q", "-j", "1", "--output-dir", "single", cwd=generated)
    pooled = run_cli_process("suites", "-q", "--executor", "processes", "-j", "4", "--output-dir", "pooled", cwd=generated)
    assert single.returncode == pooled.returncode == 3, single.stdout[-800:] + pooled.stdout[-800:] + pooled.stderr
    one, many = verdicts(generated / "single" / "report.json"), verdicts(generated / "pooled" / "report.json")
    assert len(one) == len(many) == CASES
    assert [case["id"] for case in many] == [f"case-{n:05d}" for n in range(CASES)]
    assert many == one  # every field of every case but its duration
    statuses = {status: sum(case["status"] == status for case in one) for status in ("passed", "failed", "skipped", "error")}
    assert all(statuses.values()), statuses  # the set holds every kind of verdict
    # results.jsonl holds every case once, as the cases finished
    lines = (generated / "pooled" / "results.jsonl").read_text().splitlines()
    assert sorted(json.loads(line)["id"] for line in lines) == [f"case-{n:05d}" for n in range(CASES)]
    summary = json.loads((generated / "pooled" / "report.json").read_text())["summary"]
    assert summary["total"] == CASES and summary["not_run"] == []


# The pool's runs of the bundled suite folders, one after the other in one process of their own (the pool forks
# only from a process that runs no other thread): one interpreter's start and imports instead of one per folder.
# Each run's stdout and stderr start with a line `@@ run FOLDER`; `@@ exit CODE` follows on stdout.
_POOLED_RUNS = """
import json, sys
from runner.frontends.cli import main

for folder, output_dir in json.loads(sys.argv[1]):
    for stream in (sys.stdout, sys.stderr):
        print("@@ run " + folder, file=stream, flush=True)
    code = main([folder, "-q", "--executor", "processes", "--output-dir", output_dir])
    sys.stderr.flush()
    print("@@ exit", code, flush=True)
"""


def _pooled_runs(folders: list[Path], out: Path) -> dict[str, tuple[int, str]]:
    """Each folder's pooled run (from REPO/suites): its exit code and its stdout and stderr."""
    runs = json.dumps([[str(folder), str(out / folder.name / "p")] for folder in folders])
    done = subprocess.run([sys.executable, "-c", _POOLED_RUNS, runs], cwd=REPO / "suites", env=cli_env(),
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    marked = re.compile(r"^@@ ", re.MULTILINE)  # the lines the script prints, each at a line's start
    parts = marked.split(done.stdout)[1:]
    outs = dict(part.removeprefix("run ").split("\n", 1) for part in parts if part.startswith("run "))
    codes = [int(part.split()[1]) for part in parts if part.startswith("exit ")]
    errs = dict(part.removeprefix("run ").split("\n", 1) for part in marked.split(done.stderr)[1:])
    assert len(codes) == len(folders), done.stdout[-2000:] + done.stderr[-2000:]
    return {str(folder): (code, outs[str(folder)] + errs[str(folder)]) for folder, code in zip(folders, codes, strict=True)}


@pytest.mark.process
def test_the_pool_gives_the_verdicts_of_one_process_on_the_bundled_recorded_suites(tmp_path):
    """Every bundled suite folder whose cases are all recorded (live ones are refused by the pool, exit 4)."""
    compared = 0
    quick_only = {"quick"}  # cases with nothing but a story, for `evalrun quick` (a run refuses them, exit 4)
    folders = sorted(p for p in (REPO / "suites").iterdir()
                     if p.is_dir() and p.name[0] not in "._" and p.name not in quick_only)
    pooled_runs = _pooled_runs(folders, tmp_path)
    for folder in folders:
        code, said = pooled_runs[str(folder)]
        if code == 4:
            assert "--executor processes cannot run this run: case '" in said
            assert "is played live (the pool scores recordings only); use --executor local" in said
            continue
        single = run_cli(str(folder), "-q", "-j", "1", "--output-dir", str(tmp_path / folder.name / "s"),
                         cwd=REPO / "suites")
        assert code == single.returncode, said + single.stdout
        # the similarity cache is shared with runs in other test processes: either run may compute a score
        assert not differences(verdicts(tmp_path / folder.name / "p" / "report.json"),
                               verdicts(tmp_path / folder.name / "s" / "report.json"))
        compared += 1
    assert compared >= 2  # airline and hr are recorded


def test_two_runs_differ_only_where_an_embedding_score_moved_by_float_rounding():
    """The comparison the bundled-suite tests make: an embedding's score within 1e-6 is the same, and nothing else."""
    decision = {"decided_by": "embedding", "matched": True, "score": 0.9715582728385925}
    case = {"id": "c", "status": "passed", "goals": [{"text_decision": decision}]}
    moved = {**case, "goals": [{"text_decision": {**decision, "score": 0.9715583324432373}}]}
    assert differences([case], [moved]) == []
    far = {**case, "goals": [{"text_decision": {**decision, "score": 0.9716}}]}
    assert differences([case], [far]) == ["cases[0].goals[0].text_decision.score: 0.9715582728385925 != 0.9716"]
    fuzzy = {**decision, "decided_by": "rapidfuzz"}
    rapid = [{**case, "goals": [{"text_decision": fuzzy}]}]
    assert differences(rapid, [{**case, "goals": [{"text_decision": {**fuzzy, "score": 0.9715583324432373}}]}])
    assert differences([case], [{**case, "status": "failed"}]) == ["cases[0].status: 'passed' != 'failed'"]
    assert differences([case], [{k: v for k, v in case.items() if k != "goals"}])
    assert differences([case], [case, case])


@pytest.mark.process
def test_a_worker_killed_mid_run_costs_only_its_batch(tmp_path):
    """A check that kills its process: that batch's cases are errors that say so, every other case is scored."""
    write(tmp_path / "evalrun.yaml", "embeddings: {enabled: false}\n")
    write(tmp_path / "team" / "__init__.py", "")
    write(tmp_path / "team" / "checks.py", """
        import os, signal

        def deadly(case):
            if case.id == "case-0100":
                os.kill(os.getpid(), signal.SIGKILL)
            return True
        """)
    (tmp_path / "suites" / "t").mkdir(parents=True)
    for n in range(200):
        case = {"id": f"case-{n:04d}", "transcript": f"t/{n}.json", "goals": {"cancel": []},
                "goal_details": [{"type": "tool_call", "name": "cancel", "tool_name": "cancel_booking",
                                  "args": {"booking": "B1"}}],
                "checks": [{"type": "python", "function": "team.checks:deadly"}]}
        (tmp_path / "suites" / f"case-{n:04d}.json").write_text(json.dumps(case))
        (tmp_path / "suites" / "t" / f"{n}.json").write_text(json.dumps(_tool_messages("cancel_booking", {"booking": "B1"}, "ok")))
    result = run_cli_process("suites", "-q", "--executor", "processes", "-j", "2", "--output-dir", "out", cwd=tmp_path)
    assert result.returncode == 3, result.stdout + result.stderr
    cases = json.loads((tmp_path / "out" / "report.json").read_text())["cases"]
    assert len(cases) == 200
    lost = {case["id"] for case in cases if case["status"] == "error"}
    # the first case is scored before the fork; the others go in batches; the batch holding case 100 is lost
    batch = next(b for b in _batches([(p, 0) for p in range(1, 200)], 2) if (100, 0) in b)
    assert lost == {f"case-{p:04d}" for p, _ in batch}
    assert all(case["error"] == f"the worker process scoring this case's batch of {len(batch)} ended while scoring "
                                "it, twice (the last time it was killed by signal 9 (SIGKILL)); the other cases went on"
               for case in cases if case["status"] == "error")
    assert sum(case["status"] == "passed" for case in cases) == 200 - len(batch)


@pytest.mark.process
def test_ctrl_c_stops_a_pool_run_and_keeps_what_finished(tmp_path):
    write(tmp_path / "evalrun.yaml", "embeddings: {enabled: false}\n")
    write(tmp_path / "team" / "__init__.py", "")
    write(tmp_path / "team" / "checks.py", """
        import time

        def slow():
            time.sleep(0.05)
            return True
        """)
    (tmp_path / "suites" / "t").mkdir(parents=True)
    for n in range(400):
        case = {"id": f"case-{n:04d}", "transcript": f"t/{n}.json", "goals": {"cancel": []},
                "goal_details": [{"type": "tool_call", "name": "cancel", "tool_name": "cancel_booking",
                                  "args": {"booking": "B1"}}],
                "checks": [{"type": "python", "function": "team.checks:slow"}]}
        (tmp_path / "suites" / f"case-{n:04d}.json").write_text(json.dumps(case))
        (tmp_path / "suites" / "t" / f"{n}.json").write_text(json.dumps(_tool_messages("cancel_booking", {"booking": "B1"}, "ok")))
    process = subprocess.Popen([sys.executable, "-m", "runner", "suites", "-q", "--executor", "processes", "-j", "2",
                                "--output-dir", "out"], cwd=tmp_path, env=cli_env(), stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    results = tmp_path / "out" / "results.jsonl"
    deadline = time.monotonic() + 120
    while not (results.exists() and results.stat().st_size) and time.monotonic() < deadline:
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=120)
    assert process.returncode == 2, out + err
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    finished = len(report["cases"])
    assert 0 < finished < 400
    assert len(report["summary"]["not_run"]) == 400 - finished
    assert len(results.read_text().splitlines()) == finished
    assert "Traceback" not in err


@pytest.mark.process
def test_processes_refuses_a_run_with_live_cases(tmp_path):
    write(tmp_path / "evalrun.yaml", """
        agents:
          echo: {type: python, entrypoint: "agent:respond"}
        """)
    write(tmp_path / "agent.py", "def respond(messages):\n    return 'hi'\n")
    write(tmp_path / "suites" / "live.yaml", """
        id: live-one
        agent: echo
        starting_sentence: hello
        goals: {answer: []}
        goal_details:
          - {type: text, name: answer, response: hi}
        """)
    result = run_cli_process("suites", "--executor", "processes", "--output-dir", "out", cwd=tmp_path)
    assert result.returncode == 4
    assert ("error: --executor processes cannot run this run: case 'live-one' is played live "
            "(the pool scores recordings only); use --executor local") in result.stdout + result.stderr
    assert not (tmp_path / "out" / "results.jsonl").exists()


class _Ref:
    def __init__(self, recorded: bool = True, id: str = "c"):
        self.recorded, self.id = recorded, id


@pytest.mark.skipif(usable_cpus() < 2, reason="the pool is chosen only with two cores or more")
def test_auto_takes_the_pool_for_recorded_runs_only_when_it_pays(monkeypatch):
    import runner.run.executors as executors

    monkeypatch.setattr(executors, "_threads_running", lambda: 1)  # this test process may hold earlier tests' threads
    refs = [_Ref() for _ in range(MIN_POOL_JOBS)]
    offline = Config.model_validate({"embeddings": {"enabled": False}})

    defaults = RunOptions()

    def chosen(refs=refs, config=offline, concurrency=8, repeats=1, options=defaults):
        return type(choose_executor("auto", refs, repeats=repeats, concurrency=concurrency, config=config,
                                    options=options))

    assert chosen() is ReplayPoolExecutor
    assert chosen(concurrency=1) is LocalExecutor  # -j 1 stays in one process
    assert chosen(refs=refs[:-1]) is LocalExecutor  # too few to pay for the processes
    assert chosen(refs=refs[:MIN_POOL_JOBS // 2], repeats=2) is ReplayPoolExecutor
    assert chosen(refs=[*refs, _Ref(recorded=False, id="live")]) is LocalExecutor
    assert chosen(refs=[*refs, _Ref(recorded=False)], options=RunOptions(replay_dir=Path("."))) is ReplayPoolExecutor
    judged = Config.model_validate({"embeddings": {"enabled": False}, "judge": {"model": "openai/m"}})
    assert chosen(config=judged) is LocalExecutor  # judge calls run -j at a time in one process
    monkeypatch.setattr(executors, "_threads_running", lambda: 3)
    assert chosen() is LocalExecutor  # forking a process with threads could copy a lock one of them holds
    with pytest.raises(ExecutorUnavailable, match="this process runs other threads"):
        choose_executor("processes", refs, repeats=1, concurrency=8, config=offline, options=RunOptions())
    with pytest.raises(ExecutorUnavailable, match="case 'live' is played live"):  # whatever this process holds
        choose_executor("processes", [*refs, _Ref(recorded=False, id="live")], repeats=1, concurrency=8,
                        config=offline, options=RunOptions())
    monkeypatch.setattr(executors, "_threads_running", lambda: 1)
    assert type(choose_executor("local", refs, repeats=1, concurrency=8, config=offline,
                                options=RunOptions())) is LocalExecutor
    with pytest.raises(ExecutorUnavailable, match="case 'live' is played live"):
        choose_executor("processes", [_Ref(recorded=False, id="live")], repeats=1, concurrency=8, config=offline,
                        options=RunOptions())


def test_batches_cover_every_job_once_in_order():
    for count in (1, 5, 63, 64, 1000, 50_000):
        jobs = [(n, 0) for n in range(count)]
        batches = list(_batches(jobs, 2))
        assert [job for batch in batches for job in batch] == jobs
        assert all(4 <= len(batch) <= 64 for batch in batches[:-1])


def _console(stdout: str) -> tuple[list[str], list[str]]:
    """A run's console: each case's block (its line, -v's goal lines under it) in the order of their ids, as
    the pool saves the cases of a batch as the batch comes back; then the failures and the summary, as printed
    (read back from the run folder in collection order), but for the duration and the report's folder."""
    import re

    lines = [re.sub(r" in \d+\.\d\ds$", " in Ns", line) for line in stdout.splitlines()
             if not line.startswith("report: ")]
    end = next((n for n, line in enumerate(lines) if line.startswith("=" * 30)), len(lines))
    blocks: list[str] = []
    for line in lines[:end]:
        if line.startswith("    ") and blocks:
            blocks[-1] += "\n" + line
        else:
            blocks.append(line)
    return sorted(blocks, key=lambda block: block.split()[1] if block.strip() else ""), lines[end:]


@pytest.mark.process
def test_the_pool_prints_what_one_process_prints_with_v_and_a_baseline_gate(tmp_path):
    """-v (each case's goal lines: the whole result, read back from its line), the case lines, the failure
    section, the summary and the --baseline gate's verdict: the same from the pool as from one process."""
    generate(tmp_path, 300)
    first = run_cli("suites", "-q", "-j", "1", "--output-dir", "first", cwd=tmp_path)
    assert first.returncode == 3, first.stdout + first.stderr
    baseline = json.loads((tmp_path / "first" / "report.json").read_text())
    for case in baseline["cases"]:  # the baseline passed some cases that fail now, and failed some that pass
        if case["status"] == "failed" and case["id"] < "case-00100":
            case.update(status="passed", failures=[])
        elif case["status"] == "passed" and case["id"] > "case-00280":
            case.update(status="failed", failures=["it failed then"])
    (tmp_path / "baseline.json").write_text(json.dumps(baseline))
    runs = {}
    for name, how in (("single", ["-j", "1"]), ("pooled", ["--executor", "processes", "-j", "2"])):
        result = _cli("suites", "-v", "--baseline", "baseline.json", *how, "--output-dir", name, cwd=tmp_path)
        runs[name] = result
        assert result.returncode == 3, result.stdout[-2000:] + result.stderr  # the set has errors
    (single, single_end), (pooled, pooled_end) = _console(runs["single"].stdout), _console(runs["pooled"].stdout)
    assert pooled == single and pooled_end == single_end
    scored = [block for block in pooled if block.startswith(("PASS", "FAIL"))]
    assert len(scored) > 200 and all(block.count("\n    ") == 2 for block in scored)  # -v: each case's two goals
    assert any("FAIL case-" in line for line in pooled_end) and "no regression" not in "".join(pooled_end)
    summaries = [json.loads((tmp_path / name / "report.json").read_text())["summary"] for name in runs]
    for summary in summaries:
        summary.pop("duration_s")
    assert summaries[0] == summaries[1]
    assert summaries[0]["baseline"]["newly_failing"] and summaries[0]["baseline"]["newly_passing"]
    assert verdicts(tmp_path / "single" / "report.json") == verdicts(tmp_path / "pooled" / "report.json")


@pytest.mark.process
@pytest.mark.parametrize("failing", [0, 150])  # the first case is scored before the fork, the others in workers
def test_exitfirst_in_the_pool_stops_on_the_failing_case_as_one_process_does(tmp_path, failing):
    """-x stops a pool run with its report written, as in one process (it ended in asyncio's CancelledError,
    a traceback and no report: the stop cancelled the pool's own task as it returned)."""
    write(tmp_path / "evalrun.yaml", "embeddings: {enabled: false}\n")
    (tmp_path / "suites" / "t").mkdir(parents=True)
    for n in range(300):
        case = {"id": f"case-{n:04d}", "transcript": f"t/{n}.json", "goals": {"cancel": []},
                "goal_details": [{"type": "tool_call", "name": "cancel", "tool_name": "cancel_booking",
                                  "args": {"booking": "B1"}}]}
        (tmp_path / "suites" / f"case-{n:04d}.json").write_text(json.dumps(case))
        booking = "B2" if n == failing else "B1"  # the one case that fails
        (tmp_path / "suites" / "t" / f"{n}.json").write_text(
            json.dumps(_tool_messages("cancel_booking", {"booking": booking}, "ok")))
    runs = {name: _cli("suites", "-q", "-x", *how, "--output-dir", name, cwd=tmp_path)
            for name, how in (("single", ["-j", "1"]), ("pooled", ["--executor", "processes", "-j", "2"]))}
    for name, result in runs.items():
        assert result.returncode == 1, result.stdout + result.stderr
        summary = json.loads((tmp_path / name / "report.json").read_text())["summary"]
        assert summary["stop_reason"] == f"-x/--exitfirst: 'case-{failing:04d}' failed"
        assert summary["failed"] == 1 and f"case-{failing:04d}" not in summary["not_run"]
        assert f"FAIL  case-{failing:04d}" in result.stdout and "Traceback" not in result.stderr
    # one process stops right there (the pool may have saved more of what its workers finished first)
    assert len(json.loads((tmp_path / "single" / "report.json").read_text())["summary"]["not_run"]) == 299 - failing
