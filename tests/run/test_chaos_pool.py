"""The chaos run on the process pool (`--executor processes`) and the suite readers: worker processes killed at
each stage of their work — while computing, while sending their results (blocked writing them: the run's
process is stopped meanwhile), between batches (waiting for work), a suite reader while it sends what it read —
and SIGTERM, SIGHUP and SIGINT at each stage of a run (collecting, starting, running, finishing). Every case is
accounted for, the report is valid, the exit code is the right one (2 for a signal), no traceback is printed
and no process of the run is left. Everything random is seeded; the stages are found from /proc, not guessed."""
from __future__ import annotations

import os
import random
import signal
import time

import pytest

from tests.helpers.chaos_procs import (
    READS,
    SLEEPS,
    WRITES,
    accounted,
    blocked_in,
    children,
    kill_child_while,
    nothing_left_in,
    recorded_project,
    results_count,
    start_run,
    wait_for,
)

pytestmark = pytest.mark.process  # every test here starts evalrun or pytest in a process of its own

SEED = 26_13


def reading(root, run) -> bool:
    """Whether the run's suite readers are at work: its children before the run folder is opened (the pool's
    workers come after)."""
    return bool(children(run.pid)) and not (root / "out" / "results.jsonl").exists()
STAGES = ["collecting", "starting", "running", "finishing"]


def _signals_by_stage() -> dict[str, signal.Signals]:
    """Each stage gets a signal, every signal at least one stage, the pairing drawn from SEED."""
    rng = random.Random(SEED)
    chosen = [signal.SIGTERM, signal.SIGHUP, signal.SIGINT, rng.choice([signal.SIGTERM, signal.SIGHUP, signal.SIGINT])]
    rng.shuffle(chosen)
    return dict(zip(STAGES, chosen, strict=True))


SIGNALS = _signals_by_stage()


def test_pool_workers_killed_while_computing_between_batches_and_while_sending_cost_no_case(tmp_path):
    """A worker killed in a check (computing); one killed while it waits for its next batch (the run's process
    stopped meanwhile, so it has sent all it had); one killed blocked writing a batch's results (sending: the run
    hung for ever, SIGTERM included). Each batch held is scored again by another worker; every case passes."""
    # the first 300 cases' batches are small; the last 150's results are ~0.5 MB a batch, past any socket buffer
    ids = recorded_project(tmp_path, 450, pad=20_000, padded_from=300, sleep_s=0.01)
    run = start_run(tmp_path, "--executor", "processes", "-j", "2")
    try:
        wait_for(lambda: results_count(tmp_path) >= 1, 120, "a first result", run)
        computing = kill_child_while(run, SLEEPS, parent_stopped=False)
        between = kill_child_while(run, READS, parent_stopped=True)
        wait_for(lambda: results_count(tmp_path) >= 300, 120, "the small batches scored", run)
        sending = kill_child_while(run, WRITES, parent_stopped=True)
        out, err = run.communicate(timeout=120)
    finally:
        run.kill()
    assert len({computing, between, sending}) == 3
    assert run.returncode == 0, out[-2000:] + err[-2000:]
    assert "Traceback" not in err, err[-3000:]
    report = accounted(tmp_path, ids)
    assert report["summary"]["passed"] == 450 and report["summary"]["not_run"] == []
    nothing_left_in(tmp_path)


