"""A run folder's lock: held by the run writing into it, for the life of its process (the standard library only,
so pytest's plugin can ask without importing evalrun's models)."""
from __future__ import annotations

import os
from pathlib import Path

LOCK_NAME = ".evalrun-run.lock"


def try_lock(folder: Path) -> int | None:
    """The folder's lock, held until its descriptor is closed, or None when another process holds it. On a file
    system without locks (NFS without lockd) the descriptor is returned unlocked: nobody can hold it either."""
    import errno
    import fcntl

    fd = os.open(folder / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            os.close(fd)
            return None
    return fd


def in_use(folder: Path) -> bool:
    """Whether a run holds the folder now (asked by taking its lock and letting it go at once)."""
    try:
        fd = try_lock(folder)
    except OSError:
        return False  # no lock can be made there: nobody holds one either
    if fd is None:
        return True
    os.close(fd)
    return False
