"""The TabArena publishing flow end to end, on a generated run and a throwaway local S3 server.

``python -m tabarena_checks.demo [--workdir DIR]`` generates a run, inspects it, shows a
process blocked by a wrong declaration, processes it (each step also writes its HTML run report), plans the upload, uploads it to moto's
S3 server on 127.0.0.1, verifies the bucket against the plan and reruns the upload (nothing is
sent twice), then publishes the sample's methods through a plan (``checks tabarena publish``: the
method already published is skipped, a second generated one processed and uploaded). Every step goes through the real ``checks`` command line, so the verdicts printed
are the ones a user sees. The server is stopped before the demo returns.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

from checks import io
from checks import main as checks_main
from tabarena_checks.publish import s3store
from tabarena_checks.synth.generate import generate_run
from tabarena_checks.testing.commands import process_args

#: a declaration the generated run of METHOD matches
DECLARATION = """{var} = MethodMetadata.config(
    method="{method}",
    suite="{suite}",
    ag_key="TA-{key}",
    is_bag=True,
    config_default="{method}_c1_default_BAG_L1",
    validation_protocol="8x1",
    cache_kwargs={{"bucket": "tabarena", "prefix": "cache"}},
    verified=False,
)
"""
INFO = (
    "from tabarena.models._method_metadata import MethodMetadata\n\n"
    + DECLARATION.format(var="demo_method_metadata", method="DemoGBM", suite="demogbm-2026-11", key="DEMOGBM")
    + DECLARATION.format(var="demo_rf_metadata", method="DemoRF", suite="demorf-2026-11", key="DEMORF")
    + """demo_wrong_metadata = MethodMetadata.config(
    method="DemoGBM",
    suite="demogbm-2026-11",
    ag_key="TA-SOMETHING-ELSE",
    is_bag=False,
    validation_protocol="8x1",
)
"""
)
BUCKET = "tabarena"
#: the batch of step 9: the method published by hand above (its steps are skipped) and a second one
PLAN = """cache_root = "cache"
steps = ["process", "upload"]

[[methods]]
data = "run/data"
method_metadata = "info.py:demo_method_metadata"

[[methods]]
data = "run-rf/data"
method_metadata = "info.py:demo_rf_metadata"
"""
DEMO_ENV = {
    "R2_ACCOUNT_ID": "demo-account",
    "R2_ACCESS_KEY_ID": "demo-key-id",
    "R2_SECRET_ACCESS_KEY": "demo-secret-not-real",
}


def step(title: str) -> None:
    print(f"\n=== {title} ===", flush=True)


def checks(args: Sequence[str], expect: int) -> int:
    """Run ``checks ARGS`` in-process and stop the demo when it does not exit with ``expect``."""
    print("$ checks " + " ".join(args), flush=True)
    code = checks_main(list(args))
    sys.stdout.flush()
    if code != expect:
        raise SystemExit(
            f"demo: expected exit {expect} from `checks {args[0]} {args[1] if len(args) > 1 else ''}`, got {code}"
        )
    return code


@contextlib.contextmanager
def local_s3() -> Iterator[str]:
    """moto's S3 server on 127.0.0.1 (a free port), with the bucket created; stopped on exit."""
    try:
        from moto.server import ThreadedMotoServer
    except ImportError:
        raise SystemExit("demo: the local S3 server needs moto[server] (pip install 'moto[server]')") from None

    import boto3

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # no request log in the demo's output
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        url = f"http://{host}:{port}"
        boto3.client(
            "s3", endpoint_url=url, region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x"
        ).create_bucket(Bucket=BUCKET)
        yield url
    finally:
        server.stop()
        server._server.server_close()  # stop() alone leaves the listening socket open


def _generate(out: Path, method: str) -> Path:
    """A generated run of ``method`` (2 configs x 3 tasks x 3 folds, 8-fold bagged); its data directory."""
    return generate_run(
        out,
        configs=2,
        folds=3,
        tasks=(363612, 363614, 363619),
        method=method,
        name_prefix=f"TA-{method}",
        ag_key=f"TA-{method.upper()}",
        bag_children=8,
        validation_protocol="8x1",
        array_scale=0.1,
    )


def run_demo(workdir: Path) -> None:

    started = time.perf_counter()
    workdir.mkdir(parents=True, exist_ok=True)
    os.chdir(workdir)  # decision records go to <workdir>/.checks/decisions.jsonl
    cache = workdir / "cache"
    (workdir / "info.py").write_text(INFO, encoding="utf-8")
    ref = f"{workdir / 'info.py'}:demo_method_metadata"

    step("1. generate a run: 2 configs x 3 tasks x 3 folds, 8-fold bagged")
    data = _generate(workdir / "run", "DemoGBM")
    print(f"raw results under {data}: {len(list(data.rglob('results.pkl')))} results.pkl")

    step("2. inspect the raw results against the declared metadata")
    checks(["inspect", str(data), "--method-metadata", ref, "--html", str(workdir / "inspect.html")], expect=0)

    step("3. process with a wrong declaration: blocked, nothing written")
    checks(
        process_args(
            data, f"{workdir / 'info.py'}:demo_wrong_metadata", cache, "--html", str(workdir / "blocked.html")
        ),
        expect=1,
    )
    print(f"cache written: {cache.exists()}")

    step("4. process: every rule passes, the cache is built atomically")
    checks(
        process_args(data, ref, cache, "--html", str(workdir / "report.html")),
        expect=0,
    )

    upload = ["run", "upload", "--method-metadata", ref, "--cache-root", str(cache)]
    step("5. upload, dry run (the default): parts checked, objects and destination listed")
    checks(upload, expect=0)

    with local_s3() as endpoint, io.environment({**DEMO_ENV, "CHECKS_S3_ENDPOINT_URL": endpoint}):
        step(f"6. upload for real to a local S3 server at {endpoint} (metadata.yaml last, then verified)")
        checks([*upload, "--no-dry-run"], expect=0)

        step("7. rerun the upload: content already in place is skipped")
        checks([*upload, "--no-dry-run"], expect=0)

        step("8. the bucket, listed independently")

        listed = s3store.list_prefix(s3store.make_client(), BUCKET, "cache/")
        for key, obj in sorted(listed.items()):
            print(f"  r2://{BUCKET}/{key}  {obj.size} bytes  etag {obj.etag}")

        step("9. publish the sample run's methods through a plan: what is done is skipped, the rest run in order")
        _generate(workdir / "run-rf", "DemoRF")
        (workdir / "plan.toml").write_text(PLAN, encoding="utf-8")
        checks(["tabarena", "publish", "plan.toml", "--no-dry-run"], expect=0)
    print(
        f"\nHTML run reports: {workdir / 'report.html'} (process), {workdir / 'blocked.html'} (blocked), "
        f"{workdir / 'inspect.html'} (inspect)"
    )
    print(f"\ndemo finished in {time.perf_counter() - started:.1f}s; files kept in {workdir}; local S3 server stopped")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tabarena_checks.demo", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--workdir",
        type=Path,
        default=None,
        help="Where to write the run, the cache and the decision log (default: a new temp dir).",
    )
    args = parser.parse_args(argv)
    workdir = (args.workdir or Path(tempfile.mkdtemp(prefix="checks-demo-"))).resolve()
    cwd = os.getcwd()
    try:
        run_demo(workdir)
    finally:
        os.chdir(cwd)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
