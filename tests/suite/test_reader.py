"""The reader: YAML and JSON into plain data with positions, without YAML 1.1's surprises."""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

from runner.suite.reader import read_document


def read(tmp_path: Path, text: str, name: str = "s.yaml", monkeypatch: pytest.MonkeyPatch | None = None):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return read_document(path, name)


def messages(doc) -> list[str]:
    return [str(d) for d in doc.diagnostics]


# ---------------------------------------------------------------- YAML 1.1 traps

def test_dates_stay_text(tmp_path):
    doc = read(tmp_path, "start: 2025-01-01\nwhen: 2025-01-01 10:30:00\nquoted: '2025-01-01'\n")
    assert doc.data == {"start": "2025-01-01", "when": "2025-01-01 10:30:00", "quoted": "2025-01-01"}
    assert doc.diagnostics == []


@pytest.mark.parametrize("word", ["yes", "no", "on", "off", "y", "n", "Yes", "NO", "On", "OFF", "Y", "N"])
def test_yaml11_booleans_stay_text(tmp_path, word):
    doc = read(tmp_path, f"value: {word}\n{word}: key\n")
    assert doc.data == {"value": word, word: "key"}
    assert doc.diagnostics == []


def test_only_true_and_false_are_booleans(tmp_path):
    doc = read(tmp_path, "a: true\nb: false\nc: 'true'\nd: \"false\"\n")
    assert doc.data == {"a": True, "b": False, "c": "true", "d": "false"}
    assert doc.data["a"] is True and doc.data["b"] is False


@pytest.mark.parametrize("text", ["01234", "007", "0755", "00", "0x1F", "0o17", "1_000", "+0123"])
def test_numbers_written_like_identifiers_stay_text(tmp_path, text):
    doc = read(tmp_path, f"value: {text}\n")
    assert doc.data == {"value": text}


def test_plain_numbers_and_nulls(tmp_path):
    doc = read(tmp_path, "i: 12\nneg: -3\nzero: 0\nf: 1.5\ne: 1e3\nn1: null\nn2: ~\nn3:\ninf: .inf\n")
    assert doc.data == {"i": 12, "neg": -3, "zero": 0, "f": 1.5, "e": 1000.0, "n1": None, "n2": None, "n3": None,
                        "inf": float("inf")}
    assert isinstance(doc.data["i"], int) and not isinstance(doc.data["i"], bool)


def test_core_tags_are_honoured(tmp_path):
    doc = read(tmp_path, "a: !!str 123\nb: !!int '5'\nc: !!float 2\nd: !!bool true\ne: !!null ''\n")
    assert doc.data == {"a": "123", "b": 5, "c": 2.0, "d": True, "e": None}
    assert isinstance(doc.data["c"], float)


def test_merge_keys_fill_in_without_overriding(tmp_path):
    doc = read(tmp_path, "base: &base {agent: a, tags: [x]}\ncase:\n  <<: *base\n  agent: b\n")
    assert doc.data["case"] == {"agent": "b", "tags": ["x"]}


def test_duplicate_key_names_both_lines(tmp_path):
    doc = read(tmp_path, "id: one\nstory: s\nid: two\n")
    assert messages(doc) == ["s.yaml:3:1: error: duplicate key 'id' (first defined at line 1); keep one of them"]
    assert doc.data["id"] == "one"


def test_duplicate_key_nested(tmp_path):
    doc = read(tmp_path, "goal_details:\n  - type: text\n    name: a\n    name: b\n")
    assert messages(doc) == ["s.yaml:4:5: error: duplicate key 'name' (first defined at line 3); keep one of them"]


# ---------------------------------------------------------------- safety

def test_python_tag_is_an_error_and_nothing_is_built(tmp_path):
    doc = read(tmp_path, "story: !!python/object:os.system\n  x: 1\n")
    assert messages(doc) == ["s.yaml:1:8: error: unsupported tag 'tag:yaml.org,2002:python/object:os.system'; remove it"]
    assert doc.data == {"story": {"x": 1}}  # plain data only


