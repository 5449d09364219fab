"""The generated reference pages (docs/reference/{checks,agents,config,cli,exit-codes}.md and the field tables of
reports.md, written by docs/gen/reference.py): the committed pages are what the code generates now, and every
check type, agent kind, evalrun.yaml key, command, option and exit code has its entry, read back from the pages
themselves."""
from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import re

import pytest

from runner.checks import CheckOptions, builtin_families
from runner.config.model import Config
from runner.frontends.cli import build_parser
from runner.layout import EXIT_CODES
from runner.run.agents._registry import _KIND_MODULES
from tests.helpers.cli_helpers import REPO
from tests.helpers.docs_reference import model_of, page, table_rows

PAGES = REPO / "docs" / "reference"
GENERATED = ("checks.md", "agents.md", "config.md", "cli.md", "exit-codes.md", "reports.md")


@pytest.fixture(scope="module")
def generator():
    spec = importlib.util.spec_from_file_location("docs_reference", REPO / "docs" / "gen" / "reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # puts docs/gen on sys.path for its page modules
    return module


@pytest.fixture(scope="module")
def generated(generator) -> dict[str, str]:
    return generator.generate()


def test_the_committed_pages_are_what_the_code_generates(generated):
    assert sorted(generated) == sorted(GENERATED)
    for name, text in generated.items():
        path = PAGES / name
        assert path.is_file(), f"docs/reference/{name} is missing: generate it with `python docs/gen/reference.py`"
        assert path.read_text(encoding="utf-8") == text, (
            f"docs/reference/{name} is stale: regenerate it with `python docs/gen/reference.py`")


def test_check_names_a_stale_page_and_the_command(generator, tmp_path, monkeypatch, capsys):
    for name in GENERATED:
        (tmp_path / name).write_text((PAGES / name).read_text(encoding="utf-8"), encoding="utf-8")
    monkeypatch.setattr(generator, "TARGET", tmp_path)
    assert generator.main(["--check"]) == 0
    (tmp_path / "cli.md").write_text("# edited by hand\n", encoding="utf-8")
    (tmp_path / "agents.md").unlink()
    assert generator.main(["--check"]) == 1
    assert capsys.readouterr().err.splitlines() == [
        "docs/reference/agents.md is stale: regenerate it with `python docs/gen/reference.py`",
        "docs/reference/cli.md is stale: regenerate it with `python docs/gen/reference.py`"]


def test_a_missing_description_stops_the_generator_naming_each(generator, monkeypatch, capsys):
    import runner.checks
    import runner.frontends.cli

    blank = tuple(dataclasses.replace(f, description=" ") if f.type == "trajectory" else f for f in builtin_families())
    monkeypatch.setattr(runner.checks, "builtin_families", lambda: blank)

    def add_silent(sub):
        sub.add_parser("silent", help="a command whose argument says nothing").add_argument("--quietly")

    monkeypatch.setitem(runner.frontends.cli.COMMANDS, "silent", runner.frontends.cli.Command(add_silent, lambda args: 0))
    assert generator.main([]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "the code lacks descriptions the reference needs; write them where each is defined:",
        "  check trajectory: its CheckFamily has no description",
        "  `evalrun silent`: argument --quietly has no help"]


def test_every_check_type_has_its_entry_with_its_aliases_and_options():
    sections = page("checks.md")
    families = builtin_families()
    assert set(sections) - {"Checks", "Common options", "Option types"} - {t for t in sections if t[0].isupper()} \
        == {f.type for f in families}
    assert table_rows(sections["Common options"]) == set(CheckOptions.model_fields)
    for family in families:
        section = sections[family.type]
        for alias in family.types[1:]:
            assert f"`{alias}`" in section.split("\n| aliases |")[1].splitlines()[0], (family.type, alias)
        own = {f.alias or name for name, f in family.options.model_fields.items()
               if name not in CheckOptions.model_fields and name != "type"}
        assert own <= table_rows(section), f"checks.md: {family.type} lacks options {sorted(own - table_rows(section))}"
        assert ("yes" if family.needs_model else "no") in section.split("| needs a model |")[1].splitlines()[0]


def test_every_agent_kind_has_its_entry_with_its_options():
    sections = page("agents.md")
    kinds = {module.KIND: module for module in _KIND_MODULES.values()}
    assert {t for t in sections if t[0].islower()} == set(kinds)
    for alias in set(_KIND_MODULES) - set(kinds):
        assert f"`{alias}`" in sections[_KIND_MODULES[alias].KIND], alias
    for kind, module in kinds.items():
        fields = {f.alias or name for name, f in module.Options.model_fields.items()} - {"type"}
        assert fields <= table_rows(sections[kind]), f"agents.md: {kind} lacks {sorted(fields - table_rows(sections[kind]))}"


def test_every_config_key_has_its_entry_down_to_the_settings_keys():
    sections = page("config.md")
    keys = [f.alias or name for name, f in Config.model_fields.items()]
    assert [t for t in sections if not t.startswith(("evalrun.yaml", *(f"{k}:" for k in keys)))] == keys
    for name, field in Config.model_fields.items():
        model = model_of(field.annotation)
        if model is not None and name != "agents":
            nested = {f.alias or n for n, f in model.model_fields.items()}
            assert nested <= table_rows(sections[field.alias or name]), (name, sorted(nested))


def _parsers(parser: argparse.ArgumentParser, path: str = "evalrun"):
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _parsers(sub, f"{path} {name}")


def test_every_command_and_option_has_its_entry():
    sections = page("cli.md")
    parsers = dict(_parsers(build_parser()))
    assert {t for t in sections if t.startswith("evalrun")} == set(parsers)
    for path, parser in parsers.items():
        shown = sections[path]
        for action in parser._actions:
            if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
                continue
            for flag in action.option_strings or [action.metavar or action.dest]:
                assert re.search(rf"`{re.escape(flag)}[` ]", shown), f"cli.md: `{path}` lacks {flag}"


def test_every_exit_code_has_its_entry():
    rows = re.findall(r"^\| `(\d)` \| ([^|]+) \| (.+) \|$", (PAGES / "exit-codes.md").read_text(encoding="utf-8"),
                      re.M)
    assert [(int(c), n.strip(), m.strip()) for c, n, m in rows] == [tuple(c) for c in EXIT_CODES]


def test_no_help_text_or_schema_description_sends_the_reader_to_the_readme():
    """The manual is docs/; the README keeps the quick start only. An editor's hover (the schemas' descriptions)
    and `--help` (the generated CLI page holds every help text) name the page that has the answer."""
    texts = {path.relative_to(REPO): path.read_text(encoding="utf-8")
             for path in [*(REPO / "schemas").glob("*.schema.json"), *(PAGES / name for name in GENERATED)]}
    assert {str(path): re.findall(r".{30}README.{30}", text) for path, text in texts.items() if "README" in text} == {}
