"""Hostile input files: special files, size limits, symlink loops, huge numbers, deep and wide data.

Each is a clear diagnostic, never a hang and never a traceback; FIFOs and symlinks are real.
"""
from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from runner.suite.load import Exclusion, load_suites
from runner.suite.reader import read_document
from runner.util import files
from tests.helpers.cli_helpers import run_cli, write
from tests.helpers.input_limits import PEAK_KIB

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs POSIX FIFOs")


def messages(diagnostics) -> list[str]:
    return [str(d) for d in diagnostics]


def _within(seconds: float, fn, *args):
    """fn(*args), failing the test (instead of hanging it) when it takes longer than `seconds`."""
    box: dict = {}
    worker = threading.Thread(target=lambda: box.setdefault("value", fn(*args)), daemon=True)
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), f"{fn.__name__} did not return within {seconds} s"
    return box["value"]


# ---------------------------------------------------------------- special files and sizes

def test_a_fifo_named_as_a_suite_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "pipe.yaml"
    os.mkfifo(fifo)
    doc = _within(5, read_document, fifo, "pipe.yaml")
    assert messages(doc.diagnostics) == [
        "pipe.yaml:1:1: error: cannot read file: it is a named pipe (FIFO), not a regular file; evalrun reads suites "
        "and configs only from regular files"]


def test_a_device_is_refused_before_it_is_read():
    doc = _within(5, read_document, Path("/dev/zero"), "zero.yaml")
    assert messages(doc.diagnostics) == [
        "zero.yaml:1:1: error: cannot read file: it is a character device, not a regular file; evalrun reads suites "
        "and configs only from regular files"]


def test_a_suite_above_the_size_limit_is_refused_with_the_limit_named(tmp_path):
    big = tmp_path / "big.yaml"
    with open(big, "wb") as out:
        out.truncate(files.SUITE_SIZE_LIMIT + 1)
    doc = read_document(big, "big.yaml")
    assert messages(doc.diagnostics) == [
        "big.yaml:1:1: error: cannot read file: it is 10 MiB, above the 10 MiB limit for suites and configs"]


def test_exactly_at_the_limit_is_read(tmp_path):
    path = tmp_path / "edge.yaml"
    path.write_bytes(b"id: a\n" + b"#" * (files.SUITE_SIZE_LIMIT - 7) + b"\n")
    assert path.stat().st_size == files.SUITE_SIZE_LIMIT
    assert read_document(path, "edge.yaml").data == {"id": "a"}


def test_the_cli_refuses_a_fifo_suite_and_exits_4(tmp_path):
    os.mkfifo(tmp_path / "pipe.yaml")
    result = run_cli("validate", "pipe.yaml", cwd=tmp_path, timeout=30)
    assert result.returncode == 4
    assert "pipe.yaml:1:1: error: cannot read file: it is a named pipe (FIFO)" in result.stdout


def test_a_fifo_config_is_refused_too(tmp_path):
    write(tmp_path / "s" / "a.yaml", "forbid_extra_calls: true\ngoal_details: []\n")
    os.mkfifo(tmp_path / "s" / "evalrun.yaml")
    (tmp_path / ".git").mkdir()
    result = run_cli("validate", "s", cwd=tmp_path, timeout=30)
    assert result.returncode == 4
    assert "s/evalrun.yaml:1:1: error: cannot read file: it is a named pipe (FIFO)" in result.stdout


def test_a_fifo_in_a_suites_folder_is_passed_over_with_a_note(tmp_path):
    write(tmp_path / "s" / "a.yaml", "forbid_extra_calls: true\ngoal_details: []\n")
    os.mkfifo(tmp_path / "s" / "pipe.json")
    (tmp_path / ".git").mkdir()
    result = run_cli("validate", "s", cwd=tmp_path, timeout=30)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout == ("s:1:1: warning: passed over 1 file that is not a suite: s/pipe.json (cannot read "
                             "file: it is a named pipe (FIFO), not a regular file)\n")


# ---------------------------------------------------------------- symlink loops

def test_a_symlink_loop_named_explicitly_is_a_diagnostic(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    os.symlink("b.yaml", "a.yaml")
    os.symlink("a.yaml", "b.yaml")
    assert messages(load_suites([Path("a.yaml")]).diagnostics) == [
        "a.yaml:1:1: error: cannot read it: it is a symlink loop"]


@pytest.mark.parametrize("with_exclude", [False, True])
def test_symlink_loops_in_a_folder_are_passed_over(tmp_path, monkeypatch, with_exclude):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "s" / "ok.yaml", "forbid_extra_calls: true\ngoal_details: []\n")
    os.symlink("loop2.yaml", "s/loop1.yaml")
    os.symlink("loop1.yaml", "s/loop2.yaml")
    os.symlink(".", "s/self")  # a folder that contains itself
    exclude = Exclusion(tmp_path, ["s/drafts"]) if with_exclude else None
    result = load_suites([Path("s")], exclude, roots=[tmp_path])
    assert [c.id for c in result.cases] == ["ok"]
    assert messages(result.diagnostics) == [
        "s:1:1: warning: passed over 2 files that are not a suite: s/loop1.yaml (cannot read file: it is a symlink "
        "loop (too many levels of symbolic links)); s/loop2.yaml (cannot read file: it is a symlink loop (too many "
        "levels of symbolic links))"]


def test_a_symlink_loop_through_the_cli_never_shows_a_traceback(tmp_path):
    write(tmp_path / "evalrun.yaml", "exclude: [drafts]\n")
    os.symlink("x.yaml", tmp_path / "x.yaml")
    (tmp_path / ".git").mkdir()
    for args, code in ((("validate", "x.yaml"), 4), (("validate", "."), 0), (("x.yaml",), 4), ((".",), 5)):
        result = run_cli(*args, cwd=tmp_path, timeout=60)
        assert "Traceback" not in result.stderr + result.stdout, args
        assert result.returncode == code, (args, result.stdout, result.stderr)
        assert "x.yaml" in result.stdout + result.stderr and "symlink loop" in result.stdout + result.stderr, args


