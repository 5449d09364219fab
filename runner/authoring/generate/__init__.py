"""`evalrun generate`: suites written by a model from user stories and the agent's tools."""
