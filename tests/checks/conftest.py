"""Fixtures the tests of this folder share (a module that defines its own keeps it)."""
from tests.helpers.checks_judged import fake  # the fake judge server
