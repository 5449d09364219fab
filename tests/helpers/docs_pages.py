"""The documentation's pages as the tests read them: docs/*.md with their snippet includes expanded
(`--8<-- "path"` or `--8<-- "path:START:END"`, as pymdownx.snippets includes them into the site), so an
example included from a real file is tested as the reader sees it."""
from __future__ import annotations

import re
from functools import cache

from tests.helpers.cli_helpers import REPO

DOCS = REPO / "docs"
_SNIPPET = re.compile(r'^(?P<indent>[ \t]*)--8<-- "(?P<path>[^":]+)(?::(?P<start>\d+):(?P<end>\d+))?"$', re.M)


def expand_snippets(text: str) -> str:
    def included(match: re.Match) -> str:
        lines = (REPO / match["path"]).read_text(encoding="utf-8").splitlines()
        if match["start"]:
            lines = lines[int(match["start"]) - 1:int(match["end"])]
        return "\n".join(match["indent"] + line for line in lines)

    return _SNIPPET.sub(included, text)


@cache
def page(name: str) -> str:
    """docs/`name` (e.g. "how-to/ci.md") as the site shows it."""
    return expand_snippets((DOCS / name).read_text(encoding="utf-8"))


def pages() -> list[str]:
    """Every page's name, sorted."""
    return sorted(str(path.relative_to(DOCS)) for path in DOCS.rglob("*.md"))


def all_pages() -> str:
    """Every page, one after another (for an example whose page does not matter)."""
    return "\n".join(page(name) for name in pages())


def code_blocks(text: str, language: str) -> list[str]:
    """The bodies of the fenced blocks of `language` (```yaml, ```yaml title="..."), in order."""
    return re.findall(rf"^```{language}(?:[ \t][^\n]*)?\n(.*?)^```", text, flags=re.S | re.M)


def section(text: str, heading: str) -> str:
    """The text under the heading line `heading` (e.g. "## Turns"), up to the next heading of its level or above
    (a `#` line inside a fenced block is not a heading)."""
    level = len(heading) - len(heading.lstrip("#"))
    lines = text.split("\n")
    start = lines.index(heading) + 1
    fenced = False
    for number in range(start, len(lines)):
        line = lines[number]
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and re.match(rf"#{{1,{level}}} ", line):
            return "\n".join(lines[start:number])
    return "\n".join(lines[start:])
