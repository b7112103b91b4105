"""``checks run upload``: publish a processed method's cache to R2, and ``checks run unpublish`` to take it down.

Upload plans by default (like TabArena's ``run_upload_results.py``): it checks every part
locally, lists each object with its size and destination, and prints the exact command
for the real upload. ``--no-dry-run`` uploads with metadata.yaml last, skips objects whose
content is already in place, and compares the store with the plan afterwards.
"""

from __future__ import annotations

import collections
import hashlib
import json
import shlex
import sys
import zipfile
import zlib
from collections.abc import Iterator, Mapping
from pathlib import Path

import attrs
import click

from checks import Action, ActionFailed, io, progress
from checks.options import option
from tabarena_checks.cache import published
from tabarena_checks.cache.layout import MethodCache, render_metadata_yaml
from tabarena_checks.facts.constants import missing_credentials
from tabarena_checks.facts.sources import info_sources
from tabarena_checks.facts.upload import UnpublishFacts, UploadFacts
from tabarena_checks.metadata import load as metadata_load
from tabarena_checks.publish import s3lock, s3store

#: fixed timestamp for zip entries, so an unchanged directory zips to the same bytes
ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)
CHECKSUMS = "results_checksums.json"
#: the zips of the last real upload, reused by a rerun while their inputs are unchanged (never uploaded)
STAGING = ".checks-staging"


def write_zip(src: Path, dest: Path, expected: Mapping[str, str] | None = None) -> None:
    """A deterministic deflate zip of ``src`` (sorted entries relative to it, fixed times and modes).

    With ``expected`` (the cache manifest: path relative to the cache -> sha256) every file's bytes
    are checked as they are zipped, so the zip holds exactly what process wrote, or it is refused;
    :func:`zip_problem` then reads the result back before it may be published.
    """
    files = sorted((p for p in src.rglob("*") if p.is_file()), key=lambda p: p.relative_to(src).as_posix())
    size = sum(p.stat().st_size for p in files)
    with zipfile.ZipFile(dest, "w") as zf, progress.bar(f"zip {src.name}", size, unit="bytes") as advance:
        for path in files:
            rel = path.relative_to(src).as_posix()
            data = path.read_bytes()
            if expected is not None:
                _check_digest(f"{src.name}/{rel}", data, expected)
            info = zipfile.ZipInfo(rel, date_time=ZIP_EPOCH)
            info.external_attr = 0o644 << 16
            io.write_zip_entry(zf, info, data, compress_type=zipfile.ZIP_DEFLATED, compresslevel=1)
            advance(len(data))
    if expected is not None:
        _complete(src.name, {f"{src.name}/{p.relative_to(src).as_posix()}" for p in files}, expected)


def _check(rel: str, data: bytes, expected: Mapping[str, str]) -> None:
    """Refuse ``data`` as the cache file ``rel`` unless the manifest lists it with that digest and it is a file of
    the published layout, of the kind its name says (:func:`tabarena_checks.cache.published.problem`)."""
    _check_digest(rel, data, expected)
    _refuse(published.problem(rel, data))


def _refuse(problem: str) -> None:
    """Stop the upload before any request when staging found a ``problem`` with a file it would publish."""
    if problem:
        raise ActionFailed(
            f"{problem}: refused at staging, so nothing was uploaded; replace the file, then process the "
            "method again with --force"
        )


def _check_digest(rel: str, data: bytes, expected: Mapping[str, str]) -> None:
    """Refuse ``data`` as the cache file ``rel`` unless the manifest lists it with that digest."""
    if rel not in expected:
        raise ActionFailed(
            f"{rel} was not written by process (added to the cache afterwards); nothing was "
            "uploaded: remove it, or process the method again with --force"
        )
    if io.sha256(data) != expected[rel]:
        raise ActionFailed(
            f"{rel} changed since process wrote it (sha256 differs); nothing was uploaded: "
            "process the method again with --force"
        )


