"""The HR agent's tools as Python functions: `evalrun generate --tools suites/live/hr_tools.py` reads their
type hints and docstrings as the tools' JSON Schemas (the agent in hr_agent.py calls tools of these names)."""
from __future__ import annotations

from datetime import date

ASSIGNMENTS = {"nwaters": "15778303", "johndoe": "15338303"}
TIME_OFF = {"15778303": ["2025-01-05", "2025-04-10"], "15338303": ["2025-02-20"]}


def get_assignment_id_hr_agent(username: str) -> str:
    """Look up the assignment id of an employee.

    Args:
        username: The employee's username, such as nwaters.
    """
    return ASSIGNMENTS.get(username.lower(), f"Error: no employee with username {username}")


def get_timeoff_schedule_hr_agent(assignment_id: str, start_date: date, end_date: date) -> list[str]:
    """The days of time off an employee has booked within a period.

    Args:
        assignment_id: The employee's assignment id (from get_assignment_id_hr_agent).
        start_date: The first day of the period.
        end_date: The last day of the period.
    """
    return [day for day in TIME_OFF.get(assignment_id, []) if start_date.isoformat() <= day <= end_date.isoformat()]
