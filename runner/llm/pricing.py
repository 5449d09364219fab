"""Prices per token and model facts for the fast path, without importing litellm.

litellm ships its price list as a JSON file (the one it reads itself with LITELLM_LOCAL_MODEL_COST_MAP); it is
read once, on the first priced call, and looked up by model name. A model that is not in it, or an installation
without litellm, has no known price: the call's cost is None ("cost unknown"), never $0. Parsing the whole list
(3 MB, 4,000 models) costs 10-30 ms of CPU and 20 MB; a model whose name is nowhere in the text (a local server's
"openai/my-model") is known to be absent without it.
"""
from __future__ import annotations

import json
import sys
import threading
from importlib.util import find_spec
from pathlib import Path
from typing import Any

PRICE_FILE = "model_prices_and_context_window_backup.json"

_table: dict | None = None
_text: str | None = None  # the file's text, before (or instead of) parsing it
_lock = threading.RLock()
_by_model: dict[str, dict | None] = {}


def price_table() -> dict:
    """litellm's model list (name -> facts), {} when litellm is not installed or the file cannot be read."""
    global _table
    with _lock:
        if _table is None:
            _table = _read_table()
        return _table


def facts_known(model: str) -> bool:
    """Whether model_facts(model) answers without reading anything."""
    return model in _by_model


def _read_table() -> dict:
    loaded = sys.modules.get("litellm")
    if loaded is not None and isinstance(getattr(loaded, "model_cost", None), dict):
        return loaded.model_cost  # already in memory
    text = _price_text()
    try:
        table = json.loads(text) if text is not None else {}
    except ValueError:
        return {}
    return table if isinstance(table, dict) else {}


def _price_text() -> str | None:
    """The price file's text (read once), or None without litellm or when it cannot be read."""
    global _text
    with _lock:
        if _text is None:
            try:
                spec = find_spec("litellm")
                if spec is None or spec.origin is None:
                    return None
                _text = (Path(spec.origin).parent / PRICE_FILE).read_text(encoding="utf-8")
            except (ImportError, ValueError, OSError):
                return None
        return _text


def surely_absent(name: str, text: str) -> bool:
    """Whether JSON `text` cannot hold the key `name`: the quoted name is nowhere in it, and it cannot be written
    another way either (no \\u or \\/ escape in the text). A name with a quote, a backslash or a control
    character is never decided here."""
    if any(c in '"\\' or ord(c) < 0x20 for c in name) or "\\u" in text or "\\/" in text:
        return False
    return f'"{name}"' not in text


def model_facts(model: str) -> dict | None:
    """The price list's entry for `model` ("openai/gpt-4o-mini" is also found as "gpt-4o-mini", as litellm
    does for OpenAI's models), or None."""
    if model in _by_model:
        return _by_model[model]
    with _lock:
        if model not in _by_model:
            _by_model[model] = _facts(model)
        return _by_model[model]


def _facts(model: str) -> dict | None:
    names = [model, model.split("/", 1)[1]] if model.startswith("openai/") else [model]
    if _table is None and "litellm" not in sys.modules:
        text = _price_text()
        if text is None or all(surely_absent(name, text) for name in names):
            return None  # not in the list: no need to parse it
    table = price_table()
    entry = table.get(model)
    if entry is None and len(names) == 2:
        bare = table.get(names[1])
        entry = bare if isinstance(bare, dict) and bare.get("litellm_provider") in ("openai", None) else None
    return entry if isinstance(entry, dict) else None


def cost_of(model: str, usage: dict) -> float | None:
    """The price of one reply from its token counts; None when the model or the counts are unknown."""
    facts = model_facts(model)
    if facts is None:
        return None
    per_input, per_output = facts.get("input_cost_per_token"), facts.get("output_cost_per_token")
    prompt, completion = usage.get("prompt_tokens"), usage.get("completion_tokens")
    if not all(_number(v) for v in (per_input, per_output, prompt, completion)):
        return None
    return prompt * per_input + completion * per_output  # type: ignore[operator]  # all four are numbers (above)


def supports_response_schema(model: str) -> bool:
    facts = model_facts(model)
    return bool(facts and facts.get("supports_response_schema"))


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0
