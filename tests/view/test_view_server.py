"""`evalrun view` as a user starts it: a real server process over a project with several runs, asked over real
HTTP. Run ids and case keys are hostile input (no traversal, no symlink escape); a corrupt report is listed as
unreadable while the others are served; bad input ends with a precise message and exit 4."""
from __future__ import annotations

import gzip
import json
import os
import re
import socket
import urllib.parse

import pytest

from tests.helpers.cli_helpers import run_cli
from tests.helpers.view_runs import (
    BROKEN,
    GOING,
    HOSTILE_ID,
    HOSTILE_RUN,
    MATRIX,
    NEW,
    OLD,
    PWN,
    ViewServer,
    hold_lock,
    make_project,
)


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    return make_project(tmp_path_factory.mktemp("view"))


@pytest.fixture(scope="module")
def server(project):
    lock = hold_lock(project / ".evalrun" / "reports" / GOING)  # a run still writing
    running = ViewServer(project)
    try:
        yield running
    finally:
        running.stop()
        os.close(lock)


def q(value: str) -> str:
    return urllib.parse.quote(value, safe="")


def test_runs_list_newest_first_with_states(server):
    runs = server.json("api/runs")["runs"]
    ids = [r["id"] for r in runs]
    # newest first by start time; the links out of the folder (`escape`, a linked report.json) are not runs
    assert ids[:5] == [MATRIX, GOING, HOSTILE_RUN, NEW, OLD] and ids[5:] == [BROKEN]
    by_id = {r["id"]: r for r in runs}
    new = by_id[NEW]
    assert (new["state"], new["summary"]["passed"], new["summary"]["failed"], new["agents"]) == \
        ("finished", 1, 2, ["bank_agent"])
    assert new["pass_rate"] == pytest.approx(1 / 3) and len(new["pass_rate_interval"]) == 2
    assert by_id[MATRIX]["matrix"] == {"axes": {"agent": ["bank_v1", "bank_v2"]}, "variants": 2}
    assert by_id[MATRIX]["agents"] == ["agent=bank_v1", "agent=bank_v2"]
    going = by_id[GOING]
    assert (going["state"], going["done"], going["summary"]) == ("running", 2, {"passed": 2, "total": 2})
    broken = by_id[BROKEN]
    assert broken["state"] == "unreadable"
    assert re.fullmatch(r".*/r5-broken/report\.json is not a report evalrun wrote: Expecting value: line 1 column 39 "
                        r"\(char 38\)", broken["problem"]), broken["problem"]


def test_a_run_its_index_and_its_chunks(server):
    run = server.json(f"api/run?id={q(NEW)}")
    assert [(r["key"], r["status"]) for r in run["rows"]] == [
        ("bank-one-transfer", "failed"), ("bank-two-turns", "failed"), ("bank-insufficient-funds", "passed")]
    assert run["header"]["summary"]["failed"] == 2 and "cases" not in run["header"] and run["matrix"] is None
    status, headers, body = server.get(f"api/chunk?id={q(NEW)}&k=0", headers={"Accept-Encoding": "gzip"})
    assert (status, headers["Content-Encoding"]) == (200, "gzip")
    cases = json.loads(gzip.decompress(body))
    assert [c["id"] for c in cases] == [r["key"] for r in run["rows"]]
    assert cases[0]["checks"][0]["status"] == "failed" and cases[2]["checks"][0]["status"] == "passed"


def test_a_run_still_writing_shows_its_finished_cases(server):
    run = server.json(f"api/run?id={q(GOING)}")
    assert (run["finished"], [r["status"] for r in run["rows"]]) == (False, ["passed", "passed"])


def test_a_corrupt_report_is_a_reason_and_the_others_are_served(server):
    status, _, body = server.get(f"api/run?id={q(BROKEN)}")
    assert status == 422 and "is not a report evalrun wrote" in json.loads(body)["error"]
    assert server.json(f"api/run?id={q(OLD)}")["rows"]


def test_matrix_grid(server):
    grid = server.json(f"api/run?id={q(MATRIX)}")["matrix"]
    assert grid["columns"] == ["agent=bank_v1", "agent=bank_v2"]
    assert [(g["case"], g["cells"], g["disagree"]) for g in grid["grid"]] == [
        ("bank-one-transfer", {"agent=bank_v1": "failed", "agent=bank_v2": "passed"}, True),
        ("bank-two-turns", {"agent=bank_v1": "failed", "agent=bank_v2": "passed"}, True),
        ("bank-insufficient-funds", {"agent=bank_v1": "passed", "agent=bank_v2": "passed"}, False)]


