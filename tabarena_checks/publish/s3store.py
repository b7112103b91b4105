"""The boto3 side of publishing to R2: a client built from the environment, uploads that skip what is
already there, survive throttling and dropped connections, and are checked against the plan.

Credentials come only from ``R2_ACCOUNT_ID``, ``R2_ACCESS_KEY_ID`` and ``R2_SECRET_ACCESS_KEY`` and
are never printed. ``CHECKS_S3_ENDPOINT_URL`` points the client at another S3 server (tests, demo).
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from functools import cached_property
from pathlib import Path

import attrs

from checks import ActionFailed, progress
from tabarena_checks.facts.constants import missing_credentials

ENDPOINT_ENV = "CHECKS_S3_ENDPOINT_URL"
#: the one retry policy for S3: botocore's attempts per request (throttling, 5xx, dropped
#: connections), in its standard mode; a failure after them is reported and a rerun resumes
ATTEMPTS_ENV = "CHECKS_S3_MAX_ATTEMPTS"
DEFAULT_ATTEMPTS = 10
MIB = 1024 * 1024
#: files of at least this size go multipart with parts of this size; the ETag is computed the same way
PART_SIZE = 16 * MIB
#: how many objects are sent at once; each large one also sends parts concurrently
OBJECT_WORKERS = 2
PART_WORKERS = 8


def endpoint_url(environ: Mapping[str, str] | None = None) -> str:
    env = os.environ if environ is None else environ
    return env.get(ENDPOINT_ENV) or f"https://{env.get('R2_ACCOUNT_ID', '<R2_ACCOUNT_ID>')}.r2.cloudflarestorage.com"


def make_client(environ: Mapping[str, str] | None = None):
    """An S3 client for R2 (or ``CHECKS_S3_ENDPOINT_URL``) with path-style keys and botocore's standard
    retries: exponential backoff with jitter on throttling, 5xx answers and dropped connections."""
    import boto3
    from botocore.config import Config

    env = os.environ if environ is None else environ
    missing = missing_credentials(env)
    if missing:
        raise ActionFailed(
            f"missing environment variable(s) {', '.join(missing)}: R2 uploads need an API token with "
            "'Object Read & Write' on the bucket; export them in the environment (never as options)"
        )
    if not env.get(ENDPOINT_ENV) and not re.fullmatch(r"[A-Za-z0-9-]{1,63}", env["R2_ACCOUNT_ID"]):
        raise ActionFailed(
            "'R2_ACCOUNT_ID' is not an R2 account id (letters, digits and '-' only, as the R2 "
            "dashboard shows it); its value is not printed"
        )
    attempts = env.get(ATTEMPTS_ENV) or str(DEFAULT_ATTEMPTS)
    if not attempts.isdigit() or int(attempts) < 1:
        raise ActionFailed(f"'{ATTEMPTS_ENV}' must be a positive integer (got {attempts!r})")
    session = boto3.session.Session(
        aws_access_key_id=env["R2_ACCESS_KEY_ID"],
        aws_secret_access_key=env["R2_SECRET_ACCESS_KEY"],
        region_name="auto",
    )
    config = Config(
        retries={"mode": "standard", "total_max_attempts": int(attempts)},  # the first request included
        max_pool_connections=OBJECT_WORKERS * PART_WORKERS,
        connect_timeout=10,
        read_timeout=120,
        # R2 refuses the flexible checksums botocore sends by default since 1.36 (x-amz-checksum-crc32
        # headers, aws-chunked trailers): 501 NotImplemented, or an error that reads like bad credentials.
        # They are sent only where an operation requires one; integrity is verify()'s ETag (MD5)
        # comparison of every object, so the SHA-256 of each body for signing on plain http is skipped too.
        request_checksum_calculation="when_required",
        response_checksum_validation="when_required",
        s3={"addressing_style": "path", "payload_signing_enabled": False},
        signature_version="s3v4",
    )
    return session.client("s3", endpoint_url=endpoint_url(env), config=config)


def transfer_config():
    from boto3.s3.transfer import TransferConfig

    return TransferConfig(
        multipart_threshold=PART_SIZE, multipart_chunksize=PART_SIZE, max_concurrency=PART_WORKERS, use_threads=True
    )


@attrs.frozen
class Digest:
    """A file's MD5 and the ETag S3 gives it when uploaded with :data:`PART_SIZE` parts."""

    md5: str
    etag: str
    size: int


