"""The red-team attack catalogue: prompts/redteam/catalogue.yaml (what each attack is, its category, what
it checks) and one Jinja template per attack that writes the attacking user's turns.

A template renders the user's turns as blocks separated by a line holding only `---`. It renders in the
prompt library's sandbox with StrictUndefined, so a template that names a variable the planner does not
give fails loudly instead of sending an empty attack.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from ...util.resources import resource_dir

CATALOGUE = "redteam/catalogue.yaml"
CHECK_KINDS = ("leak", "forbidden", "refusal")
_TURN_BREAK = re.compile(r"^---[ \t]*$", re.MULTILINE)


class CatalogueError(Exception):
    """The catalogue or one of its templates is broken (a bug in evalrun or in a user's prompts_dir)."""


@dataclass(frozen=True)
class Attack:
    name: str
    category: str
    version: int
    variants: int
    summary: str
    goal: str  # what the attacker wants, in words for the judge and the simulated user
    checks: tuple[str, ...]
    expect: str | None = None  # refuse | redirect, for attacks with a `refusal` check
    needs_forbidden_tool: bool = False

    @property
    def template(self) -> str:
        return f"redteam/{self.name}.j2"


@dataclass(frozen=True)
class Catalogue:
    version: int
    attacks: tuple[Attack, ...]

    def names(self) -> list[str]:
        return [a.name for a in self.attacks]

    def get(self, name: str) -> Attack:
        for attack in self.attacks:
            if attack.name == name:
                return attack
        raise KeyError(name)


def catalogue_path(prompts_dir: Path | None = None) -> Path:
    """A project's own catalogue (prompts_dir/redteam/catalogue.yaml) hides the built-in one."""
    if prompts_dir is not None and (prompts_dir / CATALOGUE).is_file():
        return prompts_dir / CATALOGUE
    return resource_dir("prompts") / CATALOGUE


def load_catalogue(prompts_dir: Path | None = None) -> Catalogue:
    path = catalogue_path(prompts_dir)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise CatalogueError(f"{path}: cannot read the attack catalogue: {exc}") from None
    try:
        attacks = tuple(_attack(entry) for entry in data["attacks"])
        version = int(data["version"])
    except (KeyError, TypeError, ValueError) as exc:
        raise CatalogueError(f"{path}: not an attack catalogue ({type(exc).__name__}: {exc})") from None
    names = [a.name for a in attacks]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise CatalogueError(f"{path}: attack(s) listed twice: {', '.join(twice)}")
    return Catalogue(version, attacks)


def _attack(entry: dict[str, Any]) -> Attack:
    checks = tuple(entry["checks"])
    unknown = [c for c in checks if c not in CHECK_KINDS]
    if unknown:
        raise ValueError(f"attack {entry.get('name')!r}: unknown check kind(s) {unknown} (known: {', '.join(CHECK_KINDS)})")
    if "refusal" in checks and entry.get("expect") not in ("refuse", "redirect"):
        raise ValueError(f"attack {entry.get('name')!r}: a refusal check needs `expect: refuse` or `expect: redirect`")
    return Attack(name=str(entry["name"]), category=str(entry["category"]), version=int(entry["version"]),
                  variants=int(entry["variants"]), summary=str(entry["summary"]), goal=str(entry["goal"]),
                  checks=checks, expect=entry.get("expect"),
                  needs_forbidden_tool=bool(entry.get("needs_forbidden_tool", False)))


def user_turns(prompts: Any, attack: Attack, variables: dict[str, Any]) -> list[str]:
    """The attacking user's messages, from the attack's template. CatalogueError when it renders none."""
    from ...llm.prompts import PromptError

    try:
        text = prompts.render(attack.template, **variables)
    except PromptError as exc:
        raise CatalogueError(str(exc)) from None
    turns = [block.strip() for block in _TURN_BREAK.split(text) if block.strip()]
    if not turns:
        raise CatalogueError(f"prompt template {attack.template!r} rendered no user turn for variant "
                             f"{variables.get('variant')}")
    return turns


def catalogue_lines(catalogue: Catalogue) -> list[str]:
    """`evalrun redteam list`: one line per attack."""
    width = max(len(a.name) for a in catalogue.attacks)
    cat_width = max(len(a.category) for a in catalogue.attacks)
    lines = [f"{a.name:<{width}}  {a.category:<{cat_width}}  checks {'+'.join(a.checks):<22}  "
             f"{a.variants} variant{'s' if a.variants != 1 else ''}  {a.summary}" for a in catalogue.attacks]
    return lines + [f"catalogue v{catalogue.version}: {len(catalogue.attacks)} attacks in "
                    f"{len({a.category for a in catalogue.attacks})} categories"]
