"""The disk cache of model answers (issue 26, item 5): `--no-cache` refreshes it (asks again and keeps the fresh
answers) so the next plain run does not replay an older answer; `--cache off` neither reads nor writes;
`evalrun cache info|clear` shows and forgets it; the console and report.json say how many answers came from it.
The judge is a real HTTP server on 127.0.0.1 (tests/fakes)."""
from __future__ import annotations

import json
import re
import sqlite3
import time
from pathlib import Path

from tests.fakes.openai_server import FakeOpenAI
from tests.helpers.cli_helpers import tool_call_messages, write, write_json


class Judge:
    """A judge whose verdict (match or not) the test sets; every verdict bound to the call's token."""

    def __init__(self) -> None:
        self.match = False

    def __call__(self, request) -> str:
        token = re.search(r"V[0-9A-F]{20}", json.dumps(request["messages"]))
        return json.dumps({"reason": "compared", "match": self.match, "score": 0.9 if self.match else 0.1,
                           "verdict_id": token.group(0) if token else None})


def project(root: Path, base_url: str) -> None:
    write(root / "evalrun.yaml", f"""
        embeddings: {{enabled: false}}
        judge: {{model: openai/fake-judge, api_base: "{base_url}", max_retries: 0}}
        """)
    write(root / "suites" / "s.yaml", """
        id: cancel
        transcript: t.json
        goal_details:
          - {type: tool_call, name: cancel, tool_name: cancel_booking, args: {reason: plans changed},
             arg_matching: {reason: fuzzy}}
        """)
    write_json(root / "suites" / "t.json", tool_call_messages("cancel_booking", {"reason": "my trip is off"}))


def summary_of(root: Path, folder: str) -> dict:
    return json.loads((root / folder / "report.json").read_text())["summary"]


def test_a_fresh_answer_replaces_the_old_one_and_the_console_says_when_answers_came_from_the_cache(tmp_path, evalrun):
    judge = Judge()
    with FakeOpenAI() as fake:
        fake.default = judge
        project(tmp_path, fake.base_url)
        assert evalrun(tmp_path, "suites", "--output-dir", "r1")[0] == 1  # the judge says no: cached
        judge.match = True  # the judge (its prompt, its model) changed its mind

        code, out, _ = evalrun(tmp_path, "suites", "--no-cache", "--output-dir", "r2")
        assert code == 0 and len(fake.requests) == 2
        assert "cache: refreshed: 1 model answer(s) asked again and saved for the next run" in out.splitlines()
        assert summary_of(tmp_path, "r2")["cache"] == "refresh"

        code, out, _ = evalrun(tmp_path, "suites", "--output-dir", "r3")
        assert code == 0  # on main: the answer of r1, still in the cache, failed the case again
        assert len(fake.requests) == 2  # from the cache: the answer r2 saved
        assert ("cache: 1 of 1 model answer(s) came from the disk cache, not the model; --cache refresh asks again "
                "(`evalrun cache info` shows where it is)") in out.splitlines()
        summary = summary_of(tmp_path, "r3")
        assert (summary["cache"], summary["model_usage"]["cached"], summary["model_usage"]["calls"]) == ("on", 1, 1)

        judge.match = False
        code, out, _ = evalrun(tmp_path, "suites", "--cache", "off", "--output-dir", "r4")
        assert code == 1 and len(fake.requests) == 3 and "cache:" not in out  # asked, and not saved:
        assert evalrun(tmp_path, "suites", "--output-dir", "r5")[0] == 0  # the plain run still has r2's answer
        assert summary_of(tmp_path, "r4")["cache"] == "off"


def test_cache_info_and_clear(tmp_path, evalrun):
    judge = Judge()
    with FakeOpenAI() as fake:
        fake.default = judge
        project(tmp_path, fake.base_url)
        assert evalrun(tmp_path, "suites", "--output-dir", "r1")[0] == 1
        code, out, _ = evalrun(tmp_path, "cache", "info")
        lines = out.splitlines()
        assert code == 0 and lines[0] == "cache: .evalrun/cache" and lines[2] == "similarity scores: 0"
        assert re.fullmatch(r"model answers: 1, saved \d{4}-\d\d-\d\d \d\d:\d\d \.\. \d{4}-\d\d-\d\d \d\d:\d\d", lines[1])
        assert evalrun(tmp_path / "suites", "cache", "info", "-c", "../evalrun.yaml")[1].splitlines()[0] == \
            "cache: ../.evalrun/cache"  # the cache_dir of that evalrun.yaml, from wherever it is asked

        assert evalrun(tmp_path, "cache", "clear", "--older-than", "1d")[1] == (
            "cleared 0 model answer(s) and 0 similarity score(s) saved more than 1d ago from .evalrun/cache\n")
        assert evalrun(tmp_path, "cache", "clear")[1] == \
            "cleared 1 model answer(s) and 0 similarity score(s) from .evalrun/cache\n"
        judge.match = True
        assert evalrun(tmp_path, "suites", "--output-dir", "r2")[0] == 0 and len(fake.requests) == 2  # asked again

    code, _, err = evalrun(tmp_path, "cache", "clear", "--older-than", "soon")
    assert code == 4 and "argument --older-than: not an age: 'soon'; give a number and a unit: 90s, 30m, 12h, 7d or 2w" in err


def test_answers_an_earlier_version_cached_count_as_old(tmp_path, evalrun):
    """A cache written before answers noted their time: the column is added, and its rows are older than any age."""
    write(tmp_path / "evalrun.yaml", "embeddings: {enabled: false}\n")
    database = tmp_path / ".evalrun" / "cache" / "llm" / "replies.sqlite"
    database.parent.mkdir(parents=True)
    with sqlite3.connect(database) as db:
        db.execute("CREATE TABLE replies (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID")
        db.executemany("INSERT INTO replies VALUES (?, ?)", [("a", "{}"), ("b", "{}")])
    db.close()
    legacy = write_json(tmp_path / ".evalrun" / "cache" / "llm" / "ab" / "abcd.json", {"content": "old"})
    fresh = time.time()
    import os

    os.utime(legacy, (fresh - 30 * 86400, fresh - 30 * 86400))
    _code, out, _ = evalrun(tmp_path, "cache", "info")
    assert "model answers: 3, saved " in out  # the legacy file's time is known, the rows' are not
    assert evalrun(tmp_path, "cache", "clear", "--older-than", "2w")[1] == \
        "cleared 3 model answer(s) and 0 similarity score(s) saved more than 2w ago from .evalrun/cache\n"
    with sqlite3.connect(database) as db:
        assert "created" in {row[1] for row in db.execute("PRAGMA table_info(replies)")}
    db.close()


def test_cache_modes_are_one_option_or_the_other(tmp_path, evalrun):
    write(tmp_path / "suites" / "s.yaml", "id: x\ntranscript: t.json\ngoal_details: [{type: text, name: a, keywords: [hi]}]\n")
    code, _, err = evalrun(tmp_path, "suites", "--no-cache", "--cache", "on")
    assert code == 4 and "argument --cache: not allowed with argument --no-cache" in err
    code, _, err = evalrun(tmp_path, "suites", "--cache", "sometimes")
    assert code == 4 and "argument --cache: invalid choice: 'sometimes' (choose from 'on', 'refresh', 'off')" in err
