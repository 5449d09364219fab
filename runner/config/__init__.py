"""evalrun.yaml: where it is found (discovery.py: paths only, standard library only), what it may say
(model.py) and reading and checking it (load.py).

Nothing is imported here, so `runner.config.discovery` stays light; `from runner.config import X` still
works through the lazy lookup below, for code outside evalrun that used the single module."""
from __future__ import annotations

import importlib

_WHERE = {
    "ConfigSearch": "discovery", "config_search": "discovery", "find_config": "discovery", "project_home": "discovery",
    "EmbeddingsConfig": "model", "CheckProfile": "model", "Config": "model", "with_project_defaults": "model",
    "LoadedConfig": "load", "load_config": "load", "check_cases_against_config": "load", "config_line": "load",
    "suite_roots": "load",
}
__all__ = sorted(_WHERE)  # noqa: PLE0605 - the lazy names, listed once in _WHERE


def __getattr__(name: str):
    if name == "CONFIG_NAMES":
        from ..layout import CONFIG_NAMES
        return CONFIG_NAMES
    if name in _WHERE:
        return getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
