"""What collection keeps per case (runner.run.case_index): a run of 50,000 recorded cases holds a ref for
each for the whole run, so a ref is small, shares what its file's cases share, and still reads as before
(path, source, file_id, fingerprint...), pickled too (the read pool sends refs back, Ray ships them)."""
from __future__ import annotations

import gc
import json
import pickle
import sys
import tracemalloc
from pathlib import Path

import pytest

from runner.run.case_index import CaseRef, index_cases
from runner.suite.models import SourceRef

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from bench_replay import make_case

BYTES_PER_REF = 700  # measured: ~450 (the refs before: ~1,300)


def _bench_folder(root: Path, count: int) -> Path:
    """Cases shaped as the scale benchmark's (10 goals, a transcript each): two files a case."""
    suites = root / "suites"
    (suites / "t").mkdir(parents=True)
    for n in range(count):
        make_case(suites, n)
    return suites


def test_collection_keeps_a_bounded_size_per_case(tmp_path, monkeypatch):
    """Measured as the bytes still allocated (tracemalloc) once collection returned, the refs, the list of
    files and the diagnostics included, divided by the cases; no case kept loaded (a large run keeps none)."""
    monkeypatch.chdir(tmp_path)
    _bench_folder(tmp_path, 400)
    monkeypatch.setattr("runner.run.case_index.KEEP_LOADED", 0)
    index_cases([Path("suites")], None, roots=[tmp_path])  # first: imports, schema and regex caches
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        index = index_cases([Path("suites")], None, roots=[tmp_path])
        gc.collect()
        kept = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert len(index.refs) == 400 and index.diagnostics == [] and all(ref.loaded is None for ref in index.refs)
    assert kept / len(index.refs) < BYTES_PER_REF, f"{kept / len(index.refs):.0f} bytes a case"


def test_past_hold_files_no_case_is_kept_loaded_and_the_refs_read_the_same(tmp_path, monkeypatch):
    """A collection of more files than HOLD_FILES keeps no loaded case (their ~20 KiB each would be most of a
    large run's memory): the same refs otherwise, and every case reads back as the held one did."""
    from runner.run.case_index import CaseLoader

    monkeypatch.chdir(tmp_path)
    _bench_folder(tmp_path, 30)
    held = index_cases([Path("suites")], None, roots=[tmp_path]).refs
    assert all(ref.loaded is not None for ref in held)
    monkeypatch.setattr("runner.run.case_index.HOLD_FILES", 60)  # 61 files: the suites, their transcripts, one more
    (tmp_path / "suites" / "t" / "stray.json").write_text(json.dumps([{"role": "user", "content": "hi"}]))
    light = index_cases([Path("suites")], None, roots=[tmp_path]).refs
    assert all(ref.loaded is None for ref in light)
    assert light == held and [str(ref.source) for ref in light] == [str(ref.source) for ref in held]
    loader = CaseLoader([tmp_path])
    assert [loader.load(ref) for ref in light] == [ref.loaded for ref in held]


def test_refs_share_their_file_and_tags_and_read_as_the_case_says(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "suites").mkdir()
    case = {"tags": ["smoke", "fast"], "starting_sentence": "hi",
            "goal_details": [{"type": "text", "name": "say", "response": "ok"}]}
    listed = "".join(f"  - id: c{n}\n    tags: [smoke, fast]\n    starting_sentence: hi\n"
                     "    goal_details: [{type: text, name: say, response: ok}]\n" for n in range(3))
    (tmp_path / "suites" / "many.yaml").write_text("agent: bot\ncases:\n" + listed)  # cases at lines 3, 7, 11
    (tmp_path / "suites" / "other.json").write_text(json.dumps({**case, "id": "d0"}))
    refs = index_cases([Path("suites")], None).refs
    assert [ref.id for ref in refs] == ["c0", "c1", "c2", "d0"]
    first = refs[0]
    assert (first.path, first.explicit, first.index, first.file_id, first.agent, first.recorded) == (
        Path("suites/many.yaml"), False, 0, "c0", "bot", False)
    assert first.source == SourceRef(path="suites/many.yaml", line=3, column=5)
    assert [str(ref.source) for ref in refs] == ["suites/many.yaml:3:5", "suites/many.yaml:7:5",
                                                 "suites/many.yaml:11:5", "suites/other.json:1:1"]
    assert refs[0]._file is refs[1]._file is refs[2]._file and refs[3]._file is not refs[0]._file
    assert refs[0].tags == ("smoke", "fast") and refs[0].tags is refs[1].tags is refs[3].tags
    assert first.fingerprint is not None and first.fingerprint == refs[1].fingerprint != refs[3].fingerprint
    assert first.loaded is not None and first.loaded.id == "c0"

    again = pickle.loads(pickle.dumps(refs))
    assert again == refs and [str(r.source) for r in again] == [str(r.source) for r in refs]
    assert again[0]._file is again[1]._file and again[0].loaded == first.loaded
    assert len(pickle.dumps(CaseRef(first.id, first._file, 0, 1, 1, (), None))) < 200

    renamed = first.renamed("folder/c0")
    assert (renamed.id, renamed.file_id, renamed.source, renamed.loaded) == ("folder/c0", "c0", first.source, first.loaded)
    assert renamed != first and hash(first) == hash(pickle.loads(pickle.dumps(first)))
    assert "suites/many.yaml:3:5" in repr(first)


@pytest.mark.parametrize("processes", [1, 2])
def test_ids_qualified_by_their_folder_stay_so_on_the_refs(tmp_path, monkeypatch, processes):
    """Two files of the same name in two folders with no id written: their refs are named by folder (the
    rename goes through `CaseRef.renamed`), and each still finds its own case."""
    from runner.run.case_index import CaseLoader

    monkeypatch.chdir(tmp_path)
    case = {"starting_sentence": "hi", "goal_details": [{"type": "text", "name": "say", "response": "ok"}]}
    for folder in ("a", "b"):
        (tmp_path / "suites" / folder).mkdir(parents=True)
        (tmp_path / "suites" / folder / "same.json").write_text(json.dumps({**case, "description": folder}))
    refs = index_cases([Path("suites")], None, processes=processes).refs
    assert [(ref.id, ref.file_id) for ref in refs] == [("a/same", "same"), ("b/same", "same")]
    assert [CaseLoader().load(ref).description for ref in refs] == ["a", "b"]
    assert [CaseLoader().load(ref).id for ref in refs] == ["a/same", "b/same"]
