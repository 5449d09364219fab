"""Every Markdown file of the repository renders as written: no merge-conflict markers (a `=======` line outside
a code block turns the paragraph above it into a heading; `<<<<<<<` and `>>>>>>>` lines anywhere), and every
code fence closed (an unclosed one turns the rest of the file into code). A block whose opening fence is missing
leaves the fences paired but shifted, its output read as text and the prose after it as code: its closing fence is
then read as an opening one right below a line of text, which is what gives it away (an opening fence after a
blank line, or indented under a list item, is the house style). Each problem is named file:line."""
from __future__ import annotations

import re
import subprocess

import pytest

from tests.helpers.cli_helpers import REPO

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
CONFLICT = re.compile(r"^(<{7}|>{7})(?: .*)?$")


def markdown_files() -> list[str]:
    listed = subprocess.run(["git", "ls-files", "*.md"], cwd=REPO, capture_output=True, text=True, check=True)
    return sorted(listed.stdout.split())


def problems_of(path: str, text: str) -> list[str]:
    found = []
    fence = None  # (character, length, line) of the open fence
    previous = ""
    for number, line in enumerate(text.splitlines(), start=1):
        if CONFLICT.match(line):
            found.append(f"{path}:{number}: a merge-conflict marker {line[:7]!r}: resolve the conflict")
        marker = FENCE.match(line)
        if fence is None:
            if marker and not (marker.group(1)[0] == "`" and "`" in marker.group(2)):
                fence = (marker.group(1)[0], len(marker.group(1)), number)
                if _below_text(line, previous):
                    found.append(f"{path}:{number}: a code fence opens right below a line of text: if it is meant to "
                                 "close a block, that block's opening fence is missing (the fences after it pair up "
                                 "wrongly); else leave a blank line before it")
            elif line.rstrip() == "=" * 7:
                found.append(f"{path}:{number}: a merge-conflict marker '=======' outside a code block (it makes the "
                             "line above a heading): remove it, or underline a heading with another length or '#'")
        elif marker and marker.group(1)[0] == fence[0] and len(marker.group(1)) >= fence[1] \
                and not marker.group(2).strip():
            fence = None
        previous = line
    if fence is not None:
        found.append(f"{path}:{fence[2]}: the code fence opened here is never closed: the rest of the file renders as "
                     f"code; close it with {fence[0] * fence[1]}")
    return found


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _below_text(fence_line: str, previous: str) -> bool:
    """An opening fence right below a line of text at its own indentation or deeper (not under a list item)."""
    return bool(previous.strip()) and not FENCE.match(previous) and _indent(fence_line) <= _indent(previous)


def test_the_checker_finds_what_breaks_a_page():
    text = "# T\n\n```yaml\na: 1\n```\n\nText.\n=======\n<<<<<<< HEAD\n\n```\nopen\n"
    assert problems_of("x.md", text) == [
        "x.md:8: a merge-conflict marker '=======' outside a code block (it makes the line above a heading): "
        "remove it, or underline a heading with another length or '#'",
        "x.md:9: a merge-conflict marker '<<<<<<<': resolve the conflict",
        "x.md:11: the code fence opened here is never closed: the rest of the file renders as code; close it with ```"]
    fenced = "~~~~\n=======\n```\nstill inside\n~~~~\n\n````text\n```\n````\n1. Run:\n   ```\n   x\n   ```\n"
    assert problems_of("y.md", fenced) == []
    # an output block that lost its opening fence: its closing one opens a block that swallows what follows
    shifted = "```yaml\na: 1\n```\n\nPASS x\n1 passed\n```\n\n## Next\n\n```\n$ evalrun\n```\n"
    below = ("a code fence opens right below a line of text: if it is meant to close a block, that block's opening "
             "fence is missing (the fences after it pair up wrongly); else leave a blank line before it")
    assert problems_of("z.md", shifted) == [
        f"z.md:7: {below}", f"z.md:13: {below}",
        "z.md:13: the code fence opened here is never closed: the rest of the file renders as code; close it with ```"]


def test_the_repository_has_markdown_files():
    assert {"README.md", "CONTRIBUTING.md", "CHANGELOG.md"} <= set(markdown_files())


@pytest.mark.parametrize("path", markdown_files())
def test_markdown_renders_as_written(path):
    assert problems_of(path, (REPO / path).read_text(encoding="utf-8")) == []
