"""Shared by several test modules (once in tests/suite/test_input_limits.py): PEAK_KIB."""
from __future__ import annotations
import os
import threading
import time
from pathlib import Path
import pytest
from runner.suite import files
from runner.suite.load import Exclusion, load_suites
from runner.suite.reader import read_document
from tests.helpers.cli_helpers import run_cli, write


PEAK_KIB = ("\nprint(next(int(line.split()[1]) for line in open('/proc/self/status') if line.startswith('VmHWM')))")