def test_compare_and_case_history(server):
    compared = server.json(f"api/compare?a={q(OLD)}&b={q(NEW)}")
    assert [f["case"] for f in compared["newly_failing"]] == ["bank-one-transfer", "bank-two-turns"]
    assert compared["newly_failing"][0]["divergence"]["arguments"] == ["amount"]
    assert compared["gate"]["regressions"][0] == ("2 case(s) that passed in the baseline now fail "
                                                  "(bank-one-transfer, bank-two-turns)")
    history = server.json(f"api/case?key={q('bank-one-transfer')}")
    # newest first, the matrix run's variants included; the run still going has it
    assert [(e["run"], e["status"]) for e in history["runs"]] == [
        (MATRIX, "failed"), (MATRIX, "passed"), (GOING, "passed"), (NEW, "failed"), (OLD, "passed")]
    assert history["flaky"] is True  # passed, failed, passed again
    history = server.json(f"api/case?key={q('bank-two-turns [agent=bank_v2]')}")
    assert ([(e["run"], e["status"]) for e in history["runs"]], history["flaky"]) == ([(MATRIX, "passed")], False)
    # a plain id: every variant of a matrix run too; variants that disagree are not flakiness
    history = server.json(f"api/case?key={q('bank-two-turns')}")
    assert [(e["run"], e["variant"], e["status"]) for e in history["runs"]] == [
        (MATRIX, "agent=bank_v1", "failed"), (MATRIX, "agent=bank_v2", "passed"), (GOING, None, "passed"),
        (NEW, None, "failed"), (OLD, None, "passed")]


@pytest.mark.parametrize("run_id", ["../r1-old", "..", "/etc", "escape", "linked-file", "r1-old/../r2-new", "latest",
                                    "", "r1-old\x00", "%2e%2e"])
def test_run_ids_are_keys_never_paths(server, run_id):
    for path in (f"api/run?id={q(run_id)}", f"api/chunk?id={q(run_id)}&k=0", f"api/compare?a={q(run_id)}&b={q(OLD)}"):
        status, _, body = server.get(path)
        assert status == 404, (path, status, body[:200])
        assert json.loads(body)["error"].startswith("no run ")


def test_the_secret_run_behind_a_link_is_never_read(server):
    history = server.json(f"api/case?key={q('bank-one-transfer')}")
    assert {e["run"] for e in history["runs"]} == {OLD, NEW, GOING, MATRIX}  # not `escape`, not `linked-file`
    status, _, _ = server.get(f"api/chunk?id={q(NEW)}&k=7")
    assert status == 404
    status, _, _ = server.get(f"api/chunk?id={q(NEW)}&k=-1")
    assert status == 404


def test_read_only_local_and_locked_down(server):
    status, _, body = server.get("api/runs", method="POST")
    assert (status, json.loads(body)["error"]) == (405, "evalrun view is read-only: GET only")
    status, _, body = server.get("api/runs", headers={"Host": "attacker.example:80"})
    assert status == 421  # a page on another site cannot reach the server by rebinding its name here
    status, headers, body = server.get("")
    assert status == 200 and b'<script src="static/app.js"></script>' in body
    assert "script-src 'self'" in headers["Content-Security-Policy"]
    assert headers["X-Content-Type-Options"] == "nosniff"
    for name in ("static/page.js", "static/case.js", "static/app.js", "static/app.css"):
        assert server.get(name)[0] == 200
    assert server.get("static/..%2F..%2Fserver.py")[0] == 404
    assert server.get("static/server.py")[0] == 404


def test_hostile_text_travels_as_json_data(server):
    run = server.json(f"api/run?id={q(HOSTILE_RUN)}")
    assert run["rows"][0]["key"] == HOSTILE_ID and run["rows"][0]["description"] == PWN
    _status, headers, _ = server.get(f"api/run?id={q(HOSTILE_RUN)}")
    assert headers["Content-Type"].startswith("application/json")


def test_no_runs_is_a_usage_error(tmp_path, evalrun):
    (tmp_path / "empty").mkdir()
    code, out, err = evalrun(tmp_path, "view", "empty")
    assert code == 4 and out == ""
    assert err == (f"evalrun view: no runs in {(tmp_path / 'empty').resolve()}: a run folder holds report.json or "
                   "results.jsonl; run `evalrun run SUITES` first, or give the folder your runs were written to "
                   "(--output-dir)\n")
    code, _, err = evalrun(tmp_path, "view", "nowhere")
    assert code == 4 and err == ("evalrun view: nowhere is not a folder: give a project (with .evalrun/reports/) or "
                                 "a folder of run folders\n")


def test_port_in_use(project):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        done = run_cli("view", str(project), "--port", str(port), "--no-open", cwd=project)
    assert done.returncode == 4
    assert done.stderr == (f"evalrun view: port {port} on 127.0.0.1 is already in use (another evalrun view, or "
                           "another program): give another with --port N, or --port 0 for any free port\n")


@pytest.mark.process  # the server runs beside the test and SIGTERM stops it
def test_another_host_is_served_with_a_warning(project):
    running = ViewServer(project, "--host", "0.0.0.0")
    try:
        assert running.url.startswith("http://0.0.0.0:")
        port = running.url.rsplit(":", 1)[1].strip("/")
        running.url = f"http://127.0.0.1:{port}/"
        assert running.json("api/runs")["runs"]
        # asked to listen on the network, it answers whatever name the network reaches it by
        assert running.get("api/runs", headers={"Host": f"192.0.2.7:{port}"})[0] == 200
    finally:
        running.stop()
    assert running.process.returncode == 0  # SIGTERM stops it as Ctrl-C does: a clean exit
    assert running.stderr.startswith("evalrun view: warning: listening on 0.0.0.0: anyone who can reach this address "
                                     "can read every conversation of these runs\n")


