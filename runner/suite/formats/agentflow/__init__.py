"""Agentflow's (10xscale-agentflow >= 0.8, 10xgraph) own eval files, read with Agentflow's meaning.

detect.py tells an Agentflow eval config from ADK's by its keys; config.py reads it into criteria; evalset.py
reads the eval set it applies to into cases whose checks score as Agentflow's evaluator does
(runner/checks/agentflow). An Agentflow-shaped eval set whose config is keyed by ADK's names (the Agentflow
plan's files, Agentflow <= 0.6) is read by adk.py as before.
"""
