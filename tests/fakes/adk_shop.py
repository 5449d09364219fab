"""A small Google ADK agent for the tests: a shop assistant with one tool that hands parcel questions to
a shipping sub-agent with a tool of its own. Its model is ADK's LiteLlm wrapper pointed at the fake
OpenAI-compatible server (tests/fakes/openai_server.py), so nothing reaches a Google service.

    root_agent = build(fake.base_url)

`get_order` writes to the session state (the order it looked up, and the app and user of the session),
so a test can see both the initial state and what the conversation changed.
"""
from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # before litellm is imported: no download in tests

from google.adk.agents import LlmAgent
from google.adk.models.lite_llm import LiteLlm
from google.adk.tools import ToolContext

# What the fake server says, turn by turn, when a test scripts the usual conversation (see `script`).
ORDER_ID, TRACKING_ID, ARRIVAL = "A-1042", "T-77", "It arrives on June 12."


def get_order(order_id: str, tool_context: ToolContext) -> dict:
    """Looks an order up by its id."""
    if order_id == "BOOM":
        raise RuntimeError("the order database is down")
    tool_context.state["last_order"] = order_id
    tool_context.state["seen_by"] = f"{tool_context.session.app_name}/{tool_context.session.user_id}"
    return {"order_id": order_id, "tracking_id": TRACKING_ID}


def track_parcel(tracking_id: str) -> str:
    """Tracks a parcel by its tracking id."""
    return f"parcel {tracking_id}: out for delivery, arrives 2025-06-12"


def build(base_url: str) -> LlmAgent:
    def model() -> LiteLlm:
        return LiteLlm(model="openai/fake-model", api_base=base_url, api_key="dummy")

    shipping = LlmAgent(name="shipping_agent", model=model(), description="Tracks parcels.",
                        instruction="Track parcels with track_parcel.", tools=[track_parcel])
    return LlmAgent(name="shop_agent", model=model(), instruction="Help with orders; hand parcel questions over.",
                    tools=[get_order], sub_agents=[shipping])


def script(fake, order_id: str = ORDER_ID) -> None:
    """The fake model's side of the usual first turn: look the order up, hand over, track, answer."""
    from tests.fakes.openai_server import Reply, tool_call

    fake.script(Reply(tool_calls=[tool_call("get_order", {"order_id": order_id}, "call_1")]),
                Reply(tool_calls=[tool_call("transfer_to_agent", {"agent_name": "shipping_agent"}, "call_2")]),
                Reply(tool_calls=[tool_call("track_parcel", {"tracking_id": TRACKING_ID}, "call_3")]),
                ARRIVAL)
