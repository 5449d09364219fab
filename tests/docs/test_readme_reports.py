"""The docs' pages on reports, large suites and CI use only real flags: every `evalrun` command in it (the GitHub Actions
recipe included) parses with the real CLI parser, and every option it names exists on its command."""
from __future__ import annotations

import argparse
import re
import shlex

import yaml

from runner.frontends.cli import _with_default_command, build_parser
from runner.results.stats import wilson_interval
from tests.helpers.cli_helpers import REPO
from tests.helpers.docs_pages import page

SECTION = "\n".join(page(name) for name in ("how-to/reports.md", "how-to/large-suites.md", "how-to/ci.md"))


def recipe() -> dict:
    block = re.search(r"```yaml\n(# \.github/workflows/evals\.yml\n.*?)```", SECTION, flags=re.S).group(1)
    return yaml.safe_load(block)


def gitlab_recipe() -> dict:
    block = re.search(r"```yaml\n(# \.gitlab-ci\.yml\n.*?)```", SECTION, flags=re.S).group(1)
    return yaml.safe_load(block)


def evalrun_commands() -> list[str]:
    commands = [step["run"] for job in recipe()["jobs"].values() for step in job["steps"]
                if str(step.get("run", "")).startswith("evalrun ")]
    commands += [line for job in gitlab_recipe().values() if isinstance(job, dict)
                 for line in job.get("script", []) if line.startswith("evalrun ")]
    commands += re.findall(r"`(evalrun [^`]*)`", SECTION)
    return commands


def options_of(parser: argparse.ArgumentParser, command: str) -> set[str]:
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices[command]
    return {flag for action in sub._actions for flag in action.option_strings}


def test_the_recipe_runs_shards_in_a_matrix_and_merges_them_into_junit_html_and_md():
    jobs = recipe()["jobs"]
    runs = [s["run"] for s in jobs["evals"]["steps"] if str(s.get("run", "")).startswith("evalrun ")]
    assert len(runs) == 1 and runs[0].startswith("evalrun run ")
    shards = jobs["evals"]["strategy"]["matrix"]["shard"]
    assert shards == list(range(1, len(shards) + 1))
    assert f"--shard ${{{{ matrix.shard }}}}/{len(shards)}" in runs[0] and "--output-dir evalrun-out" in runs[0]
    kept = [s["with"]["path"] for s in jobs["evals"]["steps"] if str(s.get("uses", "")).startswith("actions/upload-artifact")]
    assert kept == ["evalrun-out/report.json"]  # what merge reads
    assert jobs["report"]["needs"] == "evals"
    steps = jobs["report"]["steps"]
    merges = [s["run"] for s in steps if str(s.get("run", "")).startswith("evalrun ")]
    assert len(merges) == 1 and merges[0].startswith("evalrun merge ")
    assert all(f"--format {fmt}" in merges[0] for fmt in ("junit", "html", "md")) and "-o evalrun-out" in merges[0]
    uploaded = [s["with"]["path"] for s in steps if str(s.get("uses", "")).startswith("actions/upload-artifact")]
    reported = [s["with"]["path"] for s in steps if str(s.get("uses", "")).startswith("dorny/test-reporter")]
    assert (uploaded, reported) == (["evalrun-out/report.html"], ["evalrun-out/junit.xml"])


# the install of the quick start: the same extras (the embedding stage of the cascade) as a local run
SCORING_INSTALL = "pip install -c .ci/constraints.txt '.[embeddings]'"
# a runner takes torch's CPU build from PyTorch's index (PyPI's Linux build brings 3 GB of CUDA libraries)
CPU_TORCH = "--extra-index-url https://download.pytorch.org/whl/cpu "


def test_the_jobs_that_score_install_what_a_local_run_has():
    installs = [s["run"] for s in recipe()["jobs"]["evals"]["steps"] if str(s.get("run", "")).startswith("pip ")]
    in_ci = SCORING_INSTALL.replace("'.[", CPU_TORCH + "'.[")
    assert installs == [in_ci]  # without the extra CI's fuzzy verdicts differ from the developer's
    assert gitlab_recipe()["evals"]["script"][0] == in_ci
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert f".venv/bin/{SCORING_INSTALL} && " in readme  # the quick start's own install


def test_the_gitlab_recipe_runs_shards_in_parallel_and_merges_them():
    jobs = gitlab_recipe()
    assert jobs["stages"] == ["evals", "report"]
    shards = jobs["evals"]["parallel"]
    [run] = [line for line in jobs["evals"]["script"] if line.startswith("evalrun run ")]
    assert "--shard $CI_NODE_INDEX/$CI_NODE_TOTAL" in run and "--output-dir evalrun-out/shard-$CI_NODE_INDEX" in run
    assert shards == 4 and jobs["evals"]["artifacts"]["paths"] == ["evalrun-out/"]
    [merge] = [line for line in jobs["report"]["script"] if line.startswith("evalrun merge ")]
    assert merge.startswith("evalrun merge evalrun-out/shard-*/report.json -o merged ")
    assert jobs["report"]["artifacts"]["reports"]["junit"] == "merged/junit.xml" and "--format junit" in merge


def test_every_flag_in_the_reports_section_exists():
    parser = build_parser()
    commands = evalrun_commands()
    assert len(commands) >= 3
    for command in commands:
        words = shlex.split(command.replace("RUN_DIR", "run").replace("FMT", "html").replace("[-o PATH]", "-o x")
                            .replace("${{ matrix.shard }}", "1").replace("$CI_NODE_INDEX/$CI_NODE_TOTAL", "1/4"))[1:]
        words = _with_default_command(words)
        known = options_of(parser, words[0])
        flags = [w.split("=", 1)[0] for w in words if w.startswith("-")]
        assert flags, command
        for flag in flags:
            assert flag in known, f"README: `{command}` uses {flag}, which `evalrun {words[0]}` does not have"
        try:
            parser.parse_args(words)
        except SystemExit:
            raise AssertionError(f"README: `{command}` does not parse") from None


def test_the_interval_examples_are_computed():
    for passed, n in ((9, 10), (900, 1000)):
        low, high = wilson_interval(passed, n)
        assert f"{passed / n:.1%} ({low:.1%}–{high:.1%})" in SECTION
