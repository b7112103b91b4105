"""Publishing throughput of ``checks run upload`` against a plain boto3 ``upload_file`` loop, on a local moto server.

A method cache of about ``--mib`` MiB (mostly raw results, incompressible) is staged once
(zips, checksums, metadata.yaml); both sides then upload exactly those files to moto's S3
server on 127.0.0.1: the uploader (multipart with 16 MiB parts, two objects at once,
metadata.yaml last) and a sequential ``client.upload_file`` loop with boto3's transfer defaults,
through a client R2 accepts (no flexible checksums, like the uploader's). The same loop with
boto3's client defaults (CRC32 trailers, which R2 refuses) is printed too.
Verification (list + HEAD + ETag compare) and the no-op rerun are timed separately. Target:
the uploader at least as fast as the loop.

    .venv/bin/python benchmarks/upload.py [--mib 1024]
"""

from __future__ import annotations

import sys

# benchmarks/ holds inspect.py, which would shadow the standard library's inspect for this script
sys.path[:] = [p for p in sys.path if p not in ("", __file__.rsplit("/", 1)[0])]

import argparse  # noqa: E402
import logging  # noqa: E402
import os  # noqa: E402
import pickle  # noqa: E402
import shutil  # noqa: E402
import statistics  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from functools import partial  # noqa: E402
from pathlib import Path  # noqa: E402

MIB = 1024 * 1024
RAW_FILE = 4 * MIB
METHOD, SUITE, BUCKET = "Bench", "bench-upload", "tabarena"


