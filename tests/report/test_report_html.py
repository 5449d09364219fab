"""The HTML report's data, read from report.json one case at a time (runner/report/saved_stream.py) and
packed gzip+base64 into the page (html_data.py): the page of a streamed report holds exactly the cases
`load_report` reads, a report in any other layout or an invalid one is read whole (and refused with the
same words), NaN and overflowing numbers mean what they mean to `load_report`, and random tampering
never makes the two readings disagree."""
from __future__ import annotations

import copy
import gzip
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from runner.report import html, html_data
from runner.report.render import render
from runner.report.saved import NotAReport, load_report
from runner.report.saved_stream import Unstreamable, stream_report
from tests.helpers.cli_helpers import cli_env
from tests.helpers.html_page import page_data, scripts, unpack
from tests.helpers.report_formats import DESCRIPTION, HOSTILE
from tests.helpers.report_html import _Text
from tests.helpers.report_validation import mutations, tampered


def streamed(folder: Path) -> str:
    """The page write_saved makes from `folder`'s report.json (Unstreamable propagates)."""
    out = _Text()
    html.write_saved(folder, out)
    return out.text


def whole(folder: Path) -> str:
    out = _Text()
    html.write(load_report(folder), out)
    return out.text


def without_data(page: str) -> str:
    return re.sub(r'<script type="application/json" id="evalrun-data">.*?</script>', "", page, flags=re.S)


@pytest.mark.parametrize("folder", ["out", "with-baseline", "shards/shard1"])
def test_the_streamed_page_holds_exactly_what_the_report_read_whole_holds(runs, folder):
    report = load_report(runs / folder)
    page = streamed(runs / folder)
    data = page_data(page)
    assert data["cases"] == report["cases"]
    assert data["index"] == [html_data.index_row(case) for case in report["cases"]]
    baseline = report["summary"].get("baseline") or {}
    assert (data["regressed"], data["fixed"]) == (baseline.get("newly_failing") or [], baseline.get("newly_passing") or [])
    assert without_data(page) == without_data(whole(runs / folder))  # the summary, toolbar and script: the same


def test_the_index_row_carries_what_the_list_shows_and_searches():
    case = {"id": "c1", "run": None, "repeat": 2, "status": "failed", "source": "s.yaml:3:5", "description": "",
            "tags": ["a"], "failures": ["why"], "error": None, "extra_calls": [], "duration_s": 0.0,
            "metrics": {"journey_completion": 0.5}, "transcript": [{"role": "user", "content": "long"}]}
    assert html_data.index_row(case) == {"id": "c1", "repeat": 2, "status": "failed", "source": "s.yaml:3:5",
                                         "tags": ["a"], "failures": ["why"], "duration_s": 0.0, "completion": 0.5}


def test_cases_are_split_into_chunks_and_the_page_says_where_each_starts(runs, monkeypatch):
    monkeypatch.setattr(html_data, "CHUNK_BYTES", 1)  # one case per chunk
    raw = json.loads(next(text for attrs, text in scripts(streamed(runs / "out")) if attrs.get("id") == "evalrun-data"))
    assert (raw["starts"], raw["total"], len(raw["chunks"])) == ([0, 1, 2], 3, 3)
    assert [unpack(chunk)[0]["id"] for chunk in raw["chunks"]] == ["lookup", "wrong-user", "broken"]
    assert gzip.decompress(__import__("base64").b64decode(raw["chunks"][0]))[:8] == b'[{"id":"'  # the file's own bytes


def test_hostile_agent_text_is_only_base64_in_the_page(runs):
    page = streamed(runs / "out")
    assert [attrs.get("type") for attrs, _ in scripts(page)] == ["application/json", None]
    assert "alert(1)" not in page and "<img" not in page and "onerror" not in page
    data = page_data(page)
    assert data["cases"][1]["transcript"][-1]["content"] == HOSTILE and data["index"][1]["description"] == DESCRIPTION


def _rewrite(runs: Path, name: str, text_of) -> Path:
    data = json.loads((runs / "out" / "report.json").read_text(encoding="utf-8"))
    folder = runs / name
    folder.mkdir(exist_ok=True)
    (folder / "report.json").write_text(text_of(data), encoding="utf-8")
    return folder


LAYOUTS = {
    "indented": lambda data: json.dumps(data, indent=2),
    "cases-first": lambda data: json.dumps({"cases": data["cases"], **{k: v for k, v in data.items() if k != "cases"}}),
    "member-after-cases": lambda data: json.dumps({**{k: v for k, v in data.items() if k != "agent"},
                                                   "agent": data["agent"]}),
}


@pytest.mark.parametrize("layout", LAYOUTS)
def test_another_layout_is_read_whole_and_gives_the_same_page(runs, layout):
    folder = _rewrite(runs, f"layout-{layout}", LAYOUTS[layout])
    if layout != "indented":  # indented: every member on its own line, still streamable
        with pytest.raises(Unstreamable):
            streamed(folder)
    page = render("html", folder).read_text(encoding="utf-8")
    assert page_data(page)["cases"] == load_report(runs / "out")["cases"]


def test_an_invalid_case_is_refused_in_the_words_of_load_report_and_nothing_is_written(runs):
    def change(data):
        data["cases"][2]["status"] = "greenish"

    folder = tampered(runs, "html-greenish", change)
    with pytest.raises(Unstreamable):
        streamed(folder)
    with pytest.raises(NotAReport) as refused:
        render("html", folder)
    assert "cases[2].status: Input should be 'passed', 'failed', 'error', 'skipped' or 'unscored'" in str(refused.value)
    assert sorted(p.name for p in folder.iterdir()) == ["report.json"]  # no report.html, no temporary


