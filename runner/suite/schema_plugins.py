"""The shipped suite schema widened by the installed plugins: a check type (`evalrun.checks`) from another package
is a valid `type`, checked against its options' schema. (Agent kinds widen the config schema in
runner/config/load.py, which knows them.) The schemas under schemas/ are evalrun's own; nothing is looked for when
no distribution declares such plugins."""
from __future__ import annotations

import copy
from typing import Any


def with_plugins(kind: str, schema: dict[str, Any]) -> dict[str, Any]:
    from ..util.extensions import declared

    if kind == "suite" and declared("checks"):
        return _with_check_types(schema)
    return schema


def _with_check_types(schema: dict[str, Any]) -> dict[str, Any]:
    from ..checks import builtin_families, families

    builtin = {id(f) for f in builtin_families()}
    extra = [f for f in families() if id(f) not in builtin]
    if not extra:
        return schema
    schema = copy.deepcopy(schema)
    check = schema["$defs"]["Check"]
    for family in extra:
        options = family.options.model_json_schema(by_alias=True, ref_template="#/$defs/{model}")
        schema["$defs"].update(options.pop("$defs", {}))
        schema["$defs"][family.options.__name__] = options
        check["properties"]["type"]["enum"] = check["properties"]["type"]["enum"] + list(family.types)
        check.setdefault("allOf", []).extend(
            {"if": {"properties": {"type": {"const": name}}, "required": ["type"]},
             "then": {"$ref": f"#/$defs/{family.options.__name__}"}} for name in family.types)
    return schema
