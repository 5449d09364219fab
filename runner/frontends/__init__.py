"""Every way into evalrun: the command line (cli/), Python (python.py), pytest (pytest/), watch."""
