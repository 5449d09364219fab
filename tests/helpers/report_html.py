"""Shared by several test modules (once in tests/report/test_report_html.py): _Text."""
from __future__ import annotations
import copy
import gzip
import json
import re
import subprocess
import sys
from pathlib import Path
import pytest
from hypothesis import HealthCheck, given, settings
from runner.report import html, html_data
from runner.report.render import render
from runner.report.saved import NotAReport, load_report
from runner.report.saved_stream import Unstreamable, stream_report
from tests.helpers.cli_helpers import cli_env
from tests.helpers.html_page import page_data, scripts, unpack
from tests.helpers.report_formats import DESCRIPTION, HOSTILE
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