def test_nan_infinity_and_overflowing_numbers_mean_what_they_mean_to_load_report(runs):
    def change(data):
        transcript = data["cases"][0]["transcript"]
        transcript[0]["content"] = "RAW:NaN"
        transcript[1]["content"] = "RAW:-Infinity"
        transcript[1]["extra"] = "RAW:1e999"

    folder = tampered(runs, "html-constants", change, source="out")
    _, cases = stream_report(folder)
    first = next(cases)
    assert first.data["transcript"][0]["content"] == "NaN" and first.data["transcript"][1]["extra"] == "1e999"
    json.loads(first.text, parse_constant=lambda name: pytest.fail(f"{name} reached the page"))  # what JSON.parse reads
    page = page_data(render("html", folder).read_text(encoding="utf-8"))
    assert page["cases"] == load_report(folder)["cases"]


def test_bytes_that_are_not_utf8_are_refused_as_load_report_refuses_them(runs):
    folder = runs / "html-latin1"
    folder.mkdir(exist_ok=True)
    text = (runs / "out" / "report.json").read_bytes()
    (folder / "report.json").write_bytes(text.replace(b'"lookup"', b'"look\xe9"', 1))
    with pytest.raises(Unstreamable):
        streamed(folder)
    with pytest.raises(NotAReport, match="is not a report evalrun wrote"):
        render("html", folder)


def test_a_report_with_no_cases_is_a_page_with_an_empty_list(runs):
    folder = tampered(runs, "html-empty", lambda d: (d["cases"].clear(), d["summary"].update(
        total=0, passed=0, failed=0, error=0)))
    data = page_data(streamed(folder))
    assert (data["cases"], data["index"], data["starts"]) == ([], [], [])


@pytest.mark.parametrize("source", ["with-baseline", "shards/shard1"])
def test_random_tampering_never_makes_the_streamed_page_and_load_report_disagree(runs, source, tmp_path_factory):
    valid = json.loads((runs / source / "report.json").read_text(encoding="utf-8"))
    work = tmp_path_factory.mktemp("html-mutants")
    counter = iter(range(10 ** 6))

    @settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(mutations(valid))
    def check(data):
        folder = work / str(next(counter))
        folder.mkdir()
        (folder / "report.json").write_text(json.dumps(data), encoding="utf-8")
        try:
            expected = load_report(folder)
        except NotAReport:
            expected = None
        try:
            page = streamed(folder)
        except Unstreamable:
            page = None
        if expected is None:
            assert page is None  # never accepted when load_report refuses
            return
        # json.dumps writes NaN/Infinity: those reports are read whole; every other valid one streams
        assert page is not None or re.search(r"\bNaN\b|Infinity", json.dumps(data)), "a valid report was not streamed"
        shown = page_data(page if page is not None else render("html", folder).read_text(encoding="utf-8"))
        assert shown["cases"] == copy.deepcopy(expected["cases"])

    check()


# ------------------------------------------------------------ the forked checker (a single-threaded process)

FORKED = """
import json, os, sys
from pathlib import Path
from runner.report import case_check, html
from runner.report.render import render
from runner.report.saved import NotAReport
case_check.FORK_FROM_BYTES = 0  # every report is checked in a child here
html.encode = lambda path: None  # by the streaming reader (html_split's own forks: test_report_html_split.py)
forks = []
fork = os.fork
os.fork = lambda: forks.append(1) or fork()
try:
    path = str(render("html", Path(sys.argv[1])))
except NotAReport as exc:
    path = "refused: " + str(exc)
print(json.dumps({"forks": len(forks), "result": path}))
"""


def render_forked(folder: Path) -> dict:
    done = subprocess.run([sys.executable, "-c", FORKED, str(folder)], env=cli_env(), capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    return json.loads(done.stdout)


def test_a_forked_child_checks_the_cases_and_the_page_is_the_same(runs):
    done = render_forked(runs / "with-baseline")
    assert done["forks"] == 1
    assert page_data(Path(done["result"]).read_text(encoding="utf-8"))["cases"] == \
        load_report(runs / "with-baseline")["cases"]


def test_a_case_only_the_forked_child_sees_is_wrong_refuses_the_report_in_load_reports_words(runs):
    folder = tampered(runs, "forked-float-count", lambda d: d["cases"][1]["metrics"]["counts"].update(tool_calls=1.5))
    done = render_forked(folder)
    assert done["forks"] == 1  # the reader found the text plain and left it to the child
    assert done["result"] == (f"refused: {folder}/report.json is not a valid evalrun report: cases[1].metrics.counts."
                              "tool_calls: Input should be a valid integer (got 1.5)")
    assert sorted(p.name for p in folder.iterdir()) == ["report.json"]


def test_text_the_child_parses_otherwise_falls_back_to_reading_whole(runs):
    folder = tampered(runs, "forked-surrogate", lambda d: d["cases"][0].update(description="\ud800 alone"))
    assert "\\ud800" in (folder / "report.json").read_text(encoding="utf-8")
    done = render_forked(folder)
    page = page_data(Path(done["result"]).read_text(encoding="utf-8"))
    assert page["cases"] == load_report(folder)["cases"] and page["index"][0]["description"] == "\ud800 alone"
