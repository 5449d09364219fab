"""How one argument of a tool call is compared: the modes and the object form of an `arg_matching` entry.

Part of the suite language (runner/suite/models.py re-exports these names); kept apart so that the models
of goals and of turns, which both take `arg_matching`, can share it.
"""
from __future__ import annotations

from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

ArgMode = Literal["strict", "exact", "optional", "ignore", "fuzzy"]
ArgType = Literal["integer", "number", "string", "boolean"]

ARG_MODES: tuple[str, ...] = get_args(ArgMode)
IGNORE_KEY = "IGNORE"  # watsonx: `args: {IGNORE: null}` skips all arguments
IGNORE_VALUE = "<IGNORE>"  # watsonx: an argument whose expected value is this is not compared


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class ArgRule(_Strict):
    """The object form of an `arg_matching` entry."""

    model_config = ConfigDict(
        extra="forbid",
        title="Argument rule",
        json_schema_extra={
            "description": "How one argument is compared, in object form. Use `mode` with `threshold` for "
            "fuzzy text, or exactly one of `one_of`, `regex`, `tolerance`; any form may add `optional: true`.",
            "examples": [{"mode": "fuzzy", "threshold": 0.9}, {"one_of": ["NYC", "New York"]},
                         {"regex": "^\\d{8}$", "optional": True}, {"tolerance": 0.01}],
        },
    )

    mode: ArgMode | None = Field(
        None, title="Mode",
        description="strict (default): trimmed, case-insensitive strings, numbers by value, lists as multisets. "
        "exact: JSON equality. optional: may be absent, compared like strict when present. ignore: not compared. "
        "fuzzy: numbers within a tolerance, dates across formats, otherwise semantic similarity.",
        examples=["fuzzy"])
    threshold: float | None = Field(
        None, ge=0, le=1, title="Similarity threshold",
        description="For fuzzy: the score (0-1) a value must reach, whichever stage decides: the offline "
        "similarity (instead of the config's similarity_threshold) and, with a judge, the judge's score too (a "
        "judge that says match below it does not pass the value).",
        examples=[0.9])
    tolerance: float | None = Field(
        None, ge=0, title="Numeric tolerance",
        description="Numbers match when they differ by at most this much (absolute).", examples=[0.01])
    one_of: list[Any] | None = Field(
        None, min_length=1, title="Accepted values",
        description="The argument matches when it equals any of these values (compared strict).",
        examples=[["NYC", "New York"]])
    regex: str | None = Field(
        None, title="Regular expression",
        description="The argument (as text) must match this Python regular expression in full.",
        examples=["^EMP-\\d{4}$"])
    optional: bool = Field(
        False, title="Optional",
        description="When true the argument may be absent; when present it must match.", examples=[True])
    ignore_chars: str | None = Field(
        None, title="Characters to ignore",
        description="Texts are compared after dropping each of these characters from both sides: with "
        "`\" ,./-_*^\"`, \"x**3\" equals \"x^3\" and \"New York\" equals \"new-york\" (strict mode already ignores "
        "case). Works with every mode.", examples=[" ,./-_*^"])
    type: ArgType | None = Field(
        None, title="Type",
        description="The JSON type the actual value must have, checked strictly before comparing: integer (a "
        "whole number written without a decimal point: 1, not 1.0 nor \"1\"), number (written with a decimal "
        "point or exponent: 1.0, not 1), string (text: \"10\", not 10), boolean (true/false, not \"yes\"). "
        "For a list, every item must have the type.", examples=["integer"])


ArgSpec = ArgMode | ArgRule
