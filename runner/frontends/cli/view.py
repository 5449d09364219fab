"""`evalrun view`: the local web app over a project's runs (runner/view), or its static export."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

DEFAULT_PORT = 7575
_LOCAL = ("127.0.0.1", "localhost", "::1")


def add_view(sub) -> None:
    view = sub.add_parser(
        "view", help="browse the project's runs in a local web app",
        description="Serve a read-only web app over the runs of a project (its .evalrun/reports/) or any folder of "
                    "run folders: the runs newest first with their pass rates, each run's cases with their "
                    "conversations, tool calls and verdicts, two runs side by side with the first point where a "
                    "changed case's conversations part, and one case across runs. Every page has its own link "
                    "(#/run/ID, #/run/ID/case/CASE, #/compare/OLD/NEW, #/case/CASE). Ctrl-C stops it (exit 0). "
                    "Exit 4 when the folder holds no run or the port cannot be used.")
    view.add_argument("folder", nargs="?", type=Path, default=Path("."), metavar="PROJECT_OR_RUNS_DIR",
                      help="a project (its .evalrun/reports/ is read), a folder of run folders, or one run's folder "
                           "(default: the current folder)")
    view.add_argument("--port", type=_port, default=DEFAULT_PORT, metavar="N",
                      help=f"the port to listen on (default {DEFAULT_PORT}; 0 picks a free one)")
    view.add_argument("--host", default="127.0.0.1", metavar="HOST",
                      help="the address to listen on (default 127.0.0.1: this machine only). Reports hold "
                           "conversations: give another address only on a network you trust")
    view.add_argument("--export", type=Path, metavar="DIR",
                      help="instead of serving, write the same app with the runs' data as static files in DIR "
                           "(for a CI artifact or a static host), then exit")
    view.add_argument("--open", action=argparse.BooleanOptionalAction, default=None,
                      help="open the app in a browser (default: when the terminal is interactive)")


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a port number 0-65535, got {text!r}") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"expected a port number 0-65535, got {value}")
    return value


def cmd_view(args: argparse.Namespace) -> int:
    from ...view.folder import NoRuns, RunsRoot

    try:
        RunsRoot(args.folder).require_runs()
    except NoRuns as exc:
        print(f"evalrun view: {exc}", file=sys.stderr)
        return 4
    if args.export is not None:
        from ...view.export import export

        try:
            written = export(args.folder, args.export)
        except OSError as exc:
            print(f"evalrun view: cannot write the export to {args.export}: {exc}", file=sys.stderr)
            return 4
        print(f"wrote the app over {written} run(s) to {args.export}: open {args.export / 'index.html'}")
        return 0
    if args.host not in _LOCAL:
        print(f"evalrun view: warning: listening on {args.host}: anyone who can reach this address can read every "
              "conversation of these runs", file=sys.stderr)
    return _serve(args)


def _serve(args: argparse.Namespace) -> int:
    import errno

    from ...view.server import serve

    def ready(url: str) -> None:
        print(f"evalrun view: serving {args.folder} at {url} (Ctrl-C to stop)", flush=True)
        if args.open or (args.open is None and sys.stdout.isatty()):
            import webbrowser

            webbrowser.open(url)

    try:
        serve(args.folder, args.host, args.port, ready)
    except KeyboardInterrupt:
        return 0
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            print(f"evalrun view: port {args.port} on {args.host} is already in use (another evalrun view, or another "
                  "program): give another with --port N, or --port 0 for any free port", file=sys.stderr)
        else:
            print(f"evalrun view: cannot listen on {args.host} port {args.port}: {exc.strerror or exc}",
                  file=sys.stderr)
        return 4
    return 0
