"""Collecting a long list of suite files on every core (runner.suite.read_pool): the same cases, references
and diagnostics as one process, whatever the files are; recorded conversations only parsed quickly."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from runner.run.case_index import KEEP_LOADED, index_cases
from runner.suite import load as load_module
from runner.suite.load import load_suites
from runner.suite.read_pool import MIN_FILES

MESSAGES = [{"role": "user", "content": "Cancel booking B1."},
            {"role": "assistant", "content": "Done."}]


def _suite(n: int, transcript: str) -> dict:
    return {"id": f"case-{n:04d}", "tags": [f"k{n % 3}"], "transcript": transcript,
            "goal_details": [{"type": "text", "name": "tell", "response": "Done."}]}


def _mixed_folder(root: Path, count: int) -> Path:
    """Suites with their transcripts, and every kind of file collection tells apart: broken suites, a
    duplicate id, a conversation no suite names, a transcript listed before the suite that names it, one
    cut short, an ADK list eval set, a file that is not YAML."""
    suites = root / "suites"
    (suites / "t").mkdir(parents=True)
    (suites / "a").mkdir()
    for n in range(count):
        if n % 50 == 7:
            (suites / f"case-{n:04d}.json").write_text(json.dumps({"id": f"case-{n:04d}", "goal_details": "wrong"}))
            continue
        case = _suite(n, f"t/case-{n:04d}.json")
        if n == 11:
            case["id"] = "case-0010"  # a duplicate id: an error at both
        (suites / f"case-{n:04d}.json").write_text(json.dumps(case))
        (suites / "t" / f"case-{n:04d}.json").write_text(json.dumps(MESSAGES))
    (suites / "a" / "early.json").write_text(json.dumps(MESSAGES))  # read before the suite naming it
    (suites / "z-names-early.json").write_text(json.dumps(_suite(9000, "a/early.json")))
    (suites / "t" / "stray.json").write_text(json.dumps(MESSAGES))  # a conversation no suite names
    (suites / "t" / "cut.json").write_text('[{"role": "user"')
    (suites / "adk.json").write_text(json.dumps([{"query": "hi", "expected_tool_use": [], "reference": "Hello"}]))
    (suites / "notes.yaml").write_text("just: [a, note\n")
    return suites


def _snapshot(result) -> tuple:
    return ([(ref.id, ref.file_id, str(ref.path), ref.index, str(ref.source), ref.tags, ref.recorded)
             for ref in result.refs], [str(d) for d in result.diagnostics], result.files)


@pytest.fixture(scope="module")
def mixed(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("mixed")
    _mixed_folder(root, MIN_FILES)  # two files a case: well past the list the pool takes
    return root


def test_every_core_collects_what_one_process_collects(mixed, monkeypatch):
    monkeypatch.chdir(mixed)
    monkeypatch.setattr("runner.run.case_index.KEEP_LOADED", 50)  # the files after the first 50 cases are shared
    one = index_cases([Path("suites")], None, processes=1)
    many = index_cases([Path("suites")], None, processes=2)
    assert _snapshot(many) == _snapshot(one)
    said = "\n".join(str(d) for d in one.diagnostics)
    assert "duplicate case id 'case-0010'" in said
    assert "suites/case-0007.json" in said
    # files no suite names are read in full, as before: the unreadable ones are named, a conversation is not
    assert str(one.diagnostics[0]) == (
        "suites:1:1: warning: passed over 2 files that are not a suite: suites/notes.yaml (YAML syntax error: did not "
        "find expected ',' or ']' (while parsing a flow sequence)); suites/t/cut.json (invalid JSON: Expecting ',' "
        "delimiter)")
    assert len(one.refs) == len(many.refs) > MIN_FILES * 0.9



PROBE = """
import os, sys, threading
from pathlib import Path
from runner.suite.load import FileReading
from runner.suite.read_pool import MIN_FILES, read_in_processes
files = sorted((p, False) for p in Path("suites").rglob("*.json"))
reading = FileReading(None, None, False, None)
outcomes = read_in_processes(reading, files, 2)
times = os.times()
alone = len(os.listdir("/proc/self/task")) == 1  # the pool's thread is gone: the replay pool may fork next
print(outcomes is not None and len(outcomes) == len(files), times.children_user + times.children_system > 0,
      read_in_processes(reading, files[:MIN_FILES - 1], 2) is None, alone)
threading.Thread(target=threading.Event().wait, args=(5,), daemon=True).start()
print(read_in_processes(reading, files, 2) is None)  # another thread runs: no fork
"""


def test_the_pool_reads_in_processes_but_not_a_short_list_nor_beside_another_thread(mixed):
    """In a process of its own (pytest-xdist's workers run threads, so they never fork)."""
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("one usable CPU: the files are read here")
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=mixed, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])})
    assert done.stdout.split() == ["True"] * 5, done.stdout + done.stderr


def test_only_the_first_cases_stay_loaded_and_the_readers_hold_none(mixed, monkeypatch):
    monkeypatch.chdir(mixed)
    monkeypatch.setattr("runner.run.case_index.KEEP_LOADED", 100)
    refs = index_cases([Path("suites")], None, processes=2).refs
    held = [ref for ref in refs if ref.loaded is not None]
    assert 90 <= len(held) <= 100 < KEEP_LOADED  # a few were in the files with errors, which yield no case
    assert all(ref.loaded.id == ref.id for ref in held)


