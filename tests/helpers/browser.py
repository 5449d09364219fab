"""Headless Chromium driven over the DevTools protocol (a websocket, through aiohttp, which litellm
already brings): open a page, run script in it, take a screenshot. No selenium, no driver binary.

`chromium_or_skip()` skips when Chromium is not installed, and fails where EVALRUN_REQUIRE_BROWSER=1
(`.ci/run` installs the Debian package and sets it: there the browser test must run).
"""
from __future__ import annotations

import asyncio
import base64
import itertools
import json
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from tests.helpers.cli_helpers import stop_process
from tests.helpers.external import missing

BROWSERS = ("chromium", "chromium-browser", "google-chrome")


def chromium_or_skip() -> str:
    __tracebackhide__ = True  # the skip is reported at the test that needs it
    for name in BROWSERS:
        found = shutil.which(name)
        if found:
            return found
    missing("headless Chromium is not installed (apt-get install chromium)", "EVALRUN_REQUIRE_BROWSER")


class Chromium:
    """One headless Chromium process with a fresh profile. A test module may share one: each Browser opened in
    it gets a browser context of its own (its own storage and cache, as a fresh profile would give), so only
    the process's start (~1 s) is shared."""

    def __init__(self, executable: str, width: int = 1400, height: int = 1000):
        self.profile = Path(tempfile.mkdtemp(prefix="evalrun-chromium-"))
        self.process = subprocess.Popen(
            [executable, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--disable-dev-shm-usage", f"--window-size={width},{height}", "--remote-debugging-port=0",
             f"--user-data-dir={self.profile}", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.port = self._port()

    def _port(self) -> int:
        marker = self.profile / "DevToolsActivePort"  # Chromium writes the port it chose here
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if marker.is_file():
                text = marker.read_text().split()
                if text:
                    return int(text[0])
            if self.process.poll() is not None:
                raise RuntimeError(f"chromium exited with {self.process.returncode} before it listened")
            time.sleep(0.05)
        raise RuntimeError("chromium did not open its DevTools port within 30s")

    def close(self) -> None:
        stop_process(self.process)
        shutil.rmtree(self.profile, ignore_errors=True)


class Browser:
    """A page to drive: in a Chromium of its own (given the executable), or in a fresh browser context of a
    shared one (given a Chromium), its window `width` x `height` either way."""

    def __init__(self, executable: str | Chromium, width: int = 1400, height: int = 1000):
        self.owned = not isinstance(executable, Chromium)
        self.chromium = Chromium(executable, width, height) if isinstance(executable, str) else executable
        self.process = self.chromium.process
        self.port = self.chromium.port
        self._ids = itertools.count(1)
        self.loop = asyncio.new_event_loop()
        self.session = None
        self.ws = None
        self.browser_ws = None  # the browser's own endpoint, which made this page's context (shared Chromium)
        self.context: str | None = None
        self.loop.run_until_complete(self._connect(width, height))

    async def _connect(self, width: int, height: int) -> None:
        import aiohttp

        self.session = aiohttp.ClientSession()
        if self.owned:
            async with self.session.get(f"http://127.0.0.1:{self.port}/json/list") as response:
                targets = await response.json()
            page = next(t for t in targets if t.get("type") == "page")
            self.ws = await self.session.ws_connect(page["webSocketDebuggerUrl"], max_msg_size=0)
            return
        async with self.session.get(f"http://127.0.0.1:{self.port}/json/version") as response:
            endpoint = (await response.json())["webSocketDebuggerUrl"]
        self.browser_ws = await self.session.ws_connect(endpoint, max_msg_size=0)
        self.context = (await self._send("Target.createBrowserContext", ws=self.browser_ws))["browserContextId"]
        target = (await self._send("Target.createTarget", {"url": "about:blank", "browserContextId": self.context,
                                                           "newWindow": True}, ws=self.browser_ws))["targetId"]
        window = (await self._send("Browser.getWindowForTarget", {"targetId": target}, ws=self.browser_ws))["windowId"]
        await self._send("Browser.setWindowBounds", {"windowId": window, "bounds": {"width": width, "height": height}},
                         ws=self.browser_ws)
        self.ws = await self.session.ws_connect(f"ws://127.0.0.1:{self.port}/devtools/page/{target}", max_msg_size=0)

    async def _send(self, method: str, params: dict | None = None, timeout: float = 60, ws=None) -> dict:
        ws = ws or self.ws
        number = next(self._ids)
        await ws.send_str(json.dumps({"id": number, "method": method, "params": params or {}}))
        deadline = time.monotonic() + timeout
        while True:
            message = await ws.receive_json(timeout=max(0.1, deadline - time.monotonic()))
            if message.get("id") == number:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})

    def call(self, method: str, params: dict | None = None) -> dict:
        return self.loop.run_until_complete(self._send(method, params))

    def open(self, url: str, ready: str = "document.body && document.body.dataset.ready === '1'",
             timeout: float = 60) -> float:
        """Load `url` and wait until the `ready` expression is true; returns the seconds it took."""
        started = time.monotonic()
        self.call("Page.navigate", {"url": url})
        while time.monotonic() - started < timeout:
            if self.evaluate(ready) is True:
                return time.monotonic() - started
            time.sleep(0.05)
        raise AssertionError(f"{url} was not ready within {timeout}s")

    def evaluate(self, expression: str) -> Any:
        result = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        if "exceptionDetails" in result:
            raise AssertionError(f"script error: {result['exceptionDetails']}")
        return result["result"].get("value")

    def screenshot(self, path: Path, full_page: bool = False) -> Path:
        params: dict = {"format": "png"}
        if full_page:
            size = self.call("Page.getLayoutMetrics")["cssContentSize"]
            params.update(captureBeyondViewport=True,
                          clip={"x": 0, "y": 0, "width": size["width"], "height": size["height"], "scale": 1})
        data = self.call("Page.captureScreenshot", params)["data"]
        path.write_bytes(base64.b64decode(data))
        return path

    def console_errors(self) -> list:
        return self.evaluate("window.__errors || []")

    def close(self) -> None:
        try:
            if self.ws is not None:
                self.loop.run_until_complete(self.ws.close())
            if self.browser_ws is not None:
                if self.context is not None:  # closes the page's window with it
                    self.loop.run_until_complete(self._send("Target.disposeBrowserContext",
                                                            {"browserContextId": self.context}, ws=self.browser_ws))
                self.loop.run_until_complete(self.browser_ws.close())
            if self.session is not None:
                self.loop.run_until_complete(self.session.close())
        finally:
            self.loop.close()
            if self.owned:
                self.chromium.close()