def test_bad_port(tmp_path, evalrun):
    code, _, err = evalrun(tmp_path, "view", "--port", "70000")
    assert code == 4 and "argument --port: expected a port number 0-65535, got 70000" in err


def test_one_run_folder_is_served_as_its_only_run(project):
    from runner.view.api import ViewApi

    api = ViewApi(project / ".evalrun" / "reports" / NEW)
    assert [r["id"] for r in api.runs_list()["runs"]] == [NEW]
    assert len(api.run(NEW)["rows"]) == 3


def test_the_list_reads_heads_only_and_follows_changes(project, tmp_path):
    """A run's row comes from its report's head: a report whose cases are cut off is listed from its head (and says
    what is wrong only when opened); a report rewritten is read again (the cache is keyed by mtime and size)."""
    from runner.view.api import Unreadable, ViewApi

    runs = tmp_path / "runs"
    (runs / "cut").mkdir(parents=True)
    text = (project / ".evalrun" / "reports" / NEW / "report.json").read_text()
    (runs / "cut" / "report.json").write_text(text[:text.index('"cases"') + 2000])
    api = ViewApi(runs)
    row = api.runs_list()["runs"][0]
    assert (row["state"], row["summary"]["failed"]) == ("finished", 2)
    with pytest.raises(Unreadable, match=r"cut/report\.json is not a report evalrun wrote: "):
        api.run("cut")
    (runs / "cut" / "report.json").write_text(text.replace('"failed": 2', '"failed": 2 ', 1))
    assert api.runs_list()["runs"][0]["state"] == "finished" and len(api.run("cut")["rows"]) == 3
    (runs / "cut" / "report.json").write_text("[]")
    row = api.runs_list()["runs"][0]
    assert (row["state"], row["problem"]) == (
        "unreadable", f"{runs / 'cut' / 'report.json'} is not a valid evalrun report: the file holds a list, not a "
                      "report object")


def test_export_writes_inert_data_files_named_by_number(project, tmp_path, evalrun):
    out = tmp_path / "site"
    (out / "data").mkdir(parents=True)
    (out / "data" / "run-99.js").write_text("stale")  # an earlier export's file
    code, stdout, err = evalrun(tmp_path, "view", str(project), "--export", str(out))
    assert (code, err) == (0, "") and stdout == f"wrote the app over 5 run(s) to {out}: open {out / 'index.html'}\n"
    names = sorted(p.name for p in (out / "data").iterdir())
    assert "run-99.js" not in names
    assert {"runs.js", "cases.js", "run-0.js", "run-0-chunk-0.js", "compare-0.js"} <= set(names)
    assert all(re.fullmatch(r"(runs|cases|run-\d+(-chunk-\d+)?|compare-\d+)\.js", n) for n in names)
    for path in (out / "data").iterdir():
        data = path.read_bytes()
        assert data.isascii() and b"<" not in data and b">" not in data and b"&" not in data, path
    hostile = (out / "data" / "cases.js").read_text()
    assert "odd \\u003cb\\u003eid\\u003c/b\\u003e" in hostile  # the hostile id travels, escaped
    assert sorted(p.name for p in (out / "static").iterdir()) == ["app.css", "app.js", "case.js", "page.js"]
    assert '<meta name="evalrun-export" content="1">' in (out / "index.html").read_text()


def test_a_merged_shard_report_is_a_run(project, tmp_path):
    """`evalrun merge` writes report.json alone (no results.jsonl): listed with its shards, opened, and searched for
    a case's history through the run's data."""
    from runner.view.api import ViewApi
    from tests.helpers.cli_helpers import run_cli

    runs = tmp_path / "runs"
    for part in ("1/2", "2/2"):
        done = run_cli("bank", "--shard", part, "--output-dir", str(tmp_path / f"shard{part[0]}"), cwd=project)
        assert done.returncode in (0, 1), done.stderr
    done = run_cli("merge", str(tmp_path / "shard1"), str(tmp_path / "shard2"), "-o", str(runs / "merged"), cwd=project)
    assert done.returncode == 1, done.stderr
    assert not (runs / "merged" / "results.jsonl").exists()
    api = ViewApi(runs)
    row = api.runs_list()["runs"][0]
    assert (row["id"], row["state"], len(row["merged_from"]), row["summary"]["total"]) == ("merged", "finished", 2, 3)
    assert sorted(r["key"] for r in api.run("merged")["rows"]) == \
        ["bank-insufficient-funds", "bank-one-transfer", "bank-two-turns"]
    assert [(e["run"], e["status"]) for e in api.case("bank-one-transfer")["runs"]] == [("merged", "failed")]
