"""A local, read-only Hugging Face Hub that the real ``huggingface_hub`` client and ``hf`` CLI talk to.

Tests (ours and other plugins') need a Hub whose state they control and whose failures they
can provoke, without touching huggingface.co and without mocking the client. ``LocalHub``
is a small stdlib HTTP server on 127.0.0.1 that serves repositories from fixture folders
and implements exactly the read routes huggingface_hub 2.4.0 uses for the migration
(see docs/hf-hub.md for the list). Anything but GET/HEAD is answered 405 and recorded, so
a test can prove that nothing tried to write.

Fixture layout under ``root`` (write it with :func:`write_model`, :func:`write_dataset`,
:func:`set_whoami`, or by hand)::

    whoami.json                                   {"name", "orgs": [...], "token": null|"..."}
    models/<owner>/<name>/repo.json               {"sha", "gated", "private", "tags", "created_at"}
    models/<owner>/<name>/main/<files>            the default branch
    models/<owner>/<name>/prs/<num>/pr.json       {"num", "author", "status", "title",
                                                   "is_pull_request", "sha", "created_at", "diff"?}
    models/<owner>/<name>/prs/<num>/files/<files> files the PR adds or changes (overlaid on main)
    models/<old-owner>/<old-name>/moved.json      {"to": "<owner>/<name>"}: a renamed repo (307)
    datasets/<owner>/<name>/...                   the same for datasets; repo.json adds "official"

Repo ids are matched ignoring case, as on the Hub. A PR deletes a file when its ``pr.json``
lists the path under ``"deleted"``. The server reads
the folders on every request, so a test may change the fixture while the Hub runs.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import shutil
import socket
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlencode, urlsplit

import attrs

REPO_TYPES = {"models": "model", "datasets": "dataset"}
PR_STATUSES = ("open", "draft", "closed", "merged")
_REV_PR = re.compile(r"^refs/pr/(\d+)$")
_DATE = "2026-01-01T00:00:00.000Z"

# --------------------------------------------------------------------------- fixture writers


def _digest(*parts: object) -> str:
    return hashlib.sha1(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


def _split_id(repo_id: str) -> tuple[str, str]:
    owner, sep, name = repo_id.partition("/")
    if not sep or not owner or not name or "/" in name:
        raise ValueError(f"repo id must look like 'owner/name' (got {repo_id!r})")
    return owner, name


def _write_tree(base: Path, files: Mapping[str, str | bytes]) -> None:
    for rel, content in files.items():
        target = base / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, str):
            content = content.encode()
        target.write_bytes(content)


def _write_repo(root: Path, kind: str, repo_id: str, files: Mapping[str, str | bytes], meta: dict) -> Path:
    owner, name = _split_id(repo_id)
    repo_dir = Path(root) / kind / owner / name
    if repo_dir.exists():
        shutil.rmtree(repo_dir)
    (repo_dir / "main").mkdir(parents=True)
    _write_tree(repo_dir / "main", files)
    (repo_dir / "repo.json").write_text(json.dumps(meta, indent=1))
    return repo_dir


def write_model(
    root: Path,
    repo_id: str,
    files: Mapping[str, str | bytes] | None = None,
    *,
    sha: str | None = None,
    gated: bool | str = False,
    tags: Sequence[str] = (),
    prs: Iterable[Mapping[str, Any]] = (),
    former_names: Iterable[str] = (),
) -> Path:
    """Write (or replace) the fixture of model ``repo_id``; returns its folder.

    ``former_names`` are old ids of a renamed repo: the Hub redirects them (307) to this one.

    Each item of ``prs`` is ``{num, author, status, title, files, diff?, deleted?,
    is_pull_request?}``; ``status`` is one of open, draft, closed, merged. ``files`` are the
    files the PR adds or changes; the PR's tree is main overlaid with them. Without an
    explicit ``diff`` the server computes a git-style unified diff.
    """
    files = dict(files or {})
    sha = sha or _digest("model", repo_id, files)
    gated_value = ("auto" if gated is True else gated) or False
    meta = {"sha": sha, "gated": gated_value, "private": False, "tags": list(tags), "created_at": _DATE}
    repo_dir = _write_repo(root, "models", repo_id, files, meta)
    for pr in prs:
        _write_pr(repo_dir, sha, pr)
    for old_id in former_names:
        old_owner, old_name = _split_id(old_id)
        old_dir = Path(root) / "models" / old_owner / old_name
        if old_dir.exists():
            shutil.rmtree(old_dir)
        old_dir.mkdir(parents=True)
        (old_dir / "moved.json").write_text(json.dumps({"to": repo_id}))
    return repo_dir


def _write_pr(repo_dir: Path, base_sha: str, pr: Mapping[str, Any]) -> None:
    num = int(pr["num"])
    status = pr.get("status", "open")
    if status not in PR_STATUSES:
        raise ValueError(f"PR status must be one of {', '.join(PR_STATUSES)} (got {status!r})")
    files = dict(pr.get("files") or {})
    pr_dir = repo_dir / "prs" / str(num)
    (pr_dir / "files").mkdir(parents=True)
    _write_tree(pr_dir / "files", files)
    record = {
        "num": num,
        "author": pr.get("author", "someone"),
        "status": status,
        "title": pr.get("title", f"PR #{num}"),
        "is_pull_request": bool(pr.get("is_pull_request", True)),
        "sha": pr.get("sha") or _digest("pr", base_sha, num, files),
        "created_at": pr.get("created_at", _DATE),
        "deleted": list(pr.get("deleted", ())),
    }
    if "diff" in pr:
        record["diff"] = pr["diff"]
    (pr_dir / "pr.json").write_text(json.dumps(record, indent=1))


def write_dataset(
    root: Path,
    repo_id: str,
    files: Mapping[str, str | bytes] | None = None,
    sha: str | None = None,
    official: bool = True,
    *,
    tags: Sequence[str] = (),
    gated: bool | str = False,
) -> Path:
    """Write (or replace) the fixture of dataset ``repo_id``; ``official`` adds the ``benchmark:official`` tag."""
    files = dict(files or {})
    sha = sha or _digest("dataset", repo_id, files)
    all_tags = [*tags, *(["benchmark:official"] if official else [])]
    gated_value = ("auto" if gated is True else gated) or False
    meta = {"sha": sha, "gated": gated_value, "private": False, "tags": all_tags, "created_at": _DATE}
    return _write_repo(root, "datasets", repo_id, files, meta)


def set_whoami(root: Path, name: str, orgs: Sequence[str] = (), *, token: str | None = None) -> None:
    """Set the account ``/api/whoami-v2`` reports for an authenticated request.

    With ``token`` set, only that bearer token is accepted; any other token gets 401
    "Invalid credentials in Authorization header" on every route, as on the real Hub.
    """
    Path(root).mkdir(parents=True, exist_ok=True)
    (Path(root) / "whoami.json").write_text(json.dumps({"name": name, "orgs": list(orgs), "token": token}))


# --------------------------------------------------------------------------- reading fixtures


def _git_blob_oid(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _read_files(base: Path) -> dict[str, bytes]:
    if not base.is_dir():
        return {}
    return {p.relative_to(base).as_posix(): p.read_bytes() for p in sorted(base.rglob("*")) if p.is_file()}


@attrs.frozen
class _Snapshot:
    """One revision of a repo: its commit sha and its files."""

    sha: str
    files: dict[str, bytes]


class _Repo:
    """A fixture folder, read fresh for one request."""

    def __init__(self, kind: str, repo_id: str, folder: Path):
        self.kind = kind
        self.repo_type = REPO_TYPES[kind]
        self.repo_id = repo_id
        self.folder = folder
        self.meta = json.loads((folder / "repo.json").read_text())

    def discussions(self) -> list[dict]:
        prs_dir = self.folder / "prs"
        if not prs_dir.is_dir():
            return []
        found = [json.loads(p.read_text()) for p in prs_dir.glob("*/pr.json")]
        return sorted(found, key=lambda d: -d["num"])  # newest first, like the Hub

    def discussion(self, num: int) -> dict | None:
        path = self.folder / "prs" / str(num) / "pr.json"
        return json.loads(path.read_text()) if path.is_file() else None

    def main(self) -> _Snapshot:
        return _Snapshot(self.meta["sha"], _read_files(self.folder / "main"))

    def pr_snapshot(self, pr: dict) -> _Snapshot:
        files = self.main().files
        for path in pr.get("deleted", ()):
            files.pop(path, None)
        files.update(_read_files(self.folder / "prs" / str(pr["num"]) / "files"))
        return _Snapshot(pr["sha"], files)

    def snapshot(self, rev: str) -> _Snapshot | None:
        if rev in ("main", "refs/heads/main", self.meta["sha"]):
            return self.main()
        match = _REV_PR.match(rev)
        for pr in self.discussions():
            if not pr.get("is_pull_request", True):
                continue
            if (match and int(match.group(1)) == pr["num"]) or rev == pr["sha"]:
                return self.pr_snapshot(pr)
        return None

    def pr_diff(self, pr: dict) -> str:
        if "diff" in pr:
            return pr["diff"]
        before, after = self.main().files, self.pr_snapshot(pr).files
        return "".join(
            _file_diff(path, before.get(path), after.get(path))
            for path in sorted(set(before) | set(after))
            if before.get(path) != after.get(path)
        )


def _file_diff(path: str, old: bytes | None, new: bytes | None) -> str:
    """One file's ``git diff`` section (None: the file is absent on that side), as the Hub's PR diff shows it."""
    header = [f"diff --git a/{path} b/{path}\n"]
    if old is None:
        header.append("new file mode 100644\n")
    elif new is None:
        header.append("deleted file mode 100644\n")
    import difflib

    lines = difflib.unified_diff(
        (old or b"").decode(errors="replace").splitlines(keepends=True),
        (new or b"").decode(errors="replace").splitlines(keepends=True),
        fromfile=f"a/{path}" if old is not None else "/dev/null",
        tofile=f"b/{path}" if new is not None else "/dev/null",
    )
    return "".join(header) + "".join(line if line.endswith("\n") else line + "\n" for line in lines)


# --------------------------------------------------------------------------- faults and records


@attrs.frozen
class Fault:
    """A failure the Hub produces for requests whose path matches ``path`` (a regex, searched).

    The first ``times`` matching requests (every one when ``times`` is None) are delayed by
    ``delay`` seconds and then answered with ``status`` (429/500/503/...), or, with
    ``truncate``, with the normal response cut in half (invalid JSON, correct
    Content-Length), or, with ``reset``, by closing the connection without an answer.
    ``status=0`` with only a ``delay`` slows requests down without failing.

    With ``probability`` only that share of the matching requests fails. Which ones is
    decided by the hub's ``seed`` and the request itself (method, path, query, and how
    many times it was sent before), not by arrival order, so a run with many threads fails
    the same requests at the same attempts every time.
    """

    path: str
    status: int = 500
    times: int | None = 1
    truncate: bool = False
    delay: float = 0.0
    retry_after: int | None = None
    method: str | None = None
    probability: float | None = None
    reset: bool = False


def transient_faults(share: float = 0.2) -> list[Fault]:
    """Faults failing ``share`` of all requests: 40% of those a 503, 35% a 500, 25% a dropped connection.

    The three draws are independent (a fault's draw includes its position in the list), so
    each conditional probability is scaled to give exactly those shares.
    """
    shares = [0.4 * share, 0.35 * share, 0.25 * share]
    left, out = 1.0, []
    for kind, part in zip(({"status": 503}, {"status": 500}, {"reset": True}), shares):
        out.append(Fault(".", times=None, probability=part / left, **kind))
        left -= part
    return out


@attrs.frozen
class HubRequest:
    """One request the Hub received: ``path`` as sent (still URL-encoded), ``query`` parsed; ``status`` 0
    when an injected fault dropped the connection."""

    method: str
    path: str
    query: dict
    time: float
    status: int
    authorized: bool


class _Response:
    def __init__(self, status: int, body: bytes | dict | list | str = b"", headers: dict | None = None):
        if isinstance(body, (dict, list)):
            body = json.dumps(body).encode()
            headers = {"Content-Type": "application/json; charset=utf-8", **(headers or {})}
        elif isinstance(body, str):
            body = body.encode()
        self.status, self.body, self.headers = status, body, dict(headers or {})


def _error(status: int, code: str | None, message: str, headers: dict | None = None) -> _Response:
    extra = {"X-Error-Message": message, **(headers or {})}
    if code:
        extra["X-Error-Code"] = code
    return _Response(status, {"error": message}, extra)


class _RateLimiter:
    """A token bucket: ``rate`` requests per second, bursts of up to ``burst``."""

    def __init__(self, rate: float, burst: float | None):
        self.rate, self.capacity = rate, burst or max(1.0, rate)
        self.tokens, self.stamp = self.capacity, time.monotonic()
        self.lock = threading.Lock()

    def wait_needed(self) -> float:
        with self.lock:
            now = time.monotonic()
            self.tokens = min(self.capacity, self.tokens + (now - self.stamp) * self.rate)
            self.stamp = now
            if self.tokens >= 1:
                self.tokens -= 1
                return 0.0
            return (1 - self.tokens) / self.rate


# --------------------------------------------------------------------------- the server


class LocalHub:
    """Serve the fixture folders under ``root`` as a Hub on 127.0.0.1 (use as a context manager).

    ``latency`` delays every request; ``faults`` is a list of :class:`Fault`; ``page_size``
    is the page length of model/dataset listings, tree listings and discussions;
    ``rate_limit`` (requests/s, bursts of ``burst``) answers excess requests 429 with a
    ``Retry-After`` header; ``seed`` picks which requests a :class:`Fault` with a
    ``probability`` fails. Every request lands in :attr:`requests`.
    """

    def __init__(
        self,
        root: Path,
        *,
        latency: float = 0.0,
        faults: Iterable[Fault] | None = None,
        page_size: int = 50,
        rate_limit: float | None = None,
        burst: float | None = None,
        seed: int = 0,
    ):
        self.root = Path(root)
        self.seed = seed
        self._sent: dict[tuple, int] = {}
        self.latency = latency
        self.page_size = page_size
        self._faults: list[list] = [[f, 0] for f in faults or ()]
        self._limiter = _RateLimiter(rate_limit, burst) if rate_limit else None
        self._requests: list[HubRequest] = []
        self._lock = threading.Lock()
        self._connections: set[socket.socket] = set()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._started = 0.0

    # -- lifecycle
    def start(self) -> LocalHub:
        handler = type("_BoundHandler", (_Handler,), {"hub": self})
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self._started = time.monotonic()
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, name="LocalHub", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is None:
            return
        self._server.shutdown()
        self._server.server_close()
        with self._lock:
            open_connections = list(self._connections)
        for conn in open_connections:  # end kept-alive connections so no client reuses them
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self._thread.join(timeout=5)
        self._server = self._thread = None

    def __enter__(self) -> LocalHub:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def endpoint(self) -> str:
        if self._server is None:
            raise RuntimeError("LocalHub is not running; use it as a context manager")
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    # -- observation and control
    @property
    def requests(self) -> list[HubRequest]:
        """A snapshot of every request received so far, in arrival order."""
        with self._lock:
            return list(self._requests)

    def clear_requests(self) -> None:
        """Forget the requests received so far (and how often each was sent, which faults with a probability use)."""
        with self._lock:
            self._requests.clear()
            self._sent.clear()

    def write_requests(self) -> list[HubRequest]:
        """Requests with a method other than GET/HEAD (a read-only client sends none)."""
        return [r for r in self.requests if r.method not in ("GET", "HEAD")]

    def add_fault(self, fault: Fault) -> None:
        with self._lock:
            self._faults.append([fault, 0])

    def clear_faults(self) -> None:
        with self._lock:
            self._faults.clear()

    # -- internals used by the handler
    def _track(self, conn: socket.socket, add: bool) -> None:
        with self._lock:
            (self._connections.add if add else self._connections.discard)(conn)

    def _record(self, method: str, path: str, query: dict, status: int, authorized: bool) -> None:
        with self._lock:
            self._requests.append(HubRequest(method, path, query, time.monotonic() - self._started, status, authorized))

    def _fault_for(self, method: str, path: str, query: dict) -> Fault | None:
        key = (method, path, tuple(sorted((k, tuple(v)) for k, v in query.items())))
        with self._lock:
            nth = self._sent.get(key, 0)
            self._sent[key] = nth + 1
            for index, slot in enumerate(self._faults):
                fault, used = slot
                if fault.method and fault.method != method:
                    continue
                if not re.search(fault.path, path):
                    continue
                if fault.times is not None and used >= fault.times:
                    continue
                if fault.probability is not None:
                    draw = int(hashlib.sha256(repr((self.seed, index, key, nth)).encode()).hexdigest()[:8], 16) / 2**32
                    if draw >= fault.probability:
                        continue
                slot[1] = used + 1
                return fault
        return None

    def _rate_limited(self) -> _Response | None:
        """A 429 with Retry-After while the configured rate limit says wait, else None."""
        if self._limiter is None:
            return None
        wait = self._limiter.wait_needed()
        if not wait:
            return None
        return _error(429, None, "Rate limited (local hub)", {"Retry-After": str(max(1, math.ceil(wait)))})

    def _respond(self, method: str, raw_path: str, query: dict, headers: Mapping[str, str]) -> _Response | None:
        """The response, or None when an injected fault drops the connection instead."""
        fault = self._fault_for(method, raw_path, query)
        delay = self.latency + (fault.delay if fault else 0.0)
        if delay:
            time.sleep(delay)
        limited = self._rate_limited()
        if limited is not None:
            return limited
        if fault and (fault.reset or fault.status and not fault.truncate):
            return _fault_response(fault)
        response = _Router(self, raw_path, query, headers).route(method)
        if fault and fault.truncate:
            _truncate(response)
        return response


def _truncate(response: _Response) -> None:
    """An injected truncation: the body loses its second half (at least one byte stays)."""
    if response.body:
        response.body = response.body[: max(1, len(response.body) // 2)]


def _fault_response(fault) -> _Response | None:
    """What an injected reset (None: the connection drops) or error status answers instead of the route."""
    if fault.reset:
        return None
    extra = {"Retry-After": str(fault.retry_after)} if fault.retry_after is not None else {}
    return _error(fault.status, None, f"Injected failure {fault.status}", extra)


def _add_tree_entries(
    entries: dict[str, dict], sha: str, prefix: str, file_path: str, data: bytes, recursive: bool
) -> None:
    """The tree listing's entries for one file under ``prefix``: the directories on its way (only the first
    level unless ``recursive``) and the file itself when it is listed."""
    parts = file_path[len(prefix) :].split("/")
    for depth in range(1, len(parts)):  # directories on the way
        if depth > 1 and not recursive:
            break
        dir_path = prefix + "/".join(parts[:depth])
        entries.setdefault(dir_path, {"type": "directory", "oid": _digest(sha, dir_path), "path": dir_path})
    if len(parts) == 1 or recursive:
        entries[file_path] = {"type": "file", "oid": _git_blob_oid(data), "size": len(data), "path": file_path}


def _discussion_wanted(d: dict, kind: str | None, status: str | None, author: str | None) -> bool:
    """Whether a discussion passes the listing's type, status and author filters."""
    is_pr = d.get("is_pull_request", True)
    if kind == "pull_request" and not is_pr or kind == "discussion" and is_pr:
        return False
    # The Hub's status filter knows only open/closed; drafts are left out of "open" here,
    # the pessimistic reading of an undocumented behaviour.
    if status == "open" and d["status"] != "open":
        return False
    if status == "closed" and d["status"] not in ("closed", "merged"):
        return False
    return not (author and d["author"] != author)


