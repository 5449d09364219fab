"""The run session: what every front end (the CLI, Python, pytest, watch) hands a run to, and the one
verdict it reports. Light on purpose: importing the package imports nothing."""
