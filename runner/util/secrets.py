"""Secrets never reach an output: the values behind `api_key_env` and `${ENV}` references, the keys providers
read on their own (OPENAI_API_KEY, ...: runner/util/provider_env.py), and config keys that carry credentials.

Two layers. The report's copy of the config has credential-looking keys blanked (`redact_config`).
Then every line evalrun writes (results.jsonl, report.json, the console, transcripts, draft suites) passes
through a `Redactor` holding the secret values themselves, because a provider may echo a key back inside an
error message that ends up in a case's reason, and an agent may say a token it was given. A value is masked
in every form it may be written in (runner/util/secret_forms.py: raw, JSON-escaped at any depth, percent-encoded).

`protect_config` does both in the one safe order: the names to redact are collected from the config
as written, before masking. Masking first would blank `Authorization: Bearer ${TOKEN}` and with it
the only mention of TOKEN, so the values that matter most would go unredacted.

This process's secrets. Each configuration loaded adds the names it uses to SECRET_ENV_NAMES (so do model
settings, wherever they are written, through runner.llm.calls), and every Redactor also masks their values as
the environment has them: code far from any configuration (a reason cut short in a check, a line printed by a
command) masks with `redact`. Text is redacted before it is cut (`clip`): a cut secret is a fragment no
redactor recognises.
"""
from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Iterable, Mapping
from typing import Any, TextIO

from .provider_env import implicit_secret_names
from .secret_forms import MIN_SECRET_LENGTH, Matcher, is_maskable

MASK = "***"
# Keys whose values are credentials wherever they appear (inside `extra`, `headers`, an agent's options).
_CREDENTIAL_KEY = re.compile(r"(^|[_-])(api[_-]?key|token|secret|password|passwd|authorization|auth|cookie|"
                             r"credentials?|bearer)([_-]|$)", re.IGNORECASE)
_ENV_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")

__all__ = [
    "MASK",
    "MIN_SECRET_LENGTH",
    "SECRET_ENV_NAMES",
    "RedactingStream",
    "Redactor",
    "clip",
    "is_credential_key",
    "named_variables",
    "protect_config",
    "redact",
    "redact_config",
    "redact_data",
    "redact_standard_streams",
    "remember",
    "secret_names",
    "secret_values",
]


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


def named_variables(config_record: Any) -> tuple[set[str], list[str]]:
    """(the variables the config names: every `*api_key_env` and `${NAME}` reference, the models it names)."""
    names: set[str] = set()
    models: list[str] = []
    stack = [config_record]
    while stack:
        node = stack.pop()
        if isinstance(node, Mapping):
            for key, value in node.items():
                if isinstance(key, str) and key.lower().endswith("api_key_env") and isinstance(value, str):
                    names.add(value)
                if key == "model" and isinstance(value, str):
                    models.append(value)
                stack.append(value)
        elif isinstance(node, (list, tuple)):
            stack.extend(node)
        elif isinstance(node, str):
            names.update(_ENV_REFERENCE.findall(node))
    return names, models


def secret_names(config_record: Any, environ: Mapping[str, str] = os.environ) -> set[str]:
    """The variables whose values are secrets for this config: every `*api_key_env`, every `${NAME}`
    reference, and the variables the providers of the models it names read on their own."""
    names, models = named_variables(config_record)
    return names | implicit_secret_names(models, environ)


def secret_values(config_record: Any, environ: Mapping[str, str] = os.environ) -> list[str]:
    """The values of the variables of `secret_names` that can be masked (`is_maskable`), the longest first."""
    values = {environ.get(name, "") for name in secret_names(config_record, environ)}
    return sorted((v for v in values if is_maskable(v)), key=len, reverse=True)


def protect_config(record: Any, environ: Mapping[str, str] = os.environ) -> tuple[Any, Redactor]:
    """(the record with credential keys masked, a Redactor of every secret value it names)."""
    return redact_config(record), Redactor(secret_values(record, environ))


# ------------------------------------------------------------------------------------- this process's secrets

SECRET_ENV_NAMES: set[str] = set()  # variables whose values are secrets here (runner.llm.calls adds to it too)
_implicit: frozenset[str] = frozenset()  # the providers' own variables set in the environment at the last `remember`
_process: tuple[tuple, Matcher] = ((), Matcher((), MASK))  # (the values it was built from, the Matcher)


