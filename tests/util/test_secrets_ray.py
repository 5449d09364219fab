"""`--executor ray` sends a worker the variables it needs inside the run's object in Ray's object store, never
in Ray's runtime_env, which Ray writes in clear to runtime_env_agent.log (readable by anyone on the node): a
replay-only run on the local cluster evalrun starts leaves no key in any file of the cluster's temp folder.
(The secrets sweep, tests/util/test_secrets_sweep.py, plays live cases on a cluster whose workers have no key.)"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from importlib.util import find_spec
from pathlib import Path

import pytest

from runner.config.model import Config
from runner.run.executors.ray_cluster import worker_env
from tests.helpers.cli_helpers import cli_env, write
from tests.helpers.secrets_sweep_project import leaks_in_tree

pytestmark = pytest.mark.skipif(find_spec("ray") is None, reason="Ray is not installed (pip install 'evalrun[ray]')")

KEYS = {"MODEL_KEY": "sk-mdl-4d1f0c9a7b3e5d2c8a6f1e0b9d7c5a3e", "OPENAI_API_KEY": "sk-proj-9e8d7c6b5a4f3e2d1c0b"}


def _cmdline(pid: str) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


@pytest.mark.process
def test_a_replay_run_on_a_local_cluster_leaves_no_key_in_rays_files(tmp_path):
    write(tmp_path / "evalrun.yaml", """
        embeddings: {enabled: false}
        judge: {model: openai/judge, api_base: "http://127.0.0.1:9/v1", api_key_env: MODEL_KEY}
        simulator: {model: openai/sim, api_base: "http://127.0.0.1:9/v1"}
        """)
    messages = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    write(tmp_path / "suites" / "t.json", json.dumps({"messages": messages}))
    write(tmp_path / "suites" / "s.yaml", """
        cases:
          - {id: replayed, transcript: t.json, goal_details: [{type: text, name: hi, keywords: [hello]}]}
        """)
    ray_tmp = Path(tempfile.mkdtemp(prefix="evk-", dir="/tmp"))  # Ray's socket paths must stay short
    (tmp_path / "home").mkdir()
    env = cli_env(**KEYS, HOME=str(tmp_path / "home"), RAY_AUTH_MODE="disabled", RAY_TMPDIR=str(ray_tmp),
                  RAY_USAGE_STATS_ENABLED="0")
    env.pop("RAY_ADDRESS", None)
    try:
        done = subprocess.run([sys.executable, "-m", "runner", "suites", "--executor", "ray", "--output-dir", "out"],
                              cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600,
                              start_new_session=True)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "started a local Ray cluster" in done.stderr
        assert list(ray_tmp.rglob("runtime_env_agent.log")), "Ray's logs are not where this test reads them"
        found = leaks_in_tree(ray_tmp, KEYS) + leaks_in_tree(tmp_path / "out", KEYS)
        assert found == [], "\n".join(found)
    finally:  # the run stops the cluster it started; should it not have, nothing of it outlives the test
        for pid in [p for p in os.listdir("/proc") if p.isdigit() and str(ray_tmp) in _cmdline(p)]:
            os.kill(int(pid), signal.SIGKILL)
        shutil.rmtree(ray_tmp, ignore_errors=True)


def test_workers_get_what_the_configuration_names_and_what_its_models_providers_read():
    """`${NAME}` references too (an http agent's headers, read on the worker that plays it)."""
    config = Config.model_validate({"judge": {"model": "openai/judge", "api_key_env": "MODEL_KEY"},
                                    "agents": {"web": {"type": "http", "url": "http://127.0.0.1:9/",
                                                       "headers": {"Authorization": "Bearer ${SVC_TOKEN}"}}}})
    environ = {**KEYS, "SVC_TOKEN": "tok-1234567890", "OPENAI_BASE_URL": "http://x", "HOME": "/root",
               "ANTHROPIC_API_KEY": "not-asked-for"}
    assert worker_env(config, environ) == {**KEYS, "SVC_TOKEN": "tok-1234567890", "OPENAI_BASE_URL": "http://x"}
