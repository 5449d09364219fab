"""A child process that answers JSON lines on stdin with JSON lines on stdout, in a process group of its own.

Shared by the `command` kind (any program) and the `python` kind's `isolate: process` worker. The
child and everything it starts share one process group, and the group is what gets stopped: when the
conversation ends evalrun closes stdin, waits a little, then signals the whole group (SIGTERM, then
SIGKILL) — and once the leader is gone, whatever it left behind is killed too, whatever the leader did.

Waiting is done on the leader's exit status, never on its pipes: a helper that inherited stdout or
stderr can hold them open for as long as it lives, and asyncio's `Process.wait()` (before Python 3.12)
waits for the pipes. A reply line longer than `max_line_bytes` is an error, never buffered in full.
"""
from __future__ import annotations

import asyncio
import collections
import os
import signal

from ._base import AgentError, excerpt
from ._env_refs import scrub

ERROR_STDERR_LINES = 5  # how many stderr lines an error message quotes (all kept lines go with the case)
LEADER_POLL_S = 0.05  # how often the leader's exit status is looked at while waiting
CLOSE_GRACE_S = 2.0  # how long a process may take to leave after stdin closes, and after SIGTERM
EXIT_GRACE_S = 0.2  # after the leader exited: a line it wrote is already in the pipe, this is ample
STDERR_GRACE_S = 2.0  # after the leader exited: how long its last stderr lines may take to be read


def describe_size(size: int) -> str:
    """16777216 -> '16 MiB'; sizes that are no whole number of MiB or KiB are shown in bytes."""
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale and size % scale == 0:
            return f"{size // scale} {unit}"
    return f"{size:,} bytes"


def exit_description(code: int | None) -> str:
    """How a process ended, in words: 'exited with code 3', 'was killed by signal 9 (SIGKILL)'."""
    if code is None:
        return "closed its output"
    if code >= 0:
        return f"exited with code {code}"
    try:
        name = f" ({signal.Signals(-code).name})"
    except ValueError:
        name = ""
    return f"was killed by signal {-code}{name}"


