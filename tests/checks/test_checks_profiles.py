"""`profiles:` in evalrun.yaml and `evalrun run --profile NAME`, through the real CLI."""
from __future__ import annotations

from tests.helpers.checks_cli import replay_project
from tests.helpers.cli_helpers import run_cli, write
from tests.helpers.run_live import report_of

CHECKS = """
          - {type: contains, value: "15778303"}
          - {type: semantic_match, reference: "The id is 15778303.", name: same answer}
          - {type: response_match_score, reference: "The assignment id is 15778303.", threshold: 0.7}
          - {type: not_contains, value: nwaters, name: no username}
        """
PROFILES = """
embeddings: {enabled: false}
profiles:
  ci: {judged: false, exclude: ["no *"]}
  only_text: {include: ["contains*", "response_match"]}
  nightly: {}
"""


def statuses(root):
    return [(c["name"], c["status"], c["explanation"]) for c in report_of(root)["cases"][0]["checks"]]


def test_a_profile_leaves_out_judged_and_excluded_checks_as_skipped(tmp_path):
    replay_project(tmp_path, CHECKS)
    write(tmp_path / "evalrun.yaml", PROFILES)
    result = run_cli("run", "suites", "--profile", "ci", "--output-dir", "out", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    found = statuses(tmp_path)
    assert [(n, s) for n, s, _ in found] == [("contains", "passed"), ("same answer", "skipped"),
                                             ("response_match_score", "passed"), ("no username", "skipped")]
    assert found[1][2] == "skipped: left out by profile ci (judged: false, and this check asks a judge model)"
    assert found[3][2] == "skipped: left out by profile ci (its exclude has 'no *')"


def test_include_matches_aliases_by_their_family_and_leaves_out_the_rest(tmp_path):
    replay_project(tmp_path, CHECKS)
    write(tmp_path / "evalrun.yaml", PROFILES)
    result = run_cli("run", "suites", "--profile", "only_text", "--output-dir", "out", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    found = statuses(tmp_path)
    # response_match_score is an alias of response_match: the family's name matches the include
    assert [(n, s) for n, s, _ in found] == [("contains", "passed"), ("same answer", "skipped"),
                                             ("response_match_score", "passed"), ("no username", "skipped")]
    assert found[1][2] == "skipped: left out by profile only_text (not in its include: contains*, response_match)"


def test_without_a_profile_or_with_an_empty_one_every_check_runs(tmp_path):
    replay_project(tmp_path, CHECKS)
    write(tmp_path / "evalrun.yaml", PROFILES)
    result = run_cli("run", "suites", "--profile", "nightly", "--output-dir", "out", cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr  # "no username" fails: the answer names nwaters
    found = statuses(tmp_path)
    assert [s for _, s, _ in found] == ["passed", "unscored", "passed", "failed"]
    assert found[1][2].startswith("unscored: no judge model is configured")  # not left out: nobody could decide it


def test_an_unknown_profile_is_a_usage_error_with_did_you_mean(tmp_path):
    replay_project(tmp_path, CHECKS)
    write(tmp_path / "evalrun.yaml", PROFILES)
    result = run_cli("run", "suites", "--profile", "nightyl", "--output-dir", "out", cwd=tmp_path)
    assert result.returncode == 4
    assert (f"evalrun run: error: --profile: unknown profile 'nightyl' ({tmp_path / 'evalrun.yaml'} declares "
            "profiles: ci, nightly, only_text) (did you mean 'nightly'?)") in result.stderr.splitlines()
    assert not (tmp_path / "out" / "report.json").exists()


def test_a_bad_profile_in_evalrun_yaml_is_reported_with_its_position(tmp_path):
    replay_project(tmp_path, CHECKS)
    write(tmp_path / "evalrun.yaml", """
        profiles:
          ci: {judgd: false}
        """)
    result = run_cli("run", "suites", "--profile", "ci", "--output-dir", "out", cwd=tmp_path)
    assert result.returncode == 4
    assert any(line.startswith("evalrun.yaml:2:8: error: unknown key 'judgd'") for line in result.stderr.splitlines()), \
        result.stderr
