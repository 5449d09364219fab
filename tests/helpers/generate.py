"""Shared by several test modules (once in tests/authoring/test_generate.py): JOHNDOE, NWATERS, good, hr_case, story_of."""
from __future__ import annotations

import json


def hr_case(user: str, username: str, assignment: str, start: str, end: str, days: list, answer: str,
            keywords: list) -> dict:
    return {"starting_sentence": user, "calls": [
        {"tool": "get_assignment_id_hr_agent", "args": {"username": username}, "output": assignment},
        {"tool": "get_timeoff_schedule_hr_agent",
         "args": {"assignment_id": assignment, "start_date": start, "end_date": end}, "output": days}],
        "answer": answer, "keywords": keywords}


NWATERS = [hr_case("My username is nwaters. What time off do I have from 2025-01-01 to 2025-03-03?", "nwaters",
                   "15778303", "2025-01-01", "2025-03-03", ["2025-01-05"],
                   "Your time off between January 1 and March 3, 2025 is on January 5, 2025.", ["January 5"]),
           hr_case("I'm nwaters; show my time off between 2025-01-01 and 2025-03-03.", "nwaters", "15778303",
                   "2025-01-01", "2025-03-03", ["2025-01-05"], "You have time off on January 5, 2025.", ["January 5"])]


JOHNDOE = [hr_case("I'm johndoe. What time off do I have from 2025-02-01 to 2025-02-28?", "johndoe", "15338303",
                   "2025-02-01", "2025-02-28", ["2025-02-20"], "Your time off is on February 20, 2025.",
                   ["February 20"]),
           hr_case("I am johndoe: my time off from 2025-02-01 to 2025-02-28, please.", "johndoe", "15338303",
                   "2025-02-01", "2025-02-28", ["2025-02-20"], "You are off on February 20, 2025.", ["February 20"])]


def story_of(request: dict) -> str:
    return request["messages"][0]["content"].split("The user's story:\n", 1)[1].split("\n", 1)[0]


def good(request: dict) -> str:
    return json.dumps({"cases": NWATERS if "nwaters" in story_of(request) else JOHNDOE})
