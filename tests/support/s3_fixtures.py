"""A real S3 server for the publishing tests: moto's server mode on 127.0.0.1, behind a small HTTP proxy
that records every request and can inject failures, plus a builder for hand-made method caches.

Import the fixtures by name into a test module (``from s3_fixtures import s3_env``).
"""

from __future__ import annotations

import http.client
import json
import logging
import pickle
import threading
import urllib.request
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import boto3
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from botocore.config import Config
from moto.server import ThreadedMotoServer

from checks import records
from tabarena_checks.cache import integrity
from tabarena_checks.cache.layout import MethodCache, render_metadata_yaml
from tabarena_checks.metadata.model import MethodMetadata

BUCKET = "tabarena"
PREFIX = "cache"
#: the method and suite of the cache :func:`make_method_cache` writes, and the keys its upload sends
METHOD, SUITE = "Dummy", "dummy-2026-11-01"
KEY_ROOT = f"{PREFIX}/artifacts/{SUITE}/methods/{METHOD}"
UPLOADED_KEYS = {
    f"{KEY_ROOT}/{name}"
    for name in (
        "metadata.yaml",
        "results/model_results.parquet",
        "results_checksums.json",
        "processed.zip",
        "processed/configs_hyperparameters.json",
        "raw.zip",
    )
}
FAKE_ENV = {
    "R2_ACCOUNT_ID": "testaccount",
    "R2_ACCESS_KEY_ID": "testing-key-id",
    "R2_SECRET_ACCESS_KEY": "testing-secret-value",
}


class MotoS3:
    """moto's ThreadedMotoServer that can be stopped and started again on the same port."""

    def __init__(self) -> None:
        self.port = 0
        self._server = None

    def start(self) -> None:

        logging.getLogger("werkzeug").setLevel(logging.ERROR)

        self._server = ThreadedMotoServer(ip_address="127.0.0.1", port=self.port, verbose=False)
        self._server.start()
        self.port = self._server.get_host_and_port()[1]

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop()
            self._server._server.server_close()  # ThreadedMotoServer.stop() leaves the socket listening
            self._server = None

    @property
    def running(self) -> bool:
        return self._server is not None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


#: what a fault hook may return: None (forward), an HTTP status to answer with, "drop" (close the connection),
#: or "hang" (answer nothing until the proxy's ``released`` is set or it closes); or a function of no arguments,
#: called outside the proxy's lock (so it may wait for other requests) and returning one of those
Fault = Callable[[str, str], "int | str | Callable[[], int | str | None] | None"]

_ERROR_CODES = {500: "InternalError", 501: "NotImplemented", 503: "SlowDown"}


class FaultProxy:
    """Forwards every request to ``upstream``; logs ``(method, path)`` of each and consults ``fault``.

    With ``like_r2`` it answers as Cloudflare R2 did to the flexible checksums boto3 sends by
    default since 1.36 (``x-amz-checksum-*`` headers, ``aws-chunked`` trailers): 501 NotImplemented.
    """

    def __init__(self, upstream: MotoS3) -> None:
        self.upstream = upstream
        self.like_r2 = False
        self.log: list[tuple[str, str]] = []
        self.forwarded: list[tuple[str, str]] = []
        self.fault: Fault | None = None
        self.released = threading.Event()
        self._lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:  # keep test output quiet
                pass

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                with proxy._lock:
                    proxy.log.append((self.command, self.path))
                    verdict = proxy.fault(self.command, self.path) if proxy.fault else None
                if callable(verdict):
                    verdict = verdict()
                if verdict is None and proxy.like_r2 and _r2_unsupported(self.headers):
                    verdict = 501
                    self.close_connection = True  # a chunked body may not have been read
                if verdict == "hang":
                    proxy.released.wait(120)
                if verdict in ("drop", "hang"):
                    self.close_connection = True
                    return
                if isinstance(verdict, int):
                    code = _ERROR_CODES.get(verdict, "InternalError")
                    payload = f"<Error><Code>{code}</Code><Message>injected</Message></Error>".encode()
                    self.send_response(verdict)
                    self.send_header("Content-Type", "application/xml")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                    return
                try:
                    conn = http.client.HTTPConnection("127.0.0.1", proxy.upstream.port, timeout=30)
                    headers = {k: v for k, v in self.headers.items() if k.lower() != "connection"}
                    conn.request(self.command, self.path, body=body, headers=headers)
                    resp = conn.getresponse()
                    data = resp.read()
                except OSError:  # upstream down: the client sees a dropped connection
                    self.close_connection = True
                    return
                with proxy._lock:
                    proxy.forwarded.append((self.command, self.path))
                self.send_response(resp.status)
                for key, value in resp.getheaders():
                    if key.lower() not in ("transfer-encoding", "connection", "content-length", "date", "server"):
                        self.send_header(key, value)
                length_header = resp.getheader("Content-Length")
                self.send_header(
                    "Content-Length", length_header if self.command == "HEAD" and length_header else str(len(data))
                )
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)
                conn.close()

            do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _handle

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def puts(self) -> list[str]:
        """Paths of the PUT requests of published objects that reached the server (whole objects and multipart
        parts; the upload lock's writes are not objects of the method)."""
        return [path for method, path in self.forwarded if method == "PUT" and ".checks-lock" not in path]

    def close(self) -> None:
        self.released.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()


