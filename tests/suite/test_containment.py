"""Transcripts and --replay files stay inside the suite roots; symlinks that lead out count as outside."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from runner.suite.containment import recordings_for, replay_files, resolve_transcript
from runner.suite.load import load_suites
from runner.transcripts.read import TranscriptError
from tests.helpers.cli_helpers import run_cli, write, write_json

MESSAGES = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
SUITE = "starting_sentence: hi\ngoal_details:\n  - {{type: text, name: greet, keywords: [hello]}}\ntranscript: {t}\n"


@pytest.fixture
def project(tmp_path, monkeypatch):
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    monkeypatch.chdir(root)
    return root


def texts(diagnostics) -> list[str]:
    return [str(d) for d in diagnostics]


def test_an_absolute_transcript_outside_the_suites_is_an_error_with_its_position(project):
    write(project / "suites" / "a.yaml", SUITE.format(t="/etc/passwd"))
    assert texts(load_suites([Path("suites")]).diagnostics) == [
        "suites/a.yaml:4:13: error: transcript '/etc/passwd' is outside the suite folders (suites); evalrun reads "
        "transcripts only from there: move the file, or add its folder to `allowed_paths` in evalrun.yaml"]


def test_a_relative_path_climbing_out_is_an_error_in_validate(project):
    write_json(project.parent / "secret.json", MESSAGES)
    write(project / "suites" / "a.yaml", SUITE.format(t="../../secret.json"))
    done = run_cli("validate", "suites", cwd=project, timeout=60)
    assert done.returncode == 4
    assert done.stdout.startswith("suites/a.yaml:4:13: error: transcript '../../secret.json' is outside the suite folders")


def test_a_symlink_inside_that_points_outside_counts_as_outside(project):
    write_json(project.parent / "secret.json", MESSAGES)
    (project / "suites").mkdir()
    os.symlink(project.parent / "secret.json", project / "suites" / "t.json")
    write(project / "suites" / "a.yaml", SUITE.format(t="t.json"))
    assert texts(load_suites([Path("suites")]).diagnostics)[0].startswith(
        "suites/a.yaml:4:13: error: transcript 't.json' is outside the suite folders")


def test_the_config_folder_and_its_allowed_paths_are_roots(project):
    """As a run collects (runner.session.collect: the roots from evalrun.yaml); the suite layer alone reads no
    config, so its default roots are the folders named."""
    from runner.session.collect import collect

    write_json(project / "recordings" / "t.json", MESSAGES)
    write_json(project.parent / "shared" / "t.json", MESSAGES)
    write(project / "suites" / "a.yaml", SUITE.format(t="../recordings/t.json"))
    write(project / "suites" / "b.yaml", SUITE.format(t="../../shared/t.json"))
    assert [d.code for d in collect([Path("suites")]).diagnostics] == ["transcript-outside", "transcript-outside"]
    write(project / "evalrun.yaml", "allowed_paths: [../shared]\n")
    result = collect([Path("suites")])
    assert (texts(result.diagnostics), sorted(c.id for c in result.cases)) == ([], ["a", "b"])
    assert [d.code for d in load_suites([Path("suites")]).diagnostics] == ["transcript-outside", "transcript-outside"]


def test_resolve_transcript_refuses_what_validate_reports(project):
    write(project / "suites" / "a.yaml", SUITE.format(t="/etc/passwd"))
    result = load_suites([Path("suites")], roots=[])  # no roots: every transcript is outside, the case still loads
    case = result.cases[0] if result.cases else None
    assert case is None  # an outside transcript is an error: the file yields no case
    write(project / "suites" / "a.yaml", SUITE.format(t="t.json"))
    write_json(project / "suites" / "t.json", MESSAGES)
    case = load_suites([Path("suites")]).cases[0]
    assert resolve_transcript(case, roots=[project / "suites"]) == Path("suites") / "t.json"
    with pytest.raises(TranscriptError, match=r"^transcript 't\.json' is outside the suite folders \(elsewhere\)"):
        resolve_transcript(case, roots=[Path("elsewhere")])


def test_replay_files_single_and_watsonx_runs(tmp_path):
    write_json(tmp_path / "plain.json", MESSAGES)
    write_json(tmp_path / "data_simple.messages.json", MESSAGES)
    for n in (2, 10, 1):
        write_json(tmp_path / f"data_complex.run{n}.messages.json", MESSAGES)
    write_json(tmp_path / "data_complex.run1.metrics.json", {})
    assert replay_files(tmp_path, "plain") == [(None, tmp_path / "plain.json")]
    assert replay_files(tmp_path, "data_simple") == [(None, tmp_path / "data_simple.messages.json")]
    assert replay_files(tmp_path, "data_complex") == [
        (1, tmp_path / "data_complex.run1.messages.json"), (2, tmp_path / "data_complex.run2.messages.json"),
        (10, tmp_path / "data_complex.run10.messages.json")]
    assert replay_files(tmp_path, "missing") == []


def test_an_id_with_a_folder_finds_the_recording_in_that_sub_folder(tmp_path):
    write_json(tmp_path / "data_no_summary" / "data_simple.messages.json", MESSAGES)
    assert replay_files(tmp_path, "data_no_summary/data_simple") == [
        (None, tmp_path / "data_no_summary" / "data_simple.messages.json")]


@pytest.mark.parametrize("case_id", ["../secret", "a/../../b", "..", "/etc/passwd", "a\\b", "a//b", ""])
def test_replay_ids_cannot_leave_the_folder(tmp_path, case_id):
    with pytest.raises(TranscriptError, match="cannot name a file in the --replay folder"):
        replay_files(tmp_path / "replay", case_id)


def test_a_replay_file_linking_outside_is_refused(tmp_path):
    write_json(tmp_path / "secret.json", MESSAGES)
    (tmp_path / "replay").mkdir()
    os.symlink(tmp_path / "secret.json", tmp_path / "replay" / "c.json")
    with pytest.raises(TranscriptError, match=r"is a link to a file outside the --replay folder"):
        replay_files(tmp_path / "replay", "c")


def test_resolve_transcript_with_replay_names_what_it_looked_for(tmp_path, project):
    write(project / "suites" / "a.yaml", SUITE.format(t="t.json"))
    write_json(project / "suites" / "t.json", MESSAGES)
    case = load_suites([Path("suites")]).cases[0]
    with pytest.raises(TranscriptError, match=r"no recorded conversation for case 'a' in .*replay "
                                              r"\(looked for a\.json and a\.messages\.json\)"):
        resolve_transcript(case, roots=[project], replay_dir=tmp_path / "replay")
    write_json(tmp_path / "replay" / "a.messages.json", MESSAGES)
    assert resolve_transcript(case, roots=[project], replay_dir=tmp_path / "replay") == tmp_path / "replay" / "a.messages.json"


def test_recordings_for_gives_every_run_or_the_one_transcript(tmp_path, project):
    write(project / "suites" / "a.yaml", SUITE.format(t="t.json"))
    write_json(project / "suites" / "t.json", MESSAGES)
    case = load_suites([Path("suites")]).cases[0]
    assert recordings_for(case, roots=[project]) == [(None, Path("suites") / "t.json")]
    replay = tmp_path / "replay"
    for n in (1, 2):
        write_json(replay / f"a.run{n}.messages.json", MESSAGES)
    assert recordings_for(case, roots=[project], replay_dir=replay) == [
        (1, replay / "a.run1.messages.json"), (2, replay / "a.run2.messages.json")]
    with pytest.raises(TranscriptError, match="no recorded conversation for case 'a'"):
        recordings_for(case, roots=[project], replay_dir=tmp_path / "empty")
