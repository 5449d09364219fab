"""Secrets never reach an output: the values behind `api_key_env` and `${ENV}` references, and
config keys that carry credentials.

Two layers. The report's copy of the config has credential-looking keys blanked (`redact_config`).
Then every line evalrun writes (results.jsonl, report.json, the console) passes through a `Redactor`
holding the secret values themselves, because a provider may echo a key back inside an error message
that ends up in a case's reason, and an agent may say a token it was given.

`protect_config` does both in the one safe order: the names to redact are collected from the config
as written, before masking. Masking first would blank `Authorization: Bearer ${TOKEN}` and with it
the only mention of TOKEN, so the values that matter most would go unredacted.
"""
from __future__ import annotations

import json
import os
import re
from typing import Any, Iterable, Mapping

MASK = "***"
# Keys whose values are credentials wherever they appear (inside `extra`, `headers`, an agent's options).
_CREDENTIAL_KEY = re.compile(r"(^|[_-])(api[_-]?key|token|secret|password|passwd|authorization|auth|cookie|"
                             r"credentials?|bearer)([_-]|$)", re.IGNORECASE)
_ENV_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_MIN_SECRET_LENGTH = 4  # shorter values would mask ordinary words; no real key is this short


def is_credential_key(key: str) -> bool:
    """`api_key`, `X-Api-Key`, `Authorization`, `access_token`, ... but not `api_key_env` (a variable's name)."""
    return not key.lower().endswith("_env") and _CREDENTIAL_KEY.search(key) is not None


def redact_config(value: Any) -> Any:
    """A copy of a config record with the values of credential keys masked, at any depth."""
    if isinstance(value, Mapping):
        return {k: (MASK if isinstance(k, str) and is_credential_key(k) and v not in (None, "") else redact_config(v))
                for k, v in value.items()}
    if isinstance(value, list):
        return [redact_config(v) for v in value]
    return value


def secret_values(config_record: Any, environ: Mapping[str, str] = os.environ) -> list[str]:
    """The values of every variable the config names through `*api_key_env` keys or `${NAME}` references."""
    names: set[str] = set()
    stack = [config_record]
    while stack:
        node = stack.pop()
        if isinstance(node, Mapping):
            for key, value in node.items():
                if isinstance(key, str) and key.lower().endswith("api_key_env") and isinstance(value, str):
                    names.add(value)
                stack.append(value)
        elif isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, str):
            names.update(_ENV_REFERENCE.findall(node))
    values = {environ.get(name, "") for name in names}
    return sorted((v for v in values if len(v) >= _MIN_SECRET_LENGTH), key=len, reverse=True)


def protect_config(record: Any, environ: Mapping[str, str] = os.environ) -> tuple[Any, "Redactor"]:
    """(the record with credential keys masked, a Redactor of every secret value it names)."""
    return redact_config(record), Redactor(secret_values(record, environ))


class Redactor:
    """Replaces each known secret value in text with ***; the longest first, so no part of one survives.
    A value is also looked for as JSON writes it (a quote or a backslash escaped, other characters as
    \\u escapes), since results.jsonl and report.json hold text as JSON strings."""

    def __init__(self, secrets: Iterable[str] = ()):
        forms = set()
        for secret in secrets:
            if len(secret) >= _MIN_SECRET_LENGTH:
                forms.update((secret, json.dumps(secret, ensure_ascii=False)[1:-1], json.dumps(secret)[1:-1]))
        self.secrets = sorted(forms, key=len, reverse=True)

    def __call__(self, text: str) -> str:
        for secret in self.secrets:
            if secret in text:
                text = text.replace(secret, MASK)
        return text

    def __bool__(self) -> bool:
        return bool(self.secrets)
