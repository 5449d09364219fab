"""The prompt library: sandboxed, strict about variables, user templates override built-ins."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from runner.llm.prompts import PromptError, PromptLibrary

VARIABLES = {"expected": "EXP-1", "actual": "ACT-2", "context": "CTX-3", "context_json": '"CTX-3"',
                 "data_json": '{"expected": "EXP-1", "actual": "ACT-2"}', "boundary": "VTOKEN"}


def test_builtin_semantic_match_renders_all_variables():
    text = PromptLibrary().render("semantic_match.j2", **VARIABLES)
    assert '{"expected": "EXP-1", "actual": "ACT-2"}' in text and '"CTX-3"' in text
    assert "\nBEGIN-VTOKEN\n" in text and "\nEND-VTOKEN\n" in text and '"verdict_id": "VTOKEN"' in text
    assert text.index('"reason"') < text.index('"match"') < text.index('"score"')  # reason before the verdict
    assert not text.startswith("\n") and "semantic_match v2" not in text  # the version comment is not sent
    assert "semantic_match.j2" in PromptLibrary().names()


def test_missing_variable_names_it_and_the_line():
    variables = {name: value for name, value in VARIABLES.items() if name != "data_json"}
    with pytest.raises(PromptError) as error:
        PromptLibrary().render("semantic_match.j2", **variables)
    assert error.value.variable == "data_json"
    assert error.value.template == "semantic_match.j2"
    assert isinstance(error.value.line, int)
    assert "'data_json'" in str(error.value) and f"line {error.value.line}" in str(error.value)


def test_missing_attribute_in_user_template(tmp_path):
    (tmp_path / "p.j2").write_text("one\ntwo {{ case.title }}\n")
    with pytest.raises(PromptError) as error:
        PromptLibrary(tmp_path).render("p.j2", case={})
    assert (error.value.variable, error.value.line) == ("title", 2)


def test_user_template_overrides_builtin_by_file_name(tmp_path):
    (tmp_path / "semantic_match.j2").write_text("custom {{ expected }}|{{ actual }}|{{ context }}\n")
    (tmp_path / "extra.j2").write_text("extra\n")
    library = PromptLibrary(tmp_path)
    assert library.render("semantic_match.j2", expected="e", actual="a", context="c") == "custom e|a|c\n"
    folder = Path(__file__).resolve().parents[2] / "prompts"
    builtin = {p.relative_to(folder).as_posix() for p in folder.rglob("*.j2")}  # redteam/crescendo.j2 too
    assert "semantic_match.j2" in builtin and library.names() == sorted(builtin | {"extra.j2"})


def test_sandbox_blocks_dunder_access(tmp_path):
    (tmp_path / "evil.j2").write_text("{{ ''.__class__.__mro__[1].__subclasses__() }}")
    with pytest.raises(PromptError, match="sandbox") as error:
        PromptLibrary(tmp_path).render("evil.j2")
    assert error.value.line == 1


def test_unknown_template():
    with pytest.raises(PromptError, match=re.escape("'nope.j2' not found")):
        PromptLibrary().render("nope.j2")


def test_syntax_error_names_the_line(tmp_path):
    (tmp_path / "bad.j2").write_text("ok\n{% if %}\n")
    with pytest.raises(PromptError) as error:
        PromptLibrary(tmp_path).render("bad.j2")
    assert error.value.line == 2
