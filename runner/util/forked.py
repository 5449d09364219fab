"""Worker processes forked from the run's process, each with a socket of its own (the replay pool's workers,
runner.run.executors.pool_process; the suite readers, runner.suite.read_pool).

A socket per worker, never shared: whatever a worker does and however it ends, it can cut short only its own
messages, and its death shows on its socket at once, as the end of the stream (mid-message, if it was killed
while writing). concurrent.futures' process pool shares one result pipe and its lock among all workers: a worker
killed while it wrote there left the reader waiting for the rest of a message for ever, and no signal could end
that wait.

A message is a frame: 8 bytes of length, then the bytes (a pickle, for both users).
"""
from __future__ import annotations

import os
import signal
import socket
import sys
from collections.abc import Callable, Iterable

HEADER = 8  # bytes of a frame's length


def fork_with_socket(child: Callable[[socket.socket, int], None], close_in_child: Iterable[socket.socket] = ()
                     ) -> tuple[int, socket.socket]:
    """Fork a process that runs `child(its socket, the parent's pid)` and then ends (exit 0, or 70 if `child`
    raised); returns its pid and this end of its socket. `close_in_child`: sockets of earlier workers, which
    the new one must not keep open (a copy held elsewhere would hide their end)."""
    ours, theirs = socket.socketpair()
    parent = os.getpid()
    for stream in (sys.stdout, sys.stderr):  # what is buffered here would be written twice, once by the child
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):
            pass
    pid = os.fork()
    if pid == 0:  # the child: it never returns into the caller's frames (an event loop may run there)
        code = 0
        try:
            ours.close()
            for sibling in close_in_child:
                sibling.close()
            child(theirs, parent)
        except BaseException:
            code = 70
        finally:
            os._exit(code)
    theirs.close()
    return pid, ours


def become_worker(parent: int) -> None:
    """In a forked worker: Ctrl-C and a hang-up reach the terminal's whole process group, and the parent decides
    what they mean (it ends its workers); SIGTERM sent to a worker ends it (not the parent's handlers, inherited
    with the fork). A worker never outlives its parent, even one killed outright."""
    try:
        signal.set_wakeup_fd(-1)  # the parent's, if it had one: a signal here must not wake its loop
    except (ValueError, OSError):
        pass
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "SIGHUP"):
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if sys.platform == "linux":
        try:
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent:  # the parent ended before the line above took effect
        os._exit(0)


def write_frame(fd: int, data: bytes) -> None:
    """One frame, whole (blocking)."""
    view = memoryview(len(data).to_bytes(HEADER, "big") + data)
    while view:
        view = view[os.write(fd, view):]


def read_frame(fd: int) -> bytes | None:
    """The next frame (blocking); None at the end of the stream, also in the middle of a frame."""
    header = _read_exactly(fd, HEADER)
    return None if header is None else _read_exactly(fd, int.from_bytes(header, "big"))


def _read_exactly(fd: int, size: int) -> bytes | None:
    chunks, left = [], size
    while left:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def kill_and_reap(pid: int) -> int | None:
    """End a worker now (SIGKILL) and reap it: its wait status (None if it was reaped elsewhere)."""
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    try:
        return os.waitpid(pid, 0)[1]
    except ChildProcessError:
        return None
