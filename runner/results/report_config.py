"""The settings a report carries in `config` that its readers use (JUnit's properties, merge, compare): their types
are checked when a report is loaded, so a tampered one is refused naming the setting, not a traceback in a
renderer. The rest of `config` is kept as written."""
from __future__ import annotations

from typing import Any

from ..util.jsontext import json_kind_phrase

_READ_SETTINGS: tuple[tuple[str, type | tuple[type, ...], str], ...] = (
    ("agents", dict, "an object"), ("judge", dict, "an object"), ("default_agent", str, "a string"),
    ("repeat_policy", str, "a string"), ("min_pass_rate", (int, float), "a number"))


def check_read_settings(config: dict[str, Any]) -> dict[str, Any]:
    """`config` as it is, or ValueError naming the first setting of the wrong type."""
    for key, kinds, said in _READ_SETTINGS:
        found = config.get(key)
        if found is not None and (isinstance(found, bool) or not isinstance(found, kinds)):
            raise ValueError(f"{key}: expected {said}, got {json_kind_phrase(found)}")
    for name, spec in (config.get("agents") or {}).items():
        if spec is not None and not isinstance(spec, dict):
            raise ValueError(f"agents.{name}: expected an object, got {json_kind_phrase(spec)}")
    return config
