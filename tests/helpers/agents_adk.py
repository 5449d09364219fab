"""Shared by several test modules (once in tests/run/test_agents_adk.py): SUITE, make_project."""
from __future__ import annotations

from tests.helpers.cli_helpers import write

SUITE = """
    id: where-is-my-order
    agent: shop
    starting_sentence: Where is order A-1042?
    runtime_context: {app_name: shop, user_id: ann, state: {tier: gold}}
    goals:
      get_order: [transfer_to_agent]
      transfer_to_agent: [track_parcel]
      track_parcel: [say_when]
    goal_details:
      - {type: tool_call, name: get_order, tool_name: get_order, args: {order_id: A-1042}}
      - {type: tool_call, name: transfer_to_agent, tool_name: transfer_to_agent, args: {agent_name: shipping_agent}}
      - {type: tool_call, name: track_parcel, tool_name: track_parcel, args: {tracking_id: T-77}}
      - {type: text, name: say_when, keywords: [June 12]}
    """


def make_project(root, base_url: str):
    write(root / "evalrun.yaml", """
        agents:
          shop:
            type: adk
            entrypoint: shop_app.agent:root_agent
        """)
    write(root / "shop_app" / "__init__.py", "")
    write(root / "shop_app" / "agent.py", f"""
        from tests.fakes.adk_shop import build

        root_agent = build({base_url!r})
        """)
    write(root / "suites" / "order.yaml", SUITE)
    return root
