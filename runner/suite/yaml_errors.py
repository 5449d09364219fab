"""libyaml's syntax errors in a suite writer's words: where the problem is, and what to change.

libyaml says "cannot start any token" for a tab that indents a line, and "did not find expected key"
for a line indented one step too far or not far enough: the message names the tab, or compares the
line's indentation with the line above it.
"""
from __future__ import annotations

import yaml

# libyaml's words for what is most often a line indented one step too far or not far enough
_INDENTATION_PROBLEMS = {"did not find expected key", "mapping values are not allowed in this context",
                         "mapping values are not allowed here", "did not find expected '-' indicator",
                         "could not find expected ':'"}


def syntax_error(text: str, exc: yaml.MarkedYAMLError) -> tuple[int, int, str]:
    """(line, column, message) of a YAML syntax error in `text`."""
    mark = exc.problem_mark or exc.context_mark
    line, column = (mark.line + 1, mark.column + 1) if mark else (1, 1)
    problem = exc.problem or exc.context or "syntax error"
    if _at_a_tab(text, line, column):  # libyaml's words ("cannot start any token") do not say what to change
        return line, column, "tabs cannot indent YAML: use spaces"
    context = f" ({exc.context})" if exc.context and exc.problem else ""
    hint = _indentation_hint(text, line) if problem in _INDENTATION_PROBLEMS else ""
    return line, column, f"YAML syntax error: {problem}{context}{hint}"


def _at_a_tab(text: str, line: int, column: int) -> bool:
    """Whether the YAML error points at a tab: where a token or the indentation was expected (a tab
    inside a value never stops the scanner), so the tab is what to change. The scanner points at the
    tab itself, for libyaml and for PyYAML's pure-Python scanner alike."""
    start = 0
    for _ in range(line - 1):
        start = text.find("\n", start) + 1
        if start == 0:
            return False
    return text[start + column - 1:start + column] == "\t"


def _indentation_hint(text: str, line: int) -> str:
    """'; check the indentation: ...' comparing the error's line with the nearest non-blank line above."""
    lines = text.split("\n")
    if not 1 <= line <= len(lines):
        return ""
    here = lines[line - 1]
    above = next(((n, lines[n - 1]) for n in range(line - 1, 0, -1)
                  if lines[n - 1].strip() and not lines[n - 1].lstrip().startswith("#")), None)
    if above is None or not here.strip():
        return ""
    def indent(s: str) -> int:
        return len(s) - len(s.lstrip(" "))
    n, text_above = above
    if indent(here) == indent(text_above):
        return (f"; check the indentation of line {line} and line {n} above it (both start at column "
                f"{indent(here) + 1}): a key that belongs under line {n} must be indented further")
    return (f"; check the indentation: line {line} starts at column {indent(here) + 1}, line {n} above it at "
            f"column {indent(text_above) + 1} (keys of one mapping start in the same column, and what belongs "
            "under a key is indented further)")
