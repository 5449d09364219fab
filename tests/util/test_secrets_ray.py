"""`--executor ray` sends a worker the variables it needs inside the run's object in Ray's object store, never
in Ray's runtime_env, which Ray writes in clear to runtime_env_agent.log (readable by anyone on the node).

That a run on the local cluster evalrun starts (its child: the keys are in its environment) leaves no key in any
file of the cluster's temp folder or of the run folder is asserted by the one run of the suite that starts a
local cluster (starting one costs ~12 s): tests/run/test_executor_ray.py::
test_without_ray_address_the_run_starts_a_local_cluster_in_ray_tmpdir_and_leaves_no_key_in_its_files, with KEYS.
(The secrets sweep, tests/util/test_secrets_sweep.py, plays live cases on a cluster whose workers have no key.)"""
from __future__ import annotations

from runner.config.model import Config
from runner.run.executors.ray_cluster import worker_env
from tests.helpers.executor_ray import KEYED_CONFIG, KEYS


def test_workers_get_what_the_configuration_names_and_what_its_models_providers_read():
    """`${NAME}` references too (an http agent's headers, read on the worker that plays it)."""
    config = Config.model_validate({"judge": {"model": "openai/judge", "api_key_env": "MODEL_KEY"},
                                    "agents": {"web": {"type": "http", "url": "http://127.0.0.1:9/",
                                                       "headers": {"Authorization": "Bearer ${SVC_TOKEN}"}}}})
    environ = {**KEYS, "SVC_TOKEN": "tok-1234567890", "OPENAI_BASE_URL": "http://x", "HOME": "/root",
               "ANTHROPIC_API_KEY": "not-asked-for"}
    assert worker_env(config, environ) == {**KEYS, "SVC_TOKEN": "tok-1234567890", "OPENAI_BASE_URL": "http://x"}


def test_the_local_cluster_run_sends_its_workers_every_key_it_asserts_none_of_its_files_holds():
    """The configuration of that run names both KEYS (a judge's api_key_env, the openai provider's key): its
    workers are sent both, so no key in its cluster's files means none leaked, not that none travelled."""
    import yaml

    assert worker_env(Config.model_validate(yaml.safe_load(KEYED_CONFIG)), KEYS) == KEYS