def _complete(part: str, staged: set[str], expected: Mapping[str, str]) -> None:
    missing = sorted(rel for rel in expected if rel.startswith(f"{part}/") and rel not in staged)
    if missing:
        raise ActionFailed(
            f"{len(missing)} file(s) process wrote are missing from the cache ({', '.join(missing[:5])}); "
            "nothing was uploaded: process the method again with --force"
        )


def zip_problem(path: Path, src: Path, expected: Mapping[str, str]) -> str:
    """Why the zip at ``path`` is not exactly the files of ``src`` (a part of the cache) the manifest lists, or "".

    Read entry by entry through ``infolist()``, as a loader iterating the archive sees it: each name
    once, none the manifest lacks, none missing, no comment, and each entry's bytes those of the
    manifest, of a file the published layout holds (a results.pkl the strict reader reads). Names
    compared as a set and read back with ``read(name)`` would pass a zip holding a second entry under
    a real name, since ``read(name)`` returns only the last.
    """
    part = src.name
    want = {rel.removeprefix(f"{part}/"): digest for rel, digest in expected.items() if rel.startswith(f"{part}/")}
    try:
        with zipfile.ZipFile(path) as zf:
            infos = zf.infolist()
            names = collections.Counter(info.filename for info in infos)
            twice = sorted(name for name, n in names.items() if n > 1)
            if twice:
                return f"{part}.zip!{twice[0]}: a second entry under that name"
            odd = [info.orig_filename for info in infos if info.filename != info.orig_filename]
            if odd:
                return f"{part}.zip!{odd[0]!r}: a name zipfile reads as another"
            if zf.comment:
                return f"{part}.zip carries a comment"
            for info in infos:
                problem = _entry_problem(zf, info, src, want)
                if problem:
                    return problem
    except (OSError, EOFError, ValueError, zipfile.BadZipFile, zlib.error) as exc:
        return f"{part}.zip cannot be read ({type(exc).__name__}: {exc})"
    missing = sorted(set(want) - set(names))
    return f"{part}.zip lacks {', '.join(missing[:5])}" if missing else ""


def _inputs_of(src: Path) -> list[list]:
    return [
        [p.relative_to(src).as_posix(), p.stat().st_size, p.stat().st_mtime_ns]
        for p in sorted(src.rglob("*"))
        if p.is_file()
    ]


def staged_zip(src: Path, staging: Path, scratch: Path, *, keep: bool, expected: Mapping[str, str]) -> Path:
    """``<name>.zip`` of ``src``: reused from ``staging`` when its recorded inputs are unchanged.

    Zipping a large raw/ takes longer than checking that nothing needs uploading, so a rerun
    (the way an interrupted upload resumes) should not redo it. Staging lives in the cache, so a
    zip found there is evidence of nothing: it is reused only when :func:`zip_problem` finds it is
    exactly the checked files, and built again otherwise (saying why); a zip built now is read back
    the same way before it may be published. With ``keep`` a new zip is stored in ``staging`` for
    the next run; without (a dry run), it is built in ``scratch``.
    """
    name = f"{src.name}.zip"
    inputs = _inputs_of(src)
    stored, manifest = staging / name, staging / f"{name}.inputs.json"
    if stored.is_file():
        why = _reuse_problem(stored, manifest, inputs, src, expected)
        if not why:
            return stored
        click.echo(f"note: the staged {name} is built again: {why}", err=True)
    if not keep:
        _write_verified(src, scratch / name, expected)
        return scratch / name
    staging.mkdir(exist_ok=True)
    io.sweep_siblings(stored)  # what an interrupted upload left half-written
    with io.replacing(stored) as tmp:
        _write_verified(src, tmp, expected)
    io.write_text(manifest, json.dumps(inputs))
    return stored