def test_a_named_transcript_is_parsed_once_quickly_and_never_checked_as_a_suite(tmp_path, monkeypatch):
    """The transcript of a suite is not read as a suite at collection (its outcome would be dropped):
    the strict reader (duplicate keys, positions, the schema) reads the suite file alone."""
    suites = tmp_path / "suites"
    (suites / "t").mkdir(parents=True)
    (suites / "one.json").write_text(json.dumps(_suite(1, "t/one.json")))
    (suites / "t" / "one.json").write_text(json.dumps(MESSAGES))
    read = []
    real = load_module.read_document

    def counted(path, *args, **kwargs):
        read.append(Path(path).name)
        return real(path, *args, **kwargs)

    monkeypatch.setattr(load_module, "read_document", counted)
    result = load_suites([suites])
    assert [case.id for case in result.cases] == ["case-0001"] and result.diagnostics == []
    assert read == ["one.json"] and len(read) == 1  # the suite; the transcript only had the quick parse


def test_a_list_eval_set_named_as_a_transcript_still_yields_its_cases(tmp_path):
    """Only a conversation is passed over unread: an ADK eval set stays a suite even when a case names it."""
    suites = tmp_path / "suites"
    suites.mkdir()
    (suites / "adk.json").write_text(json.dumps([{"query": "hi", "expected_tool_use": [], "reference": "Hello"}]))
    (suites / "names-it.json").write_text(json.dumps(_suite(1, "adk.json")))
    result = load_suites([suites])
    assert sorted(case.id for case in result.cases) == sorted(["case-0001", *[c.id for c in load_suites(
        [suites / "adk.json"]).cases]])
    assert len(result.cases) == 2


def _suite_files(*folders: Path) -> list[Path]:
    return sorted(p for folder in folders for p in folder.rglob("*")
                  if p.suffix in (".yaml", ".yml", ".json") and p.is_file() and p.stat().st_size < 1 << 20)


def _rebuild_each(paths: list[Path]) -> int:
    """How many of `paths` collection reads as suites with no error; each, rebuilt from its bytes without
    the checks, must give the very cases the full read gives (coercions, shared defaults, sources included)."""
    from runner.suite.load import FileReading, rebuild_cases
    from runner.suite.reader import fingerprint
    from runner.util.files import read_bytes

    rebuilt = 0
    for path in paths:
        outcome = FileReading(None, None, False, None)(path, True)
        if outcome.fingerprint is None:
            continue  # a foreign format, a file with errors, not a suite: read in full every time
        raw = read_bytes(path, 1 << 24, "suites")
        assert fingerprint(raw) == outcome.fingerprint
        assert rebuild_cases(path, raw) == outcome.cases, path
        rebuilt += 1
    return rebuilt


def test_a_file_read_again_unchanged_is_rebuilt_into_the_cases_a_full_read_gives(tmp_path):
    """Every bundled and test suite (and the benchmark's cases): the repository's own files only, so the
    count is the same on a bare clone as beside the shared data."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
    from bench_replay import make_case

    (tmp_path / "t").mkdir()
    for n in range(3):
        make_case(tmp_path, n)
    root = Path(__file__).resolve().parents[2]
    own = _suite_files(root / "suites", root / "tests" / "data" / "suites")
    assert _rebuild_each([*own, *sorted(tmp_path.glob("case-*.json"))]) >= 14


def test_the_reference_suites_read_again_unchanged_are_rebuilt_into_the_cases_a_full_read_gives():
    """The same for the shared reference data's suites (watsonx datasets and the others); skips without it."""
    from tests.helpers.shared_data import require_shared

    assert _rebuild_each(_suite_files(require_shared())) >= 7


def test_a_case_not_kept_loaded_is_rebuilt_when_unchanged_and_read_in_full_when_changed(tmp_path, monkeypatch):
    from runner.run.case_index import CaseChanged, CaseLoader
    from runner.suite import load as load_module

    suites = tmp_path / "suites"
    suites.mkdir()
    for n in range(3):
        (suites / f"c{n}.json").write_text(json.dumps(_suite(n, "t.json")))
    monkeypatch.setattr("runner.run.case_index.KEEP_LOADED", 0)
    refs = index_cases([suites], None).refs
    assert all(ref.loaded is None and ref.fingerprint for ref in refs)
    full = []
    monkeypatch.setattr("runner.run.case_index.load_file",
                        lambda *a, **k: full.append(a[0].name) or load_module.load_file(*a, **k))
    assert CaseLoader().load(refs[0]).id == "case-0000" and full == []  # rebuilt from the same bytes
    (suites / "c1.json").write_text(json.dumps({**_suite(1, "t.json"), "description": "edited since"}))
    assert CaseLoader().load(refs[1]).description == "edited since" and full == ["c1.json"]
    (suites / "c2.json").write_text(json.dumps(_suite(7, "t.json")))  # another case where c2's was
    with pytest.raises(CaseChanged):
        CaseLoader().load(refs[2])


def test_real_paths_resolves_as_real_path_does(tmp_path):
    """Collection resolves each folder once (RealPaths); every path comes out as `real_path` gives it:
    a plain file, a symlinked file, a file in a symlinked folder, `..`, a file that does not exist, a loop."""
    from runner.util.files import RealPaths, real_path

    (tmp_path / "real" / "t").mkdir(parents=True)
    (tmp_path / "real" / "t" / "a.json").write_text("[]")
    (tmp_path / "linked").symlink_to(tmp_path / "real")
    (tmp_path / "real" / "t" / "b.json").symlink_to(tmp_path / "real" / "t" / "a.json")
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    resolve = RealPaths()
    for path in [tmp_path / "real" / "t" / "a.json", tmp_path / "linked" / "t" / "a.json",
                 tmp_path / "linked" / "t" / "b.json", tmp_path / "linked" / "t" / ".." / "t" / "a.json",
                 tmp_path / "linked" / "t" / "missing.json", tmp_path / "loop", tmp_path / "loop" / "x.json"]:
        assert resolve(path) == real_path(path), path
        assert resolve(path) == real_path(path), path  # and again, from the folders it keeps
