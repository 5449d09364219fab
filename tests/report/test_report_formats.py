"""The report formats (junit, md, html) and `evalrun report`: a real run in a subprocess writes them,
each is parsed back and its content asserted, and the hostile text an agent wrote stays data."""
from __future__ import annotations

import html.parser
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from runner.report import junit, markdown
from runner.report.html import script_json
from runner.report.render import render
from tests.helpers.cli_helpers import run_cli, tool_call_messages, write, write_json
from tests.helpers.html_page import page_data
from tests.helpers.report_formats import DESCRIPTION, HOSTILE, make_run
from tests.helpers.shared_data import require_shared

# Closes XML elements, scripts, comments, CDATA, Markdown tables and code spans; carries raw control
# characters (an escape sequence, a bell) and a line separator.


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("formats")
    done = make_run(root, "--format", "junit", "--format", "md", "--format", "html")
    assert done.returncode == 3, done.stderr  # an error case: exit 3
    out = root / "out"
    # Each format is written beside report.json under its default name and named on the console.
    for name in ("junit.xml", "summary.md", "report.html"):
        assert f"{name}: out/{name}" in done.stdout.splitlines()
        assert (out / name).is_file()
    return out


def report(run_dir: Path) -> dict:
    return json.loads((run_dir / "report.json").read_text(encoding="utf-8"))


def case(run_dir: Path, case_id: str) -> dict:
    return next(c for c in report(run_dir)["cases"] if c["id"] == case_id)


# ---------------------------------------------------------------------------------------------- junit

def test_junit_validates_against_the_jenkins_schema(run_dir):
    import xmlschema

    schema = xmlschema.XMLSchema(str(require_shared("junit", "junit-10.xsd")))
    schema.validate(str(run_dir / "junit.xml"))


def test_junit_has_one_testsuite_per_file_and_one_testcase_per_case(run_dir):
    root = ET.parse(run_dir / "junit.xml").getroot()
    assert (root.tag, root.get("tests"), root.get("failures"), root.get("errors")) == ("testsuites", "3", "1", "1")
    suites = {s.get("name"): s for s in root.findall("testsuite")}
    assert list(suites) == ["suites/hr.yaml", "suites/other.yaml"]
    hr = suites["suites/hr.yaml"]
    assert (hr.get("tests"), hr.get("failures"), hr.get("errors"), hr.get("skipped")) == ("2", "1", "0", "0")
    cases = {c.get("name"): c for c in hr.findall("testcase")}
    assert list(cases) == ["lookup", "wrong-user"]
    assert {c.get("classname") for c in cases.values()} == {"suites/hr.yaml"}
    assert cases["lookup"].find("failure") is None and cases["lookup"].find("error") is None
    assert float(cases["lookup"].get("time")) == pytest.approx(case(run_dir, "lookup")["duration_s"], abs=5e-4)
    props = {p.get("name"): p.get("value") for p in hr.find("properties").findall("property")}
    assert props["pass_rate"] == "50.0% (1/2; 95% CI 9.5%–90.5%)"
    assert props["mean_journey_completion"] == "0.5000"
    assert props["run_id"] == report(run_dir)["run_id"]


def test_junit_failure_carries_every_explanation_line_and_error_its_reason(run_dir):
    root = ET.parse(run_dir / "junit.xml").getroot()
    failed = root.find("testsuite/testcase[@name='wrong-user']")
    failure = failed.find("failure")
    expected = case(run_dir, "wrong-user")["failures"]
    assert len(expected) == 2
    assert failure.get("type") == "failed"
    assert failure.text == "\n".join(expected)  # the hostile argument round-trips as text
    assert failure.get("message") == expected[0] + " (+1 more)"
    assert "x</failure><script>alert(1)</script>" in failure.text
    assert "description: " + DESCRIPTION in failed.find("system-out").text
    error = root.find("testsuite[@name='suites/other.yaml']/testcase[@name='broken']/error")
    assert (error.get("type"), error.get("message")) == ("error", "transcript file not found: suites/t/nowhere.json")


def minimal_report(**case_fields) -> dict:
    base = {"id": "c", "status": "passed", "source": "s.yaml:1:1", "duration_s": 0.5}
    summary = {"total": 1, "passed": 0, "failed": 0, "error": 0, "skipped": 0, "pass_rate": None,
               "mean_journey_completion": None, "mean_tool_call_precision": None, "mean_tool_call_recall": None,
               "exit_code": 0, "duration_s": 1}
    return {"version": "2", "evalrun_version": "0", "run_id": "r", "started_at": "t", "config": {},
            "summary": summary, "cases": [{**base, **case_fields}]}  # the least a valid report.json holds


