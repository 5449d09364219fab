"""The pytest plugin (plugin.py) and the run folders it writes per project (projects.py)."""
