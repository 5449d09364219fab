"""Saved run folders are hostile input: `evalrun report`, `merge`, `compare`, `--baseline` and rescore read
report.json only after checking it against the report models. A tampered report is exit 4 with the
field named (never a traceback, never exit 1, which CI reads as "cases failed"); a case listed twice
cannot be counted twice. A hypothesis test mutates valid reports at random: every command either
refuses the file (exit 4) or renders it into well-formed output."""
from __future__ import annotations

import contextlib
import copy
import io
import json
import math
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from runner.frontends import cli
from runner.report.saved import NotAReport, load_report, report_problems
from tests.helpers.cli_helpers import run_cli
from tests.helpers.report_validation import mutations, tampered


def set_in(path, value):
    def change(data):
        node = data
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
    return change


TAMPERED = [
    ("string-count", set_in(["summary", "passed"], "5"), 'summary.passed: Input should be a valid integer (got "5")'),
    ("negative-count", set_in(["summary", "failed"], -3), "summary.failed: Input should be greater than or equal to 0 "
                                                           "(got -3)"),
    ("infinite-count", set_in(["summary", "total"], math.inf), 'summary.total: Input should be a valid integer '
                                                                '(got "Infinity")'),
    ("infinite-time", set_in(["summary", "duration_s"], -math.inf), 'summary.duration_s: Input should be a valid '
                                                                     'number (got "-Infinity")'),
    ("not-run-number", set_in(["summary", "not_run"], 5), "summary.not_run: Input should be a valid list (got 5)"),
    ("case-not-object", lambda d: d["cases"].append("passed"), 'cases[3]: Input should be an object (got "passed")'),
    ("odd-shard", set_in(["shard"], "3/2"), "shard: I/N needs 1 <= I <= N, got '3/2'"),
    ("unknown-status", set_in(["cases", 1, "status"], "greenish"),
     "cases[1].status: Input should be 'passed', 'failed', 'error', 'skipped' or 'unscored' (got \"greenish\")"),
    ("case-twice", lambda d: d["cases"].append(copy.deepcopy(d["cases"][0])),
     "cases[3]: case 'lookup' is listed twice (also cases[0])"),
    ("float-metric-count", set_in(["cases", 0, "metrics", "counts", "tool_calls"], 1.0),
     "cases[0].metrics.counts.tool_calls: Input should be a valid integer (got 1.0)"),
    ("overflowing-number", set_in(["summary", "pass_rate"], "RAW:1e999"),  # a float parser reads it as infinity
     'summary.pass_rate: Input should be a valid number (got "1e999")'),
    ("overflowing-digits", set_in(["summary", "pass_rate"], "RAW:" + "1" * 400 + ".0"),  # no exponent, still infinity
     'summary.pass_rate: Input should be a valid number (got "' + "1" * 59 + "…)"),  # the value shown cut at 60
    # found by the hypothesis test below: JUnit's properties read config.agents, and an int there was a traceback
    ("agents-number", set_in(["config", "agents"], 1), "config: agents: expected an object, got a number"),
    ("agent-spec-string", set_in(["config", "agents"], {"hr": "python"}),
     "config: agents.hr: expected an object, got a string"),
    ("judge-list", set_in(["config", "judge"], []), "config: judge: expected an object, got a list"),
    ("pass-rate-text", set_in(["config", "min_pass_rate"], "high"), "config: min_pass_rate: expected a number, got a string"),
]


@pytest.mark.parametrize("name, change, problem", TAMPERED, ids=[t[0] for t in TAMPERED])
def test_a_tampered_report_is_refused_by_every_command_with_the_field_named(runs, name, change, problem):
    folder = tampered(runs, name, change)
    expected = f"{folder.relative_to(runs)}/report.json is not a valid evalrun report: {problem}"
    done = run_cli("report", name, "--format", "html", "--format", "junit", "--format", "md", cwd=runs)
    assert (done.returncode, done.stderr, done.stdout) == (4, f"evalrun report: {expected}\n", "")
    compared = run_cli("compare", "out", name, cwd=runs)
    assert (compared.returncode, compared.stderr) == (4, f"evalrun compare: {expected}\n")
    gated = run_cli("suites", "--output-dir", f"gated-{name}", "--baseline", name, cwd=runs)
    assert gated.returncode == 4 and f"evalrun run: error: --baseline: {expected}" in gated.stderr.splitlines()
    assert "Traceback" not in done.stderr + compared.stderr + gated.stderr