def remember(config_record: Any = None) -> None:
    """Add the secrets `config_record` names (a config's record, or a pydantic config) to this process's, and
    look again for the providers' own variables in the environment."""
    global _implicit
    if config_record is not None and hasattr(config_record, "model_dump"):
        config_record = config_record.model_dump(mode="json", by_alias=True)
    SECRET_ENV_NAMES.update(secret_names(config_record))
    _implicit = frozenset(implicit_secret_names((), os.environ))


def _process_matcher() -> Matcher:
    global _process
    names = SECRET_ENV_NAMES.copy() | _implicit  # a copy: another thread may add a name meanwhile
    values = tuple(sorted({os.environ.get(name) or "" for name in names}))
    known = _process
    if values != known[0]:
        known = _process = (values, Matcher(values, MASK))
    return known[1]


def redact(text: str) -> str:
    """`text` with every secret of this process masked, in every form it may be written in."""
    return _process_matcher()(text)


class Redactor:
    """Replaces each known secret value in text with the mask, in each form it may be written in (raw, as JSON
    writes it at any depth, percent-encoded), the longest first, so no part of one survives; the secrets of
    this process (`redact`) as well, so one made in a worker process knows that process's too."""

    def __init__(self, secrets: Iterable[str] = (), mask: str = MASK):
        self._own = Matcher(secrets, mask)

    @property
    def secrets(self) -> list[str]:
        return self._own.secrets

    def __call__(self, text: str) -> str:
        return redact(self._own(text))

    def __bool__(self) -> bool:
        return bool(self._own) or bool(_process_matcher())


def redact_data(value: Any, redactor: Any = None) -> Any:
    """A copy of `value` (dicts, lists, tuples, dataclasses, at any depth) with every string, keys included,
    redacted (by `redactor`, or this process's secrets)."""
    redactor = redactor or redact
    if isinstance(value, str):
        return redactor(value)
    if isinstance(value, Mapping):
        return {redact_data(k, redactor): redact_data(v, redactor) for k, v in value.items()}
    if isinstance(value, list):
        return [redact_data(v, redactor) for v in value]
    if isinstance(value, tuple):
        items = [redact_data(v, redactor) for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)  # a named tuple keeps its type
    if isinstance(value, (set, frozenset)):
        return type(value)(redact_data(v, redactor) for v in value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {f.name: redact_data(getattr(value, f.name), redactor) for f in dataclasses.fields(value) if f.init}
        return dataclasses.replace(value, **changes)
    return value


def clip(text: str, limit: int, marker: str = "…") -> str:
    """`text` redacted, then cut to at most `limit` characters (ending with `marker` when cut)."""
    text = redact(text)
    return text if len(text) <= limit else text[:max(0, limit - len(marker))] + marker


class RedactingStream:
    """A text stream that redacts what is written to it, a line at a time (a secret written in two pieces is
    still seen whole); what is left of a line goes out, redacted, at `flush` (or once it grows past 64 KiB).
    Everything else is the stream's. Threads may write to it at once (an agent's prints, the run's lines)."""

    MAX_PENDING = 64 * 1024

    def __init__(self, stream: TextIO, redactor: Any | None = None):
        import threading

        self._stream = stream
        self._redact = redactor or redact
        self._pending: list[str] = []  # the start of a line not yet written (kept in pieces: no copying)
        self._size = 0
        self._lock = threading.RLock()  # re-entrant: a signal handler may print while a line is being written

    def write(self, text: str) -> int:
        with self._lock:
            newline = text.rfind("\n")
            if newline < 0 and self._size + len(text) <= self.MAX_PENDING:
                self._pending.append(text)
                self._size += len(text)
                return len(text)
            end = len(text) if newline < 0 else newline + 1
            pending, self._pending, self._size = self._pending, [text[end:]], len(text) - end
            self._stream.write(self._redact("".join(pending) + text[:end]))
        return len(text)

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        with self._lock:
            pending, self._pending, self._size = "".join(self._pending), [], 0
            if pending:
                self._stream.write(self._redact(pending))
        self._stream.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def redact_standard_streams() -> None:
    """From now on, what this process prints (an agent's prints included) passes the redactor: for a worker
    process whose stdout and stderr go to files nobody redacts (a Ray worker's logs)."""
    import sys

    if sys.stdout is not None and not isinstance(sys.stdout, RedactingStream):
        sys.stdout = RedactingStream(sys.stdout)
    if sys.stderr is not None and not isinstance(sys.stderr, RedactingStream):
        sys.stderr = RedactingStream(sys.stderr)