def test_python_apply_tag_runs_nothing(tmp_path):
    marker = tmp_path / "pwned"
    doc = read(tmp_path, f"story: !!python/object/apply:os.system ['touch {marker}']\n")
    assert not marker.exists()
    assert messages(doc) == [
        "s.yaml:1:8: error: unsupported tag 'tag:yaml.org,2002:python/object/apply:os.system'; remove it"]


def test_unknown_scalar_tag_is_an_error(tmp_path):
    doc = read(tmp_path, "story: !secret hello\n")
    assert messages(doc) == ["s.yaml:1:8: error: unsupported or invalid tag '!secret' on value 'hello'; "
                             "remove the tag or quote the value"]


def test_alias_bomb_is_an_error_not_a_hang(tmp_path):
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 10):
        prev = f"*a{i - 1}"
        lines.append(f"a{i}: &a{i} [{', '.join([prev] * 10)}]")
    started = time.perf_counter()
    doc = read(tmp_path, "\n".join(lines) + "\n")
    assert time.perf_counter() - started < 10
    assert messages(doc) == ["s.yaml:1:1: error: the file expands to more than 200000 values (too many aliases?)"]
    assert doc.data is None


def test_self_referencing_alias(tmp_path):
    doc = read(tmp_path, "a: &a [*a]\n")
    assert messages(doc) == ["s.yaml:1:1: error: the file is nested too deeply (or an alias refers to itself)"]


@pytest.mark.parametrize("depth", [150, 30_000])
def test_deep_nesting_is_an_error_quickly(tmp_path, depth):
    started = time.perf_counter()
    doc = read(tmp_path, "a: " + "[" * depth + "]" * depth + "\n")
    assert time.perf_counter() - started < 5
    assert messages(doc) == ["s.yaml:1:103: error: the file is nested more than 100 levels deep"]


def test_deep_block_nesting(tmp_path):
    text = "".join("  " * i + f"k{i}:\n" for i in range(120)) + "  " * 120 + "leaf\n"
    doc = read(tmp_path, text)
    assert messages(doc) == ["s.yaml:101:201: error: the file is nested more than 100 levels deep"]


def test_moderate_nesting_is_fine(tmp_path):
    doc = read(tmp_path, "a: " + "[" * 60 + "1" + "]" * 60 + "\n")
    assert doc.diagnostics == []


# ---------------------------------------------------------------- YAML syntax

def test_yaml_syntax_error_has_line_and_column(tmp_path):
    doc = read(tmp_path, "id: a\ngoal_details:\n  - type: text\n    name: [a\n")
    assert messages(doc) == ["s.yaml:5:1: error: YAML syntax error: did not find expected ',' or ']' "
                             "(while parsing a flow sequence)"]


def test_bad_indentation(tmp_path):
    doc = read(tmp_path, "id: a\n  story: b\n")
    assert messages(doc) == ["s.yaml:2:8: error: YAML syntax error: mapping values are not allowed in this context; "
                             "check the indentation: line 2 starts at column 3, line 1 above it at column 1 (keys of "
                             "one mapping start in the same column, and what belongs under a key is indented further)"]


def test_a_key_indented_less_than_its_siblings_gets_an_indentation_hint(tmp_path):
    doc = read(tmp_path, "goal_details:\n  - type: text\n    name: a\n   keywords: [x]\n")
    assert messages(doc) == [
        "s.yaml:4:4: error: YAML syntax error: did not find expected '-' indicator (while parsing a block collection); "
        "check the indentation: line 4 starts at column 4, line 3 above it at column 5 (keys of one mapping start in the same "
        "column, and what belongs under a key is indented further)"]


def test_tab_indentation_in_yaml(tmp_path):
    doc = read(tmp_path, "goal_details:\n\t- type: text\n")
    assert messages(doc) == ["s.yaml:2:1: error: tabs cannot indent YAML: use spaces"]


