"""Where the shipped schemas and prompt templates live: inside the wheel or in the repository."""
from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent.parent  # runner/ (this file is runner/util/resources.py)
_REPOSITORY = _PACKAGE.parent


def resource_dir(name: str) -> Path:
    """The folder holding `schemas` or `prompts`: runner/_data/<name> in a wheel, <repo>/<name> in a checkout."""
    for candidate in (_PACKAGE / "_data" / name, _REPOSITORY / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"evalrun's {name}/ folder is missing from this installation ({_PACKAGE})")


def schema_path(kind: str) -> Path:
    return resource_dir("schemas") / f"{kind}.schema.json"
