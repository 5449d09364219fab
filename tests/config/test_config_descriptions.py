"""What evalrun.yaml's field descriptions (and the CLI's help, which the docs' reference pages print) say is
what the code does (issue 30): what `exclude:` is relative to, and how the model cache is cleared; every
`evalrun COMMAND` a description names is a command that exists."""
from __future__ import annotations

import argparse
import re
from pathlib import Path

from runner.config.model import Config
from runner.frontends.cli import build_parser
from runner.llm.settings import JudgeSettings
from tests.helpers.cli_helpers import run_cli, write

CASE = "cases:\n  - id: {id}\n    transcript: t.json\n    forbid_extra_calls: true\n"


def _project(root: Path, exclude: list[str]) -> None:
    (root / ".git").mkdir(parents=True)  # the project's root: evalrun.yaml is looked for up to here
    write(root / "evalrun.yaml", "exclude: [" + ", ".join(f'"{g}"' for g in exclude) + "]\n")
    for folder in ("failing", "suites/failing", "suites/deep/failing", "suites/ok"):
        write(root / folder / "s.yaml", CASE.format(id=folder.replace("/", "-")))
        write(root / folder / "t.json", '[{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hi"}]')


def _listed(*args: str, cwd: Path) -> list[str]:
    shown = run_cli("list", *args, cwd=cwd)
    assert shown.returncode == 0, shown.stderr
    return sorted(line.split()[0] for line in shown.stdout.splitlines() if line.strip())


def test_exclude_globs_are_whole_paths_relative_to_the_config_folder_as_described(tmp_path: Path):
    described = Config.model_fields["exclude"].description
    assert "relative to this file's folder" in described and "`*/failing` one at any depth" in described
    _project(tmp_path, ["failing", "*/deep/*"])
    # `failing` is the folder beside evalrun.yaml only; `*/deep/*` reaches below suites/ (`*` matches `/`)
    assert _listed(".", cwd=tmp_path) == ["suites-failing", "suites-ok"]
    # the same from a sub-folder: relative to evalrun.yaml's folder, not to the current one
    assert _listed(".", cwd=tmp_path / "suites") == ["suites-failing", "suites-ok"]
    # a path named on the command line is always collected
    assert _listed("failing/s.yaml", cwd=tmp_path) == ["failing"]


def test_the_cache_clearing_command_is_named_where_the_cache_is_described():
    assert "`evalrun cache clear`" in Config.model_fields["cache_dir"].description
    assert "`evalrun cache clear`" in JudgeSettings.model_fields["cache"].description
    run = _parsers(build_parser())["evalrun run"]
    cache_help = next(a.help for a in run._actions if "--cache" in a.option_strings)
    assert "`evalrun cache clear`" in cache_help


def _parsers(parser: argparse.ArgumentParser, path: str = "evalrun") -> dict[str, argparse.ArgumentParser]:
    found = {path: parser}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found.update(_parsers(sub, f"{path} {name}"))
    return found


def _described_texts() -> list[tuple[str, str]]:
    """Every text a user reads about a command, option or setting: (where, text)."""
    from runner.authoring.schema import build_schema

    texts: list[tuple[str, str]] = []
    for where, parser in _parsers(build_parser()).items():
        texts.append((where, parser.description or ""))
        texts += [(f"{where} {'/'.join(a.option_strings) or a.dest}", a.help or "") for a in parser._actions]
    def walk(node, where):
        if isinstance(node, dict):
            if isinstance(node.get("description"), str):
                texts.append((where, node["description"]))
            for key, value in node.items():
                walk(value, f"{where}.{key}")
        elif isinstance(node, list):
            for i, value in enumerate(node):
                walk(value, f"{where}[{i}]")
    for kind in ("suite", "config"):
        walk(build_schema(kind), kind)
    return texts


def test_every_command_a_description_names_exists():
    commands = set(_parsers(build_parser()))
    named = {(where, m) for where, text in _described_texts()
             for m in re.findall(r"`(evalrun(?: [a-z][a-z-]*)+)(?=[ `])", text)}
    assert named, "no description names a command: the pattern is wrong"
    unknown = sorted(f"{where}: `{m}`" for where, m in named
                     if not any(m == c or m.startswith(c + " ") for c in commands - {"evalrun"}))
    assert unknown == []


def test_the_agents_description_names_every_kind():
    from runner.run.agents._registry import KINDS

    described = Config.model_fields["agents"].description
    assert [kind for kind in KINDS if kind not in described] == []