class _Router:
    """Maps one GET/HEAD request to a response; every route of docs/hf-hub.md lives here."""

    def __init__(self, hub: LocalHub, raw_path: str, query: dict, headers: Mapping[str, str]):
        self.hub, self.raw_path, self.query, self.headers = hub, raw_path, query, headers
        self.segments = [unquote(s) for s in raw_path.strip("/").split("/")] if raw_path.strip("/") else []
        auth = headers.get("Authorization") or ""
        self.token = auth[7:] if auth.startswith("Bearer ") else None

    # -- helpers
    def _q(self, key: str) -> str | None:
        values = self.query.get(key)
        return values[-1] if values else None

    def _whoami(self) -> dict | None:
        path = self.hub.root / "whoami.json"
        return json.loads(path.read_text()) if path.is_file() else None

    def _repo(self, kind: str, owner: str, name: str) -> _Repo | _Response:
        """The repo, found like the Hub finds it: ids ignore case, and former names redirect."""
        folder = self._folder(kind, owner, name)
        if folder is not None and (folder / "moved.json").is_file():
            new_id = json.loads((folder / "moved.json").read_text())["to"]
            location = self.raw_path.replace(f"/{owner}/{name}", f"/{new_id}", 1)
            query = urlencode([(k, v) for k, vs in self.query.items() for v in vs])
            return _Response(
                307, {"error": f"moved to {new_id}"}, {"Location": location + (f"?{query}" if query else "")}
            )
        if folder is None or not (folder / "repo.json").is_file():
            # Like the Hub: anonymous callers get 401 so private repos do not leak their existence.
            status = 404 if self.token else 401
            return _error(status, "RepoNotFound", f"Repository Not Found for url: {self.raw_path}.")
        return _Repo(kind, f"{folder.parent.name}/{folder.name}", folder)

    def _folder(self, kind: str, owner: str, name: str) -> Path | None:
        exact = self.hub.root / kind / owner / name
        if exact.is_dir():
            return exact
        for candidate in (self.hub.root / kind).glob("*/*"):
            if candidate.parent.name.lower() == owner.lower() and candidate.name.lower() == name.lower():
                return candidate
        return None

    @staticmethod
    def _split_rev(rest: list[str]) -> tuple[str, list[str]]:
        """Split segments after ``tree``/``resolve``/``revision`` into (revision, path segments).

        The client URL-encodes ``refs/pr/3`` as one segment; a raw ``refs/pr/3`` is accepted too.
        """
        if len(rest) >= 3 and rest[0] == "refs" and rest[1] in ("pr", "heads"):
            return "/".join(rest[:3]), rest[3:]
        return (rest[0] if rest else "main"), rest[1:]

    def _page(self, items: list, base_path: str) -> _Response:
        limit = self._q("limit")
        size = min(int(limit), self.hub.page_size) if limit else self.hub.page_size
        start = int(self._q("cursor") or 0)
        page = items[start : start + size]
        headers = {}
        if start + size < len(items):
            query = [(k, v) for k, vs in self.query.items() if k != "cursor" for v in vs] + [("cursor", start + size)]
            headers["Link"] = f'<{self.hub.endpoint}{base_path}?{urlencode(query)}>; rel="next"'
        return _Response(200, page, headers)

    # -- dispatch
    def route(self, method: str) -> _Response:
        whoami = self._whoami()
        if self.token and whoami and whoami.get("token") and self.token != whoami["token"]:
            return _error(401, None, "Invalid credentials in Authorization header")
        s = self.segments
        if s[:1] == ["api"]:
            return self._api(s[1:], whoami)
        kind = "models"
        if s[:1] == ["datasets"]:
            kind, s = "datasets", s[1:]
        if len(s) >= 4 and s[2] == "resolve":
            return self._resolve(method, kind, s[0], s[1], s[3:])
        return _error(404, None, f"Not found: {self.raw_path}")

    # shape: the Hub's /api routes in one table, the way the Hub documents them; split, no one place
    # would say which path answers what
    def _api(self, s: list[str], whoami: dict | None) -> _Response:  # noqa: C901
        if s == ["whoami-v2"]:
            return self._whoami_response(whoami)
        if s == ["agent-harnesses"]:
            return _Response(200, {"standardEnvVars": [], "harnesses": {}})
        if len(s) == 1 and s[0] in REPO_TYPES:
            return self._list(s[0])
        if len(s) < 3 or s[0] not in REPO_TYPES:
            return _error(404, None, f"Not found: {self.raw_path}")
        kind, owner, name, rest = s[0], s[1], s[2], s[3:]
        repo = self._repo(kind, owner, name)
        if isinstance(repo, _Response):
            return repo
        if not rest:
            return self._info(repo, "main")
        if rest[0] == "revision" and len(rest) >= 2:
            rev, _ = self._split_rev(rest[1:])
            return self._info(repo, rev)
        if rest[0] == "tree":
            rev, path = self._split_rev(rest[1:])
            return self._tree(repo, rev, "/".join(path))
        if rest[0] == "discussions":
            if len(rest) == 1:
                return self._discussions(repo)
            if len(rest) == 2 and rest[1].isdigit():
                return self._discussion(repo, int(rest[1]))
        return _error(404, None, f"Not found: {self.raw_path}")

    # -- routes
    def _whoami_response(self, whoami: dict | None) -> _Response:
        if not self.token or whoami is None:
            return _error(401, None, "Invalid credentials in Authorization header")
        return _Response(
            200,
            {
                "type": "user",
                "id": _digest("user", whoami["name"])[:24],
                "name": whoami["name"],
                "fullname": whoami["name"],
                "email": None,
                "orgs": [{"type": "org", "name": org} for org in whoami.get("orgs", [])],
                "auth": {"type": "access_token", "accessToken": {"displayName": "local", "role": "read"}},
            },
        )

    def _summary(self, repo: _Repo) -> dict:
        return {
            "_id": repo.meta["sha"][:24],
            "id": repo.repo_id,
            "author": repo.repo_id.split("/")[0],
            "private": repo.meta.get("private", False),
            "gated": repo.meta.get("gated", False),
            "disabled": False,
            "tags": repo.meta.get("tags", []),
            "downloads": 0,
            "likes": 0,
            "createdAt": repo.meta.get("created_at", _DATE),
            "lastModified": repo.meta.get("created_at", _DATE),
            **({"modelId": repo.repo_id} if repo.repo_type == "model" else {}),
        }

    def _info(self, repo: _Repo, rev: str) -> _Response:
        snap = repo.snapshot(rev)
        if snap is None:
            return _error(404, "RevisionNotFound", f"Invalid rev id: {rev}")
        info = {**self._summary(repo), "sha": snap.sha, "siblings": [{"rfilename": p} for p in sorted(snap.files)]}
        expand = self.query.get("expand")
        if expand:
            info = {k: v for k, v in info.items() if k in ("_id", "id") or k in expand}
        return _Response(200, info)

    def _list(self, kind: str) -> _Response:
        folder = self.hub.root / kind
        repos = (
            [
                _Repo(kind, f"{p.parent.parent.name}/{p.parent.name}", p.parent)
                for p in sorted(folder.glob("*/*/repo.json"))
            ]
            if folder.is_dir()
            else []
        )
        search = (self._q("search") or "").lower()
        author = self._q("author")
        wanted_tags = self.query.get("filter", [])
        hits = [
            self._summary(r)
            for r in repos
            if search in r.repo_id.lower()
            and (author is None or r.repo_id.split("/")[0] == author)
            and all(t in r.meta.get("tags", []) for t in wanted_tags)
        ]
        return self._page(hits, f"/api/{kind}")

    def _tree(self, repo: _Repo, rev: str, path: str) -> _Response:
        snap = repo.snapshot(rev)
        if snap is None:
            return _error(404, "RevisionNotFound", f"Invalid rev id: {rev}")
        prefix = f"{path.strip('/')}/" if path.strip("/") else ""
        recursive = (self._q("recursive") or "false").lower() == "true"
        entries: dict[str, dict] = {}
        for file_path, data in snap.files.items():
            if file_path.startswith(prefix):
                _add_tree_entries(entries, snap.sha, prefix, file_path, data, recursive)
        if prefix and not entries:
            return _error(404, "EntryNotFound", f"{path} does not exist on {rev}", {"X-Repo-Commit": snap.sha})
        items = [entries[k] for k in sorted(entries)]
        return self._page(items, urlsplit(self.raw_path).path)

    def _discussion_summary(self, repo: _Repo, d: dict) -> dict:
        return {
            "num": d["num"],
            "title": d["title"],
            "status": d["status"],
            "isPullRequest": d.get("is_pull_request", True),
            "createdAt": d.get("created_at", _DATE),
            "author": {"name": d["author"], "type": "user"},
            "numComments": 1,
            "pinned": False,
            "repo": {"name": repo.repo_id, "type": repo.repo_type},
        }

    def _discussions(self, repo: _Repo) -> _Response:
        kind, status, author = self._q("type"), self._q("status"), self._q("author")
        selected = [
            self._discussion_summary(repo, d) for d in repo.discussions() if _discussion_wanted(d, kind, status, author)
        ]
        page = int(self._q("p") or 0)
        start = page * self.hub.page_size
        return _Response(
            200,
            {
                "discussions": selected[start : start + self.hub.page_size],
                "count": len(selected),
                "start": start,
                "numClosedDiscussions": sum(d["status"] in ("closed", "merged") for d in selected),
            },
        )

    def _discussion(self, repo: _Repo, num: int) -> _Response:
        d = repo.discussion(num)
        if d is None:
            return _error(404, None, f"Discussion #{num} not found on {repo.repo_id}")
        details = {
            **self._discussion_summary(repo, d),
            "events": [],
            "filesWithConflicts": [],
            "changes": {"base": "refs/heads/main"},
        }
        if d["status"] == "merged":
            details["changes"]["mergeCommitId"] = d["sha"]
        if self._q("diff") == "1" and d.get("is_pull_request", True):
            details["diff"] = repo.pr_diff(d)
        return _Response(200, details)

    def _resolve(self, method: str, kind: str, owner: str, name: str, rest: list[str]) -> _Response:
        repo = self._repo(kind, owner, name)
        if isinstance(repo, _Response):
            return repo
        rev, path = self._split_rev(rest)
        snap = repo.snapshot(rev)
        if snap is None:
            return _error(404, "RevisionNotFound", f"Invalid rev id: {rev}")
        if repo.meta.get("gated"):
            status = 403 if self.token else 401
            return _error(
                status,
                "GatedRepo",
                f"Access to {repo.repo_type} {repo.repo_id} is restricted.",
                {"X-Repo-Commit": snap.sha},
            )
        file_path = "/".join(path)
        data = snap.files.get(file_path)
        if data is None:
            return _error(404, "EntryNotFound", f"{file_path} does not exist on {rev}", {"X-Repo-Commit": snap.sha})
        return _Response(
            200,
            data,
            {
                "X-Repo-Commit": snap.sha,
                "ETag": f'"{_git_blob_oid(data)}"',
                "Content-Type": "text/plain; charset=utf-8",
                "Accept-Ranges": "bytes",
            },
        )


