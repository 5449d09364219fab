"""Build the documentation site as CI builds it (`mkdocs build --strict`), for the tests that read it.

MkDocs is in the dev extra; where it is not installed the tests that need it skip, saying so, and fail
where EVALRUN_REQUIRE_MKDOCS=1 (`.ci/run` sets it: there the site must build)."""
from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

from tests.helpers.cli_helpers import REPO, cli_env
from tests.helpers.external import missing


def mkdocs_or_skip() -> None:
    __tracebackhide__ = True
    if importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("material") is None:
        missing("mkdocs and mkdocs-material are not installed (pip install -e '.[dev]')", "EVALRUN_REQUIRE_MKDOCS")


def build_site(into: Path) -> subprocess.CompletedProcess:
    """`mkdocs build --strict` of the repository's mkdocs.yml into `into`."""
    mkdocs_or_skip()
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file",
                           str(REPO / "mkdocs.yml"), "--site-dir", str(into)],
                          cwd=REPO, env=cli_env(NO_MKDOCS_2_WARNING="1"), capture_output=True, text=True,
                          timeout=600)
