"""`evalrun view` over run folders made elsewhere (a CI artifact, an older evalrun) that hold a value which is a
secret of the machine viewing them: neither the server's answers nor the export's files carry it; they carry
the mask. The folder is hostile input, and what view sends or writes passes through the one redactor."""
from __future__ import annotations

import gzip
import json
import urllib.parse

import pytest

from tests.helpers.cli_helpers import run_cli, write
from tests.helpers.view_runs import ViewServer

SECRET = "sk-viewer-0123456789abcdef"  # this machine's key; the run that wrote the folder never had it
FORMS = (SECRET, json.dumps(SECRET)[1:-1], urllib.parse.quote(SECRET))


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Two runs of a case whose agent says the key, written where the key was not a secret (so kept as said)."""
    project = tmp_path_factory.mktemp("artifact")
    write(project / "evalrun.yaml", """
        embeddings: {enabled: false}
        agents:
          leaky: {type: python, entrypoint: "leaky:respond"}
        """)
    write(project / "leaky.py", f"""
        def respond(messages, context):
            return "the key is {SECRET}"
        """)
    write(project / "suites" / "s.yaml", f"""
        id: leak-{SECRET}
        agent: leaky
        starting_sentence: what is the key?
        goal_details: [{{type: text, name: answer, keywords: ["{SECRET}"]}}]
        """)
    reports = project / "reports"
    for name in ("first", "second"):
        done = run_cli("suites", "--output-dir", str(reports / name), cwd=project)
        assert done.returncode == 0, done.stdout + done.stderr
    assert SECRET in (reports / "first" / "report.json").read_text()  # the folder holds it: the test means something
    return reports


def test_the_export_masks_the_viewers_secrets_wherever_the_runs_hold_them(runs, tmp_path):
    plain = run_cli("view", str(runs), "--export", str(tmp_path / "plain"), cwd=tmp_path)
    assert plain.returncode == 0, plain.stderr
    assert any(SECRET in p.read_text() for p in (tmp_path / "plain").rglob("*.js"))  # not a secret there: shown

    done = run_cli("view", str(runs), "--export", str(tmp_path / "out"), cwd=tmp_path, env={"OPENAI_API_KEY": SECRET})
    assert done.returncode == 0, done.stderr
    files = {p.relative_to(tmp_path / "out"): p.read_text() for p in (tmp_path / "out").rglob("*") if p.is_file()}
    assert {str(path): form for path, text in files.items() for form in FORMS if form in text} == {}
    assert any("the key is ***" in text for text in files.values())


@pytest.mark.process  # the server is a process of its own, started with the key in its environment
def test_the_server_masks_the_viewers_secrets_in_every_answer(runs):
    server = ViewServer(runs, env={"OPENAI_API_KEY": SECRET})
    try:
        listing = server.get("api/runs")[2]
        ids = [run["id"] for run in json.loads(listing)["runs"]]
        bodies = {"api/runs": listing}
        for run_id in ids:
            run = server.json(f"api/run?id={urllib.parse.quote(run_id)}")
            bodies[f"api/run {run_id}"] = json.dumps(run)
            for k in range(run["chunks"]):
                status, headers, body = server.get(f"api/chunk?id={urllib.parse.quote(run_id)}&k={k}",
                                                   headers={"Accept-Encoding": "gzip"})
                assert (status, headers["Content-Encoding"]) == (200, "gzip")
                bodies[f"api/chunk {run_id} {k}"] = gzip.decompress(body)
            key = run["rows"][0]["key"]
        bodies["api/case"] = server.get(f"api/case?key={urllib.parse.quote(key)}")[2]
        bodies["api/compare"] = server.get(f"api/compare?a={ids[1]}&b={ids[0]}")[2]
        bodies["a 404 naming the case"] = server.get(f"api/case?key={urllib.parse.quote('x' + SECRET)}")[2]
    finally:
        server.stop()
    texts = {where: body.decode("utf-8") if isinstance(body, bytes) else body for where, body in bodies.items()}
    assert {where: form for where, text in texts.items() for form in FORMS if form in text} == {}
    assert any("the key is ***" in text for text in texts.values())
    assert "***" in texts["a 404 naming the case"], texts["a 404 naming the case"]
