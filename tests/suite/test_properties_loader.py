"""Property-based: whatever a suite file is turned into, the loader answers with cases or with
diagnostics that point inside the file, and never with a traceback."""
from __future__ import annotations

import json
import string
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from runner.checks.run import check_problem
from runner.suite.load import load_file
from runner.suite.reader import read_document
from runner.suite.schema_check import conforms, validator

ROOT = Path(__file__).resolve().parents[2]

YAML_BASES = [
    (ROOT / "suites" / "hr" / "timeoff.yaml").read_text(encoding="utf-8"),
    (ROOT / "suites" / "airline" / "cancellations.yaml").read_text(encoding="utf-8"),
    (ROOT / "tests" / "data" / "suites" / "multi_defaults.yaml").read_text(encoding="utf-8"),
    """\
id: small
goals: {a: [b]}
goal_details:
  - type: tool_call
    name: a
    tool_name: t
    args: {x: 1, when: 2025-01-01, nested: {deep: [1, 2]}}
    arg_matching: {x: {tolerance: 0.5}, nested.deep: ignore}
  - {type: text, name: b, response: done, keywords: [done]}
""",
]
JSON_BASES = [
    (ROOT / "suites" / "hr" / "direct_reports.json").read_text(encoding="utf-8"),
    (ROOT / "tests" / "data" / "suites" / "watsonx_file_upload.json").read_text(encoding="utf-8"),
    (ROOT / "tests" / "data" / "suites" / "watsonx_context.json").read_text(encoding="utf-8"),
]
KEYS = ["id", "goals", "goal_details", "type", "name", "tool_name", "args", "arg_matching", "keywords", "response",
        "cases", "tags", "agent", "forbid_extra_calls", "mode", "regex", "one_of", "threshold", "IGNORE", "$schema",
        "runtime_context", "file_upload", "<<"]
SCALARS = ["null", "~", "true", "no", "yes", "01234", "2025-01-01", "-1", "0", "1e999", ".nan", "''", '""', "[]", "{}",
           "[a, b]", "{a: 1}", "*x", "&x y", "!!str 5", "!!python/object:os.system", "|", ">-", "- -", "? a", ":",
           "'unterminated", '"\\q"', "[", "{", "]", "}", ",", "#", "%YAML 1.1", "---", "...", "\t", "@", "`",
           '"IGNORE"', "<IGNORE>", "fuzzy", "tool_call", "text", "([", "\\d{", "\u2028", "\x00", "\ufeff", "é"]


def _lines(text: str) -> list[str]:
    return text.split("\n")


def _join(lines: list[str]) -> str:
    return "\n".join(lines)


@st.composite
def mutation(draw, text: str) -> str:
    lines = _lines(text)
    kind = draw(st.sampled_from(["drop", "rename", "retype", "insert", "garbage", "truncate", "indent", "duplicate"]))
    i = draw(st.integers(0, max(0, len(lines) - 1)))
    line = lines[i] if lines else ""
    if kind == "drop" and lines:
        del lines[i]
    elif kind == "rename":
        if ":" in line:
            head, _, tail = line.partition(":")
            indent = head[: len(head) - len(head.lstrip())]
            new = draw(st.one_of(st.sampled_from(KEYS), st.text(string.ascii_letters + "_.-", min_size=1, max_size=12)))
            lines[i] = f"{indent}{new}:{tail}"
    elif kind == "retype":
        if ":" in line:
            head, _, _ = line.partition(":")
            lines[i] = f"{head}: {draw(st.sampled_from(SCALARS))}"
    elif kind == "insert":
        indent = " " * draw(st.integers(0, 8))
        payload = draw(st.one_of(st.sampled_from(SCALARS), st.sampled_from(KEYS).map(lambda k: f"{k}: x")))
        lines.insert(i, indent + payload)
    elif kind == "garbage":
        column = draw(st.integers(0, len(line)))
        noise = draw(st.text(max_size=12))
        lines[i] = line[:column] + noise + line[column:]
    elif kind == "truncate":
        cut = draw(st.integers(0, len(text)))
        return text[:cut]
    elif kind == "indent":
        stripped = line.lstrip(" ")
        spaces = len(line) - len(stripped)
        style = draw(st.sampled_from(["tab", "more", "less", "tabs-everywhere", "double"]))
        if style == "tab":
            lines[i] = "\t" * max(1, spaces // 2) + stripped
        elif style == "more":
            lines[i] = " " * (spaces + draw(st.integers(1, 3))) + stripped
        elif style == "less":
            lines[i] = " " * max(0, spaces - draw(st.integers(1, 3))) + stripped
        elif style == "tabs-everywhere":
            lines = [ln.replace("  ", "\t") for ln in lines]
        else:
            lines = [" " * (2 * (len(ln) - len(ln.lstrip(" ")))) + ln.lstrip(" ") for ln in lines]
    elif kind == "duplicate" and lines:
        lines.insert(i, line)
    return _join(lines)


@st.composite
def mutated_suite(draw) -> tuple[str, str]:
    suffix = draw(st.sampled_from([".yaml", ".json"]))
    text = draw(st.sampled_from(YAML_BASES if suffix == ".yaml" else JSON_BASES))
    for _ in range(draw(st.integers(1, 3))):
        text = draw(mutation(text))
    return suffix, text


def _check(folder: Path, suffix: str, text: str) -> None:
    path = folder / f"case{suffix}"
    path.write_text(text, encoding="utf-8")
    cases, diagnostics, is_suite = load_file(path)  # must not raise
    _check_fast_path_agrees_with_the_schema(path)
    assert is_suite
    errors = [d for d in diagnostics if d.severity == "error"]
    if errors:
        assert cases == []
    else:
        assert cases, "a file without errors yields its cases"
    # an editor counts the lines of the text; the position just after a final newline is the last line
    line_count = len(text.splitlines()) + 1
    for d in diagnostics:
        assert d.severity in ("error", "warning")
        assert 1 <= d.line <= line_count, (str(d), line_count)
        assert d.column >= 1, str(d)
        assert d.message.strip()
        assert "Traceback" not in d.message
    assert diagnostics == sorted(diagnostics)


def _check_fast_path_agrees_with_the_schema(path: Path) -> None:
    """The loader skips jsonschema when the models accept a file (schema.conforms): that shortcut
    must never accept what the shipped schema rejects."""
    data = read_document(path).data
    if data is not None and conforms(data, check_problem):
        errors = list(validator("suite").iter_errors(data))
        assert errors == [], [e.message for e in errors]


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("mutated")


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated_suite())
def test_mutated_suites_give_cases_or_located_diagnostics(folder, sample):
    suffix, text = sample
    _check(folder, suffix, text)


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=200), st.sampled_from([".yaml", ".json"]))
def test_any_text_gives_cases_or_located_diagnostics(folder, text, suffix):
    _check(folder, suffix, text)


@settings(max_examples=60, deadline=None)
@given(st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(
        st.one_of(st.sampled_from(KEYS), st.text(max_size=6)), children, max_size=5),
    max_leaves=25))
def test_any_json_value_gives_cases_or_located_diagnostics(folder, value):
    _check(folder, ".json", json.dumps(value, indent=2))


@pytest.mark.parametrize("text", list(YAML_BASES))
def test_the_bases_are_valid(tmp_path, text):
    cases, diagnostics, _ = load_file(_write(tmp_path / "base.yaml", text))
    assert cases and not [d for d in diagnostics if d.severity == "error"]


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path