def _entry_problem(zf: zipfile.ZipFile, info: zipfile.ZipInfo, src: Path, want: Mapping[str, str]) -> str:
    """Why one entry of a zip of ``src`` is not the file of ``src`` the manifest lists under its name, or ""."""
    part, name = src.name, info.filename
    if name not in want:
        return f"{part}.zip!{name}: not a file of {part}/ that process wrote"
    if info.file_size != (src / name).stat().st_size:  # checked before the entry is inflated: no zip bomb
        return f"{part}.zip!{name}: not the size of {part}/{name}"
    data = zf.read(info)
    if io.sha256(data) != want[name]:
        return f"{part}.zip!{name}: not the bytes process wrote"
    return published.problem(f"{part}/{name}", data)


def _reuse_problem(stored: Path, manifest: Path, inputs: list, src: Path, expected: Mapping[str, str]) -> str:
    """Why the staged zip ``stored`` cannot be published as it is ("" when it can)."""
    try:
        if json.loads(manifest.read_text(encoding="utf-8")) != inputs:
            return "the cache's files changed since it was staged"
    except (OSError, ValueError):
        return "its record of inputs cannot be read"
    return zip_problem(stored, src, expected)


def _write_verified(src: Path, dest: Path, expected: Mapping[str, str]) -> None:
    """:func:`write_zip` of ``src`` into ``dest``, then the zip read back entry by entry (:func:`zip_problem`)."""
    write_zip(src, dest, expected)
    _refuse(zip_problem(dest, src, expected))


def staged_copy(cache_dir: Path, rel: str, workdir: Path, expected: Mapping[str, str]) -> Path:
    """A copy of the cache file ``rel`` in ``workdir``, checked against the manifest; the copy is what is sent."""
    data = (cache_dir / rel).read_bytes()
    _check(rel, data, expected)
    dest = workdir / "files" / rel
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_bytes(data)
    return dest


def _md5(path: Path) -> str:
    digest = hashlib.md5()
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


@attrs.frozen
class UploadOptions:
    """``checks run upload``'s options, declared once: ``checks run`` makes its parameters from these fields."""

    method_metadata: str | None = option(
        help="info.py:VARIABLE or package.module:VARIABLE of the method to publish.",
        default=None,
        metavar="REF",
        callback=metadata_load.checked_reference,
    )
    #: ``(METHOD, SUITE)``
    from_cache: tuple[str, str] | None = option(
        help="Publish the cached method's metadata.yaml instead of an info.py.", nargs=2, metavar="METHOD SUITE"
    )
    no_upload_raw: bool = option(help="Leave raw/ (raw.zip) out.", flag=True)
    cache_root: str | None = option(
        help="Cache root (default: $TABARENA_CACHE, else ~/.cache/tabarena).",
        default=None,
        type=click.Path(file_okay=False),
    )
    verified: bool = option(help="Allow publishing metadata with verified=True.", flag=True)
    expect_validation_protocol: str | None = option(
        help="Refuse unless the declared protocol is this one (e.g. tabarena or 8x1).", default=None, metavar="KEY"
    )


@attrs.frozen
class UnpublishOptions:
    """``checks run unpublish``'s options, declared once: ``checks run`` makes its parameters from these fields."""

    method: str = option(help="Method name.")
    suite: str = option(help="Suite (artifact) name.")
    yes: bool = option(help="Delete without asking.", flag=True)
    bucket: str | None = option(help="Bucket (default: cache_kwargs of the local metadata.yaml).", default=None)
    prefix: str | None = option(help="Key prefix (default: cache_kwargs of the local metadata.yaml).", default=None)
    cache_root: str | None = option(
        help="Cache root holding the method's metadata.yaml.", default=None, type=click.Path(file_okay=False)
    )


