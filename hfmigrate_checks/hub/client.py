"""The only way this project talks to the Hugging Face Hub: a client that can only read.

``ReadOnlyHub`` holds a ``huggingface_hub.HfApi`` privately and exposes explicit read
methods; there is no upload, commit, pull-request or delete method to call by mistake.
Transient failures are retried by the one policy of :mod:`hfmigrate_checks.hub.retry`, in
the HTTP transport every request goes through (downloads included); what still fails ends
in one of the project's error types: :class:`HubNotFound` when the Hub says the thing does
not exist (a caller may read that as "absent"), :class:`HubGatedError` for gated repos,
and :class:`HubReadError` for everything that could not be read reliably (a caller must
read that as ``needs_review``, never as "absent").

Files are downloaded into a fresh temporary cache for every read and removed afterwards,
because ``hf_hub_download`` silently falls back to a cached copy when the Hub answers
with an error (see docs/hf-hub.md). The client keeps no directory between reads, so a
process killed while it holds one leaves nothing behind unless a download was under way.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import attrs

from checks import ChecksError, io
from hfmigrate_checks.hub import retry as hubretry
from hfmigrate_checks.hub.retry import HubUnavailable

DEFAULT_ENDPOINT = "https://huggingface.co"
PENDING_PR_STATUSES = frozenset({"open", "draft"})
MAX_FILE_BYTES = 1 << 20

T = TypeVar("T")


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


# shape: one dispatch over the client's exception types, in the order their subclassing needs; split,
# the mapping from exception to verdict could no longer be read in one place
def _classify(exc: BaseException, bare_404: str | None) -> tuple[str, str, str | None]:  # noqa: C901
    """Sort a client exception into (gated|missing|malformed|fail, reason, what is missing or None).

    Transient HTTP failures never get here as such: the transport retried them and raised
    :class:`~hfmigrate_checks.hub.retry.HubUnavailable` when its budget was spent. A 404
    without the Hub's ``X-Error-Code`` means "not found" only where the Hub answers that
    way (``bare_404`` names the kind, e.g. discussion); elsewhere it is a failure, so a
    wrong endpoint reads as needs_review, never as "absent".
    """
    import httpx2
    from huggingface_hub import errors

    if isinstance(exc, HubUnavailable):
        return "fail", f"the read failed: {exc}", None
    if isinstance(exc, errors.GatedRepoError):
        return "gated", "the repo is gated and this account has no access to its files", None
    if isinstance(exc, errors.RepositoryNotFoundError):
        return "missing", "repository not found", "repo"
    if isinstance(exc, errors.RevisionNotFoundError):
        return "missing", "revision not found", "revision"
    if isinstance(exc, errors.RemoteEntryNotFoundError):
        return "missing", "file or folder not found", "entry"
    if isinstance(exc, errors.LocalEntryNotFoundError):
        # hf_hub_download's HEAD failed and no cached copy exists: judge the underlying failure
        cause = exc.__cause__ or exc.__context__
        if cause is None or isinstance(cause, errors.FileMetadataError):
            return "fail", f"file download failed ({_describe(cause or exc)})", None
        verdict, reason, missing = _classify(cause, bare_404)
        return verdict, f"file download failed ({reason})", missing
    if isinstance(exc, errors.HfHubHTTPError) and exc.response is not None:
        if exc.response.status_code == 404 and bare_404:
            return "missing", "not found (HTTP 404)", bare_404
        return "fail", _describe(exc), None
    if isinstance(exc, httpx2.HTTPError):
        return "fail", f"the read failed: {type(exc).__name__}: {exc}", None
    if isinstance(exc, (json.JSONDecodeError, KeyError)):
        return "malformed", f"malformed response ({type(exc).__name__}: {exc})", None
    raise exc


def _describe(exc: BaseException) -> str:
    response = getattr(exc, "response", None)
    if response is not None:
        message = response.headers.get("X-Error-Message") or str(exc).splitlines()[0]
        return f"HTTP {response.status_code}: {message}"
    return f"{type(exc).__name__}: {exc}"


class ReadOnlyHub:
    """Read-only access to a Hub at ``endpoint`` (default huggingface.co), optionally as ``token``.

    Transient failures (408/429/5xx, connection resets, timeouts) of every request are
    retried by :class:`~hfmigrate_checks.hub.retry.RetryPolicy`: ``retries`` extra attempts
    ``backoff * 2**n`` seconds apart (at most ``max_wait``), ``timeout`` seconds per network
    operation, 429s waited out for up to ``rate_limit_patience`` seconds. A response that
    arrives whole but cannot be parsed is asked again up to ``retries`` times. The client
    has no thread pool of its own: callers choose their concurrency (``checks run draft``
    reads one model per worker). Use as a context manager or call :meth:`close`.
    """

    def __init__(
        self,
        endpoint: str | None = None,
        token: str | None = None,
        *,
        retries: int = 8,
        backoff: float = 0.05,
        max_wait: float = 1.0,
        timeout: float = 60.0,
        max_file_bytes: int = MAX_FILE_BYTES,
        rate_limit_patience: float = 300.0,
    ):
        from huggingface_hub import HfApi
        from huggingface_hub.utils import disable_progress_bars
        from huggingface_hub.utils import logging as hf_logging

        hf_logging.set_verbosity_error()  # its per-request retry chatter would bury the report
        disable_progress_bars()  # a few-KB file needs no progress bar (nor tqdm's monitor thread)
        hubretry.install()

        self.endpoint = (endpoint or DEFAULT_ENDPOINT).rstrip("/")
        self.max_file_bytes = max_file_bytes
        self.policy = hubretry.RetryPolicy(
            retries=retries,
            backoff=backoff,
            max_wait=max_wait,
            timeout=timeout,
            timeout_retries=min(retries, 2),
            rate_limit_patience=rate_limit_patience,
        )
        # False, not None: None would make the client pick up a token from HF_HOME or HF_TOKEN.
        self.__token: str | bool = token or False
        self.__api = HfApi(endpoint=self.endpoint, token=self.__token, library_name="arena-checks")
        self._account: Account | None = None
        self._account_lock = threading.Lock()

    @classmethod
    def from_env(cls, endpoint: str | None = None, **kwargs: Any) -> ReadOnlyHub:
        """Endpoint ``endpoint`` (an ``--endpoint`` option), else from ``HF_ENDPOINT``, and token from ``HF_TOKEN``,
        read now (not at import)."""
        return cls(endpoint or os.environ.get("HF_ENDPOINT") or None, os.environ.get("HF_TOKEN") or None, **kwargs)

    def __repr__(self) -> str:
        return f"ReadOnlyHub({self.endpoint!r}, authenticated={bool(self.__token)})"

    def __enter__(self) -> ReadOnlyHub:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Nothing to release: each read removes its own download cache before it returns (or raises)."""

    # ----------------------------------------------------------------- plumbing
    def _call(self, what: str, fn: Callable[[], T], *, bare_404: str | None = None) -> T:
        """Call ``fn`` under this client's retry policy and map failures onto the project's error types."""
        attempt = 0
        while True:
            try:
                with hubretry.policy(self.policy):
                    return fn()
            except (KeyboardInterrupt, SystemExit):
                raise
            except HubReadError:
                raise
            except BaseException as exc:  # noqa: BLE001 - sorted by _classify, unknown ones re-raised
                verdict, reason, missing = _classify(exc, bare_404)
            if verdict == "gated":
                raise HubGatedError(what, reason)
            if verdict == "missing":
                raise HubNotFound(what, missing)
            if verdict == "fail" or attempt >= self.policy.retries:
                tries = f" after {attempt + 1} attempts" if attempt else ""
                raise HubReadError(what, reason + tries)
            attempt += 1
            time.sleep(self.policy.wait(attempt))

    @staticmethod
    def _at(repo_id: str, revision: str | None) -> str:
        return f"{repo_id}@{revision}" if revision else repo_id

    # ----------------------------------------------------------------- reads
    def model_info(self, repo_id: str, revision: str | None = None) -> RepoInfo:
        """The model repo at ``revision`` (default branch when None)."""

        def fetch() -> RepoInfo:
            info = self.__api.model_info(repo_id, revision=revision, token=self.__token)
            return _repo_info(info, "model")

        return self._call(f"model {self._at(repo_id, revision)}", fetch)

    def dataset_info(self, repo_id: str, revision: str | None = None) -> RepoInfo:
        """The dataset repo at ``revision`` (default branch when None)."""

        def fetch() -> RepoInfo:
            info = self.__api.dataset_info(repo_id, revision=revision, token=self.__token)
            return _repo_info(info, "dataset")

        return self._call(f"dataset {self._at(repo_id, revision)}", fetch)

    def search_models(self, query: str, limit: int = 20) -> tuple[str, ...]:
        """Ids of models whose id contains ``query`` (the Hub's own search), at most ``limit``."""

        def fetch() -> tuple[str, ...]:
            return tuple(m.id for m in self.__api.list_models(search=query, limit=limit, token=self.__token))

        return self._call(f"model search {query!r}", fetch)

    def official_benchmarks(self) -> tuple[str, ...]:
        """Ids of the datasets the Hub lists as official benchmarks (``benchmark:official``)."""

        def fetch() -> tuple[str, ...]:
            return tuple(d.id for d in self.__api.list_datasets(benchmark="official", token=self.__token))

        return self._call("the list of official benchmarks", fetch)

    def list_files(
        self, repo_id: str, revision: str | None = None, path: str = ".eval_results", repo_type: str = "model"
    ) -> tuple[RepoFile, ...]:
        """Files directly inside folder ``path`` at ``revision``; empty when the folder does not exist."""

        def fetch() -> tuple[RepoFile, ...]:
            from huggingface_hub import RepoFile as HfRepoFile

            entries = self.__api.list_repo_tree(
                repo_id, path_in_repo=path or None, revision=revision, repo_type=repo_type, token=self.__token
            )
            return tuple(
                sorted(
                    (RepoFile(e.path, e.size, e.blob_id or "") for e in entries if isinstance(e, HfRepoFile)),
                    key=lambda f: f.path,
                )
            )

        what = f"{repo_type} {self._at(repo_id, revision)} folder {path!r}"
        try:
            return self._call(what, fetch)
        except HubNotFound as exc:
            if exc.kind == "entry":
                return ()
            raise

    def read_file(self, repo_id: str, path: str, revision: str | None = None, repo_type: str = "model") -> str:
        """The UTF-8 text of ``path`` at ``revision``, downloaded into a fresh cache (no stale copies)."""
        what = f"{repo_type} {self._at(repo_id, revision)} file {path!r}"

        def fetch() -> bytes:
            with io.scratch_dir("arena-checks-hub-") as cache:
                local = self.__api.hf_hub_download(
                    repo_id, path, repo_type=repo_type, revision=revision, cache_dir=cache, token=self.__token
                )
                size = os.path.getsize(local)
                if size > self.max_file_bytes:
                    raise HubReadError(what, f"file is {size} bytes, over the {self.max_file_bytes}-byte limit")
                return Path(local).read_bytes()

        data = self._call(what, fetch)
        try:
            return io.decode(data, what)
        except io.ReadError as exc:
            raise HubReadError(what, exc.reason) from None

    def pull_requests(self, repo_id: str, repo_type: str = "model") -> tuple[PullRequest, ...]:
        """Every pull request of every status, all pages; ``.pending`` marks open and draft ones."""

        def fetch() -> tuple[PullRequest, ...]:
            found = self.__api.get_repo_discussions(
                repo_id,
                discussion_type="pull_request",
                discussion_status="all",
                repo_type=repo_type,
                token=self.__token,
            )
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