def test_junit_makes_characters_xml_forbids_visible(tmp_path):
    import xmlschema

    raw = "bell\x07 esc\x1b[31m nul\x00 lone\ud800 ffff\uffff tab\tend"
    data = minimal_report(status="failed", id="id\x1b", failures=[raw], description=raw)
    path = tmp_path / "j.xml"
    with open(path, "w", encoding="utf-8") as out:
        junit.write(data, out)
    xmlschema.XMLSchema(str(require_shared("junit", "junit-10.xsd"))).validate(str(path))
    testcase = ET.parse(path).getroot().find("testsuite/testcase")
    assert testcase.get("name") == "id\\x1b"
    assert testcase.find("failure").text == "bell\\x07 esc\\x1b[31m nul\\x00 lone\\ud800 ffff\\uffff tab\tend"
    assert testcase.find("failure").get("message") == "bell\\x07 esc\\x1b[31m nul\\x00 lone\\ud800 ffff\\uffff tab end"


def test_junit_lists_unscored_skipped_and_not_run_cases(tmp_path):
    data = minimal_report(status="unscored", unscored_reason="the judge answered 500 three times")
    data["cases"].append({"id": "s", "status": "skipped", "source": "s.yaml:9:1", "skip_reason": "needs a key"})
    data["summary"].update(unscored=1, skipped=1, not_run=["later-1", "later-2"], stop_reason="SIGINT",
                           interrupted=True)
    path = tmp_path / "j.xml"
    with open(path, "w", encoding="utf-8") as out:
        junit.write(data, out)
    root = ET.parse(path).getroot()
    assert (root.get("tests"), root.get("errors")) == ("4", "1")
    error = root.find("testsuite/testcase[@name='c']/error")
    assert (error.get("type"), error.text) == ("unscored", "the judge answered 500 three times")
    assert root.find("testsuite/testcase[@name='s']/skipped").get("message") == "needs a key"
    not_run = root.find("testsuite[@name='not run']")
    assert [t.get("name") for t in not_run.findall("testcase")] == ["later-1", "later-2"]
    assert not_run.find("testcase/skipped").get("message") == "not run: SIGINT"


# ---------------------------------------------------------------------------------------------- markdown

def test_markdown_summary_content(run_dir):
    lines = (run_dir / "summary.md").read_text(encoding="utf-8").splitlines()
    assert lines[0] == "## evalrun: 1 passed, 1 failed, 1 error"
    assert "**Pass rate:** 50.0% (1/2; 95% CI 9.5%–90.5%)" in lines
    assert "| 3 | 1 | 1 | 1 | 0 | 0 | 0 |" in lines
    assert "**Exit:** 1 case(s) ended in error: exit 3" in lines
    rows = [line for line in lines[lines.index("| case | status | why |") + 2:] if line.startswith("| ")]
    assert [row.split(" | ")[:2] for row in rows] == [["| wrong-user", "failed \\[replayed\\]"],
                                                      ["| broken", "error \\[replayed\\]"]]
    assert rows[1] == "| broken | error \\[replayed\\] | transcript file not found: suites/t/nowhere.json |"


def unescaped_pipes(line: str) -> int:
    return sum(1 for n, ch in enumerate(line) if ch == "|" and (n == 0 or line[n - 1] != "\\"))


def test_markdown_escapes_agent_text():
    cell = markdown.md_text(HOSTILE)
    assert "\n" not in cell and "\u2028" not in cell and "\x1b" not in cell
    assert "<" not in cell  # no HTML: every < is &lt;
    assert unescaped_pipes(cell) == 0
    assert "`" not in cell.replace("\\`", "")  # every backtick escaped: no code span opens
    assert cell.startswith("x&lt;/failure>&lt;script>alert(1)&lt;/script> \\| \\`tick\\` \\\\x1b\\[2K\\\\x07 &amp;amp;")
    assert cell.endswith("\\*bold\\* \\[a\\](b) second line")


def test_markdown_rows_stay_rows_with_hostile_reasons(tmp_path):
    data = minimal_report(status="failed", id="a|b`c", failures=[HOSTILE])
    path = tmp_path / "s.md"
    with open(path, "w", encoding="utf-8") as out:
        markdown.write(data, out)
    row = [line for line in path.read_text(encoding="utf-8").splitlines() if line.startswith("| a")]
    assert len(row) == 1 and unescaped_pipes(row[0]) == 4  # | case | status | why |


