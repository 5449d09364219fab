"""A tiny real MCP server over stdio for tests: two tools, listed with their JSON Schemas."""
from typing import Literal

from mcp.server.mcpserver import MCPServer

server = MCPServer("weather")


@server.tool()
def get_forecast(city: str, days: int = 1, unit: Literal["C", "F"] = "C") -> str:
    """The weather forecast for a city."""
    return f"{city}: sunny for {days} day(s), 21 {unit}"


@server.tool()
def get_alerts(region: str) -> str:
    """Weather alerts for a region."""
    return f"no alerts for {region}"


if __name__ == "__main__":
    server.run("stdio")