def test_a_suite_reader_killed_while_sending_what_it_read_costs_no_case(tmp_path):
    """Collection: a suite reader killed while it writes the part it read (the collecting process stopped, so the
    reader blocks): collection hung for ever, SIGTERM included; the part is now read by the run's process."""
    # past the 2,000 cases the run's process reads itself, the files are shared out; a reader's part: ~1 MB
    ids = recorded_project(tmp_path, 2600, tag_pad=300)[2500:]  # every file is read; the last 100 cases run
    run = start_run(tmp_path, "--executor", "processes", "-j", "2", "-k", "case-25")
    try:
        wait_for(lambda: reading(tmp_path, run), 120, "a suite reader", run)
        killed = None
        while killed is None and reading(tmp_path, run):
            # stopped, the run's process no longer takes what the reader sends: it blocks writing it (or, when
            # caught before it got its share, waits for it: the run goes on a moment, and again)
            run.send_signal(signal.SIGSTOP)
            try:
                deadline = time.monotonic() + 3
                while killed is None and time.monotonic() < deadline:
                    killed = next((pid for pid in children(run.pid) if blocked_in(pid) & WRITES), None)
                    time.sleep(0.005)
                if killed is not None:
                    os.kill(killed, signal.SIGKILL)
            finally:
                run.send_signal(signal.SIGCONT)
            time.sleep(0.02)
        assert killed is not None, "no suite reader was seen sending what it read"
        out, err = run.communicate(timeout=120)
    finally:
        run.kill()
    assert run.returncode == 0, out[-2000:] + err[-2000:]
    assert "Traceback" not in err, err[-3000:]
    report = accounted(tmp_path, ids)
    assert report["summary"]["passed"] == 100 and report["summary"]["not_run"] == []
    assert report["cases"][-1]["tags"][-1] == "t2599-19-" + "x" * 300
    nothing_left_in(tmp_path)


@pytest.mark.parametrize("stage", STAGES)
def test_a_signal_at_each_stage_of_a_pool_run_ends_it_with_its_report(tmp_path, stage):
    sig = SIGNALS[stage]
    # the workers sleep in each check where the signal must find them at work ("running"); the other stages wait
    # for a moment the sleeps do not make (a reader, the first case, every case saved): there they cost only time
    ids = recorded_project(tmp_path, 300 if stage != "collecting" else 2600, sleep_s=0.01 if stage == "running" else 0.0,
                           first_case_marker=stage == "starting")
    run = start_run(tmp_path, "--executor", "processes", "-j", "2")
    try:
        if stage == "collecting":  # the suite readers exist only while the suites are collected
            wait_for(lambda: reading(tmp_path, run), 120, "a suite reader", run)
            run.send_signal(sig)
        elif stage == "starting":  # the first case is scored before the workers are forked
            wait_for(lambda: (tmp_path / "first-case").exists(), 120, "the first case scored", run)
            run.send_signal(sig)
        elif stage == "running":
            wait_for(lambda: results_count(tmp_path) >= 20 and
                     any(blocked_in(pid) & SLEEPS for pid in children(run.pid)), 120, "workers scoring", run)
            run.send_signal(sig)
        else:  # finishing: every case saved; the signal again and again until the report is written
            wait_for(lambda: results_count(tmp_path) == len(ids), 120, "every case saved", run)
            while run.poll() is None and not (tmp_path / "out" / "report.json").exists():
                run.send_signal(sig)
                time.sleep(0.002)
        out, err = run.communicate(timeout=120)
    finally:
        run.kill()
    assert "Traceback" not in err, err[-3000:]
    nothing_left_in(tmp_path)
    if stage == "collecting":
        assert run.returncode == 2, out + err
        assert err.splitlines()[-1] == (f"interrupted ({sig.name}) while collecting the suites, before any case ran: "
                                        "nothing was run and no report was written: exit 2")
        assert not (tmp_path / "out").exists()
        return
    report = accounted(tmp_path, ids)
    summary = report["summary"]
    if stage == "finishing":  # ignored while the report is written; after it, a stop like Ctrl-C's (exit 2)
        assert summary["exit_code"] in (0, 2) and run.returncode in (summary["exit_code"], 2), out + err
        assert len(report["cases"]) == len(ids)
        return
    assert run.returncode == 2 and summary["exit_code"] == 2, out + err
    assert summary["interrupted"] and summary["stop_reason"] == sig.name
    assert f"interrupted ({sig.name}): {len(report['cases'])} of {len(ids)} cases finished: exit 2" in out
    if stage == "starting":
        assert [case["id"] for case in report["cases"]] in ([], ["case-0000"])  # no worker scored anything
    else:
        assert 20 <= len(report["cases"]) < len(ids)