def _r2_unsupported(headers) -> bool:
    names = {k.lower() for k in headers.keys()}
    chunked = "aws-chunked" in (headers.get("Content-Encoding") or "") + (headers.get("x-amz-content-sha256") or "")
    return chunked or any(n.startswith("x-amz-checksum-") or n == "x-amz-sdk-checksum-algorithm" for n in names)


def s3_client(endpoint: str):

    return boto3.client(
        "s3",
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id=FAKE_ENV["R2_ACCESS_KEY_ID"],
        aws_secret_access_key=FAKE_ENV["R2_SECRET_ACCESS_KEY"],
        config=Config(s3={"addressing_style": "path"}),
    )


@pytest.fixture
def moto_s3():
    server = MotoS3()
    server.start()

    urllib.request.urlopen(urllib.request.Request(f"{server.url}/moto-api/reset", method="POST")).read()
    yield server
    server.stop()


@pytest.fixture
def s3_proxy(moto_s3):
    proxy = FaultProxy(moto_s3)
    yield proxy
    proxy.close()


@pytest.fixture
def s3_env(moto_s3, s3_proxy, monkeypatch, tmp_path):
    """The bucket exists, CHECKS_S3_ENDPOINT_URL points at the proxy, fake R2 credentials are set."""
    s3_client(moto_s3.url).create_bucket(Bucket=BUCKET)
    monkeypatch.setenv("CHECKS_S3_ENDPOINT_URL", s3_proxy.url)
    monkeypatch.delenv("CHECKS_S3_MAX_ATTEMPTS", raising=False)  # botocore's 10 attempts, as users get
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-aws-credentials"))
    for name, value in FAKE_ENV.items():
        monkeypatch.setenv(name, value)
    return s3_client(moto_s3.url)


def remote_objects(client, prefix: str = "") -> dict[str, int]:
    out = {}
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=prefix):
        out.update({item["Key"]: item["Size"] for item in page.get("Contents", [])})
    return out


def make_method_cache(
    root: Path,
    method: str = METHOD,
    suite: str = SUITE,
    *,
    protocol: str | None = "8x1",
    raw_bytes: bytes = b"raw results",
    verified: bool = False,
) -> Path:
    """A small processed cache as ``checks run process`` lays it out; returns the method's directory."""

    meta = MethodMetadata(
        method=method,
        suite=suite,
        ag_key="TA-DUMMY",
        cache_type="r2",
        cache_kwargs={"bucket": BUCKET, "prefix": PREFIX},
        verified=verified,
        validation_protocol=protocol,
    )
    cache = MethodCache(root, suite, method)
    for d in (cache.results, cache.processed, cache.raw / f"{method}_c1_BAG_L1" / "363612" / "0_0"):
        d.mkdir(parents=True, exist_ok=True)
    cache.metadata_yaml.write_text(render_metadata_yaml(meta, protocol), encoding="utf-8")
    results = pa.table(
        {"dataset": ["airfoil_self_noise"], "fold": [0], "method": [f"{method}_c1_BAG_L1"], "metric_error": [0.25]}
    )
    pq.write_table(results, cache.results / "model_results.parquet")
    pq.write_table(results, cache.processed / "configs.parquet")
    cache.configs_hyperparameters.write_text(json.dumps({f"{method}_c1_BAG_L1": {"model_type": "TA-DUMMY"}}))
    # a result the safe reader reads (upload decodes every results.pkl it stages), carrying raw_bytes
    result = pickle.dumps({"framework": f"{method}_c1_BAG_L1", "payload": raw_bytes}, protocol=4)
    (cache.raw / f"{method}_c1_BAG_L1" / "363612" / "0_0" / "results.pkl").write_bytes(result)
    record_process(cache.path)
    return cache.path


def record_process(cache_dir: Path, log: Path | None = None) -> str:
    """What a passed ``checks run process`` leaves for upload (TA407): the manifest of the cache's files in
    its source record, and that manifest's digest in a decision record appended to ``log`` (default: the
    decision log of a command run in the cache root's parent, where the tests run upload)."""
    manifest = integrity.manifest_of(cache_dir)
    source = cache_dir / ".checks-source.json"
    record = json.loads(source.read_text()) if source.is_file() else {}
    source.write_text(json.dumps({**record, integrity.MANIFEST: manifest}, indent=2))
    digest = integrity.manifest_digest(manifest)
    log = log or cache_dir.parents[4] / ".checks" / "decisions.jsonl"
    records.append(
        log, {"action": "process", "outcome": "ran", "dry_run": False, "inputs": {integrity.DECISION_KEY: digest}}
    )
    return digest