def test_markdown_is_appended_to_the_github_step_summary(run_dir, tmp_path):
    step = tmp_path / "step.md"
    step.write_text("earlier step\n", encoding="utf-8")
    from tests.helpers.cli_helpers import run_cli

    done = run_cli("report", str(run_dir), "--format", "md", "-o", str(tmp_path / "again.md"), cwd=tmp_path,
                   env={"GITHUB_STEP_SUMMARY": str(step)})
    assert done.returncode == 0, done.stderr
    again = (tmp_path / "again.md").read_text(encoding="utf-8")
    assert step.read_text(encoding="utf-8") == "earlier step\n" + again + "\n"
    assert again == (run_dir / "summary.md").read_text(encoding="utf-8")


# ---------------------------------------------------------------------------------------------- html

class _Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.scripts: list[tuple[dict, str]] = []
        self.external: list[str] = []
        self._in: dict | None = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        for name in ("src", "href"):
            if attrs.get(name):
                self.external.append(attrs[name])
        if tag == "script":
            self._in = attrs
            self.scripts.append((attrs, ""))

    def handle_data(self, data):
        if self._in is not None:
            attrs, text = self.scripts[-1]
            self.scripts[-1] = (attrs, text + data)

    def handle_endtag(self, tag):
        if tag == "script":
            self._in = None


def test_html_is_self_contained_and_carries_the_cases_as_inert_json(run_dir):
    text = (run_dir / "report.html").read_text(encoding="utf-8")
    page = _Page()
    page.feed(text)
    assert page.external == []  # nothing fetched: no src, no href
    assert [attrs.get("type") for attrs, _ in page.scripts] == ["application/json", None]  # the hostile
    # </script> inside the data did not open or close a script element
    data = page_data(text)  # decoded from gzip and base64, as the page's script does
    assert data["cases"] == report(run_dir)["cases"]
    assert data["cases"][1]["transcript"][-1]["content"] == HOSTILE
    assert [row["id"] for row in data["index"]] == ["lookup", "wrong-user", "broken"]
    assert data["index"][1]["description"] == DESCRIPTION
    assert "alert(1)</script>" not in page.scripts[0][1] and "<img" not in text


def test_html_summary_shows_pass_rate_interval_and_exit(run_dir):
    text = (run_dir / "report.html").read_text(encoding="utf-8")
    assert "<b>50.0%</b><span class=\"muted\">95% CI 9.5%–90.5% · 1/2</span>" in text
    assert '<div id="exit-reason"><b>Exit:</b> 1 case(s) ended in error: exit 3</div>' in text
    assert '<div id="means">Means: journey completion 50.0% · tool-call precision 50.0% · ' \
           'tool-call recall 50.0%</div>' in text


def test_html_summary_shows_model_usage_and_a_stopped_run(tmp_path):
    data = minimal_report()
    data["summary"].update(not_run=["<b>later</b>"], interrupted=True, stop_reason="SIGTERM",
                           model_usage={"calls": 12, "cached": 2, "errors": 1, "prompt_tokens": 900,
                                        "completion_tokens": 80, "cost_usd": 0.0123,
                                        "by_role": {"agent": {"calls": 8}, "judge": {"calls": 4}}})
    write_json(tmp_path / "report.json", data)
    text = render("html", tmp_path).read_text(encoding="utf-8")
    assert ('<div id="usage">Model calls: 12 (2 cached, 1 errors; agent 8, judge 4) · tokens 900 prompt + 80 '
            'completion · $0.0123</div>') in text
    assert "(SIGTERM): 1 case(s) did not run." in text
    assert "<li><code>&lt;b&gt;later&lt;/b&gt;</code></li>" in text


def test_script_json_cannot_close_its_element():
    encoded = script_json({"a": "</script><!--\u2028&"})
    assert "<" not in encoded and ">" not in encoded and "&" not in encoded and "\u2028" not in encoded
    assert json.loads(encoded) == {"a": "</script><!--\u2028&"}


# ---------------------------------------------------------------------------------------------- evalrun report

def test_report_command_renders_the_same_files_again(run_dir, tmp_path):
    for fmt, name in (("junit", "junit.xml"), ("md", "summary.md"), ("html", "report.html")):
        target = tmp_path / name
        done = run_cli("report", str(run_dir), "--format", fmt, "-o", str(target), cwd=tmp_path)
        assert (done.returncode, done.stdout) == (0, f"{target}\n"), done.stderr
        assert target.read_bytes() == (run_dir / name).read_bytes()


