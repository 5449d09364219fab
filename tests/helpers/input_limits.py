"""Shared by several test modules (once in tests/suite/test_input_limits.py): PEAK_KIB."""
from __future__ import annotations

PEAK_KIB = ("\nprint(next(int(line.split()[1]) for line in open('/proc/self/status') if line.startswith('VmHWM')))")