class _Handler(BaseHTTPRequestHandler):
    """HTTP/1.1 with keep-alive; every method other than GET/HEAD is refused with 405."""

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out in two writes: avoid the 40 ms delayed-ACK stall
    hub: LocalHub  # set on the per-server subclass

    def setup(self) -> None:
        super().setup()
        self.hub._track(self.connection, True)

    def finish(self) -> None:
        self.hub._track(self.connection, False)
        super().finish()

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        return

    def do_GET(self) -> None:
        self._serve("GET")

    def do_HEAD(self) -> None:
        self._serve("HEAD")

    def __getattr__(self, name: str):
        if name.startswith("do_"):
            return self._refuse
        raise AttributeError(name)

    def _refuse(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(min(length, 1 << 20))
        self.close_connection = True
        parts = urlsplit(self.path)
        response = _error(405, None, f"{self.command} is not allowed on the local read-only Hub")
        self.hub._record(self.command, parts.path, parse_qs(parts.query), 405, "Authorization" in self.headers)
        self._send(response, body=True)

    def _serve(self, method: str) -> None:
        parts = urlsplit(self.path)
        query = parse_qs(parts.query, keep_blank_values=True)
        try:
            response = self.hub._respond(method, parts.path, query, self.headers)
        except Exception as exc:  # a fixture bug must show up as a 500, not a hung client
            response = _error(500, None, f"local hub error: {type(exc).__name__}: {exc}")
        if response is None:  # an injected connection reset: no answer at all
            self.hub._record(method, parts.path, query, 0, "Authorization" in self.headers)
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return
        self.hub._record(method, parts.path, query, response.status, "Authorization" in self.headers)
        self._send(response, body=method != "HEAD")

    def _send(self, response: _Response, *, body: bool) -> None:
        try:
            self.send_response(response.status)
            for key, value in response.headers.items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(response.body)))
            self.end_headers()
            if body:
                self.wfile.write(response.body)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
