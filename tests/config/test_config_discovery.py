"""Which evalrun.yaml applies: found next to the suites or above them, never above the repository root
(or, outside a repository, the current folder); and the line that says which one is used."""
from __future__ import annotations

import os
from pathlib import Path

from runner.config.discovery import config_search, find_config
from runner.config.load import config_line
from tests.helpers.cli_helpers import run_cli, write


def test_a_config_above_the_repository_root_is_never_used(tmp_path):
    write(tmp_path / "evalrun.yaml", "judge: {model: openai/gpt-4o-mini, api_base: http://attacker.example}\n")
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    write(repo / "suites" / "a.yaml", "forbid_extra_calls: true\ngoal_details: []\n")
    assert find_config([repo / "suites"], cwd=repo) is None
    assert config_search([repo / "suites"], cwd=repo).searched == [(repo / "suites").resolve(), repo.resolve()]


def test_a_worktree_root_holding_a_git_file_stops_the_search_too(tmp_path):
    write(tmp_path / "evalrun.yaml", "similarity_threshold: 0.1\n")
    write(tmp_path / "wt" / ".git", "gitdir: /elsewhere\n")
    (tmp_path / "wt" / "suites").mkdir()
    assert find_config([tmp_path / "wt" / "suites"], cwd=tmp_path) is None


def test_the_config_at_the_repository_root_is_found(tmp_path):
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    config = write(repo / "evalrun.yaml", "similarity_threshold: 0.5\n")
    (repo / "suites" / "hr").mkdir(parents=True)
    assert find_config([repo / "suites" / "hr"], cwd=tmp_path) == config.resolve()


def test_outside_a_repository_the_search_stops_at_the_current_folder(tmp_path):
    write(tmp_path / "evalrun.yaml", "similarity_threshold: 0.1\n")
    work = tmp_path / "work"
    (work / "suites").mkdir(parents=True)
    assert find_config([work / "suites"], cwd=work) is None
    assert find_config([work / "suites"], cwd=tmp_path) == (tmp_path / "evalrun.yaml").resolve()


def test_suites_outside_both_look_only_in_their_own_folder(tmp_path):
    write(tmp_path / "evalrun.yaml", "similarity_threshold: 0.1\n")
    (tmp_path / "suites").mkdir()
    (tmp_path / "elsewhere").mkdir()
    assert config_search([tmp_path / "suites"], cwd=tmp_path / "elsewhere").searched == [(tmp_path / "suites").resolve()]


def test_the_line_that_says_which_config_is_used(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".git").mkdir()
    (tmp_path / "suites").mkdir()
    assert config_line([Path("suites")]) == "config: none found (searched suites .. .); using defaults"
    write(tmp_path / "suites" / "evalrun.yaml", "similarity_threshold: 0.5\n")
    assert config_line([Path("suites")]) == "config: suites/evalrun.yaml"
    assert config_line([Path("suites")], Path("other.yaml")) == "config: other.yaml (--config)"


def test_validate_ignores_a_broken_config_in_a_parent_folder(tmp_path):
    """The user-visible fault: a stranger's evalrun.yaml in /tmp (here: a broken one) decided the run."""
    write(tmp_path / "evalrun.yaml", "similarity_threshold: 5\n")
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    write(project / "suites" / "a.yaml", "forbid_extra_calls: true\ngoal_details: []\n")
    done = run_cli("validate", "suites", cwd=project, timeout=60)
    assert (done.returncode, done.stdout) == (0, ""), done.stdout + done.stderr


def test_a_dangling_config_link_is_found_and_reported_not_skipped(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".git").mkdir()
    os.symlink("missing.yaml", tmp_path / "evalrun.yaml")
    write(tmp_path / "s" / "a.yaml", "forbid_extra_calls: true\ngoal_details: []\n")
    done = run_cli("validate", "s", cwd=tmp_path, timeout=60)
    assert done.returncode == 4
    assert done.stdout == "evalrun.yaml:1:1: error: cannot read file: no such file\n"