@pytest.mark.parametrize("name, change, problem", TAMPERED[:6], ids=[t[0] for t in TAMPERED[:6]])
def test_merge_refuses_a_tampered_shard(runs, name, change, problem):
    shard = tampered(runs, f"shard-{name}", change, source="shards/shard1")
    appended = len(json.loads((runs / "shards" / "shard1" / "report.json").read_text())["cases"])
    problem = problem.replace("cases[3]", f"cases[{appended}]")  # the shard's own count of cases
    done = run_cli("merge", str(shard), "shards/shard2", "-o", f"merged-{name}", cwd=runs)
    assert done.returncode == 4, done.stdout + done.stderr
    assert done.stderr == f"evalrun merge: {shard}/report.json is not a valid evalrun report: {problem}\n"


def test_merge_refuses_a_case_listed_twice_in_one_shard(runs):
    """Today's tampering: one shard lists its cases twice; the merge said "13 passed of 6" and
    --min-pass-rate turned the failing run's exit 1 into 0."""
    shard = tampered(runs, "shard-doubled", lambda d: d["cases"].extend(copy.deepcopy(d["cases"])),
                     source="shards/shard1")
    first = json.loads((shard / "report.json").read_text())["cases"][0]["id"]
    done = run_cli("merge", str(shard), "shards/shard2", "-o", "merged-doubled", "--min-pass-rate", "0.8", cwd=runs)
    assert done.returncode == 4, done.stdout + done.stderr
    half = len(json.loads((shard / "report.json").read_text())["cases"]) // 2
    assert done.stderr.startswith(f"evalrun merge: {shard}/report.json is not a valid evalrun report: cases[{half}]: "
                                  f"case '{first}' is listed twice (also cases[0]); ")
    assert done.stderr.endswith("; and more\n")  # three named, the rest summed up
    assert not (runs / "merged-doubled").exists()


def test_a_valid_report_passes_the_check(runs):
    for folder in ("out", "with-baseline", "shards/shard1"):
        assert report_problems(load_report(runs / folder)) == []


# ------------------------------------------------------------------------ random tampering (hypothesis)


def _main(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(list(args))  # an exception escaping here is the bug this test looks for
    return code, out.getvalue(), err.getvalue()


def _check_written(folder: Path) -> None:
    ET.parse(folder / "junit.xml")
    page = (folder / "report.html").read_text(encoding="utf-8")
    assert page.endswith("</html>\n") and page.count("</script>") == 2
    assert (folder / "summary.md").read_text(encoding="utf-8").startswith("## evalrun: ")


@pytest.mark.parametrize("source", ["with-baseline", "shards/shard1"])
def test_randomly_tampered_reports_are_refused_or_rendered_never_a_traceback(runs, source, tmp_path_factory):
    valid = json.loads((runs / source / "report.json").read_text(encoding="utf-8"))
    work = tmp_path_factory.mktemp("mutants")
    counter = iter(range(10 ** 6))

    @settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(mutations(valid))
    def check(data):
        folder = work / str(next(counter))
        folder.mkdir()
        (folder / "report.json").write_text(json.dumps(data), encoding="utf-8")
        try:
            load_report(folder)
            readable = True
        except NotAReport:
            readable = False
        code, _, err = _main("report", str(folder), "--format", "html", "--format", "junit", "--format", "md")
        assert code == (0 if readable else 4), err
        if readable:
            _check_written(folder)
        else:
            assert err.startswith(f"evalrun report: {folder}/report.json is not a")
        code, _, err = _main("compare", str(runs / source), str(folder))
        assert code in ((0, 1) if readable else (4,)), err
        if source.startswith("shards"):
            code, _, err = _main("merge", str(folder), str(runs / "shards" / "shard2"), "-o", str(folder / "merged"),
                                 "--format", "html", "--format", "junit", "--format", "md")
            assert code in ((0, 1, 3, 4) if readable else (4,)), err  # 4: a valid shard that does not fit (1/2 twice)
            if code != 4:
                _check_written(folder / "merged")

    check()
