"""What the tool readers share (runner/authoring/tools/load.py, openapi_tools.py, mcp_tools.py): their error, and a
schema cleaned for a model to read."""
from __future__ import annotations

from typing import Any


class ToolsError(Exception):
    """The tools cannot be loaded; the message names the source and what is wrong."""


def without_titles(schema: Any) -> Any:
    """pydantic's schema without the `title` of each property and of the whole (noise to a model)."""
    if isinstance(schema, dict):
        out = {}
        for key, value in schema.items():
            if key == "title" and isinstance(value, str):
                continue
            if key in ("properties", "$defs") and isinstance(value, dict):
                out[key] = {name: without_titles(sub) for name, sub in value.items()}
            else:
                out[key] = without_titles(value)
        return out
    if isinstance(schema, list):
        return [without_titles(item) for item in schema]
    return schema
