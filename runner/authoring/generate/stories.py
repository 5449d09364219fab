"""User stories for `evalrun generate`: watsonx's CSV (`story,agent`, a `starting_sentence` column allowed) or a
YAML/JSON list of mappings with the same keys. Each story keeps where it was written, so that every message
about it names its file, line and first words."""
from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path

COLUMNS = ("story", "agent", "starting_sentence")
STORIES_SIZE_LIMIT = 8 * 1024 * 1024


class StoriesError(Exception):
    """The stories file cannot be used; the message starts with `path:line:col: error:`."""


@dataclass(frozen=True)
class Story:
    number: int  # 1-based, in file order
    text: str
    agent: str | None
    starting_sentence: str | None
    path: str
    line: int

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"

    @property
    def label(self) -> str:
        """`story 2 ("I want to know my time off…")`: how people recognise it."""
        words = self.text.split()
        first = " ".join(words[:8]) + ("…" if len(words) > 8 else "")
        first = "".join(c if c.isprintable() else "?" for c in first)  # a terminal shows it as it is
        return f'story {self.number} ("{first}")'


def read_stories(path: Path) -> list[Story]:
    """Every story of the file, in order. StoriesError with the place of the first problem found."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise StoriesError(f"{path}:1:1: error: cannot read the stories: {exc.strerror or exc}") from None
    if len(raw) > STORIES_SIZE_LIMIT:
        raise StoriesError(f"{path}:1:1: error: the stories file is larger than {STORIES_SIZE_LIMIT >> 20} MiB")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise StoriesError(f"{path}:1:1: error: not UTF-8 text (byte {exc.start})") from None
    stories = _from_csv(text, str(path)) if path.suffix.lower() == ".csv" else _from_document(path)
    if not stories:
        raise StoriesError(f"{path}:1:1: error: no stories in the file")
    return stories


def _from_csv(text: str, where: str) -> list[Story]:
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader)
    except StopIteration:
        raise StoriesError(f"{where}:1:1: error: the file is empty: its first line must be the header `story,agent`") \
            from None
    except csv.Error as exc:
        raise StoriesError(f"{where}:1:1: error: not a CSV file: {exc}") from None
    names = [h.strip().lower() for h in header]
    if "story" not in names:
        raise StoriesError(f"{where}:1:1: error: the header has no `story` column (found: {', '.join(header)}); "
                           "watsonx's stories CSV starts with `story,agent`")
    unknown = [h for h in names if h not in COLUMNS]
    if unknown:
        raise StoriesError(f"{where}:1:1: error: unknown column(s) {', '.join(map(repr, unknown))}: the columns are "
                           f"{', '.join(COLUMNS)}")
    stories: list[Story] = []
    line = reader.line_num
    try:
        for row in reader:
            start, line = line + 1, reader.line_num
            if not any(cell.strip() for cell in row):
                continue
            if len(row) > len(names):
                raise StoriesError(f"{where}:{start}:1: error: {len(row)} values in a row of {len(names)} columns "
                                   "(quote a story that holds commas)")
            values = dict(zip(names, [cell.strip() for cell in row], strict=False))
            stories.append(_story(values, len(stories) + 1, where, start))
    except csv.Error as exc:
        raise StoriesError(f"{where}:{reader.line_num}:1: error: not a valid CSV row: {exc}") from None
    return stories


def _from_document(path: Path) -> list[Story]:
    from ...suite.reader import read_document
    from ...util.files import display_path

    doc = read_document(path, display_path(path), limit=STORIES_SIZE_LIMIT)
    if doc.diagnostics:
        raise StoriesError(str(doc.diagnostics[0]))
    if not isinstance(doc.data, list):
        raise StoriesError(f"{doc.path}:1:1: error: the stories must be a list of mappings with `story` (and `agent`, "
                           "`starting_sentence`)")
    stories = []
    for i, item in enumerate(doc.data):
        line, column = doc.position((i,))
        if isinstance(item, str):
            item = {"story": item}
        if not isinstance(item, dict):
            raise StoriesError(f"{doc.path}:{line}:{column}: error: story {i + 1} must be a mapping with `story`")
        unknown = [k for k in item if k not in COLUMNS]
        if unknown:
            raise StoriesError(f"{doc.path}:{line}:{column}: error: unknown key(s) {', '.join(map(repr, unknown))} in "
                               f"story {i + 1}: the keys are {', '.join(COLUMNS)}")
        bad = [k for k, v in item.items() if v is not None and not isinstance(v, (str, int, float))]
        if bad:
            raise StoriesError(f"{doc.path}:{line}:{column}: error: `{bad[0]}` of story {i + 1} must be text")
        stories.append(_story({k: "" if v is None else str(v).strip() for k, v in item.items()}, i + 1, doc.path, line))
    return stories


def _story(values: dict[str, str], number: int, where: str, line: int) -> Story:
    text = values.get("story", "")
    if not text:
        raise StoriesError(f"{where}:{line}:1: error: story {number} is empty: every row needs its `story`")
    return Story(number=number, text=" ".join(text.split()), agent=values.get("agent") or None,
                 starting_sentence=values.get("starting_sentence") or None, path=where, line=line)
