"""`evalrun view`: a local, read-only web app over the run folders of a project (runner/frontends/cli/view.py starts it).

folder.py finds the runs (a URL's run id is only ever a key into what it found, never a path); summaries.py
reads each run's head for the runs list, cached by mtime; run_data.py reads one run as the HTML report's data
model (runner.report.html_data); comparison.py puts two runs side by side with runner.report.compare and
divergence.py; history.py follows one case across runs; api.py answers in JSON; server.py serves it with the
single-page app of static/; export.py writes the same app as static files.
"""
