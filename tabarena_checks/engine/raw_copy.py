"""The raw copy of the cache: ``raw/<method>/<tid>/<repeat>_<fold>/results.pkl``, every file as the rules judged it.

Apart from the tables because it is kernel work (directories and files), done in threads while
the tables are built, and because its one promise is different: a copy holds only bytes whose
digest the rules judged.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

from checks import ActionFailed, progress
from checks.io import sha256
from tabarena_checks.cache.names import segment_problem
from tabarena_checks.metadata.model import MethodMetadata
from tabarena_checks.raw import reader

#: the raw copy is kernel work (directory and file creation, page cache): a thread per core, at most 8
COPY_THREADS = min(8, os.cpu_count() or 2)


@contextmanager
def copying_raw(index, inference, meta: MethodMetadata, raw_dir: Path) -> Iterator[dict[str, str]]:
    """Copy ``raw/<renamed config dir>/<tid>/<repeat>_<fold>/results.pkl`` for every readable result
    in background threads while the body runs; yields the manifest of the copies (path relative to
    the cache -> sha256), complete once the body returns.

    Each file is the run's own results.pkl, byte for byte, and only if its bytes still have the
    digest recorded when the rules' index decoded it: a file changed since is refused, never
    copied unjudged. The directory names come from the run's directory layout (the config
    directory renamed to the method, as processing renames frameworks) and integers, never from
    text inside a pickle. Creating thousands of directories and files is kernel work, so threads
    overlap it with each other and with the tables the body writes; each thread fills whole task
    directories, because threads creating entries in the same directory wait on its lock. The
    first failure (a full disk) drops the queued copies and is raised when the body ends.
    """
    rows = index.query("SELECT path, config_dir, tid, coalesce(repeat, 0), fold, sha256 FROM results ORDER BY path")
    by_task: dict[Path, list[tuple[str, str, str]]] = {}
    for path, config_dir, tid, rep, fold, digest in rows:
        task_dir = raw_dir / plain_segment(inference.renamed_framework(config_dir, meta.method)) / str(int(tid))
        by_task.setdefault(task_dir, []).append((path, f"{int(rep)}_{int(fold)}", digest))
    copied: dict[str, str] = {}

    def fill(task_dir: Path) -> None:
        task_dir.mkdir(parents=True, exist_ok=True)
        for path, split, digest in by_task[task_dir]:
            data = reader.read_raw(index.abspath(path))
            if sha256(data) != digest:
                raise ActionFailed(
                    f"{path} changed after the rules judged it (its sha256 differs from the one "
                    "recorded when it was decoded); nothing was published: run the command again "
                    "to judge the new content"
                )
            (task_dir / split).mkdir(exist_ok=True)
            write_new(task_dir / split / "results.pkl", data)
            copied[(task_dir / split / "results.pkl").relative_to(raw_dir.parent).as_posix()] = digest
            advance(1)

    with progress.bar("raw copy", len(rows), unit="results.pkl") as advance:
        pool = ThreadPoolExecutor(COPY_THREADS)
        try:
            done = pool.map(fill, list(by_task))
            yield copied
            list(done)
        except reader.RawFileError as exc:
            raise ActionFailed(f"{exc}; nothing was published: run the command again to judge it") from None
        finally:
            pool.shutdown(wait=True, cancel_futures=True)


def write_new(path: Path, data: bytes) -> None:
    """Create ``path`` holding ``data`` (it must not exist: the cache is built in a fresh directory)."""
    with open(path, "xb") as out:
        out.write(data)


def plain_segment(name: str) -> str:
    """``name`` when it can be one directory name of the cache; a path inside a name is refused, not followed."""
    problem = segment_problem(name)
    if problem:
        raise ActionFailed(f"cannot name a directory of the raw copy {name!r}: {problem}")
    return name
