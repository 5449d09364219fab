"""The README is tested: its commands are the ones CI runs, its example is the real file; the examples that moved
from it into docs/ are valid there."""
from __future__ import annotations

import re

import yaml

from runner.config.model import Config
from runner.suite.load import load_file
from tests.helpers.cli_helpers import REPO, write
from tests.helpers.docs_pages import code_blocks as blocks_of, page

README = (REPO / "README.md").read_text(encoding="utf-8")


def code_blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", README, flags=re.S)


def test_ci_runs_the_readme_test_command_verbatim():
    bash = code_blocks("bash")
    main_command, test_command = bash[0].strip(), bash[1].strip()
    assert main_command.endswith("evalrun suites/")
    assert test_command.endswith("python -m pytest -n auto")  # pytest-xdist: one worker per core
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert test_command in ci.splitlines()


def test_the_complete_example_is_the_bundled_suite():
    example = code_blocks("yaml")[0]
    assert example == (REPO / "suites" / "hr" / "timeoff.yaml").read_text(encoding="utf-8")


def test_the_argument_rule_examples_validate(tmp_path):
    snippet = next(b for b in blocks_of(page("reference/suite-format.md"), "yaml") if b.startswith("arg_matching:"))
    rules = yaml.safe_load(snippet)["arg_matching"]
    args = dict.fromkeys(rules, "x")
    suite = {"goal_details": [{"type": "tool_call", "name": "g", "tool_name": "t", "args": args, "arg_matching": rules}]}
    path = write(tmp_path / "rules.yaml", yaml.safe_dump(suite))
    cases, diagnostics, _ = load_file(path)
    assert diagnostics == [] and len(cases) == 1


def test_the_config_example_is_a_valid_config():
    example = next(b for b in blocks_of(page("how-to/run.md"), "yaml") if b.startswith("similarity_threshold:"))
    Config.model_validate(yaml.safe_load(example))


def test_every_exit_code_is_documented():
    for code in range(6):
        assert re.search(rf"^\| {code} \| ", page("how-to/run.md"), flags=re.M), code
