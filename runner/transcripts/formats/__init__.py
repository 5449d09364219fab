"""The transcript formats, by name: evalrun's own (each module of this package declaring `FORMAT`, a
TranscriptFormat) and those installed packages add through the `evalrun.transcripts` entry points
(runner.util.extensions). A file is read by the first of evalrun's formats whose `sniff` claims it, else by the first
plugin format's, else as chat messages (whose errors say what a transcript should be): a plugin never takes a
file evalrun reads itself."""
from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache
from pathlib import Path
from typing import Any

from .base import Conversations, TranscriptFormat

__all__ = ["Conversations", "TranscriptFormat", "builtin", "conversations", "find", "formats", "marked", "names",
           "sniffed"]

_FRAMEWORK_MODULES = {"base"}
_FALLBACK = "messages"


@lru_cache(maxsize=1)
def builtin() -> tuple[TranscriptFormat, ...]:
    """evalrun's own formats, in the order they sniff (module-name order; the chat messages fallback last)."""
    found = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name in _FRAMEWORK_MODULES or info.name.startswith("_"):
            continue
        fmt = getattr(importlib.import_module(f"{__name__}.{info.name}"), "FORMAT", None)
        if fmt is not None:
            found.append(fmt)
    return tuple(sorted(found, key=lambda f: f.name == _FALLBACK))


@lru_cache(maxsize=1)
def _plugins() -> tuple[tuple[TranscriptFormat, str], ...]:
    from ...util.extensions import load

    return tuple((p.obj, p.where) for p in load("transcripts", (f.name for f in builtin()), _checked))


def _checked(name: str, obj: Any) -> TranscriptFormat:
    from ...util.extensions import PluginProblem, expect

    fmt = expect(obj, TranscriptFormat, "a runner.transcripts.formats.TranscriptFormat")
    if fmt.name != name:
        raise PluginProblem(f"its format is named '{fmt.name}', not '{name}': name the entry point as the format")
    if not callable(fmt.sniff) or not callable(fmt.normalize):
        raise PluginProblem("its sniff and normalize must be functions")
    return fmt


def formats() -> tuple[TranscriptFormat, ...]:
    """Every transcript format: evalrun's, then the plugins'."""
    return builtin() + tuple(f for f, _ in _plugins())


def names() -> tuple[str, ...]:
    return tuple(f.name for f in formats())


def marked(raw: bytes) -> bool:
    """Whether `raw` holds a mark of some transcript format (or some format has none: parse to know)."""
    if any(hint in raw for fmt in builtin() for hint in fmt.markers):
        return True
    return any(not fmt.markers or any(hint in raw for hint in fmt.markers) for fmt, _ in _plugins())


def _claims(fmt: TranscriptFormat, data: Any) -> bool:
    try:
        return bool(fmt.sniff(data))
    except Exception:
        return False


def find(data: Any) -> TranscriptFormat | None:
    """The format that claims decoded JSON `data`, or None. The plugins are looked for only when none of
    evalrun's own formats claims it (reading their metadata costs 20-60 ms)."""
    found = next((f for f in builtin() if _claims(f, data)), None)
    return found or next((f for f, _ in _plugins() if _claims(f, data)), None)


def sniffed(data: Any) -> bool:
    """Whether some transcript format claims `data` (a suites folder then passes the file over)."""
    return find(data) is not None


def conversations(data: Any, path: Path) -> Conversations:
    """The conversations of a transcript file's decoded JSON, read by the format that claims it."""
    fmt = find(data)
    if fmt is None or fmt.name == _FALLBACK:
        return _fallback().conversations(data, path)  # type: ignore[misc]  # the fallback format has its own
    if fmt.conversations is not None:
        return fmt.conversations(data, path)
    return [(None, _plugin_recording(fmt, data, path))]


def _fallback() -> TranscriptFormat:
    return next(f for f in builtin() if f.name == _FALLBACK)


def _plugin_recording(fmt: TranscriptFormat, data: Any, path: Path) -> Any:
    from ..recording import TranscriptError
    from .messages import message_recording

    where = {f.name: w for f, w in _plugins()}.get(fmt.name, "")
    try:
        messages = fmt.normalize(data)
    except Exception as exc:
        raise TranscriptError(f"{path}: the '{fmt.name}' transcript format ({where}) could not read it: "
                              f"{type(exc).__name__}: {exc}") from None
    if not isinstance(messages, list):
        raise TranscriptError(f"{path}: the '{fmt.name}' transcript format ({where}) gave "
                              f"{type(messages).__name__}, not a list of messages")
    return message_recording(messages, path)


def _reset() -> None:
    """Forget the plugins found (tests that install one in-process)."""
    _plugins.cache_clear()