def stage(facts: UploadFacts, workdir: Path, *, keep: bool = False) -> list[s3store.Planned]:
    """The objects ``facts`` publish, small generated files written to ``workdir``; metadata.yaml comes last.

    Every file taken from the cache is checked against the manifest process wrote (TA407 judged
    the same before): the objects are copies made while checking, never the cache files
    themselves. The zips are kept in the cache's ``.checks-staging/`` when ``keep`` (a real
    upload), so a rerun reuses them; a dry run reuses fresh ones but stores nothing.
    """
    c, root = facts.cache, facts.key_root
    expected = facts.manifest
    if expected is None:
        raise ActionFailed(
            f"{c.source_record} lists no digests of the cache's files; nothing was uploaded: "
            "process the method again with --force"
        )
    staging = c.path / STAGING
    files: list[tuple[str, Path]] = []
    tables = sorted(c.results.glob("*.parquet"))
    files += [(f"results/{t.name}", staged_copy(c.path, f"results/{t.name}", workdir, expected)) for t in tables]
    checksums = {f"{c.rel}/results/{t.name}": _md5(path) for (_, path), t in zip(files, tables)}
    (workdir / CHECKSUMS).write_text(json.dumps(checksums, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    files.append((CHECKSUMS, workdir / CHECKSUMS))
    if c.processed.is_dir():
        files.append(("processed.zip", staged_zip(c.processed, staging, workdir, keep=keep, expected=expected)))
        rel = c.configs_hyperparameters.relative_to(c.path).as_posix()
        files.append(("processed/configs_hyperparameters.json", staged_copy(c.path, rel, workdir, expected)))
    if facts.upload_raw:
        files.append(("raw.zip", staged_zip(c.raw, staging, workdir, keep=keep, expected=expected)))
    _check("metadata.yaml", c.metadata_yaml.read_bytes(), expected)  # what --from-cache and the protocol read
    protocol = facts.recorded.validation_protocol if facts.recorded else facts.metadata.validation_protocol
    (workdir / "metadata.yaml").write_text(render_metadata_yaml(facts.metadata, protocol), encoding="utf-8")
    files.append(("metadata.yaml", workdir / "metadata.yaml"))
    return [s3store.Planned(f"{root}/{name}", path, path.stat().st_size) for name, path in files]


def real_command(ctx) -> str:
    """The command that uploads for real: the one given, with ``--no-dry-run``; placeholders for unset credentials."""
    env = [f"{name}=<{name.lower()}>" for name in missing_credentials()]
    if not ctx.command_line:  # run in-process: there is no command line to repeat
        return " ".join([*env, "the same command with --no-dry-run"])
    args = [*ctx.command_line, *([] if "--no-dry-run" in ctx.command_line else ["--no-dry-run"])]
    return " ".join([*env, "checks", *map(shlex.quote, args)])


def _plan_lines(facts: UploadFacts, ctx) -> Iterator[str]:
    with io.scratch_dir("checks-upload-") as tmp:
        objects = stage(facts, tmp)
        yield f"'{facts.metadata.method}' (suite={facts.cache.suite}) verified OK; would upload to {facts.destination}"
        for obj in objects:
            yield f"  {obj.key}  {obj.size} bytes"
        yield f"{len(objects)} object(s), {sum(o.size for o in objects)} bytes; metadata.yaml goes last"
    yield f"to upload for real: {real_command(ctx)}"


def _execute(ctx) -> str:
    facts: UploadFacts = ctx.facts
    lines: list[str] = []
    with io.scratch_dir("checks-upload-") as tmp:
        objects = stage(facts, tmp, keep=True)
        client = s3store.make_client()

        def log(line: str) -> None:
            click.echo(line, err=True)

        publisher = s3store.Publisher(client, facts.bucket, facts.key_root, log=log)
        with s3lock.holding(client, facts.bucket, facts.key_root, log=log) as lock:
            report = publisher.publish(objects, last=objects[-1].key, lock=lock)
            verification = publisher.verify(objects)
    lines.append(
        f"uploaded {len(report.sent)} object(s), skipped {len(report.skipped)} already in place, to {facts.destination}"
    )
    if report.aborted_multipart:
        lines.append(f"aborted {report.aborted_multipart} unfinished multipart upload(s) from an earlier run")
    if report.withdrawn_metadata:
        lines.append("metadata.yaml was withdrawn while parts changed, then uploaded last")
    lines.append(
        f"verify: {verification.checked} planned object(s) listed and HEAD-checked; "
        f"{len(verification.missing)} missing, {len(verification.mismatched)} size/ETag mismatch"
    )
    if verification.extra:
        lines.append(
            f"note: {len(verification.extra)} object(s) under the prefix are not in the plan: "
            + ", ".join(verification.extra)
        )
    if not verification.ok:
        raise ActionFailed(
            "\n".join(
                [
                    *lines,
                    "the store does not match the plan: "
                    + ", ".join((*verification.missing, *verification.mismatched))
                    + "; re-run the same command to repair",
                ]
            )
        )
    return "\n".join(lines)


def _plan(ctx) -> Iterator[str]:
    yield from _plan_lines(ctx.facts, ctx)


def cache_inputs(c: MethodCache) -> dict[str, str]:
    """The digests an upload's decision record keeps of the cache; a batch compares them to skip a done upload."""
    paths = [c.metadata_yaml, c.source_record, *sorted(c.results.glob("*.parquet"))]
    return {str(p.relative_to(c.path)): io.file_sha256(p) for p in paths if p.is_file()}


def _inputs(ctx) -> dict[str, str]:
    return cache_inputs(ctx.facts.cache)


def _list_keys(bucket: str, prefix: str) -> list[str]:
    """The keys under ``prefix`` in the store (credentials from the environment)."""
    return s3store.list_prefix(s3store.make_client(), bucket, prefix)


def _unpublish(ctx) -> str:
    facts: UnpublishFacts = ctx.facts
    keys = facts.remote_keys
    where = facts.destination
    if not ctx.options.yes:
        if not sys.stdin.isatty():
            raise ActionFailed(
                f"refusing to delete {len(keys)} object(s) under {where} without confirmation: pass --yes"
            )
        click.confirm(f"Delete {len(keys)} object(s) under {where}?", abort=True)
    publisher = s3store.Publisher(s3store.make_client(), facts.bucket, facts.key_root)
    with s3lock.holding(publisher.client, facts.bucket, facts.key_root) as lock:
        removed = publisher.remove(first=f"{facts.key_root}/metadata.yaml", lock=lock)
    left = s3store.list_prefix(publisher.client, facts.bucket, facts.key_root + "/")
    if left:
        raise ActionFailed(f"{len(left)} object(s) remain under {where} after deleting: re-run to retry")
    return f"removed {len(removed)} object(s) under {where} (metadata.yaml first); nothing remains there"


def _unpublish_plan(ctx) -> Iterator[str]:
    facts: UnpublishFacts = ctx.facts
    yield f"would delete under {facts.destination} (metadata.yaml first):"
    for key in facts.remote_keys:
        yield f"  {key}"


UPLOAD = Action(
    name="upload",
    help="Publish a processed method to R2 (plans by default; --no-dry-run uploads). "
    "Credentials come from R2_ACCOUNT_ID, R2_ACCESS_KEY_ID and R2_SECRET_ACCESS_KEY.",
    gather=lambda ctx: UploadFacts.gather(ctx.options, real=not ctx.dry_run),
    plan=_plan,
    execute=_execute,
    target=lambda ctx: f"{ctx.facts.metadata.method}@{ctx.facts.cache.suite}",
    inputs=_inputs,
    sources=info_sources,
    arena="tabarena",
    requires=("boto3",),
    plans_by_default=True,
    options=UploadOptions,
)

UNPUBLISH = Action(
    name="unpublish",
    help="Delete a published method's objects from R2 (metadata.yaml first). Asks for confirmation unless --yes.",
    gather=lambda ctx: UnpublishFacts.gather(ctx.options, _list_keys),
    plan=_unpublish_plan,
    execute=_unpublish,
    target=lambda ctx: f"{ctx.options.method}@{ctx.options.suite}",
    arena="tabarena",
    requires=("boto3",),
    options=UnpublishOptions,
)

ACTIONS = [UPLOAD, UNPUBLISH]
