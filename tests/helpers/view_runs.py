"""A project with several runs for the `evalrun view` tests, made as a user makes them: two live runs of the
bundled bank agent with a change between them (the second regresses), a replayed run whose agent wrote hostile
HTML, a matrix run (its report.json as the --matrix contract shapes it, /work/notes/s2/CONTRACT_MATRIX.md), a
corrupt report.json, a run still writing (its folder locked, no report.json yet), and links that point out of
the runs folder. Also `ViewServer`: `evalrun view` in a real subprocess."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
import threading
import urllib.request
from pathlib import Path

from tests.helpers.cli_helpers import REPO, cli_env, run_cli, stop_process, tool_call_messages, write, write_json

# Agent text that would run script if it ever became markup: it sets the page's title.
PWN = "</script><img src=x onerror=\"document.title='pwned'\"><script>document.title='pwned'</script>"
HOSTILE_ID = "odd <b>id</b> / ../.. ?x=1 #y"

OLD, NEW, HOSTILE_RUN, MATRIX, BROKEN, GOING = "r1-old", "r2-new", "r3-hostile", "r4-matrix", "r5-broken", "r6-going"


def make_project(root: Path) -> Path:
    """The project folder; its runs are in root/project/.evalrun/reports/."""
    project = root / "project"
    shutil.copytree(REPO / "suites" / "bank", project / "bank")
    write(project / "evalrun.yaml", """
        embeddings: {enabled: false}
        agents:
          bank_agent: {type: python, entrypoint: bank.bank_agent:respond}
        """)
    reports = project / ".evalrun" / "reports"
    _run_into(project, ["bank"], reports / OLD)
    agent = project / "bank" / "bank_agent.py"
    agent.write_text(agent.read_text().replace('"amount": float(amount)}', '"amount": float(amount) + 1}'))
    _run_into(project, ["bank"], reports / NEW)
    _hostile_run(root / "hostile", reports / HOSTILE_RUN)
    _matrix_run(reports / NEW, reports / MATRIX)
    write(reports / BROKEN / "report.json", '{"version": "2", "summary": {"total": ')
    going = reports / GOING
    going.mkdir()
    saved = (reports / OLD / "results.jsonl").read_bytes().splitlines(keepends=True)
    lines = {json.loads(line)["id"]: line for line in saved}
    # two finished cases (chosen by id: a run writes its lines in the order its cases end), a third half written
    (going / "results.jsonl").write_bytes(lines["bank-one-transfer"] + lines["bank-two-turns"]
                                          + lines["bank-insufficient-funds"][:40])
    outside = root / "outside"
    shutil.copytree(reports / OLD, outside / "secret-run")
    (reports / "escape").symlink_to(outside / "secret-run", target_is_directory=True)
    (reports / "linked-file").mkdir()
    (reports / "linked-file" / "report.json").symlink_to(outside / "secret-run" / "report.json")
    return project


def hold_lock(run_folder: Path):
    """Hold a run folder's lock as a live run does (until the returned descriptor is closed)."""
    from runner.results.run_lock import try_lock

    return try_lock(run_folder)


def _run_into(project: Path, args: list[str], folder: Path) -> None:
    done = run_cli(*args, "--output-dir", str(folder), cwd=project)
    assert done.returncode in (0, 1), done.stderr
    assert (folder / "report.json").is_file(), done.stderr


def _hostile_run(where: Path, folder: Path) -> None:
    write(where / "evalrun.yaml", "embeddings: {enabled: false}\n")
    write(where / "suites" / "s.yaml", f"""
        cases:
          - id: {json.dumps(HOSTILE_ID)}
            description: {json.dumps(PWN)}
            goal_details:
              - {{type: tool_call, name: get_id, tool_name: get_assignment_id, args: {{username: nwaters}}}}
            transcript: t/x.json
        """)
    write_json(where / "suites" / "t" / "x.json",
               [{"role": "user", "content": PWN}, *tool_call_messages("get_assignment_id", {"username": PWN}),
                {"role": "assistant", "content": PWN}])
    done = run_cli("suites", "--output-dir", str(folder), cwd=where)
    assert done.returncode == 1, done.stderr


