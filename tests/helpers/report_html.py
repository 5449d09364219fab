"""Shared by several test modules (once in tests/report/test_report_html.py): _Text."""
from __future__ import annotations

from tests.helpers.report_validation import mutations, runs, tampered  # noqa: F401  (runs: a fixture)


class _Text:
    def __init__(self) -> None:
        self.parts: list[str] = []

    def write(self, text: str) -> int:
        self.parts.append(text)
        return len(text)

    @property
    def text(self) -> str:
        return "".join(self.parts)