def test_undefined_alias(tmp_path):
    doc = read(tmp_path, "a: *nope\n")
    assert messages(doc) == ["s.yaml:1:4: error: YAML syntax error: found undefined alias"]


def test_second_document_is_an_error(tmp_path):
    doc = read(tmp_path, "id: a\n---\nid: b\n")
    assert messages(doc) == ["s.yaml:3:1: error: a suite file holds one YAML document; remove the '---' separator "
                             "or split the file"]


@pytest.mark.parametrize("text", ["", "\n\n", "# only a comment\n", "---\n", "~\n", "null\n"])
def test_empty_file_reads_as_null(tmp_path, text):
    # what an empty file means is the caller's to say: an empty evalrun.yaml is all defaults,
    # an empty suite is an error (see test_load.py)
    doc = read(tmp_path, text)
    assert doc.data is None and doc.diagnostics == []


def test_not_utf8(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_bytes(b"story: caf\xe9\n")
    doc = read_document(path, "s.yaml")
    assert messages(doc) == ["s.yaml:1:11: error: the file is not UTF-8 text: byte 0xE9 at line 1, column 11 is not "
                             "valid UTF-8 (in Latin-1 it would be 'é': the file may have been saved as Latin-1); "
                             "save the file as UTF-8"]


def test_byte_order_mark_is_ignored(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_bytes("\ufeffid: a\n".encode("utf-8"))
    doc = read_document(path, "s.yaml")
    assert doc.data == {"id": "a"} and doc.diagnostics == []


# ---------------------------------------------------------------- positions

def test_positions_of_keys_and_values(tmp_path):
    doc = read(tmp_path, "id: a\ngoal_details:\n  - type: tool_call\n    args: {x: 1, y: [2, 3]}\n")
    assert doc.position(("id",), key=True) == (1, 1)
    assert doc.position(("id",)) == (1, 5)
    assert doc.position(("goal_details", 0)) == (3, 5)
    assert doc.position(("goal_details", 0, "args", "y"), key=True) == (4, 18)
    assert doc.position(("goal_details", 0, "args", "y", 1)) == (4, 25)
    assert doc.position(("goal_details", 0, "args", "missing")) == (4, 11)  # the nearest parent
    assert doc.position(("nothing", "here")) == (1, 1)


# ---------------------------------------------------------------- JSON

def test_json_with_positions(tmp_path):
    doc = read(tmp_path, '{\n  "id": "a",\n  "goal_details": [\n    {"type": "text", "name": "x"}\n  ]\n}\n', "s.json")
    assert doc.diagnostics == []
    assert doc.data == {"id": "a", "goal_details": [{"type": "text", "name": "x"}]}
    assert doc.position(("goal_details",), key=True) == (3, 3)
    assert doc.position(("goal_details", 0, "name"), key=True) == (4, 22)


def test_json_dates_and_numbers_keep_their_json_types(tmp_path):
    doc = read(tmp_path, '{"d": "2025-01-01", "n": "no", "z": "01234", "i": 7, "b": true}', "s.json")
    assert doc.data == {"d": "2025-01-01", "n": "no", "z": "01234", "i": 7, "b": True}


def test_tab_indented_json(tmp_path):
    doc = read(tmp_path, '{\n\t"id": "a",\n\t"goal_details": [\n\t\t{"type": "text"}\n\t]\n}\n', "s.json")
    assert doc.diagnostics == []
    assert doc.data == {"id": "a", "goal_details": [{"type": "text"}]}
    assert doc.position(("goal_details",), key=True) == (3, 2)
    assert doc.position(("goal_details", 0, "type"), key=True) == (4, 4)


NAMES_THE_TRAILING_COMMA = sys.version_info >= (3, 13)  # Python 3.13's json points at the comma itself


def test_invalid_json_reports_line_and_column(tmp_path):
    doc = read(tmp_path, '{\n  "id": "a",\n  "tags": ["x",]\n}\n', "s.json")
    assert messages(doc) == (["s.json:3:15: error: invalid JSON: Illegal trailing comma before end of array"]
                             if NAMES_THE_TRAILING_COMMA else ["s.json:3:16: error: invalid JSON: Expecting value"])
    assert doc.data is None


def test_json_trailing_comma_in_object(tmp_path):
    doc = read(tmp_path, '{\n  "id": "a",\n}\n', "s.json")
    assert messages(doc) == (
        ["s.json:2:12: error: invalid JSON: Illegal trailing comma before end of object"] if NAMES_THE_TRAILING_COMMA
        else ["s.json:3:1: error: invalid JSON: Expecting property name enclosed in double quotes"])


def test_json_duplicate_key(tmp_path):
    doc = read(tmp_path, '{\n  "id": "a",\n  "id": "b"\n}\n', "s.json")
    assert messages(doc) == ["s.json:3:3: error: duplicate key 'id' (first defined at line 2); keep one of them"]


def test_deep_json(tmp_path):
    doc = read(tmp_path, "[" * 50_000 + "]" * 50_000, "s.json")
    assert messages(doc) == ["s.json:1:101: error: the file is nested more than 100 levels deep"]


def test_deep_compact_sequences(tmp_path):
    doc = read(tmp_path, "- " * 150 + "x\n")
    assert messages(doc) == ["s.yaml:1:201: error: the file is nested more than 100 levels deep"]


def test_deep_block_sequences_of_mappings(tmp_path):
    # each `- k:` opens a sequence and a mapping: two levels for two more columns of indentation
    text = "".join(f"{'  ' * i}- k{i}:\n" for i in range(60)) + "  " * 60 + "- leaf\n"
    doc = read(tmp_path, text)
    assert messages(doc) == ["s.yaml:51:101: error: the file is nested more than 100 levels deep"]


# ------------------------------------------------------------------ lone surrogates

def test_json_lone_surrogates_become_replacement_characters_with_their_positions(tmp_path):
    text = '{"id": "a\\ud800", "tags": ["\\udc00", "\\\\ud800"],\n "\\ud800key": "\\ud83d\\ude00", "n": 1}\n'
    doc = read(tmp_path, text, "s.json")
    assert doc.diagnostics == []
    assert doc.data == {"id": "a\ufffd", "tags": ["\ufffd", "\\ud800"], "\ufffdkey": "\U0001f600", "n": 1}
    doc.error(("\ufffdkey",), "k", "x", key=True)
    doc.error(("n",), "n", "x", key=True)
    # a pair's two escapes become one while positions are computed: what follows on its line moves two
    # columns left ("n" is written at column 31)
    assert messages(doc) == ["s.json:2:2: error: k", "s.json:2:29: error: n"]
    json.dumps(doc.data, ensure_ascii=False).encode("utf-8")  # printable and writable


def test_a_duplicate_key_holding_a_lone_surrogate_is_printable(tmp_path):
    doc = read(tmp_path, '{"\\ud800": 1, "\\ud800": 2}', "s.json")
    assert messages(doc) == ["s.json:1:15: error: duplicate key '\ufffd' (first defined at line 1); keep one of them"]


def test_yaml_lone_surrogates_are_replaced_when_the_loader_lets_them_through(tmp_path, monkeypatch):
    import yaml

    from runner.suite import reader

    class PureLoader(yaml.SafeLoader):  # libyaml rejects surrogate escapes; PyYAML's own loader does not
        def resolve(self, kind, value, implicit):
            if kind is yaml.ScalarNode and implicit[0]:
                return reader._PLAIN
            return super().resolve(kind, value, implicit)

    monkeypatch.setattr(reader, "_Loader", PureLoader)
    doc = read(tmp_path, 'a: "x\\ud800"\n"\\U0000dc00": [b, "\\udfff"]\n"\\ud800": 2\n')
    assert doc.data == {"a": "x\ufffd", "\ufffd": ["b", "\ufffd"]}
    assert messages(doc) == ["s.yaml:3:1: error: duplicate key '\ufffd' (first defined at line 2); keep one of them"]
