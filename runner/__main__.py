"""`python -m runner` is the `evalrun` command."""
from .frontends.cli import main

raise SystemExit(main())
