"""The generated reference pages (docs/reference/*.md) as the tests read them: sections by heading, the first
cells of a section's table, and the pydantic model a field holds (to walk a model down to its settings)."""
from __future__ import annotations

import re

from tests.helpers.cli_helpers import REPO

PAGES = REPO / "docs" / "reference"


def sections(text: str) -> dict[str, str]:
    """Heading text -> its section (down to the next heading of the same or a higher level)."""
    lines = text.splitlines()
    heads = [(i, len(m.group(1)), m.group(2).strip()) for i, line in enumerate(lines)
             if (m := re.match(r"(#{1,6}) (.+)", line))]
    found = {}
    for n, (i, level, title) in enumerate(heads):
        end = next((j for j, lv, _ in heads[n + 1:] if lv <= level), len(lines))
        found[title] = "\n".join(lines[i + 1:end])
    return found


def page(name: str) -> dict[str, str]:
    return sections((PAGES / name).read_text(encoding="utf-8"))


def table_rows(section: str) -> set[str]:
    """The first cells of a section's table rows, without their backticks."""
    return {m.group(1) for m in re.finditer(r"^\| `([^`]+)`", section, re.M)}


def model_of(annotation):
    """The pydantic model a field holds (Optional[M], dict[str, M]), or None."""
    from typing import get_args

    from pydantic import BaseModel

    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in get_args(annotation):
        found = model_of(arg)
        if found is not None:
            return found
    return None
