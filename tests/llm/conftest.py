"""Fixtures the tests of this folder share."""
from tests.fakes.llm import fake  # the fake server, once per transport
