"""Files written whole or not at all (runner.util.atomic): the folder is made on first need, a failed write
leaves the previous file and no temporary behind."""
from __future__ import annotations

import pytest

from runner.util.atomic import open_atomically, write_text_atomically


def test_a_file_in_folders_that_do_not_exist_yet(tmp_path):
    target = tmp_path / "a" / "b" / "c.json"
    write_text_atomically(target, "{}")
    write_text_atomically(target.with_name("d.json"), "[]")  # the folder is there now
    assert target.read_text() == "{}" and target.with_name("d.json").read_text() == "[]"
    assert sorted(p.name for p in target.parent.iterdir()) == ["c.json", "d.json"]


def test_a_write_that_fails_keeps_the_previous_file_and_leaves_no_temporary(tmp_path):
    target = tmp_path / "report.json"
    target.write_text("before")
    def write_half_then_fail() -> None:
        with open_atomically(target) as stream:
            stream.write("half")
            raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        write_half_then_fail()
    assert target.read_text() == "before"
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]


def test_bytes_and_durable(tmp_path):
    target = tmp_path / "x" / "r.bin"
    with open_atomically(target, "wb", durable=True) as stream:
        stream.write(b"\x00\x01")
    assert target.read_bytes() == b"\x00\x01" and [p.name for p in target.parent.iterdir()] == ["r.bin"]
