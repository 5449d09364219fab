"""Run folders made elsewhere (a CI artifact, an older evalrun) that hold a value which is a secret of the machine
reading them: no command that reads a saved run writes or prints it, they write the mask. `evalrun report` (every
format; the HTML page both ways it is made: cut into parts and streamed), `merge`, `compare`, and `view` (the
export's files and every answer of the server). The folder is hostile input: a saved report is masked as it is
read (runner/report/saved.py, saved_stream.py, html_split.py), and view masks what it sends and writes."""
from __future__ import annotations

import gzip
import json
import urllib.parse

import pytest

from tests.helpers.cli_helpers import run_cli, write
from tests.helpers.html_page import page_data
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
    write(project / "suites" / "s.yaml", "cases:\n" + "".join(f"""
          - id: leak-{n}-{SECRET}
            agent: leaky
            starting_sentence: what is the key?
            goal_details: [{{type: text, name: answer, keywords: ["{SECRET}"]}}]
        """ for n in range(4)))
    reports = project / "reports"
    for name, shard in (("first", ()), ("second", ()), ("shard1", ("--shard", "1/2")), ("shard2", ("--shard", "2/2"))):
        done = run_cli("suites", "--output-dir", str(reports / name), *shard, cwd=project)
        assert done.returncode == 0, done.stdout + done.stderr
    assert SECRET in (reports / "first" / "report.json").read_text()  # the folder holds it: the test means something
    return reports


def leaked(texts: dict[str, str]) -> dict[str, str]:
    return {where: form for where, text in texts.items() for form in FORMS if form in text}


@pytest.mark.parametrize("fmt", ["html", "md", "junit", "json"])
def test_every_report_format_of_a_saved_run_masks_the_readers_secrets(runs, tmp_path, fmt):
    done = run_cli("report", str(runs / "first"), "--format", fmt, "-o", str(tmp_path / "out"), cwd=tmp_path,
                   env={"OPENAI_API_KEY": SECRET})
    assert done.returncode == 0, done.stderr
    text = (tmp_path / "out").read_text()
    shown = {"html": lambda: json.dumps(page_data(text))}.get(fmt, lambda: text)()  # the page's data, inflated
    assert leaked({f"--format {fmt}": shown, "stdout": done.stdout, "stderr": done.stderr}) == {}
    assert fmt == "md" or "***" in shown  # the summary in Markdown holds no case ids nor text


def test_the_html_page_of_a_saved_run_is_masked_however_it_is_made(runs, tmp_path, monkeypatch):
    """The page is made from report.json cut into parts (html_split) or, when that cannot be proved right, read
    one case at a time (saved_stream): both mask."""
    from runner.report import html_split
    from runner.report.render import render
    from runner.util.secrets import remember

    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    remember()
    split = render("html", runs / "first", tmp_path / "split.html")
    monkeypatch.setattr(html_split, "encode", lambda path: None)  # as for a report html_split cannot prove
    streamed = render("html", runs / "first", tmp_path / "streamed.html")
    for page in (split, streamed):
        data = json.dumps(page_data(page.read_text()))
        assert leaked({page.name: data}) == {} and "the key is ***" in data


def test_merge_and_compare_of_saved_runs_mask_the_readers_secrets(runs, tmp_path):
    merged = run_cli("merge", str(runs / "shard1"), str(runs / "shard2"), "-o", str(tmp_path / "merged"), cwd=tmp_path,
                     env={"OPENAI_API_KEY": SECRET})
    compared = run_cli("compare", str(runs / "first"), str(runs / "second"), "-v", cwd=tmp_path,
                       env={"OPENAI_API_KEY": SECRET})
    files = {str(p): p.read_text() for p in (tmp_path / "merged").rglob("*") if p.is_file()}
    assert leaked({**files, "merge": merged.stdout + merged.stderr, "compare": compared.stdout + compared.stderr}) == {}
    assert "***" in files[str(tmp_path / "merged" / "report.json")], merged.stderr


def test_the_export_masks_the_viewers_secrets_wherever_the_runs_hold_them(runs, tmp_path):
    plain = run_cli("view", str(runs), "--export", str(tmp_path / "plain"), cwd=tmp_path)
    assert plain.returncode == 0, plain.stderr
    assert any(SECRET in p.read_text() for p in (tmp_path / "plain").rglob("*.js"))  # not a secret there: shown

    done = run_cli("view", str(runs), "--export", str(tmp_path / "out"), cwd=tmp_path, env={"OPENAI_API_KEY": SECRET})
    assert done.returncode == 0, done.stderr
    files = {p.relative_to(tmp_path / "out"): p.read_text() for p in (tmp_path / "out").rglob("*") if p.is_file()}
    assert leaked({str(path): text for path, text in files.items()}) == {}
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
    assert leaked(texts) == {}
    assert any("the key is ***" in text for text in texts.values())
    assert "***" in texts["a 404 naming the case"], texts["a 404 naming the case"]