def _matrix_run(source: Path, folder: Path) -> None:
    """The NEW run's cases played as two variants: agent=bank_v1 keeps them as they are, agent=bank_v2 passes all."""
    report = json.loads((source / "report.json").read_text())
    cases = []
    for variant in ("agent=bank_v1", "agent=bank_v2"):
        for case in report["cases"]:
            copy = json.loads(json.dumps(case))
            copy["variant"] = variant
            if variant == "agent=bank_v2":
                copy.update(status="passed", failures=[])
            cases.append(copy)
    v1 = report["summary"]
    disagree = [c["id"] for c in report["cases"] if c["status"] != "passed"]

    def variant(name: str, passed: int, failed: int) -> dict:
        return {"id": f"agent={name}", "assignments": {"agent": name},
                "counts": {"passed": passed, "failed": failed, "error": 0, "unscored": 0, "skipped": 0},
                "total": passed + failed, "pass_rate": passed / (passed + failed), "pass_rate_interval": [0.1, 0.9],
                "cost_usd": 0.0123 if name == "bank_v1" else None, "tokens": None,
                "verdict": {"exit_code": 1 if failed else 0, "reason": "x"}}
    head = {k: v for k, v in report.items() if k != "cases"}
    head["started_at"] = "2999-01-01T00:00:00+00:00"  # the newest run
    head["matrix"] = {"axes": {"agent": ["bank_v1", "bank_v2"]},
                      "variants": [variant("bank_v1", v1["passed"], v1["failed"]),
                                   variant("bank_v2", len(report["cases"]), 0)],
                      "disagreements": disagree}
    head["summary"] = {**v1, "total": len(cases), "passed": v1["passed"] + len(report["cases"])}
    folder.mkdir(parents=True)
    text = json.dumps(head, separators=(",", ":"))[:-1] + ',"cases":[' + \
        ",".join(json.dumps(c, separators=(",", ":")) for c in cases) + "]}\n"
    (folder / "report.json").write_text(text)


class ViewServer:
    """`evalrun view FOLDER --port 0` in a real process; `url` once it listens."""

    def __init__(self, folder: Path, *extra: str, env: dict[str, str] | None = None):
        self.process = subprocess.Popen([sys.executable, "-m", "runner", "view", str(folder), "--port", "0",
                                         "--no-open", *extra], cwd=folder, env=cli_env(**(env or {})), stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True)
        self.url: str | None = None
        self.stderr = ""
        line: list[str] = []
        reader = threading.Thread(target=lambda: line.append(self.process.stdout.readline()), daemon=True)
        reader.start()
        reader.join(60)
        if not line or "http://" not in line[0]:
            self.stop()
            raise AssertionError(f"evalrun view did not start: {line} {self.process.stderr.read()}")
        self.url = line[0].split(" at ", 1)[1].split(" ", 1)[0]
        self._errors: list[str] = []  # stderr read as it comes: a full pipe would stop the server
        self._drain = threading.Thread(target=lambda: self._errors.extend(self.process.stderr), daemon=True)
        self._drain.start()

    def get(self, path: str, headers: dict | None = None, method: str = "GET") -> tuple[int, dict, bytes]:
        request = urllib.request.Request(self.url + path, headers=headers or {}, method=method)
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return response.status, dict(response.headers), response.read()
        except urllib.error.HTTPError as exc:
            return exc.code, dict(exc.headers), exc.read()

    def json(self, path: str):
        status, _, body = self.get(path)
        assert status == 200, (status, body[:500])
        return json.loads(body)

    def stop(self) -> None:
        stop_process(self.process)
        drain = getattr(self, "_drain", None)
        if drain is not None:
            drain.join(10)
            self.stderr = "".join(self._errors)
        elif self.process.stderr:
            self.stderr = self.process.stderr.read()
        for stream in (self.process.stdout, self.process.stderr):
            if stream:
                stream.close()
