"""An agent's tools from wherever they are written (YAML, OpenAPI, MCP), as OpenAI-style definitions."""
