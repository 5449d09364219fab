"""`evalrun import FILE… -o DIR`: each conversation of a trace file (or of any transcript) becomes a saved
transcript and a draft suite that replays it.

Drafting and writing are `evalrun record --from`'s (runner/authoring/record/from_files.py: the draft rules, the
output folder, nothing half-written): `import` is that command under the name a person with an exported
trace file looks for, with a folder of its own as the default target. There is one draft writer.
"""
from __future__ import annotations

import argparse
from typing import TextIO

__all__ = ["import_command"]


def import_command(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from .record import record_command

    for name, default in (("annotate", False), ("config", None)):
        if not hasattr(args, name):
            setattr(args, name, default)
    return record_command(args, out, err)