class ProcessChannel:
    """One child process, spoken to one line at a time. `who` names it in errors ("the agent process");
    `secrets` are removed from every line of stderr that is kept or quoted."""

    def __init__(self, who: str, *, stderr_lines: int, max_line_bytes: int, secrets: list[str],
                 limit_hint: str = ""):
        self.who = who
        self.max_line_bytes = max_line_bytes
        self.limit_hint = limit_hint  # how to allow longer lines, if one can
        self.secrets = secrets
        self.process: asyncio.subprocess.Process | None = None
        self._kept_lines = stderr_lines
        self._stderr: collections.deque[str] = collections.deque(maxlen=max(stderr_lines, ERROR_STDERR_LINES))
        self._stderr_task: asyncio.Task | None = None
        self._stderr_held = False  # still open STDERR_GRACE_S after the leader exited: held by what it left behind

    @property
    def returncode(self) -> int | None:
        return None if self.process is None else self.process.returncode

    async def start(self, argv: list[str], cwd: str, env: dict[str, str]) -> None:
        """Start the process (OSError when it cannot be started)."""
        self.process = await asyncio.create_subprocess_exec(
            *argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            cwd=cwd, env=env, limit=self.max_line_bytes + 1,
            start_new_session=True)  # its own process group (and no terminal signals): stopped as one
        self._stderr_task = asyncio.create_task(self._collect_stderr())

    # ------------------------------------------------------------------ talking

    async def send(self, line: bytes, timeout_s: float | None, what: str) -> None:
        """Write one line; AgentError when the process is gone or does not read it in time."""
        process = self.process
        assert process is not None and process.stdin is not None, "start() first"
        try:
            process.stdin.write(line)
            await asyncio.wait_for(process.stdin.drain(), timeout_s)  # a process that never reads
        except (BrokenPipeError, ConnectionResetError):
            raise await self.crashed(f"before reading {what}") from None
        except asyncio.TimeoutError:
            raise AgentError(self.with_stderr(f"{self.who} did not read {what} within {timeout_s:g} s")) from None

    async def receive(self, timeout_s: float | None, what: str, *, gone: str | None = None) -> bytes:
        """The next line that is not blank; AgentError when none comes in time, the process ends
        first (`gone` says when, by default "before answering <what>"), or the line is longer than
        `max_line_bytes`."""
        process = self.process
        assert process is not None and process.stdout is not None, "start() first"
        loop = asyncio.get_running_loop()
        deadline = None if timeout_s is None else loop.time() + timeout_s
        while True:
            reading = asyncio.ensure_future(process.stdout.readline())
            try:
                line = await self._read_or_exit(reading, deadline)
            except asyncio.TimeoutError:
                raise AgentError(self.with_stderr(f"{self.who} gave no answer to {what} within {timeout_s:g} s")) \
                    from None
            except (ValueError, asyncio.LimitOverrunError):
                raise AgentError(self.with_stderr(f"{self.who} wrote a line longer than "
                                                  f"{describe_size(self.max_line_bytes)} in {what}{self.limit_hint}")) \
                    from None
            if line is None or not line:
                raise await self.crashed(gone or f"before answering {what}")
            if line.strip():
                return line

    async def _read_or_exit(self, reading: asyncio.Future, deadline: float | None) -> bytes | None:
        """The line being read, or None when the leader exited without finishing one (its children
        may hold stdout open for ever: EOF alone cannot tell that it is gone). TimeoutError at `deadline`."""
        loop = asyncio.get_running_loop()
        exited_at = None
        try:
            while not reading.done():
                now = loop.time()
                if self.returncode is not None:
                    exited_at = exited_at or now
                    if now - exited_at >= EXIT_GRACE_S:  # what it wrote before exiting has long been readable
                        return None
                if deadline is not None and now >= deadline:
                    if self.returncode is not None:
                        return None  # it exited: say so, rather than that it was slow
                    raise asyncio.TimeoutError
                step = LEADER_POLL_S if deadline is None else min(LEADER_POLL_S, max(deadline - now, 0))
                await asyncio.wait([reading], timeout=step)
            return reading.result()
        finally:
            if not reading.done():
                reading.cancel()

    async def crashed(self, when: str) -> AgentError:
        """The error for a process that stopped answering: how it ended and its last stderr lines."""
        code = await self._leader_exit(5)
        if code is not None:
            self.signal(signal.SIGKILL)  # what it left behind may hold stderr open: its last lines are all there is
        await self._stderr_drained()
        return AgentError(self.with_stderr(f"{self.who} {exit_description(code)} {when}"))

    # ------------------------------------------------------------------ stderr

    async def _collect_stderr(self) -> None:
        assert self.process is not None and self.process.stderr is not None
        while True:
            try:
                line = await self.process.stderr.readline()
            except (ValueError, asyncio.LimitOverrunError):  # an endless line: say so, go on
                self._stderr.append("(a stderr line too long to keep)")
                continue
            if not line:
                return
            self._stderr.append(excerpt(scrub(line.decode("utf-8", "replace").rstrip("\n"), self.secrets), 500))

    async def _stderr_drained(self) -> None:
        if self._stderr_task is None or self._stderr_held:
            return  # a process out of the group's reach holds stderr: a second wait would only wait as long again
        exited = self.returncode is not None
        try:
            await asyncio.wait_for(asyncio.shield(self._stderr_task), STDERR_GRACE_S if exited else 0.5)
        except asyncio.TimeoutError:
            self._stderr_held = exited
        except Exception:
            pass

    def with_stderr(self, message: str) -> str:
        lines = list(self._stderr)[-ERROR_STDERR_LINES:]
        if not lines:
            return message + " (nothing on stderr)"
        return message + "; last stderr lines:\n" + "\n".join(f"  {line}" for line in lines)

    def stderr_tail(self) -> list[str]:
        return list(self._stderr)[-self._kept_lines:] if self._kept_lines else []

    # ------------------------------------------------------------------ ending

    async def _leader_exit(self, timeout_s: float) -> int | None:
        """The leader's exit status once it has one, None if it still runs after `timeout_s`."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while self.returncode is None and loop.time() < deadline:
            await asyncio.sleep(LEADER_POLL_S)
        return self.returncode

    async def close(self) -> None:
        """End the conversation: close stdin (the polite way), then SIGTERM and SIGKILL the group if the
        leader lingers; once it is gone, kill what it left behind. Never raises but for cancellation."""
        process = self.process
        if process is None:
            return
        try:
            if process.stdin is not None and not process.stdin.is_closing():
                process.stdin.close()
            if await self._leader_exit(CLOSE_GRACE_S) is None:
                self.signal(signal.SIGTERM)
                if await self._leader_exit(CLOSE_GRACE_S) is None:
                    self.signal(signal.SIGKILL)
                    await self._leader_exit(CLOSE_GRACE_S)
        finally:
            self.signal(signal.SIGKILL)  # children of a leader that exited: nobody else will stop them
            await self._stderr_drained()
            self._release()

    def kill(self) -> None:
        """Stop at once (a cancelled or timed-out conversation): the whole group, now."""
        self.signal(signal.SIGKILL)

    def signal(self, sig: int) -> None:
        """Signal the process group. Its id is the leader's pid, which stays the group's while any
        member lives, so this reaches children whose leader is gone."""
        process = self.process
        if process is None:
            return
        try:
            os.killpg(process.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass

    def _release(self) -> None:
        """Close our ends of the pipes now, on the running loop. Left to the garbage collector, a pipe a
        stray process still holds is closed after the loop is, with an 'Event loop is closed' traceback."""
        if self._stderr_task is not None and not self._stderr_task.done():
            self._stderr_task.cancel()
        transport = getattr(self.process, "_transport", None)  # asyncio.subprocess.Process has no public close
        if transport is not None:
            try:
                transport.close()
            except Exception:
                pass
