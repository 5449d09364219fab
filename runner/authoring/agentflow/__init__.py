"""Agentflow / 10xGraph: evalrun suites to and from Agentflow's own files and Python evals."""
