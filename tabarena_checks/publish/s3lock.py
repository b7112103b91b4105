"""One upload at a time per method: a lock object written with S3's conditional put.

Two uploads of the same method from different caches would interleave their objects and
publish metadata.yaml over a mix, and one run's resume would abort the other's live multipart
uploads. So a real upload (and an unpublish) first creates the object ``<key root>.checks-lock``
with ``If-None-Match: *``: S3, R2 and moto refuse the second writer with 412, and that run
stops before sending anything, naming the holder. The object sits beside the method's prefix,
not under it, so it is never listed, verified or deleted as part of the method.

The lock carries a lease, renewed by a thread while the upload runs (``If-Match`` on its
ETag, so a renewal never overwrites another run's lock); a run checks it still holds the lock
right before it publishes metadata.yaml. A lock whose holder is a dead process on this host,
or whose lease has expired, is taken over (``If-Match`` on the ETag read, so of two runs
taking it over only one wins): a killed upload never blocks its rerun.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import socket
import threading
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from checks import ActionFailed
from checks.io import pid_running

SUFFIX = ".checks-lock"
#: how long a lock stays valid without renewal; renewed every third of it
LEASE = dt.timedelta(minutes=15)


def _now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


def _code(exc: BaseException) -> str:
    response = getattr(exc, "response", None) or {}
    return str(response.get("Error", {}).get("Code", "")) or str(
        response.get("ResponseMetadata", {}).get("HTTPStatusCode", "")
    )


class UploadLock:
    """The lock of one method prefix, held by this process (see the module docstring)."""

    def __init__(
        self,
        client,
        bucket: str,
        key_root: str,
        *,
        lease: dt.timedelta = LEASE,
        log: Callable[[str], None] = lambda line: None,
    ):
        self.client, self.bucket, self.key = client, bucket, key_root.rstrip("/") + SUFFIX
        self.lease, self.log = lease, log
        self.run = uuid.uuid4().hex
        self.etag: str | None = None
        self.acquired: dt.datetime | None = None
        self.lost: str | None = None
        self._stop = threading.Event()
        self._guard = threading.Lock()
        self._thread: threading.Thread | None = None

    @property
    def where(self) -> str:
        return f"r2://{self.bucket}/{self.key}"

    def _body(self) -> bytes:
        now = _now()
        return json.dumps(
            {
                "host": socket.gethostname(),
                "pid": os.getpid(),
                "run": self.run,
                "started": (self.acquired or now).isoformat(timespec="seconds"),
                "expires": (now + self.lease).isoformat(timespec="seconds"),
            }
        ).encode()

    def _put(self, **condition: str) -> str:
        return self.client.put_object(
            Bucket=self.bucket, Key=self.key, Body=self._body(), ContentType="application/json", **condition
        )["ETag"]

    def _read(self) -> tuple[dict[str, Any], str] | None:
        try:
            got = self.client.get_object(Bucket=self.bucket, Key=self.key)
        except Exception as exc:
            if _code(exc) in ("404", "NoSuchKey", "NotFound"):
                return None
            raise
        try:
            info = json.loads(got["Body"].read(64 * 1024))
        except ValueError:
            info = {}
        return (info if isinstance(info, dict) else {}), got["ETag"]

    def _stale(self, info: dict[str, Any]) -> str | None:
        """Why a lock found in place may be taken over (its holder died or its lease expired), or None."""
        try:
            expires = dt.datetime.fromisoformat(str(info.get("expires")))
        except ValueError:
            return "it is not a lock this tool wrote"
        if expires < _now():
            return f"its lease expired at {expires.isoformat(timespec='seconds')}"
        pid = info.get("pid")
        if info.get("host") == socket.gethostname() and isinstance(pid, int):
            if not pid_running(pid):
                return f"its holder (pid {pid} on this host) is no longer running"
            if pid == os.getpid() and info.get("run") != self.run:
                return "an earlier upload of this same process left it (one process uploads one method at a time)"
        return None

    def _take(self, **condition: str) -> bool:
        """Write the lock under ``condition`` (absent, or still the version read): False when another run's write
        came first (the store's precondition failed or conflicted), :class:`ActionFailed` on any other error."""
        try:
            self.etag = self._put(**condition)
            return True
        except Exception as exc:
            if _code(exc) not in ("412", "PreconditionFailed", "409", "ConditionalRequestConflict"):
                raise ActionFailed(f"cannot take the upload lock {self.where}: {type(exc).__name__}: {exc}") from None
            return False

    def acquire(self) -> None:
        """Take the lock, or raise :class:`ActionFailed` naming the run that holds it."""
        for _ in range(3):  # the holder may release between our attempt and our read: try again
            self.acquired = _now()
            if self._take(IfNoneMatch="*"):
                break
            found = self._read()
            if found is None:
                continue
            info, etag = found
            why = self._stale(info)
            if why is None:
                raise ActionFailed(
                    f"another upload of this method holds the lock {self.where} (host {info.get('host')!s}, pid "
                    f"{info.get('pid')!s}, started {info.get('started')!s}, lease until {info.get('expires')!s}); "
                    "nothing was uploaded. Wait for it to finish and run the command again; a lock whose run died "
                    "is taken over once its lease expires (at once when it ran on this host)"
                )
            if self._take(IfMatch=etag):
                self.log(f"took over the upload lock {self.where}: {why}")
                break
        else:
            raise ActionFailed(f"cannot take the upload lock {self.where}: other runs keep taking it; try again")
        self._thread = threading.Thread(target=self._renewing, daemon=True, name="upload-lock")
        self._thread.start()

    def renew(self) -> None:
        """Extend the lease if the lock is still ours; otherwise remember that it was lost."""
        with self._guard:
            if self.lost:
                return
            try:
                self.etag = self._put(IfMatch=self.etag)
            except Exception as exc:
                self.lost = f"renewing it failed: {type(exc).__name__}: {exc}"

    def _renewing(self) -> None:
        while not self._stop.wait(self.lease.total_seconds() / 3):
            self.renew()

    def check(self) -> None:
        """Raise :class:`ActionFailed` unless the lock is still ours (called before publishing metadata.yaml)."""
        self.renew()
        if self.lost:
            raise ActionFailed(
                f"the upload lock {self.where} was lost ({self.lost}); metadata.yaml was not "
                "published. Run the command again"
            )

    def release(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        try:
            found = self._read()
            if found is not None and found[1] == self.etag:
                self.client.delete_object(Bucket=self.bucket, Key=self.key)
        except Exception:  # an unreleased lock expires with its lease; the upload's own outcome stands
            pass


@contextmanager
def holding(
    client, bucket: str, key_root: str, *, log: Callable[[str], None] = lambda line: None, lease: dt.timedelta = LEASE
) -> Iterator[UploadLock]:
    """Hold the lock of ``key_root`` for the body (see :class:`UploadLock`)."""
    lock = UploadLock(client, bucket, key_root, lease=lease, log=log)
    lock.acquire()
    try:
        yield lock
    finally:
        lock.release()