def build_cache(root: Path, mib: int) -> None:
    import json

    import pyarrow as pa
    import pyarrow.parquet as pq

    from tabarena_checks.cache import integrity
    from tabarena_checks.cache.layout import MethodCache, render_metadata_yaml
    from tabarena_checks.metadata.model import MethodMetadata

    cache = MethodCache(root, SUITE, METHOD)
    meta = MethodMetadata(
        method=METHOD,
        suite=SUITE,
        ag_key="TA-BENCH",
        verified=False,
        cache_kwargs={"bucket": BUCKET, "prefix": "cache"},
        validation_protocol="8x1",
    )
    split = cache.processed / "model_predictions" / "d" / "0"  # <dataset>/<split>/, as the engines write it
    for d in (cache.results, split):
        d.mkdir(parents=True, exist_ok=True)
    cache.metadata_yaml.write_text(render_metadata_yaml(meta, "8x1"))
    table = pa.table({"dataset": ["d"] * 1000, "fold": list(range(1000)), "metric_error": [0.1] * 1000})
    pq.write_table(table, cache.results / "model_results.parquet")
    pq.write_table(table, cache.processed / "configs.parquet")
    cache.configs_hyperparameters.write_text(json.dumps({"Bench_c1_BAG_L1": {"model_type": "TA-BENCH"}}))
    predictions = max(1, mib // 10)
    (split / "pred-test.dat").write_bytes(os.urandom(predictions * MIB))
    for i in range(max(1, (mib - predictions) * MIB // RAW_FILE)):
        path = cache.raw / f"Bench_c{i}_BAG_L1" / "363612" / "0_0" / "results.pkl"
        path.parent.mkdir(parents=True)
        # a result the safe reader reads (staging decodes every results.pkl), its payload incompressible
        result = {"framework": f"Bench_c{i}_BAG_L1", "payload": os.urandom(RAW_FILE)}
        path.write_bytes(pickle.dumps(result, protocol=4))
    # what a passed `checks run process` leaves: the digests of the cache's files, which staging checks
    (cache.path / ".checks-source.json").write_text(json.dumps({integrity.MANIFEST: integrity.manifest_of(cache.path)}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mib", type=int, default=1024, help="Approximate size of the cache to publish.")
    parser.add_argument("--rounds", type=int, default=3, help="Uploads per side (medians are compared).")
    args = parser.parse_args()
    from moto.server import ThreadedMotoServer

    import boto3
    from botocore.config import Config

    from tabarena_checks.facts.upload import UploadFacts
    from tabarena_checks.publish import s3store
    from tabarena_checks.publish.upload import UploadOptions, stage

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    work = Path(tempfile.mkdtemp(prefix="bench-upload-"))
    build_cache(work / "cache", args.mib)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        endpoint = f"http://{host}:{port}"
        os.environ.update(
            {
                "CHECKS_S3_ENDPOINT_URL": endpoint,
                "R2_ACCOUNT_ID": "bench",
                "R2_ACCESS_KEY_ID": "bench-key",
                "R2_SECRET_ACCESS_KEY": "bench-secret",
            }
        )
        bench_client = partial(
            boto3.client,
            "s3",
            endpoint_url=endpoint,
            region_name="us-east-1",
            aws_access_key_id="bench-key",
            aws_secret_access_key="bench-secret",
        )
        defaults = bench_client()
        defaults.create_bucket(Bucket=BUCKET)
        # the same loop through a client R2 accepts: boto3's defaults send CRC32 trailers R2 refuses
        plain = bench_client(
            config=Config(request_checksum_calculation="when_required", response_checksum_validation="when_required"),
        )
        facts = UploadFacts.gather(UploadOptions(from_cache=(METHOD, SUITE), cache_root=str(work / "cache")))
        start = time.perf_counter()
        objects = stage(facts, work)
        staged = time.perf_counter() - start
        total = sum(o.size for o in objects)
        print(f"staged {len(objects)} objects, {total / MIB:.0f} MiB, in {staged:.1f}s (zips, checksums, metadata)")

        def ours(prefix: str) -> tuple[float, s3store.Publisher]:
            keyed = [s3store.Planned(o.key.replace(facts.key_root, prefix), o.path, o.size) for o in objects]
            publisher = s3store.Publisher(s3store.make_client(), BUCKET, prefix)
            begin = time.perf_counter()
            report = publisher.publish(keyed, last=keyed[-1].key)
            took = time.perf_counter() - begin
            assert len(report.sent) == len(keyed), report
            return took, publisher, keyed

        def loop(client, prefix: str) -> float:
            begin = time.perf_counter()
            for o in objects:
                client.upload_file(str(o.path), BUCKET, o.key.replace(facts.key_root, prefix))
            return time.perf_counter() - begin

        mine_runs, loop_runs, default_runs = [], [], []
        for n in range(args.rounds):  # alternate the order so no side always meets a fuller server
            if n % 2 == 0:
                loop_runs.append(loop(plain, f"loop{n}"))
                default_runs.append(loop(defaults, f"defaults{n}"))
            took, publisher, keyed = ours(f"run{n}")
            mine_runs.append(took)
            if n % 2 == 1:
                default_runs.append(loop(defaults, f"defaults{n}"))
                loop_runs.append(loop(plain, f"loop{n}"))
        begin = time.perf_counter()
        verification = publisher.verify(keyed)
        verify = time.perf_counter() - begin
        assert verification.ok, verification
        fresh = [s3store.Planned(o.key, o.path, o.size) for o in keyed]  # no digests cached: the rerun hashes
        begin = time.perf_counter()
        again = publisher.publish(fresh, last=fresh[-1].key)
        rerun = time.perf_counter() - begin
        assert not again.sent
        mb = total / 1e6
        mine, base, default = (statistics.median(r) for r in (mine_runs, loop_runs, default_runs))
        print(f"checks upload:          {', '.join(f'{t:.2f}s' for t in mine_runs)} -> median {mb / mine:.0f} MB/s")
        print(
            f"boto3 upload_file loop: {', '.join(f'{t:.2f}s' for t in loop_runs)} -> median {mb / base:.0f} MB/s "
            "(a client R2 accepts, as checks uses)"
        )
        print(
            f"  with boto3's defaults: {', '.join(f'{t:.2f}s' for t in default_runs)} -> median {mb / default:.0f} MB/s "
            "(CRC32 trailers: refused by R2)"
        )
        print(
            f"ratio: checks upload is {base / mine:.2f}x the loop's throughput (medians; target >= 1); "
            f"{default / mine:.2f}x the defaults loop's"
        )
        print(f"verify (list + HEAD + local ETags of {len(keyed)} objects): {verify:.2f}s")
        print(f"rerun with everything in place (hashes every file, sends nothing): {rerun:.2f}s")
    finally:
        server.stop()
        server._server.server_close()
        shutil.rmtree(work, ignore_errors=True)  # a few GiB of staged and generated files


if __name__ == "__main__":
    main()
