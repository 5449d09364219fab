"""Fixtures the tests of this folder share."""
from tests.helpers.report_validation import runs  # a run with passed, failed and errored cases, and shards
