"""A pytest plugin for bench_suite.py: one JSON line per test (setup, call and teardown together) with its wall
time, the CPU time of the test process (every thread) and that of the child processes it waited for. A Ray
cluster's or a detached server's CPU is not in either: they are not waited for.

    pytest -p tests.bench.suite_cpu   (the file comes from EVALRUN_SUITE_CPU_OUT, appended to)
"""
from __future__ import annotations

import json
import os
import resource
import time

import pytest

_OUT = os.environ.get("EVALRUN_SUITE_CPU_OUT")


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    if not _OUT:
        yield
        return
    started, wall, cpu, children = time.time(), time.perf_counter(), time.process_time(), _children_cpu()
    yield
    line = {"id": item.nodeid, "worker": os.environ.get("PYTEST_XDIST_WORKER", "main"), "started": round(started, 3),
            "wall": round(time.perf_counter() - wall, 4),
            "cpu": round(time.process_time() - cpu, 4), "children": round(_children_cpu() - children, 4),
            "process": item.get_closest_marker("process") is not None}
    with open(_OUT, "a", encoding="utf-8") as out:  # each xdist worker appends its own lines
        out.write(json.dumps(line) + "\n")
