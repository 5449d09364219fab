"""Fixtures shared by tests/run's modules."""
from __future__ import annotations

from importlib.util import find_spec

import pytest


@pytest.fixture(scope="session")
def cluster(tmp_path_factory):
    """One local Ray cluster for test_executor_ray.py and test_chaos_ray.py (starting one costs ~12 s): their
    tests run one at a time against it and kill only workers and drivers, which Ray replaces. Tests that are
    about starting a cluster (RAY_ADDRESS unset, a cluster that cannot start) and the secrets sweep, which reads
    every file of its cluster, start their own."""
    if find_spec("ray") is None:
        pytest.skip("Ray is not installed (pip install 'evalrun[ray]')")
    from tests.helpers.executor_ray import Cluster, short_dir

    with short_dir() as temp:
        started = Cluster(tmp_path_factory.mktemp("ray"), temp / "t")
        try:
            yield started
        finally:
            started.end()
