"""The HTML page's cases cut from report.json at evalrun's separators and made on every core
(runner/report/html_split.py): the page is byte for byte the one the streaming reader makes, a report the
split cannot prove right (a separator inside agent text, NaN, another layout, an invalid or repeated case)
is handed to that reader, which refuses exactly what `load_report` refuses, and the forked parts give the
same page and the same refusals."""
from __future__ import annotations

import copy
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings, strategies as st

from runner.report import html, html_data, html_split
from runner.report.render import render
from runner.report.saved import NotAReport, load_report, parse_report_json
from runner.report.saved_stream import Unstreamable
from tests.helpers.cli_helpers import cli_env
from tests.helpers.html_page import page_data
from tests.helpers.report_html import _Text
from tests.helpers.report_validation import mutations


def split_page(folder: Path) -> str | None:
    """The page made from the split cases, None when the split hands the report to saved_stream."""
    done = html_split.encode(folder)
    if done is None:
        return None
    header, encoded = done
    out = _Text()
    html._page(header, lambda out, extra: html_data.write_encoded(encoded.chunks, encoded.starts, encoded.rows,
                                                                  out, extra), out)
    return out.text


def streamed_page(folder: Path, monkeypatch) -> str:
    """The page saved_stream makes, one case at a time (Unstreamable propagates)."""
    with monkeypatch.context() as patched:
        patched.setattr(html, "encode", lambda path: None)
        out = _Text()
        html.write_saved(folder, out)
        return out.text


def _streamed(folder: Path) -> str:
    encode = html.encode
    html.encode = lambda path: None
    try:
        out = _Text()
        html.write_saved(folder, out)
        return out.text
    finally:
        html.encode = encode


def evalrun_layout(data: dict) -> str:
    """report.json as runner.results.folder.write_report writes it: the header, then each case as pydantic
    dumps a results.jsonl line (compact, "id" first), joined by ","."""
    head = {key: value for key, value in data.items() if key != "cases"}
    cases = ",".join(json.dumps(case, ensure_ascii=False, separators=(",", ":")) for case in data["cases"])
    return json.dumps(head, ensure_ascii=False)[:-1] + ', "cases": [' + cases + "]}\n"


def written(root: Path, name: str, data: dict, text: str | None = None) -> Path:
    folder = root / name
    folder.mkdir(exist_ok=True)
    (folder / "report.json").write_text(evalrun_layout(data) if text is None else text, encoding="utf-8")
    return folder


