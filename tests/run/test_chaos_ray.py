"""The chaos run on `--executor ray`, on a real local Ray cluster (`pytest -m ray` selects these): Ray workers
killed while they score a batch and just after they sent one, and SIGTERM, SIGHUP and SIGINT at each stage of a
run (collecting, starting: Ray imported and the cluster joined, running, finishing). Every case is accounted for,
the report is valid, the exit code is the right one (2 for a signal, never Ray's 15), and stderr holds no
traceback and none of Ray's noise ('Future exception was never retrieved', its stack for a SIGTERM)."""
from __future__ import annotations

import os
import random
import signal
import time
from collections import Counter

import pytest

from runner.util.shard import shard_of
from tests.helpers.chaos_procs import (
    accounted,
    nothing_left_in,
    recorded_project,
    results_count,
    scorers,
    start_run,
    wait_for,
)

pytest.importorskip("ray")
from runner.run.executors.ray_cluster import BATCHES_PER_CPU
from tests.helpers.executor_ray import Cluster, _cmdline

pytestmark = [pytest.mark.ray, pytest.mark.process]

SEED = 26_14
STAGES = ["collecting", "starting", "running", "finishing"]
NOISE = ("Traceback", "never retrieved", "SIGTERM received", "Event loop is closed")


def _signals_by_stage() -> dict[str, signal.Signals]:
    rng = random.Random(SEED)
    chosen = [signal.SIGTERM, signal.SIGHUP, signal.SIGINT, rng.choice([signal.SIGTERM, signal.SIGHUP])]
    rng.shuffle(chosen)
    return dict(zip(STAGES, chosen, strict=True))


SIGNALS = _signals_by_stage()


def _on(cluster: Cluster, root) -> dict:
    return {**cluster.env, "RAY_ADDRESS": cluster.address, "PYTHONPATH": f"{root}{os.pathsep}{cluster.env['PYTHONPATH']}"}


def _quiet(err: str) -> None:
    for noise in NOISE:
        assert noise not in err, err[-3000:]


def test_ray_workers_killed_while_scoring_and_just_after_sending_cost_no_case(cluster, tmp_path):
    """Ray runs a killed worker's batch again: every case is scored and passes, the run exits 0 (this is also
    test_executor_ray's worker killed mid-run, which ran the same run with the first kill only)."""
    # 8 batches (4 per CPU of the cluster's 2), by the executor's --shard rule; 600 cases (75 a batch) leave as
    # many batch ends to catch as 1,200 did, for 3 s less scoring per worker. Each check logs its case and pid.
    ids = recorded_project(tmp_path, 600, sleep_s=0.01, log_scorers=True)
    batch_of = {case_id: shard_of(case_id, 2 * BATCHES_PER_CPU) for case_id in ids}
    size = Counter(batch_of.values())
    run = start_run(tmp_path, "--executor", "ray", env=_on(cluster, tmp_path))
    scoring = lambda: [pid for pid in cluster.workers() if "_score_batch" in _cmdline(pid)]  # noqa: E731

    def midway() -> tuple[int, int] | None:
        """A worker (pid, batch) at least 5 cases into a batch and 5 from its end, once a batch was saved: killed
        now, it surely dies holding that batch (it cannot have sent it)."""
        if results_count(tmp_path) < 20:
            return None
        log = scorers(tmp_path)
        for pid in scoring():
            mine = [case_id for case_id, by in log if by == pid]
            if mine and 5 <= sum(batch_of[c] == batch_of[mine[-1]] for c in mine) <= size[batch_of[mine[-1]]] - 5:
                return pid, batch_of[mine[-1]]
        return None

    try:
        busy, lost = wait_for(midway, 120, "a worker midway through a batch", run)
        os.kill(busy, signal.SIGKILL)  # computing
        # Ray tries the lost batch once more (the executor's last try): wait for the worker that took it, so that
        # the second kill cannot land on it (an idle worker may be handed that retry between a look and a kill)
        retrying = wait_for(lambda: {by for case_id, by in scorers(tmp_path) if batch_of[case_id] == lost} - {busy},
                            120, "the killed worker's batch scored again", run)
        watched = wait_for(lambda: [pid for pid in scoring() if pid not in retrying], 60, "another worker scoring", run)
        done = wait_for(lambda: [pid for pid in watched if _cmdline(pid).startswith("ray::IDLE")], 60,
                        "a worker that just sent its batch", run)
        os.kill(done[0], signal.SIGKILL)  # its results sent, waiting for the next batch
        out, err = run.communicate(timeout=300)
    finally:
        run.kill()
    assert run.returncode == 0, out[-2000:] + err[-2000:]
    _quiet(err)
    report = accounted(tmp_path, ids)
    assert report["summary"]["passed"] == len(ids) == len(report["cases"]), "a case was lost with a worker"
    assert all(case["status"] == "passed" for case in report["cases"])


@pytest.mark.parametrize("stage", STAGES)
def test_a_signal_at_each_stage_of_a_ray_run_ends_it_with_exit_2_and_its_report(cluster, tmp_path, stage):
    """SIGTERM ended a Ray run with Ray's exit 15 and no report: Ray's init takes SIGTERM over."""
    sig = SIGNALS[stage]
    # a check's 0.01 s keeps a run going after its 20th case (running) or its start (starting); the finishing stage
    # waits for every case first: 1.5 s more on two CPUs, which proved nothing more
    ids = recorded_project(tmp_path, 2600 if stage == "collecting" else 300,
                           sleep_s=0 if stage == "finishing" else 0.01)
    run = start_run(tmp_path, "--executor", "ray", env=_on(cluster, tmp_path))
    try:
        if stage == "collecting":  # 5,200 files: seconds of reading after the config line
            assert run.stderr.readline() == "config: evalrun.yaml\n"
            time.sleep(0.3)
            run.send_signal(sig)
        elif stage == "starting":  # the run folder is open once Ray is imported; the cluster is being joined
            wait_for(lambda: (tmp_path / "out" / "results.jsonl").exists(), 120, "the run folder opened", run)
            run.send_signal(sig)
        elif stage == "running":
            wait_for(lambda: results_count(tmp_path) >= 20, 120, "cases scored", run)
            run.send_signal(sig)
        else:
            wait_for(lambda: results_count(tmp_path) == len(ids), 120, "every case saved", run)
            while run.poll() is None and not (tmp_path / "out" / "report.json").exists():
                run.send_signal(sig)
                time.sleep(0.002)
        out, err = run.communicate(timeout=300)
    finally:
        run.kill()
    _quiet(err)
    nothing_left_in(tmp_path)
    if stage == "collecting":
        assert run.returncode == 2, out + err
        assert err.splitlines()[-1] == (f"interrupted ({sig.name}) while collecting the suites, before any case ran: "
                                        "nothing was run and no report was written: exit 2")
        return
    report = accounted(tmp_path, ids)
    summary = report["summary"]
    if stage == "finishing":
        assert summary["exit_code"] in (0, 2) and run.returncode in (summary["exit_code"], 2), out + err
        assert len(report["cases"]) == len(ids)
        return
    assert run.returncode == 2 and summary["exit_code"] == 2, out + err
    assert summary["interrupted"] and summary["stop_reason"] == sig.name
    assert f"interrupted ({sig.name}): {len(report['cases'])} of {len(ids)} cases finished: exit 2" in out
    if stage == "starting":
        assert report["cases"] == []
    else:
        assert 20 <= len(report["cases"]) < len(ids)