def file_digest(path: Path, part_size: int = PART_SIZE) -> Digest:
    whole, parts, size = hashlib.md5(), [], 0
    with open(path, "rb") as fh:
        while chunk := fh.read(part_size):
            whole.update(chunk)
            parts.append(hashlib.md5(chunk).digest())
            size += len(chunk)
    if size < part_size:
        etag = whole.hexdigest()
    else:
        etag = f"{hashlib.md5(b''.join(parts)).hexdigest()}-{len(parts)}"
    return Digest(whole.hexdigest(), etag, size)


@attrs.define(eq=False)
class Planned:
    """One object to publish: its key, the local file and its size; the digest is computed on demand."""

    key: str
    path: Path
    size: int

    @cached_property
    def digest(self) -> Digest:
        return file_digest(self.path)


@attrs.frozen
class Remote:
    size: int
    etag: str


def list_prefix(client, bucket: str, prefix: str) -> dict[str, Remote]:
    """Every object below ``prefix`` with its size and ETag (quotes stripped)."""
    out = {}
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        for item in page.get("Contents", []):
            out[item["Key"]] = Remote(item["Size"], item["ETag"].strip('"'))
    return out


def head(client, bucket: str, key: str) -> Remote | None:
    from botocore.exceptions import ClientError

    try:
        resp = client.head_object(Bucket=bucket, Key=key)
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") in ("404", "NoSuchKey", "NotFound"):
            return None
        raise
    return Remote(resp["ContentLength"], resp["ETag"].strip('"'))


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


@attrs.define
class UploadReport:
    sent: list[str] = attrs.field(factory=list)
    skipped: list[str] = attrs.field(factory=list)
    aborted_multipart: int = 0
    withdrawn_metadata: bool = False


@attrs.frozen
class Verification:
    """The remote state compared with the plan: keys, sizes and ETags."""

    checked: int
    missing: tuple[str, ...]
    mismatched: tuple[str, ...]
    extra: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.missing and not self.mismatched


def _verification(objects: list[Planned], heads: list, listed) -> Verification:
    """The plan compared with the bucket: keys not listed or not found, found with another size or ETag, and
    keys listed under the prefix that the plan does not hold.

    Apart from the network calls so that the comparison reads on its own: a key both unlisted and of
    another size is counted in both lists, as the listing and the HEAD are separate observations.
    """
    missing, mismatched = [], []
    for o, h in zip(objects, heads):
        if h is None or o.key not in listed:
            missing.append(o.key)
        if h is not None and (h.size != o.size or h.etag != o.digest.etag):
            mismatched.append(o.key)
    planned = {o.key for o in objects}
    extra = tuple(sorted(k for k in listed if k not in planned))
    return Verification(len(objects), tuple(missing), tuple(mismatched), extra)