# ---------------------------------------------------------------- numbers, depth, width

@pytest.mark.parametrize("name,text,where", [
    ("n.json", '{"goal_details": [], "x": ' + "7" * 4301 + "}", "1:27"),
    ("n.yaml", "goal_details: []\nx: " + "7" * 4301 + "\n", "2:4"),
])
def test_integers_past_pythons_digit_limit_are_a_diagnostic(tmp_path, name, text, where):
    (tmp_path / name).write_text(text, encoding="utf-8")
    doc = read_document(tmp_path / name, name)
    assert messages(doc.diagnostics) == [
        f"{name}:{where}: error: a number longer than 4,300 digits cannot be read as a number (Python's limit); "
        "quote it to keep it as text"]


def test_4300_digits_are_still_a_number(tmp_path):
    (tmp_path / "n.json").write_text('{"x": ' + "7" * 4300 + "}", encoding="utf-8")
    assert read_document(tmp_path / "n.json").data == {"x": int("7" * 4300)}


def test_json_has_the_same_nesting_limit_as_yaml(tmp_path):
    for depth, ok in ((100, True), (101, False)):
        (tmp_path / "d.json").write_text("[" * depth + "]" * depth, encoding="utf-8")
        (tmp_path / "d.yaml").write_text("[" * depth + "]" * depth, encoding="utf-8")
        json_doc, yaml_doc = read_document(tmp_path / "d.json", "d.json"), read_document(tmp_path / "d.yaml", "d.yaml")
        assert (not json_doc.diagnostics, not yaml_doc.diagnostics) == (ok, ok), depth
    assert messages(json_doc.diagnostics) == ["d.json:1:101: error: the file is nested more than 100 levels deep"]


def test_brackets_inside_json_strings_do_not_count_as_nesting(tmp_path):
    (tmp_path / "s.json").write_text('{"goal_details": [], "x": "' + "[{" * 500 + '"}', encoding="utf-8")
    doc = read_document(tmp_path / "s.json")
    assert doc.diagnostics == [] and doc.data["x"] == "[{" * 500


def _peak_kib_in_child(code: str) -> int:
    """The peak resident memory (KiB) of a fresh interpreter running `code`, so earlier tests do not
    count. VmHWM, not ru_maxrss: Linux carries ru_maxrss over from the parent across fork and exec."""
    import subprocess
    import sys

    from tests.helpers.cli_helpers import REPO, cli_env

    out = subprocess.run([sys.executable, "-c", code + PEAK_KIB],
                         cwd=REPO, env=cli_env(), capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.split()
    return int(lines[-1])


@pytest.mark.parametrize("name,body", [
    ("wide.json", "[" + ",".join(["1"] * 300_000) + "]"),
    ("wide.yaml", "".join("- 1\n" for _ in range(300_000))),
])
def test_wide_files_stop_at_the_value_limit_while_reading(tmp_path, name, body):
    path = tmp_path / name
    path.write_text(body, encoding="utf-8")
    started = time.process_time()
    doc = read_document(path, name)
    elapsed = time.process_time() - started
    assert [(d.severity, d.message) for d in doc.diagnostics] == [
        ("error", "the file holds more than 200,000 values, above evalrun's limit")]
    assert doc.data is None
    assert elapsed < 5, f"{elapsed:.1f} s of CPU"  # the limit is found while reading, not after building it all


def test_a_file_just_under_the_value_limit_is_read(tmp_path):
    path = tmp_path / "w.json"
    path.write_text('{"goal_details": [], "x": [' + ",".join(['"a"'] * 199_990) + "]}", encoding="utf-8")
    doc = read_document(path)
    assert doc.diagnostics == [] and len(doc.data["x"]) == 199_990


def test_reading_a_wide_yaml_file_keeps_memory_bounded(tmp_path):
    path = tmp_path / "wide.yaml"
    path.write_text("".join(f"k{i}: {i}\n" for i in range(1_000_000)), encoding="utf-8")  # about 11 MiB
    path.write_bytes(path.read_bytes()[: files.SUITE_SIZE_LIMIT])
    peak = _peak_kib_in_child(f"from pathlib import Path\nfrom runner.suite.reader import read_document\n"
                              f"d = read_document(Path({str(path)!r}))\nassert d.data is None, d.diagnostics\n")
    assert peak < 400 * 1024, f"peak {peak / 1024:.0f} MiB"


@pytest.mark.parametrize("size", [0, 1, 100, files.MiB - 1, files.MiB, files.MiB + 1, 3 * files.MiB + 5])
def test_read_bytes_gives_every_byte_whatever_the_size(tmp_path, size):
    """The first read asks for the size the file has and one byte more; what follows reads on by 1 MiB."""
    path = tmp_path / "f.bin"
    content = bytes(range(256)) * (size // 256) + bytes(range(size % 256))
    path.write_bytes(content)
    assert files.read_bytes(path, 4 * files.MiB, "suites") == content


def test_read_bytes_reads_a_file_whose_size_is_unknown_to_its_end():
    """A procfs file is regular and says it has 0 bytes: it is still read whole."""
    if not os.path.isfile("/proc/self/status"):
        pytest.skip("no procfs")
    assert b"\nVmRSS:" in files.read_bytes("/proc/self/status", files.MiB, "suites")
    with pytest.raises(files.InputFileError, match="larger than the 10 bytes limit"):
        files.read_bytes("/proc/self/status", 10, "suites")
