"""Read what the author meant where YAML (or JSON) typed a value differently: runs on the raw data
before the schema check.

- A number where the suite language expects text (`keywords: [15778303]`, a numeric `id`, tag, goal
  name, tool name, ...) becomes its text as written in the file (`1.50` stays "1.50"). Quietly,
  except where the reading is probably not what was meant: `keywords: [January 5, 2025]` is split
  by YAML's flow comma into "January 5" and 2025, which gets a warning naming the fix.
- watsonx writes `null` for what a goal does not have (`args: null`, `keywords: null`, `response:
  null` on a tool goal) and for empty dataset fields: those keys are read as absent.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from .reader import Document

Location = tuple

# Case keys whose value is text, and those whose value is a list of texts.
_CASE_TEXT = ("id", "description", "agent", "story", "starting_sentence", "transcript", "dataset_name")
_CASE_TEXT_LISTS = ("tags", "user_prompts", "termination", "forbid_extra_calls")
_GOAL_TEXT = ("name", "tool_name", "description", "response")
_RULE_TEXT = ("regex", "ignore_chars")
_FILE_UPLOAD_TEXT = ("file_path", "file_id", "content_type")
# Keys watsonx writes as null when a goal or a dataset does not have them: null means absent there.
_NULL_MEANS_ABSENT_IN_GOALS = ("args", "keywords", "response", "description", "tool_name", "arg_matching",
                               "summary")
_NULL_MEANS_ABSENT_IN_CASES = ("dataset_name", "summary", "response_summary_version")
# The same, by model: the keys whose value is text or a list of texts, where a number is read as its text.
# The schema generator reads it (runner/authoring/schema.py), so an editor accepts `id: 42` as validate does.
NUMBERS_AS_TEXT: dict[str, tuple[str, ...]] = {
    "CaseFields": _CASE_TEXT + _CASE_TEXT_LISTS + ("goals",),
    "ToolCallGoal": _GOAL_TEXT, "TextGoal": _GOAL_TEXT + ("keywords",), "UnscoredGoal": _GOAL_TEXT + ("keywords",),
    "ArgRule": _RULE_TEXT, "FileUpload": _FILE_UPLOAD_TEXT,
}

_MONTH_DAY = re.compile(r"(?:[a-z]+\.?\s+\d{1,2}(?:st|nd|rd|th)?|\d{1,2}(?:st|nd|rd|th)?\s+[a-z]+\.?)", re.IGNORECASE)
_MONTH_NAMES = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_NUMBER_TOKEN = re.compile(r"[-+]?[\w.]+")


def coerce_texts(doc: Document) -> None:
    """Rewrite `doc.data` in place (see the module's docstring); warnings go to the document."""
    data = doc.data
    if not isinstance(data, dict):
        return
    fixer = _Fixer(doc)
    fixer.case(data, ())
    cases = data.get("cases")
    if isinstance(cases, list):
        for i, case in enumerate(cases):
            if isinstance(case, dict):
                fixer.case(case, ("cases", i))


class _Fixer:
    def __init__(self, doc: Document):
        self.doc = doc
        self._lines: list[str] | None = None

    def case(self, case: dict, at: Location) -> None:
        for key in _NULL_MEANS_ABSENT_IN_CASES:
            if key in case and case[key] is None:
                del case[key]
        for key in _CASE_TEXT:
            self.text(case, key, at)
        for key in _CASE_TEXT_LISTS:
            self.text_list(case, key, at)
        goals = case.get("goals")
        if isinstance(goals, dict):
            for source in goals:
                self.text_list(goals, source, at + ("goals",))
        upload = case.get("file_upload")
        if isinstance(upload, dict):
            for key in _FILE_UPLOAD_TEXT:
                self.text(upload, key, at + ("file_upload",))
        details = case.get("goal_details")
        if isinstance(details, list):
            for i, goal in enumerate(details):
                if isinstance(goal, dict):
                    self.goal(goal, at + ("goal_details", i))

    def goal(self, goal: dict, at: Location) -> None:
        for key in _NULL_MEANS_ABSENT_IN_GOALS:
            if key in goal and goal[key] is None:
                del goal[key]
        for key in _GOAL_TEXT:
            self.text(goal, key, at)
        self.text_list(goal, "keywords", at)
        matching = goal.get("arg_matching")
        if isinstance(matching, dict):
            for path, rule in matching.items():
                if isinstance(rule, dict):
                    for key in _RULE_TEXT:
                        self.text(rule, key, at + ("arg_matching", path))

    def text(self, holder: dict, key: Any, at: Location) -> None:
        value = holder.get(key)
        if _is_number(value):
            holder[key] = self.as_written(value, at + (key,))

    def text_list(self, holder: dict, key: Any, at: Location) -> None:
        items = holder.get(key)
        if not isinstance(items, list):
            return
        for i, item in enumerate(items):
            if not _is_number(item):
                continue
            if i > 0 and _looks_like_a_split_date(items[i - 1], item):
                self.doc.error(at + (key, i - 1), f"{key}: '{items[i - 1]}' and {item} look like one date split by "
                               f"YAML's comma; write [\"{items[i - 1]}, {item}\"]", "split-date", severity="warning")
            items[i] = self.as_written(item, at + (key, i))

    def as_written(self, number: Any, location: Location) -> str:
        """The number's text as the file writes it (`1.50`, not 1.5), else as Python writes it."""
        line, column = self.doc.position(location)
        lines = self.lines()
        if 0 < line <= len(lines):
            token = _NUMBER_TOKEN.match(lines[line - 1], column - 1)
            if token is not None and _same_number(token.group(0), number):
                return token.group(0)
        return str(number)

    def lines(self) -> list[str]:
        if self._lines is None:
            try:
                self._lines = Path(self.doc.path).read_text(encoding="utf-8-sig").splitlines()
            except (OSError, UnicodeDecodeError):
                self._lines = []
        return self._lines


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _same_number(token: str, number: Any) -> bool:
    try:
        return float(token.replace("_", "")) == float(number)
    except (ValueError, OverflowError):
        return False


def _looks_like_a_split_date(before: Any, year: Any) -> bool:
    """"January 5" followed by 2025: what YAML makes of an unquoted `[January 5, 2025]`."""
    if not (isinstance(before, str) and isinstance(year, int) and 1000 <= year <= 9999):
        return False
    found = _MONTH_DAY.fullmatch(before.strip())
    return found is not None and any(name in before.lower() for name in _MONTH_NAMES)
