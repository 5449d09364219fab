"""What a tool evalrun plays does to the world: the `effects:` of a goal (and `tool_effects:` of a case).

Part of the suite language (runner/suite/models.py re-exports it); applied by model agents' played
tools (runner/run/agents/_effects.py), whose state a case's `final_state:` is compared with.
"""
from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, Field, model_validator

from .arguments import _Strict


class StateEffect(_Strict):
    """One change a played tool makes to the state a model agent's tools keep (runner/run/agents/_effects.py)."""

    model_config = ConfigDict(
        extra="forbid", title="State effect",
        json_schema_extra={
            "description": "What a tool evalrun plays does to the world: `set` a dot path to a value, `append` a "
            "value to the list at a dot path, or `delete` a dot path. The value is `value` as written, or `arg`: "
            "the call's argument at that dot path (`*` for all of its arguments).",
            "examples": [{"append": "transfers", "arg": "*"}, {"set": "accounts.A-1.balance", "value": 50},
                         {"delete": "holds.H-7"}],
        },
    )

    set: str | None = Field(
        None, min_length=1, title="Set", description="The dot path whose value becomes `value` (or `arg`); the "
        "objects on the way are created.", examples=["accounts.A-1.balance"])
    append: str | None = Field(
        None, min_length=1, title="Append", description="The dot path of a list that `value` (or `arg`) is added "
        "to; a missing list is created.", examples=["transfers"])
    delete: str | None = Field(
        None, min_length=1, title="Delete", description="The dot path to remove (nothing happens when it is "
        "absent).", examples=["holds.H-7"])
    value: Any = Field(None, title="Value", description="The value written, as it is.", examples=[{"status": "done"}])
    arg: str | None = Field(
        None, min_length=1, title="From argument",
        description="Write the call's argument at this dot path instead of `value`; `*` writes all arguments "
        "(an argument the call lacks writes null).", examples=["amount", "*"])

    @model_validator(mode="after")
    def _one_operation(self) -> StateEffect:
        operations = [name for name in ("set", "append", "delete") if getattr(self, name) is not None]
        if len(operations) != 1:
            raise ValueError("an effect has exactly one of set, append and delete"
                             + (f", not {' and '.join(operations)}" if operations else ""))
        gives_value = "value" in self.model_fields_set
        if operations == ["delete"] and (gives_value or self.arg is not None):
            raise ValueError("delete takes no value and no arg")
        if operations != ["delete"] and gives_value == (self.arg is not None):
            raise ValueError(f"{operations[0]} needs one of value and arg")
        return self

    @property
    def path(self) -> str:
        return self.set or self.append or self.delete or ""
