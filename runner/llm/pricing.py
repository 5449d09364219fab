"""Prices per token and model facts for the fast path, without importing litellm.

litellm ships its price list as a JSON file (the one it reads itself with LITELLM_LOCAL_MODEL_COST_MAP); it is
read once, on the first priced call (about 30 ms), and looked up by model name. A model that is not in it, or
an installation without litellm, has no known price: the call's cost is None ("cost unknown"), never $0.
"""
from __future__ import annotations

import json
import sys
import threading
from importlib.util import find_spec
from pathlib import Path
from typing import Any, Optional

PRICE_FILE = "model_prices_and_context_window_backup.json"

_table: Optional[dict] = None
_lock = threading.Lock()
_by_model: dict[str, Optional[dict]] = {}


def price_table() -> dict:
    """litellm's model list (name -> facts), {} when litellm is not installed or the file cannot be read."""
    global _table
    with _lock:
        if _table is None:
            _table = _read_table()
        return _table


def prices_loaded() -> bool:
    return _table is not None


def _read_table() -> dict:
    loaded = sys.modules.get("litellm")
    if loaded is not None and isinstance(getattr(loaded, "model_cost", None), dict):
        return loaded.model_cost  # already in memory
    try:
        spec = find_spec("litellm")
    except (ImportError, ValueError):
        return {}
    if spec is None or spec.origin is None:
        return {}
    try:
        table = json.loads((Path(spec.origin).parent / PRICE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return table if isinstance(table, dict) else {}


def model_facts(model: str) -> Optional[dict]:
    """The price list's entry for `model` ("openai/gpt-4o-mini" is also found as "gpt-4o-mini", as litellm
    does for OpenAI's models), or None."""
    if model in _by_model:
        return _by_model[model]
    table = price_table()
    entry = table.get(model)
    if entry is None and model.startswith("openai/"):
        bare = table.get(model.split("/", 1)[1])
        entry = bare if isinstance(bare, dict) and bare.get("litellm_provider") in ("openai", None) else None
    entry = entry if isinstance(entry, dict) else None
    _by_model[model] = entry
    return entry


def cost_of(model: str, usage: dict) -> Optional[float]:
    """The price of one reply from its token counts; None when the model or the counts are unknown."""
    facts = model_facts(model)
    if facts is None:
        return None
    per_input, per_output = facts.get("input_cost_per_token"), facts.get("output_cost_per_token")
    prompt, completion = usage.get("prompt_tokens"), usage.get("completion_tokens")
    if not all(_number(v) for v in (per_input, per_output, prompt, completion)):
        return None
    return prompt * per_input + completion * per_output


def supports_response_schema(model: str) -> bool:
    facts = model_facts(model)
    return bool(facts and facts.get("supports_response_schema"))


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0