class Publisher:
    """Uploads one method's objects below a key prefix, the ``last`` key only once all others are in place."""

    def __init__(self, client, bucket: str, prefix: str, *, log: Callable[[str], None] = lambda line: None):
        self.client = client
        self.bucket = bucket
        self.prefix = prefix.rstrip("/") + "/"
        self.log = log

    def _matches(self, obj: Planned, remote: Remote | None) -> bool:
        return remote is not None and remote.size == obj.size and remote.etag == obj.digest.etag

    def _send(self, obj: Planned, config, advance: Callable[[float], None] | None = None) -> None:
        """One upload; retrying is botocore's (:func:`make_client`), never repeated here."""
        try:
            self.client.upload_file(str(obj.path), self.bucket, obj.key, Config=config, Callback=advance)
        except Exception as exc:  # boto3 and s3transfer raise several wrappers of the S3 error
            raise ActionFailed(f"upload of {obj.key} failed: {_describe(exc)}") from None

    def _abort_stale_multipart(self, before=None) -> int:
        """Multipart uploads an interrupted run left open: aborted, so the rerun starts their files afresh.

        Only those started ``before`` this run took the upload lock: one started since belongs to a
        live run (an older version without the lock), and is never aborted.
        """
        uploads = self.client.list_multipart_uploads(Bucket=self.bucket, Prefix=self.prefix).get("Uploads", [])
        stale = [up for up in uploads if before is None or up.get("Initiated") is None or up["Initiated"] < before]
        for up in stale:
            self.client.abort_multipart_upload(Bucket=self.bucket, Key=up["Key"], UploadId=up["UploadId"])
        return len(stale)

    def publish(self, objects: Iterable[Planned], last: str, lock=None) -> UploadReport:
        """Send what differs, ``last`` (metadata.yaml) only after every other object and a check that
        ``lock`` (a :class:`tabarena_checks.publish.s3lock.UploadLock`) is still held."""
        objects = list(objects)
        report = UploadReport()
        remote = self._remote_state(lock, report)
        final = [o for o in objects if o.key == last]
        todo = self._differing([o for o in objects if o.key != last], remote, report)
        if todo and last in remote:
            # readers find a method through its metadata.yaml: withdraw it while its parts change
            self.client.delete_object(Bucket=self.bucket, Key=last)
            report.withdrawn_metadata = True
            remote.pop(last)
        total = sum(o.size for o in (*todo, *final))
        with progress.bar(f"upload to {self.bucket}", total=total, unit="bytes") as advance:
            config = transfer_config()
            self._send_all(todo, config, advance, report)
            self._send_last(final, remote, lock, config, advance, report)
        return report

    def _remote_state(self, lock, report: UploadReport) -> dict:
        """The objects under the prefix, after aborting the stale multipart uploads (``lock``'s own are kept)."""
        try:
            report.aborted_multipart = self._abort_stale_multipart(lock.acquired if lock is not None else None)
            return list_prefix(self.client, self.bucket, self.prefix)
        except Exception as exc:
            raise ActionFailed(f"cannot list r2://{self.bucket}/{self.prefix}: {_describe(exc)}") from None

    def _send_last(self, final: list[Planned], remote: dict, lock, config, advance, report: UploadReport) -> None:
        """metadata.yaml, unless it is in place already, and only while ``lock`` is still held."""
        for obj in final:
            if self._matches(obj, remote.get(obj.key)):
                report.skipped.append(obj.key)
                advance(obj.size)
                continue
            if lock is not None:
                lock.check()
            self._send(obj, config, advance)
            report.sent.append(obj.key)
            self.log(f"sent {obj.key} ({obj.size} bytes) last")

    def _differing(self, body: list[Planned], remote: dict, report: UploadReport) -> list[Planned]:
        """The objects whose content is not in place yet; the others are noted as skipped.

        Only objects whose key already exists need hashing before the decision; new ones go straight out.
        """
        with ThreadPoolExecutor(OBJECT_WORKERS) as pool:
            same = list(pool.map(lambda o: o.key in remote and self._matches(o, remote[o.key]), body))
        report.skipped += [o.key for o, skip in zip(body, same) if skip]
        return [o for o, skip in zip(body, same) if not skip]

    def _send_all(self, todo: list[Planned], config, advance, report: UploadReport) -> None:
        """Send ``todo`` in parallel, largest first; any failure is raised once all have been tried."""
        done: list[str] = []
        errors: list[str] = []

        def send(obj: Planned) -> None:
            try:
                self._send(obj, config, advance)
                done.append(obj.key)
                self.log(f"sent {obj.key} ({obj.size} bytes)")
            except ActionFailed as exc:
                errors.append(str(exc))

        with ThreadPoolExecutor(OBJECT_WORKERS) as pool:
            list(pool.map(send, sorted(todo, key=lambda o: -o.size)))
        report.sent += sorted(done)
        if errors:
            raise ActionFailed(
                f"{len(errors)} of {len(todo)} object(s) failed ({len(done)} sent, {len(report.skipped)} already "
                f"in place); metadata.yaml was not uploaded, so the method is not published. Re-run the same "
                f"command to resume: objects already in place are skipped.\n  - " + "\n  - ".join(sorted(errors))
            )

    def verify(self, objects: Iterable[Planned]) -> Verification:
        """List the prefix and HEAD every planned key; compare keys, sizes and ETags with the plan."""
        objects = list(objects)
        listed = list_prefix(self.client, self.bucket, self.prefix)
        with ThreadPoolExecutor(OBJECT_WORKERS) as pool:
            heads = list(pool.map(lambda o: head(self.client, self.bucket, o.key), objects))
        return _verification(objects, heads, listed)

    def remove(self, first: str, lock=None) -> list[str]:
        """Delete every object below the prefix, ``first`` (metadata.yaml) before the rest."""
        keys = sorted(list_prefix(self.client, self.bucket, self.prefix), key=lambda k: (k != first, k))
        self._abort_stale_multipart(lock.acquired if lock is not None else None)
        if first in keys:
            self.client.delete_object(Bucket=self.bucket, Key=first)
        rest = [k for k in keys if k != first]
        for start in range(0, len(rest), 1000):
            batch = [{"Key": k} for k in rest[start : start + 1000]]
            resp = self.client.delete_objects(Bucket=self.bucket, Delete={"Objects": batch, "Quiet": True})
            if resp.get("Errors"):
                failed = ", ".join(e["Key"] for e in resp["Errors"])
                raise ActionFailed(f"the store refused to delete: {failed}; re-run to retry")
        return keys
