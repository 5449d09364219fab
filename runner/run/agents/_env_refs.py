"""`${NAME}` references in an agent's settings (an http agent's headers, a command agent's environment): expanded
from the environment when the agent starts, shown as written (never their values) in a saved config, and any
secret value scrubbed from messages built out of a library's exception text."""
from __future__ import annotations

import os
import re

from ._base import AgentError

_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def expand_env(value: str, what: str) -> str:
    """`${NAME}` references replaced by the environment's values; a missing variable is an
    AgentError that names the variable (never a value)."""
    def one(match: re.Match) -> str:
        name = match.group(1)
        found = os.environ.get(name)
        if found is None:
            raise AgentError(f"{what} refers to ${{{name}}}, but the environment variable {name} is not set")
        return found

    return _ENV_REF.sub(one, value)


def env_names(value: str) -> list[str]:
    return _ENV_REF.findall(value)


_SCHEME_WORD = re.compile(r"^([A-Za-z]+\s+)?$")  # "Bearer ", "Token ": never a credential


def redacted(value: str) -> str:
    """How a header or environment value is shown in a saved config: `Bearer ${TOKEN}` as written (the
    reference names a variable, not its value); any value with other literal text is hidden, since it
    may be a credential written into the file."""
    if not _ENV_REF.search(value):
        return "<redacted>"
    return value if _SCHEME_WORD.match(_ENV_REF.sub("", value)) else "<redacted>"


def scrub(text: str, secrets: list[str]) -> str:
    """Remove secret values from a message built from a library's exception text (defence in depth)."""
    for secret in sorted((s for s in secrets if s and len(s) >= 4), key=len, reverse=True):
        text = text.replace(secret, "<redacted>")
    return text
