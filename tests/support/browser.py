"""Render a page in headless Chromium (the Debian package): its DOM after scripts ran, a screenshot, and
every network request it tried.

The page is driven over the DevTools protocol (``--remote-debugging-pipe``, no extra
package): its requests come from the Network domain of its own tab, so Chromium's background
traffic (time sync, component updates) is not mistaken for the page's. Every proxyable
request, loopback included, goes to a recorder on 127.0.0.1 that answers 502, so nothing
leaves the machine. ``make test`` installs the package when /usr/bin/chromium is missing.
"""

from __future__ import annotations

import base64
import json
import os
import select
import shutil
import socket
import subprocess
import threading
import time
from pathlib import Path

import attrs
from PIL import Image

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
    "--hide-scrollbars",
    "--mute-audio",
    "--disable-dev-shm-usage",
    "--disable-features=Translate,OptimizationHints,MediaRouter",
)


def chromium() -> str | None:
    return shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)


class Recorder:
    """A loopback HTTP proxy that refuses everything and remembers each request line (CONNECT included)."""

    def __init__(self):
        self.lines: list[str] = []
        self._sock = socket.socket()
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(16)
        self._sock.settimeout(0.2)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    @property
    def address(self) -> str:
        host, port = self._sock.getsockname()
        return f"http://{host}:{port}"

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(2)
                try:
                    data = conn.recv(4096)
                except OSError:
                    data = b""
                if data:
                    self.lines.append(data.split(b"\r\n", 1)[0].decode("latin-1"))
                try:
                    conn.sendall(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                except OSError:
                    pass

    def __enter__(self) -> Recorder:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self._sock.close()


@attrs.frozen
class Rendered:
    dom: str
    screenshot: Path
    #: every URL the page requested besides its own document (data: URLs are part of the page)
    requests: tuple[str, ...]


class _Pipe:
    """The DevTools protocol over --remote-debugging-pipe: JSON messages ended by NUL, on fds 3 (in) and 4 (out)."""

    def __init__(self, write_fd: int, read_fd: int, timeout: float):
        self.write_fd, self.read_fd, self.timeout = write_fd, read_fd, timeout
        self.events: list[dict] = []
        self._buffer = b""
        self._next = 0

    def _read(self, deadline: float) -> dict:

        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.read_fd], [], [], left)[0]:
                raise TimeoutError("chromium did not answer over the DevTools pipe in time")
            chunk = os.read(self.read_fd, 1 << 20)
            if not chunk:
                raise EOFError("chromium closed the DevTools pipe")
            self._buffer += chunk
        message, _, self._buffer = self._buffer.partition(b"\0")
        return json.loads(message)

    def send(self, method: str, params: dict | None = None, session: str | None = None) -> dict:

        self._next += 1
        message = {"id": self._next, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self.write_fd, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            reply = self._read(deadline)
            if reply.get("id") == self._next:
                if "error" in reply:
                    raise RuntimeError(f"DevTools {method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_for(self, method: str, session: str) -> dict:

        deadline = time.monotonic() + self.timeout
        seen = [e for e in self.events if e.get("method") == method and e.get("sessionId") == session]
        while not seen:
            event = self._read(deadline)
            self.events.append(event)
            if event.get("method") == method and event.get("sessionId") == session:
                return event
        return seen[0]


def render(
    page: Path,
    workdir: Path,
    *,
    width: int = 1300,
    height: int = 2200,
    timeout: float = 60,
    script: str = "",
    javascript: bool = True,
) -> Rendered:
    """Load ``page`` in headless Chromium: the DOM after its scripts ran, a PNG screenshot, the requests it made.

    Requests are the page's own, read from the DevTools protocol's Network domain for that
    tab (Chromium's background traffic belongs to other targets); anything that still tries
    the network goes to a loopback proxy that refuses it. ``script`` runs after load, before the
    DOM is read (e.g. to click a button); ``javascript=False`` renders the page with scripts off.
    """
    url = page.resolve().as_uri()
    png = workdir / (page.stem + ".png")
    to_chrome, chrome_in = os.pipe()
    chrome_out, from_chrome = os.pipe()

    def fds():  # the child reads commands on fd 3 and writes answers on fd 4
        os.dup2(to_chrome, 3)
        os.dup2(from_chrome, 4)

    with Recorder() as recorder:
        cmd = [
            chromium(),
            *FLAGS,
            f"--user-data-dir={workdir / 'profile'}",
            f"--proxy-server={recorder.address}",
            "--proxy-bypass-list=<-loopback>",
            "--remote-debugging-pipe",
            "about:blank",
        ]
        env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
        proc = subprocess.Popen(
            cmd, preexec_fn=fds, pass_fds=(3, 4), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        os.close(to_chrome)
        os.close(from_chrome)
        try:
            cdp = _Pipe(chrome_in, chrome_out, timeout)
            targets = cdp.send("Target.getTargets")["targetInfos"]
            pages = [t for t in targets if t["type"] == "page"]
            target = (
                pages[0]["targetId"] if pages else cdp.send("Target.createTarget", {"url": "about:blank"})["targetId"]
            )
            sid = cdp.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
            cdp.send("Network.enable", session=sid)
            cdp.send("Page.enable", session=sid)
            cdp.send(
                "Emulation.setDeviceMetricsOverride",
                {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
                sid,
            )
            if not javascript:
                cdp.send("Emulation.setScriptExecutionDisabled", {"value": True}, sid)
            cdp.events.clear()
            cdp.send("Page.navigate", {"url": url}, sid)
            cdp.wait_for("Page.loadEventFired", sid)
            if script:
                cdp.send("Runtime.evaluate", {"expression": script}, sid)
            time.sleep(0.3)  # let anything a script or an onerror handler starts after load show up
            dom = cdp.send("DOM.getOuterHTML", {"nodeId": cdp.send("DOM.getDocument", {}, sid)["root"]["nodeId"]}, sid)[
                "outerHTML"
            ]
            png.write_bytes(base64.b64decode(cdp.send("Page.captureScreenshot", {"format": "png"}, sid)["data"]))
            urls = [
                e["params"]["request"]["url"]
                for e in cdp.events
                if e.get("method") == "Network.requestWillBeSent" and e.get("sessionId") == sid
            ]
            try:
                cdp.send("Browser.close")
            except (EOFError, TimeoutError, RuntimeError):
                pass
        finally:
            os.close(chrome_in)
            os.close(chrome_out)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    requests = tuple(u for u in urls if u != url and not u.startswith(("data:", "about:")))
    return Rendered(dom, png, requests)


def ink(png: Path, *, skip_top: int = 200) -> float:
    """The share of pixels below the page's dark title band that are not background white (0: blank)."""
    image = Image.open(png).convert("L")
    body = image.crop((0, skip_top, image.width, image.height))
    histogram = body.histogram()
    return 1 - sum(histogram[245:]) / (body.width * body.height)