def report_of(runs: Path, source: str = "with-baseline") -> dict:
    return json.loads((runs / source / "report.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("folder", ["out", "with-baseline", "shards/shard1", "shards/shard2"])
def test_a_report_evalrun_wrote_is_split_and_its_page_is_the_streamed_page_byte_for_byte(runs, folder, monkeypatch):
    page = split_page(runs / folder)
    assert page is not None, "evalrun's own layout was not split"
    assert page == streamed_page(runs / folder, monkeypatch)
    assert page_data(page)["cases"] == load_report(runs / folder)["cases"]


def test_red_team_cases_hostile_text_and_one_case_per_chunk_split_as_well(runs, monkeypatch):
    data = report_of(runs)
    data["cases"][0]["redteam"] = {"attack": 'role "play"}}', "category": "jailbreak"}  # braces in its strings
    data["cases"][1]["redteam"] = {"attack": "pii", "category": "privacy"}
    data["cases"][2]["description"] = '"},{"id":" </script><!-- \u2028 ünïcode'
    folder = written(runs, "split-redteam", data)
    monkeypatch.setattr(html_data, "CHUNK_BYTES", 1)
    page = split_page(folder)
    assert page is not None and page == streamed_page(folder, monkeypatch)
    shown = page_data(page)
    assert shown["cases"] == load_report(folder)["cases"] and shown["starts"] == list(range(len(data["cases"])))


def test_tool_calls_with_ids_in_a_transcript_are_not_taken_for_cases(runs, monkeypatch):
    data = report_of(runs)
    calls = [{"id": f"call_{n}", "type": "function", "function": {"name": "f", "arguments": "{}"}} for n in range(3)]
    data["cases"][0]["transcript"].append({"role": "assistant", "content": None, "tool_calls": calls})
    folder = written(runs, "split-tool-call-ids", data)
    assert b'"}},{"id":"call_1"' in (folder / "report.json").read_bytes()
    page = split_page(folder)
    assert page is not None and page == streamed_page(folder, monkeypatch)


def test_a_separator_inside_agent_text_hands_the_report_to_the_streaming_reader(runs, monkeypatch):
    data = report_of(runs)
    fake = {"id": "ghost", "status": "passed", "source": "x.yaml:1:1", "redteam": None}
    data["cases"][0]["transcript"].append({"role": "tool", "content": [{"redteam": None}, fake]})
    folder = written(runs, "split-fake-separator", data)
    assert b'"redteam":null},{"id":"ghost"' in (folder / "report.json").read_bytes()
    assert split_page(folder) is None  # the piece before the fake separator is not a whole case
    page = page_data(render("html", folder).read_text(encoding="utf-8"))
    assert page["cases"] == load_report(folder)["cases"] and len(page["cases"]) == len(data["cases"])


@pytest.mark.parametrize("raw", ["NaN", "-Infinity", "1e999", "1" * 250 + ".5e60"])
def test_a_number_load_report_keeps_as_text_is_left_to_the_streaming_reader(runs, raw, monkeypatch):
    data = report_of(runs, "out")
    data["cases"][0]["transcript"][0]["extra"] = "RAW"
    text = evalrun_layout(data).replace('"RAW"', raw)
    folder = written(runs, f"split-number-{len(raw)}", data, text)
    assert split_page(folder) is None
    page = page_data(streamed_page(folder, monkeypatch))
    assert page["cases"][0]["transcript"][0]["extra"] == raw  # kept as its text, as load_report keeps it
    assert page["cases"] == load_report(folder)["cases"]


def test_a_long_integer_part_with_a_two_digit_exponent_is_infinity_and_load_report_refuses_it(runs):
    data = report_of(runs, "out")
    data["summary"]["pass_rate"] = "RAW"
    raw = "1" * 250 + ".5e60"
    assert math.isinf(float(raw))
    folder = written(runs, "long-mantissa", data, evalrun_layout(data).replace('"RAW"', raw))
    with pytest.raises(NotAReport, match=r"summary\.pass_rate: Input should be a valid number \(got \"1111"):
        load_report(folder)
    with pytest.raises(NotAReport, match=r"summary\.pass_rate"):
        render("html", folder)


NUMBERS = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.builds(lambda digits, point, exp: digits + point + exp,
              st.text("0123456789", min_size=1, max_size=400).map(lambda d: d.lstrip("0") or "0"),
              st.sampled_from(["", ".5", ".000001"]),
              st.one_of(st.just(""), st.builds(lambda e, sign, n: f"{e}{sign}{n}", st.sampled_from("eE"),
                                               st.sampled_from(["", "+", "-"]),
                                               st.integers(0, 400).map(str))).map(str)))


@given(NUMBERS)
@settings(max_examples=400, deadline=None)
def test_every_number_past_a_floats_range_is_suspected_and_checked(number):
    text = f'{{"a":[1,{number},"x"]}}'.encode()
    overflows = not math.isfinite(float(number))
    if overflows:
        assert html_split._may_read_otherwise(text), number
        assert isinstance(parse_report_json(text)["a"][1], str)  # load_report keeps it as text: refused by type
    if not html_split._may_read_otherwise(text):
        assert json.loads(text) == parse_report_json(text)


def test_the_index_row_of_a_whole_number_in_a_float_field_is_the_float_the_model_holds():
    case = {"id": "c", "status": "passed", "source": "s:1:1", "duration_s": 2, "metrics": {"journey_completion": 1}}
    row = html_data.index_row(case)
    assert row == {"id": "c", "status": "passed", "source": "s:1:1", "duration_s": 2.0, "completion": 1.0}
    assert html_data.index_json(row) == b'{"id":"c","status":"passed","source":"s:1:1","duration_s":2.0,"completion":1.0}'


@pytest.mark.parametrize("source", ["with-baseline", "shards/shard1"])
def test_random_tampering_never_makes_the_split_page_and_load_report_disagree(runs, source, tmp_path_factory):
    valid = report_of(runs, source)
    work = tmp_path_factory.mktemp("split-mutants")
    counter = iter(range(10 ** 6))
    split = []

    @settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(mutations(valid))
    @example(copy.deepcopy(valid))  # the report as written: split, whatever the mutants drawn
    def check(data):
        folder = work / str(next(counter))
        folder.mkdir()
        try:
            text = evalrun_layout(data)
        except (KeyError, AttributeError, TypeError):  # "cases" gone or not a list: nothing to lay out
            return
        (folder / "report.json").write_text(text, encoding="utf-8")
        try:
            expected = load_report(folder)
        except NotAReport:
            expected = None
        page = split_page(folder)
        if expected is None:
            assert page is None  # never accepted when load_report refuses
            return
        if page is None:  # handed on: only what the split cannot prove (NaN written by json.dumps, a twin case)
            return
        split.append(1)
        assert page_data(page)["cases"] == copy.deepcopy(expected["cases"])
        out = _Text()
        html.write(expected, out)  # the page made from the report read whole: the same cases, the same index
        assert (page_data(out.text)["cases"], page_data(out.text)["index"]) == \
            (page_data(page)["cases"], page_data(page)["index"])
        assert page == _streamed(folder)  # and byte for byte the streamed page

    check()
    assert split, "no valid report was split"


def test_a_case_listed_twice_is_refused_in_load_reports_words(runs):
    data = report_of(runs)
    data["cases"].append(copy.deepcopy(data["cases"][0]))
    folder = written(runs, "split-twice", data)
    assert split_page(folder) is None
    with pytest.raises(NotAReport, match=r"is listed twice \(also cases\[0\]\)"):
        render("html", folder)


# ------------------------------------------------------------------ the parts made by forked children

FORKED = """
import json, os, sys
from pathlib import Path
from runner.report import html_data, html_split
from runner.report.render import render
from runner.report.saved import NotAReport
html_split.SPLIT_FROM_BYTES, html_split.PART_BYTES = 0, 1  # every report is split between processes here
html_split._cores = lambda: int(sys.argv[2])
html_data.CHUNK_BYTES = int(sys.argv[3])
if len(sys.argv) > 5:  # the child fails ("doubt": a doubt; "die": killed mid-way)
    parent, encode_part = os.getpid(), html_split._encode_part

    def failing(*args):
        if os.getpid() != parent:
            if sys.argv[5] == "die":
                os.kill(os.getpid(), 9)
            raise html_split._Doubt("injected")
        return encode_part(*args)

    html_split._encode_part = failing
fork = os.fork


def counted_fork():  # in whichever process forks (a child forks the next): one line each
    with open(sys.argv[4], "a") as log:
        log.write("fork\\n")
    return fork()


os.fork = counted_fork
try:
    path = str(render("html", Path(sys.argv[1])))
except NotAReport as exc:
    path = "refused: " + str(exc)
children = []
try:
    while True:
        children.append(os.waitpid(-1, os.WNOHANG))
except ChildProcessError:
    pass
forks = open(sys.argv[4]).read().count("fork") if os.path.exists(sys.argv[4]) else 0
print(json.dumps({"forks": forks, "result": path, "children_left": len(children)}))
"""


def render_forked(folder: Path, processes: int, chunk_bytes: int = 1, child: str = "") -> dict:
    log = folder.parent / f"{folder.name}.forks"
    log.unlink(missing_ok=True)
    done = subprocess.run([sys.executable, "-c", FORKED, str(folder), str(processes), str(chunk_bytes), str(log)]
                          + ([child] if child else []),
                          env=cli_env(),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    return json.loads(done.stdout)


@pytest.mark.parametrize("processes", [2, 3])
def test_forked_parts_make_the_same_page(runs, processes, monkeypatch):
    data = report_of(runs)
    data["cases"] = [dict(case, id=f"{case['id']}-{n}") for n in range(4) for case in data["cases"]]
    folder = written(runs, f"split-forked-{processes}", data)
    done = render_forked(folder, processes, chunk_bytes=1)  # a chunk per case: every process has some
    assert done["forks"] == processes - 1 and done["children_left"] == 0
    page = Path(done["result"]).read_text(encoding="utf-8")
    monkeypatch.setattr(html_data, "CHUNK_BYTES", 1)
    assert page == split_page(folder) == streamed_page(folder, monkeypatch)  # made here, in one process
    assert page_data(page)["cases"] == load_report(folder)["cases"]
    assert page_data(page)["starts"] == list(range(len(data["cases"])))


@pytest.mark.parametrize("child", ["doubt", "die"])
def test_a_child_that_doubts_or_dies_hands_the_report_to_the_streaming_reader(runs, child):
    folder = written(runs, f"split-child-{child}", report_of(runs))
    done = render_forked(folder, 2, child=child)
    assert done["forks"] == 1 and done["children_left"] == 0
    assert page_data(Path(done["result"]).read_text(encoding="utf-8"))["cases"] == load_report(folder)["cases"]


def test_a_bad_case_in_a_childs_part_refuses_the_report_in_load_reports_words(runs):
    data = report_of(runs)
    n = len(data["cases"]) - 1  # the last chunk: the child's
    data["cases"][n]["duration_s"] = "1.5"
    folder = written(runs, "split-forked-bad", data)
    done = render_forked(folder, 2)
    assert done["forks"] >= 1 and done["children_left"] == 0
    assert done["result"] == (f"refused: {folder}/report.json is not a valid evalrun report: cases[{n}].duration_s: "
                              'Input should be a valid number (got "1.5")')
    assert sorted(p.name for p in folder.iterdir()) == ["report.json"]  # no report.html, no temporary


def test_the_cut_finds_a_separator_across_the_edge_of_a_read(runs, monkeypatch):
    data = report_of(runs)
    data["cases"][1]["redteam"] = {"attack": "pii", "category": "privacy"}
    folder = written(runs, "split-edges", data)
    whole = split_page(folder)
    assert whole is not None
    for size in (1, 5, 9, 64, 1000, 3000):  # every separator is cut by some edge at one of these sizes
        monkeypatch.setattr(html_split, "_READ", size)
        assert split_page(folder) == whole


def test_a_report_with_no_cases_splits_into_an_empty_list(runs):
    data = report_of(runs)
    data["cases"] = []
    data["summary"].update(total=0, passed=0, failed=0, error=0, skipped=0, unscored=0)
    folder = written(runs, "split-empty", data)
    page = split_page(folder)
    assert page is not None
    shown = page_data(page)
    assert (shown["cases"], shown["index"], shown["starts"]) == ([], [], [])


def test_unstreamable_still_means_read_whole(runs):
    folder = written(runs, "split-cases-first", report_of(runs), json.dumps({"cases": report_of(runs)["cases"]}))
    assert split_page(folder) is None
    out = _Text()
    with pytest.raises(Unstreamable):
        html.write_saved(folder, out)
