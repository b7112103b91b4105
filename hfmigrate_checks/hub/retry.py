"""The one retry policy for every read this project sends to the Hub.

huggingface_hub 2.4.0 retries some reads and not others: paged listings and a download's
HEAD go through its ``http_backoff``, but ``model_info``, the discussion calls, ``whoami``
and a download's GET (on a 5xx) are sent once. A transient 503 on one of those used to
turn a model into ``needs_review`` (or, worse, a duplicate PR into a missing one), and the
reads that were retried were retried by two layers at once.

So the policy lives in the HTTP transport of the client that huggingface_hub itself uses
(installed with its ``set_client_factory`` hook): every GET and HEAD, whatever the call, is
retried on 408/429/5xx, connection resets and timeouts, with capped exponential backoff
plus jitter, a 429's ``Retry-After`` honoured (a rate limit waits, bounded by
``rate_limit_patience``, and does not use up the budget). When the budget is spent the
transport raises :class:`HubUnavailable`, which huggingface_hub's own ``http_backoff``
does not catch, so nothing retries on top of it. The policy of the calling thread is
taken from a context variable, so two clients in one process keep their own settings.
"""

from __future__ import annotations

import contextlib
import contextvars
import random
import threading
import time
from collections.abc import Iterator

import attrs

RETRY_STATUSES = frozenset({408, 429, 500, 502, 503, 504})


@attrs.frozen
class RetryPolicy:
    """How hard to try: ``retries`` extra attempts after a 5xx or a reset, ``backoff * 2**n`` seconds
    apart (at most ``max_wait``, jittered), ``timeout`` seconds per network operation with at most
    ``timeout_retries`` extra attempts after a timeout, and up to ``rate_limit_patience`` seconds of
    429s (each waiting its ``Retry-After``)."""

    retries: int = 8
    backoff: float = 0.05
    max_wait: float = 1.0
    timeout: float = 60.0
    timeout_retries: int = 2
    rate_limit_patience: float = 300.0

    def wait(self, attempt: int) -> float:
        """Seconds before retry number ``attempt`` (1-based): half fixed, half random (no lockstep)."""
        base = min(self.max_wait, self.backoff * 2 ** (attempt - 1))
        return base / 2 + random.uniform(0, base / 2)


class HubUnavailable(Exception):
    """A read that still failed when the retry budget was spent; ``reason`` says how it failed."""

    def __init__(self, reason: str, attempts: int, status: int | None = None):
        self.reason, self.attempts, self.status = reason, attempts, status
        super().__init__(f"{reason} (after {attempts} attempt{'s' * (attempts != 1)})")


_POLICY: contextvars.ContextVar[RetryPolicy] = contextvars.ContextVar("hub_retry_policy", default=RetryPolicy())


@contextlib.contextmanager
def policy(value: RetryPolicy) -> Iterator[None]:
    """Use ``value`` for the Hub requests this thread sends inside the block."""
    token = _POLICY.set(value)
    try:
        yield
    finally:
        _POLICY.reset(token)


def _retry_after(headers) -> float | None:
    value = headers.get("Retry-After")
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None  # an HTTP date: rare on the Hub; the backoff applies


class _Tries:
    """The attempts of one request so far; each failure either waits for the next try or raises
    :class:`HubUnavailable` once its budget (timeouts, other failures, rate-limit patience) is spent."""

    def __init__(self, rules: RetryPolicy) -> None:
        self.rules = rules
        self.failures = self.timeouts = 0
        self.limited_since: float | None = None

    def timed_out(self) -> None:
        self.timeouts += 1
        if self.timeouts > self.rules.timeout_retries:
            raise HubUnavailable(f"no answer within {self.rules.timeout:g} s", self.failures + self.timeouts) from None

    def network_error(self, exc: Exception) -> None:
        self.failures += 1
        if self.failures > self.rules.retries:
            raise HubUnavailable(f"{type(exc).__name__}: {exc}", self.failures + self.timeouts) from None
        time.sleep(self.rules.wait(self.failures))

    def after_status(self, response) -> None:
        """A retryable status: drain the response, then wait (a 429 its own way) or give up."""
        response.read()
        response.close()
        status = response.status_code
        reason = f"HTTP {status}: {response.headers.get('X-Error-Message') or response.reason_phrase}"
        if status == 429:
            self._rate_limited(response, reason)
            return
        self.failures += 1
        if self.failures > self.rules.retries:
            raise HubUnavailable(reason, self.failures + self.timeouts, status)
        time.sleep(self.rules.wait(self.failures))

    def _rate_limited(self, response, reason: str) -> None:
        """A 429 waits its ``Retry-After`` (or the first backoff) within the patience, and uses no budget."""
        rules = self.rules
        self.limited_since = self.limited_since or time.monotonic()
        waited = time.monotonic() - self.limited_since
        if waited >= rules.rate_limit_patience:
            raise HubUnavailable(
                f"{reason}: still rate-limited after {rules.rate_limit_patience:g} s",
                self.failures + self.timeouts + 1,
                429,
            )
        delay = _retry_after(response.headers)
        time.sleep(min(delay if delay is not None else rules.wait(1), rules.rate_limit_patience - waited))


class RetryingTransport:
    """An ``httpx2`` transport that retries transient failures of GET/HEAD requests (see the module)."""

    def __init__(self, inner) -> None:
        self.inner = inner

    def handle_request(self, request):
        rules = _POLICY.get()
        self._apply_timeout(request, rules.timeout)
        tries = _Tries(rules)
        while True:
            response = self._send(request, tries)
            if response is None:
                continue
            if response.status_code not in RETRY_STATUSES or request.method not in ("GET", "HEAD"):
                return response
            tries.after_status(response)

    def _send(self, request, tries: _Tries):
        """One attempt: the response, or None after a timeout or a reset that the budget still allows."""
        import httpx2

        try:
            return self.inner.handle_request(request)
        except httpx2.TimeoutException:
            tries.timed_out()
        except (httpx2.NetworkError, httpx2.RemoteProtocolError) as exc:
            tries.network_error(exc)
        return None

    @staticmethod
    def _apply_timeout(request, seconds: float) -> None:
        """huggingface_hub sends most reads with no timeout at all: every operation gets the policy's, at most."""
        current = dict(request.extensions.get("timeout") or {})
        for key in ("connect", "read", "write", "pool"):
            given = current.get(key)
            current[key] = seconds if given is None else min(given, seconds)
        request.extensions["timeout"] = current

    def close(self) -> None:
        self.inner.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


_installed = False
_install_lock = threading.Lock()


def install() -> None:
    """Make huggingface_hub's shared HTTP client use :class:`RetryingTransport` (once per process)."""
    global _installed
    with _install_lock:
        if _installed:
            return
        import httpx2
        from huggingface_hub import get_session, set_client_factory

        # the stock client's event hooks add the Hub's headers and checks; its public accessor is the
        # one way to them (set_client_factory below closes that client, its hooks stay usable)
        hooks = {name: list(found) for name, found in get_session().event_hooks.items()}

        def factory():
            transport = RetryingTransport(httpx2.HTTPTransport())
            return httpx2.Client(transport=transport, event_hooks=hooks, follow_redirects=True, timeout=None)

        set_client_factory(factory)
        _installed = True
