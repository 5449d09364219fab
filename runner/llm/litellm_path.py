"""litellm, imported on first use (it takes seconds), and what reads its response objects."""
from __future__ import annotations

import json
import os
from typing import Any, Optional

_LITELLM: list[Any] = []  # the imported module, once imported


def _litellm() -> Any:
    if _LITELLM:
        return _LITELLM[0]
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # must precede the import
    import logging

    import litellm

    litellm.suppress_debug_info = True  # no "Give Feedback" banners on every error
    litellm.telemetry = False
    # litellm warns on its own logger when calls move between event loops (blocking calls from threads);
    # the run's console is not the place for it.
    logging.getLogger("LiteLLM").setLevel(logging.ERROR)
    _LITELLM[:] = [litellm]
    return litellm
def _tool_call_dict(call: Any) -> dict:
    function = getattr(call, "function", None)
    arguments = getattr(function, "arguments", None)
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments if arguments is not None else {})
    return {"id": getattr(call, "id", None), "type": "function",
            "function": {"name": getattr(function, "name", None), "arguments": arguments}}


def _cost(response: Any) -> Optional[float]:
    hidden = getattr(response, "_hidden_params", None)
    if isinstance(hidden, dict) and "response_cost" in hidden:
        cost = hidden["response_cost"]  # litellm priced the reply already: pricing it again costs ~1 ms a call
    else:
        try:
            cost = _litellm().completion_cost(completion_response=response)
        except Exception:  # a model missing from the price list has no known cost
            return None
    return float(cost) if isinstance(cost, (int, float)) and not isinstance(cost, bool) else None

