"""`evalrun mutate` on third-party recordings (the shared reference data; skipped where it is absent): the τ²-bench
airline runs, as tests/bench/tau2_agreement.py writes them into suites in the benchmark's own rules."""
from __future__ import annotations

import json
from pathlib import Path

from runner.frontends.cli import main
from tests.helpers.shared_data import require_shared

BENCH = Path(__file__).parents[1] / "bench"


def test_tau2_mutates_exactly_the_simulations_the_benchmark_passes_and_reports_their_kill_rate(tmp_path, monkeypatch):
    data = require_shared("tau2-airline")
    monkeypatch.syspath_prepend(str(BENCH))
    import tau2_agreement

    simulations, _ = tau2_agreement.read_simulations(tau2_agreement.simulation_files([data]))
    tau2_agreement.write_suites(simulations, tmp_path, ["strict"])
    monkeypatch.chdir(tmp_path)  # its evalrun.yaml, which lets the suites read ../transcripts
    out = tmp_path / "mutate"
    assert main(["mutate", str(tmp_path / "suites-strict"), "-o", str(out), "-j", "1", "--cache", "off"]) == 0
    report = json.loads((out / "mutate.json").read_text(encoding="utf-8"))
    mutated = {case["id"] for case in report["cases"] if case["mutated"]}
    assert mutated == {sim.case_id for sim in simulations if sim.benchmark_passed}
    assert report["totals"]["mutated"] == 71
    assert 0 <= report["totals"]["kill_rate"] < 1
    # the benchmark grades the final database: a read call's arguments are compared by nothing it says
    reads = [m for case in report["cases"] for m in case["mutants"]
             if m["status"] == "survived" and m["change"].startswith("get_reservation_details: ")]
    assert reads and all("achieves no goal, so its arguments are never compared" in m["detail"] for m in reads)
