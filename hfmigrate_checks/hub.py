"""The only way this project talks to the Hugging Face Hub: a client that can only read.

``ReadOnlyHub`` holds a ``huggingface_hub.HfApi`` privately and exposes explicit read
methods; there is no upload, commit, pull-request or delete method to call by mistake.
Every call gets bounded retries with backoff (the client itself does not retry
``model_info``, discussions or file reads), a deadline, and ends in one of the project's
error types: :class:`HubNotFound` when the Hub says the thing does not exist (a caller may
read that as "absent"), :class:`HubGatedError` for gated repos, and :class:`HubReadError`
for everything that could not be read reliably (a caller must read that as
``needs_review``, never as "absent").

Files are downloaded into a fresh temporary cache for every read and removed afterwards,
because ``hf_hub_download`` silently falls back to a cached copy when the Hub answers
with an error (see docs/hf-hub.md).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import threading
import time
import weakref
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

import attrs

from checks import ChecksError, io

DEFAULT_ENDPOINT = "https://huggingface.co"
PENDING_PR_STATUSES = frozenset({"open", "draft"})
MAX_FILE_BYTES = 1 << 20
_RETRY_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
_MAX_WAIT = 30.0

T = TypeVar("T")
R = TypeVar("R")


class HubReadError(ChecksError):
    """Something on the Hub could not be read reliably (after retries): treat as needs_review."""

    def __init__(self, what: str, reason: str):
        self.what, self.reason = what, reason
        super().__init__(f"could not read {what} from the Hub: {reason}")


class HubGatedError(HubReadError):
    """The repo is gated and this account may not read its files: needs_review, not absent."""


class HubNotFound(ChecksError):
    """The Hub says it does not exist: ``kind`` is repo, revision, entry or discussion."""

    def __init__(self, what: str, kind: str):
        self.what, self.kind = what, kind
        super().__init__(f"{what} was not found on the Hub ({kind} not found)")


@attrs.frozen
class RepoInfo:
    """A model or dataset repo at one revision."""

    repo_id: str
    repo_type: str
    sha: str | None
    gated: bool | str
    private: bool
    tags: tuple[str, ...]
    files: tuple[str, ...]


@attrs.frozen
class RepoFile:
    """A file in a repo tree: its path, its size in bytes and its git blob id (same content, same id)."""

    path: str
    size: int
    oid: str = ""


@attrs.frozen
class PullRequest:
    """A pull request on a repo; ``diff`` is set only by :meth:`ReadOnlyHub.pr_details`."""

    num: int
    author: str
    status: str
    title: str
    git_reference: str
    created_at: str
    diff: str | None = None

    @property
    def pending(self) -> bool:
        """Open and draft PRs are pending: both still show on the Hub as community results."""
        return self.status in PENDING_PR_STATUSES


@attrs.frozen
class Account:
    """The account a token belongs to; ``token_role`` is read, write or fineGrained."""

    name: str
    orgs: tuple[str, ...]
    token_role: str | None


class _DeadlineExceeded(Exception):
    pass


def _classify(exc: BaseException, client_retried: bool, bare_404: str | None) -> tuple[str, str, float | None]:
    """Sort a client exception into (gated|missing:<kind>|retry|fail, reason, retry-after seconds).

    A 404 without the Hub's ``X-Error-Code`` means "not found" only where the Hub answers
    that way (``bare_404`` names the kind, e.g. discussion); elsewhere it is a failure, so a
    wrong endpoint reads as needs_review, never as "absent".
    """
    import httpx2
    from huggingface_hub import errors

    if isinstance(exc, errors.GatedRepoError):
        return "gated", "the repo is gated and this account has no access to its files", None
    if isinstance(exc, errors.RepositoryNotFoundError):
        return "missing:repo", "repository not found", None
    if isinstance(exc, errors.RevisionNotFoundError):
        return "missing:revision", "revision not found", None
    if isinstance(exc, errors.RemoteEntryNotFoundError):
        return "missing:entry", "file or folder not found", None
    if isinstance(exc, errors.LocalEntryNotFoundError):
        # hf_hub_download's HEAD failed and no cached copy exists: judge the underlying failure
        cause = exc.__cause__ or exc.__context__
        if cause is None or isinstance(cause, errors.FileMetadataError):
            return "fail", f"file download failed ({_describe(cause or exc)})", None
        verdict, reason, retry_after = _classify(cause, client_retried, bare_404)
        return verdict, f"file download failed ({reason})", retry_after
    if isinstance(exc, errors.HfHubHTTPError) and exc.response is not None:
        status = exc.response.status_code
        if status in _RETRY_STATUSES:
            return ("fail" if client_retried else "retry"), _describe(exc), _retry_after(exc)
        if status == 404 and bare_404:
            return f"missing:{bare_404}", "not found (HTTP 404)", None
        return "fail", _describe(exc), None
    if isinstance(exc, (httpx2.TransportError, _DeadlineExceeded)):
        return ("fail" if client_retried else "retry"), f"{type(exc).__name__}: {exc}", None
    if isinstance(exc, (json.JSONDecodeError, KeyError)):
        return "retry", f"malformed response ({type(exc).__name__}: {exc})", None
    raise exc


def _describe(exc: BaseException) -> str:
    response = getattr(exc, "response", None)
    if response is not None:
        message = response.headers.get("X-Error-Message") or str(exc).splitlines()[0]
        return f"HTTP {response.status_code}: {message}"
    return f"{type(exc).__name__}: {exc}"


def _status(exc: BaseException) -> int | None:
    response = getattr(exc, "response", None)
    return getattr(response, "status_code", None)


def _retry_after(exc: BaseException | None) -> float | None:
    response = getattr(exc, "response", None)
    value = response.headers.get("Retry-After") if response is not None else None
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


class _Pacer:
    """Spacing of request starts shared by every worker of one client.

    A 429 doubles the gap between request starts for all workers (at most once per gap, so
    a burst of 429s from requests already in flight counts once) and honours Retry-After;
    each success shrinks the gap. So a rate-limited Hub sees the client slow down as a whole
    instead of every worker retrying on its own (a request storm that loses models).
    """

    MAX_GAP = 2.0

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._next = 0.0
        self._gap = 0.0
        self._raised = 0.0

    def wait(self) -> None:
        with self._lock:
            now = time.monotonic()
            start = max(now, self._next)
            self._next = start + self._gap
        if start > now:
            time.sleep(start - now)

    def throttled(self, retry_after: float | None) -> None:
        with self._lock:
            now = time.monotonic()
            if now - self._raised > max(self._gap, 0.05):
                self._gap = min(max(self._gap * 2, 0.01), self.MAX_GAP)
                self._raised = now
            self._next = max(self._next, now + min(retry_after or 0.0, _MAX_WAIT))

    def succeeded(self) -> None:
        with self._lock:
            self._gap = 0.0 if self._gap < 0.001 else self._gap * 0.95


class ReadOnlyHub:
    """Read-only access to a Hub at ``endpoint`` (default huggingface.co), optionally as ``token``.

    ``retries`` extra attempts follow a failed call, waiting ``backoff * 2**n`` seconds (or
    the server's Retry-After, capped at 30 s); ``timeout`` is the deadline of one attempt;
    ``max_workers`` bounds :meth:`parallel`. A 429 slows the whole client down (see
    :class:`_Pacer`) and does not use up a call's retries; a call still rate-limited
    ``rate_limit_patience`` seconds after its first 429 fails as a read error.
    Use as a context manager or call :meth:`close`.
    """

    def __init__(
        self,
        endpoint: str | None = None,
        token: str | None = None,
        *,
        retries: int = 3,
        backoff: float = 0.2,
        max_workers: int = 8,
        timeout: float = 60.0,
        max_file_bytes: int = MAX_FILE_BYTES,
        rate_limit_patience: float = 300.0,
    ):
        from huggingface_hub import HfApi
        from huggingface_hub.utils import logging as hf_logging

        hf_logging.set_verbosity_error()  # its per-request retry chatter would bury the report

        self.endpoint = (endpoint or DEFAULT_ENDPOINT).rstrip("/")
        self.retries, self.backoff, self.timeout = retries, backoff, timeout
        self.max_workers, self.max_file_bytes = max_workers, max_file_bytes
        self.rate_limit_patience = rate_limit_patience
        self._pacer = _Pacer()
        # False, not None: None would make the client pick up a token from HF_HOME or HF_TOKEN.
        self.__token: str | bool = token or False
        self.__api = HfApi(endpoint=self.endpoint, token=self.__token, library_name="arena-checks")
        self._cache_root = Path(tempfile.mkdtemp(prefix="arena-checks-hub-"))
        self._cleanup = weakref.finalize(self, shutil.rmtree, self._cache_root, True)
        self._pool: ThreadPoolExecutor | None = None
        self._pool_lock = threading.Lock()
        self._account: Account | None = None
        self._account_lock = threading.Lock()

    @classmethod
    def from_env(cls, **kwargs: Any) -> ReadOnlyHub:
        """Endpoint from ``HF_ENDPOINT`` and token from ``HF_TOKEN``, read now (not at import)."""
        return cls(os.environ.get("HF_ENDPOINT") or None, os.environ.get("HF_TOKEN") or None, **kwargs)

    def __repr__(self) -> str:
        return f"ReadOnlyHub({self.endpoint!r}, authenticated={bool(self.__token)})"

    def __enter__(self) -> ReadOnlyHub:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop the worker pool and delete the temporary download cache."""
        with self._pool_lock:
            if self._pool is not None:
                self._pool.shutdown(wait=True)
                self._pool = None
        self._cleanup()

    # ----------------------------------------------------------------- plumbing
    def _attempt(self, fn: Callable[[], T]) -> T:
        """Run ``fn`` in a daemon thread with a deadline (the client has no timeout on most reads)."""
        box: dict[str, Any] = {}

        def target() -> None:
            try:
                box["value"] = fn()
            except BaseException as exc:  # handed to the caller's thread
                box["error"] = exc

        thread = threading.Thread(target=target, name="hub-read", daemon=True)
        thread.start()
        thread.join(self.timeout)
        if thread.is_alive():
            raise _DeadlineExceeded(f"no answer within {self.timeout:g} s")
        if "error" in box:
            raise box["error"]
        return box["value"]

    def _call(self, what: str, fn: Callable[[], T], *, client_retried: bool = False,
              bare_404: str | None = None) -> T:
        """Call ``fn`` with bounded retries and map failures onto the project's error types.

        ``client_retried`` marks calls huggingface_hub already retries on 429/5xx/network
        errors with its own backoff (paged listings, file downloads with an empty cache):
        only malformed responses are retried again here, so a dead Hub fails in bounded time.
        """
        attempt = 0
        limited_since: float | None = None
        while True:
            self._pacer.wait()
            try:
                value = self._attempt(fn)
            except BaseException as exc:  # noqa: BLE001 - sorted by _classify, unknown ones re-raised
                if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                    raise
                verdict, reason, retry_after = _classify(exc, client_retried, bare_404)
                # a 429 paces the whole client, also after the library's own retries gave up on it
                rate_limited = verdict in ("retry", "fail") and _status(exc) == 429
            else:
                self._pacer.succeeded()
                return value
            if rate_limited:
                self._pacer.throttled(retry_after)
                limited_since = limited_since or time.monotonic()
                if time.monotonic() - limited_since < self.rate_limit_patience:
                    continue
                raise HubReadError(what, f"{reason}: still rate-limited after {self.rate_limit_patience:g} s")
            if verdict == "gated":
                raise HubGatedError(what, reason)
            if verdict.startswith("missing:"):
                raise HubNotFound(what, verdict.split(":", 1)[1])
            if verdict == "fail" or attempt >= self.retries:
                tries = f" after {attempt + 1} attempts" if attempt else ""
                raise HubReadError(what, reason + tries)
            wait = self.backoff * 2**attempt
            if retry_after is not None:
                wait = max(wait, retry_after)
            time.sleep(min(wait, _MAX_WAIT))
            attempt += 1

    def parallel(self, fn: Callable[[T], R], items: Iterable[T]) -> list[R]:
        """``[fn(item) for item in items]`` on up to ``max_workers`` threads, in order.

        ``fn`` may call the read methods but not :meth:`parallel` itself (no nesting).
        """
        items = list(items)
        if len(items) <= 1 or self.max_workers <= 1:
            return [fn(item) for item in items]
        with self._pool_lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self.max_workers, thread_name_prefix="hub-pool")
            pool = self._pool
        return [future.result() for future in [pool.submit(fn, item) for item in items]]

    @staticmethod
    def _at(repo_id: str, revision: str | None) -> str:
        return f"{repo_id}@{revision}" if revision else repo_id

    # ----------------------------------------------------------------- reads
    def model_info(self, repo_id: str, revision: str | None = None) -> RepoInfo:
        """The model repo at ``revision`` (default branch when None)."""
        def fetch() -> RepoInfo:
            info = self.__api.model_info(repo_id, revision=revision, token=self.__token, timeout=self.timeout)
            return _repo_info(info, "model")

        return self._call(f"model {self._at(repo_id, revision)}", fetch)

    def dataset_info(self, repo_id: str, revision: str | None = None) -> RepoInfo:
        """The dataset repo at ``revision`` (default branch when None)."""
        def fetch() -> RepoInfo:
            info = self.__api.dataset_info(repo_id, revision=revision, token=self.__token, timeout=self.timeout)
            return _repo_info(info, "dataset")

        return self._call(f"dataset {self._at(repo_id, revision)}", fetch)

    def search_models(self, query: str, limit: int = 20) -> tuple[str, ...]:
        """Ids of models whose id contains ``query`` (the Hub's own search), at most ``limit``."""
        def fetch() -> tuple[str, ...]:
            return tuple(m.id for m in self.__api.list_models(search=query, limit=limit, token=self.__token))

        return self._call(f"model search {query!r}", fetch, client_retried=True)

    def official_benchmarks(self) -> tuple[str, ...]:
        """Ids of the datasets the Hub lists as official benchmarks (``benchmark:official``)."""
        def fetch() -> tuple[str, ...]:
            return tuple(d.id for d in self.__api.list_datasets(benchmark="official", token=self.__token))

        return self._call("the list of official benchmarks", fetch, client_retried=True)

    def list_files(
        self, repo_id: str, revision: str | None = None, path: str = ".eval_results", repo_type: str = "model"
    ) -> tuple[RepoFile, ...]:
        """Files directly inside folder ``path`` at ``revision``; empty when the folder does not exist."""
        def fetch() -> tuple[RepoFile, ...]:
            from huggingface_hub import RepoFile as HfRepoFile

            entries = self.__api.list_repo_tree(repo_id, path_in_repo=path or None, revision=revision,
                                                repo_type=repo_type, token=self.__token)
            return tuple(sorted((RepoFile(e.path, e.size, e.blob_id or "") for e in entries
                                 if isinstance(e, HfRepoFile)),
                                key=lambda f: f.path))

        what = f"{repo_type} {self._at(repo_id, revision)} folder {path!r}"
        try:
            return self._call(what, fetch, client_retried=True)
        except HubNotFound as exc:
            if exc.kind == "entry":
                return ()
            raise

    def read_file(
        self, repo_id: str, path: str, revision: str | None = None, repo_type: str = "model"
    ) -> str:
        """The UTF-8 text of ``path`` at ``revision``, downloaded into a fresh cache (no stale copies)."""
        what = f"{repo_type} {self._at(repo_id, revision)} file {path!r}"

        def fetch() -> bytes:
            cache = Path(tempfile.mkdtemp(dir=self._cache_root))
            try:
                local = self.__api.hf_hub_download(repo_id, path, repo_type=repo_type, revision=revision,
                                                   cache_dir=cache, token=self.__token,
                                                   etag_timeout=self.timeout)
                size = os.path.getsize(local)
                if size > self.max_file_bytes:
                    raise HubReadError(what, f"file is {size} bytes, over the {self.max_file_bytes}-byte limit")
                return Path(local).read_bytes()
            finally:
                shutil.rmtree(cache, ignore_errors=True)

        data = self._call(what, fetch, client_retried=True)
        try:
            return io.decode(data, what)
        except io.ReadError as exc:
            raise HubReadError(what, exc.reason) from None

    def pull_requests(self, repo_id: str, repo_type: str = "model") -> tuple[PullRequest, ...]:
        """Every pull request of every status, all pages; ``.pending`` marks open and draft ones."""
        def fetch() -> tuple[PullRequest, ...]:
            found = self.__api.get_repo_discussions(repo_id, discussion_type="pull_request",
                                                    discussion_status="all", repo_type=repo_type,
                                                    token=self.__token)
            return tuple(_pull_request(d) for d in found if d.is_pull_request)

        return self._call(f"pull requests of {repo_type} {repo_id}", fetch)

    def pr_details(self, repo_id: str, num: int, repo_type: str = "model") -> PullRequest:
        """Pull request ``num`` with its unified diff."""
        def fetch() -> PullRequest:
            d = self.__api.get_discussion_details(repo_id, num, repo_type=repo_type, token=self.__token)
            return _pull_request(d, diff=d.diff or "")

        return self._call(f"pull request #{num} of {repo_type} {repo_id}", fetch, bare_404="discussion")

    def whoami(self) -> Account | None:
        """The account of the token, or None without a token (no request is sent then).

        Asked once per instance (the Hub rate-limits whoami strictly); failures are not cached.
        """
        if not self.__token:
            return None
        with self._account_lock:
            if self._account is None:
                self._account = self._call("the authenticated account", self._fetch_account)
            return self._account

    def _fetch_account(self) -> Account:
        data = self.__api.whoami(token=self.__token)
        role = ((data.get("auth") or {}).get("accessToken") or {}).get("role")
        return Account(data["name"], tuple(o["name"] for o in data.get("orgs") or ()), role)


def _repo_info(info: Any, repo_type: str) -> RepoInfo:
    return RepoInfo(
        repo_id=info.id,
        repo_type=repo_type,
        sha=info.sha,
        gated=info.gated or False,
        private=bool(info.private),
        tags=tuple(info.tags or ()),
        files=tuple(s.rfilename for s in info.siblings or ()),
    )


def _pull_request(d: Any, diff: str | None = None) -> PullRequest:
    return PullRequest(
        num=d.num,
        author=d.author,
        status=d.status,
        title=d.title,
        git_reference=d.git_reference or f"refs/pr/{d.num}",
        created_at=d.created_at.isoformat() if d.created_at else "",
        diff=diff,
    )