def test_report_command_writes_default_names_into_the_run_folder(run_dir, tmp_path):
    copy = tmp_path / "run"
    copy.mkdir()
    (copy / "report.json").write_bytes((run_dir / "report.json").read_bytes())
    done = run_cli("report", "run", "--format", "junit", "--format", "html", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (0, f"{copy / 'junit.xml'}\n{copy / 'report.html'}\n".replace(
        str(tmp_path) + "/", "")), done.stderr
    assert sorted(p.name for p in copy.iterdir()) == ["junit.xml", "report.html", "report.json"]


def test_report_command_usage_errors(tmp_path):
    missing = run_cli("report", "nowhere", "--format", "md", cwd=tmp_path)
    assert missing.returncode == 4
    assert "evalrun report: nowhere holds no report.json" in missing.stderr
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "report.json").write_text("{not json", encoding="utf-8")
    bad = run_cli("report", "bad", "--format", "md", cwd=tmp_path)
    assert bad.returncode == 4 and "bad/report.json is not a report evalrun wrote" in bad.stderr
    unknown = run_cli("report", "bad", "--format", "pdf", cwd=tmp_path)
    assert unknown.returncode == 4 and "invalid choice: 'pdf'" in unknown.stderr
    two = run_cli("report", "bad", "--format", "md", "--format", "html", "-o", "x", cwd=tmp_path)
    assert two.returncode == 4 and "give one --format with it" in two.stderr
    assert not (tmp_path / "x").exists()


# ---------------------------------------------------------------------------------------------- gates

def test_min_pass_rate_flag_overrides_the_config(tmp_path):
    write(tmp_path / "evalrun.yaml", "embeddings: {enabled: false}\nmin_pass_rate: 0.9\n")
    for case_id, who in (("good", "nwaters"), ("bad", "nken")):
        write(tmp_path / "suites" / f"{case_id}.yaml", f"""
            id: {case_id}
            goal_details:
              - {{type: tool_call, name: get_id, tool_name: get_assignment_id, args: {{username: {who}}}}}
            transcript: t/t.json
            """)
    write_json(tmp_path / "suites" / "t" / "t.json",
               [{"role": "user", "content": "hi"}, *tool_call_messages("get_assignment_id", {"username": "nwaters"})])
    by_config = run_cli("suites", "--output-dir", "o1", cwd=tmp_path)
    assert by_config.returncode == 1
    assert "1 case(s) failed; pass rate 0.50 is below min_pass_rate 0.90: exit 1" in by_config.stdout
    by_flag = run_cli("suites", "--output-dir", "o2", "--min-pass-rate", "0.5", cwd=tmp_path)
    assert by_flag.returncode == 0
    assert "min_pass_rate 0.50 reached (0.50) although 1 case(s) failed: exit 0" in by_flag.stdout
    wrong = run_cli("suites", "--min-pass-rate", "1.5", cwd=tmp_path)
    assert wrong.returncode == 4 and "must be between 0 and 1, got 1.5" in wrong.stderr


def test_markdown_names_judge_fallbacks_usage_and_a_stopped_run(tmp_path):
    data = minimal_report()
    data["summary"].update(judge_fallback_cases=2, not_run=["a", "b"], interrupted=True, stop_reason="SIGINT",
                           model_usage={"calls": 3, "cached": 1, "prompt_tokens": 10, "completion_tokens": 5,
                                        "cost_usd": 0.5})
    path = tmp_path / "s.md"
    with open(path, "w", encoding="utf-8") as out:
        markdown.write(data, out)
    lines = path.read_text(encoding="utf-8").splitlines()
    assert "**Judge fallbacks:** 2 case(s) rest on verdicts reached without the judge, which failed" in lines
    assert "Model calls: 3 (1 cached), 10 prompt + 5 completion tokens, $0.5000" in lines
    assert "> **Stopped early:** SIGINT; 2 case(s) not run" in lines
    assert "**Not run:** a, b" in lines


def test_the_registry_is_built_from_the_modules():
    from runner.report import formats

    assert formats.names() == ("json", "junit", "md", "html")
    assert [formats.get(n).file_name for n in formats.names()] == ["report.json", "junit.xml", "summary.md",
                                                                    "report.html"]
    with pytest.raises(KeyError, match="unknown report format 'pdf'"):
        formats.get("pdf")


def test_a_format_that_cannot_be_written_is_a_note_and_the_others_are_written(tmp_path):
    (tmp_path / "out" / "report.html").mkdir(parents=True)  # a folder where the file should go
    done = make_run(tmp_path, "--format", "html", "--format", "junit")
    assert done.returncode == 3  # the run's own verdict (an error case), unchanged by the lost file
    assert "cannot write the html report to out/report.html: Is a directory" in done.stdout.splitlines()
    assert (tmp_path / "out" / "junit.xml").is_file()
    assert "junit.xml: out/junit.xml" in done.stdout.splitlines()
