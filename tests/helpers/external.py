"""What a test needs from outside the repository (the shared reference data, Chromium, the YAML language
server): when it is absent the test skips with the reason, so the README's test command passes on a bare
clone, CI=true or not. A CI that provides the thing insists on it with its variable (for instance
EVALRUN_REQUIRE_SHARED_DATA=1): absence is then a failure, and a test cannot vanish from the run unnoticed.
"""
from __future__ import annotations

import os
from typing import NoReturn

import pytest


def insisted(variable: str) -> bool:
    return os.environ.get(variable, "").strip().lower() in ("1", "true", "yes")


def missing(message: str, variable: str) -> NoReturn:
    """Skips with `message`, or fails with it when $`variable` insists."""
    __tracebackhide__ = True  # pytest reports the skip at the test that needed the thing, not here
    if insisted(variable):
        pytest.fail(f"{message}; {variable} is set, so this is a failure, not a skip", pytrace=False)
    pytest.skip(f"{message} (set {variable}=1 to make this a failure)")
