"""Reading and writing files that may come from anyone: bounded reads, strict YAML, atomic writes.

Every package reads untrusted files (info.py, rules.toml, YAML drafts, ledgers, a cache
anyone may have edited) and writes files a killed run must not leave half-written. Doing
both here gives one set of limits and one wording of each error, which always names the
file: :class:`ReadError` (an :class:`~checks.errors.InputError`) carries ``path``,
``reason`` and, for YAML, ``line``, so a caller can add its own context or turn it into a
finding at that place.

Writing: a file is written to a temporary sibling, flushed and ``os.replace``-d over the
target; a directory is built in a temporary sibling named after the writing process
(``.<name>.checks-tmp-<pid>``) and swapped in, the one replaced first moved aside
(``.<name>.checks-old-<pid>``). :func:`sweep_siblings` clears what a killed run left, puts
back a directory moved aside when the target is missing, and leaves a running one's alone.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import signal
import stat
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from checks import jsonread, suggest
from checks.errors import InputError, UsageError
from checks.jsonread import JsonDoc
from checks.jsonread import pointer as pointer  # re-exported: a plugin reads JSON through checks.io alone

# --------------------------------------------------------------------------- bounded reads

#: the default cap of :func:`read_bytes` and :func:`read_text`; callers pass their own for their format
MAX_BYTES = 2 * 1024 * 1024


class ReadError(InputError):
    """A file that cannot be read as asked: missing, unreadable, too large, not UTF-8, or refused YAML.

    ``path`` is the file (or the description of where the text came from, possibly empty),
    ``reason`` the message without it, ``line`` the 1-based line when known, and ``missing``
    whether the file does not exist, so a caller can say how to create it.
    """

    def __init__(
        self,
        path: str | os.PathLike | None,
        reason: str,
        *,
        line: int | None = None,
        missing: bool = False,
        col: int | None = None,
    ) -> None:
        self.path = str(path) if path is not None else ""
        self.reason = reason
        self.line = line
        #: the 1-based column when known (a YAML syntax error's)
        self.col = col
        self.missing = missing
        where = f"{self.path}, line {line}" if self.path and line else self.path or (f"line {line}" if line else "")
        super().__init__(f"{where}: {reason}" if where else reason)


class YamlError(ReadError):
    """YAML text this project refuses: malformed, an alias, a duplicate key, too deep or too large."""


def closest_path(path: str | os.PathLike) -> str | None:
    """The existing path nearest a mistyped one, part by part (``modles/nori/info.py`` -> ``models/nori/info.py``),
    for a missing input's did-you-mean; None when a part has no close name or the result does not exist."""
    given = Path(path)
    here = Path(given.anchor) if given.is_absolute() else Path()
    for part in given.parts[1:] if given.is_absolute() else given.parts:
        if not (here / part).exists():
            try:
                names = os.listdir(here)
            except OSError:
                return None
            close = suggest.closest(part, names)
            if not close:
                return None
            part = close[0]
        here = here / part
    return str(here) if here.exists() and str(here) != str(given) else None


def read_bytes(path: str | os.PathLike, *, limit: int = MAX_BYTES, what: str = "this file") -> bytes:
    """The content of ``path``; at most ``limit`` bytes are read, a larger file is refused.

    :param what: names the kind of file in the size error ("too large for an info.py").
    :raises ReadError: missing, unreadable or over the limit.
    """
    try:
        # without blocking: a FIFO would wait for a writer forever; fstat on the open file, so a device
        # (/dev/zero never ends) or a FIFO is refused whatever the path looked like a moment before
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
        with os.fdopen(fd, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise ReadError(path, "not a regular file (a FIFO, a device or a directory); give the file itself")
            data = fh.read(limit + 1)
    except FileNotFoundError:
        raise ReadError(path, "no such file", missing=True) from None
    except OSError as exc:
        raise ReadError(path, f"cannot read it: {exc.strerror or exc}") from None
    if len(data) > limit:
        raise ReadError(path, f"too large for {what} (more than the {limit}-byte limit)")
    return data


def decode(data: bytes, path: str | os.PathLike | None, *, encoding: str = "utf-8") -> str:
    """``data`` as text; invalid bytes raise one :class:`ReadError` naming ``path`` and the offset."""
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        col = exc.start - data.rfind(b"\n", 0, exc.start)  # 1-based, in bytes: the bad byte starts no character
        raise ReadError(
            path, f"not UTF-8 text ({exc.reason} at byte {exc.start}); save it as UTF-8", line=line, col=col
        ) from None


def read_text(
    path: str | os.PathLike, *, limit: int = MAX_BYTES, what: str = "this file", encoding: str = "utf-8"
) -> str:
    """:func:`read_bytes` then :func:`decode` (``encoding="utf-8-sig"`` drops a byte-order mark)."""
    return decode(read_bytes(path, limit=limit, what=what), path, encoding=encoding)


# --------------------------------------------------------------------------- strict YAML

#: one nesting limit for every YAML file read: real documents stay below 10 levels
MAX_DEPTH = 32


class Timestamp(str):
    """A plain scalar that YAML 1.1 would turn into a date, kept as its text.

    ``date: 2025-02-30`` is then a string (``yaml.safe_load`` crashes on it), and a check
    that wants dates quoted can still tell that it was written unquoted.
    """


def _strict_loader():
    import yaml

    class StrictLoader(yaml.SafeLoader):
        """SafeLoader without aliases, duplicate keys, deep nesting or date objects."""

        def __init__(self, stream):
            super().__init__(stream)
            self._depth = 0

        def compose_node(self, parent, index):
            event = self.peek_event()
            anchor = getattr(event, "anchor", None)
            if anchor:
                sign = "*" if isinstance(event, yaml.AliasEvent) else "&"
                raise _refused(f"anchors and aliases are not allowed ({sign}{anchor})", event.start_mark)
            self._depth += 1
            if self._depth > MAX_DEPTH:
                raise _refused(f"nested deeper than {MAX_DEPTH} levels", event.start_mark)
            try:
                return super().compose_node(parent, index)
            finally:
                self._depth -= 1

        def construct_mapping(self, node, deep=False):
            seen = set()
            for key_node, _value in node.value:
                key = self.construct_object(key_node, deep=True)
                try:
                    duplicate = key in seen
                except TypeError:
                    raise _refused("a mapping key must be a plain value", key_node.start_mark) from None
                if duplicate:
                    raise _refused(f"duplicate key {key!r}", key_node.start_mark)
                seen.add(key)
            return super().construct_mapping(node, deep=deep)

        def construct_timestamp(self, node):
            return Timestamp(self.construct_scalar(node))

    StrictLoader.add_constructor("tag:yaml.org,2002:timestamp", StrictLoader.construct_timestamp)
    return StrictLoader


class _Refused(Exception):
    def __init__(self, reason: str, line: int | None) -> None:
        super().__init__(reason)
        self.reason, self.line = reason, line


def _refused(reason: str, mark) -> _Refused:
    return _Refused(f"{reason} at line {mark.line + 1}, column {mark.column + 1}", mark.line + 1)


_LOADER = None


def loads_yaml(text: str | bytes, *, source: str | os.PathLike | None = None, max_bytes: int = MAX_BYTES) -> Any:
    """Parse one YAML document strictly; ``source`` names it in errors.

    Refused, as one :class:`YamlError` with the line where known: more than ``max_bytes``,
    not UTF-8, a NUL, anchors and aliases (a few hundred bytes can describe billions of
    nodes), duplicate keys (YAML keeps the last silently), nesting deeper than
    :data:`MAX_DEPTH`, Python tags. Unquoted dates stay strings (:class:`Timestamp`).
    """
    global _LOADER
    import yaml

    text = _yaml_text(text, source, max_bytes)
    _LOADER = _LOADER or _strict_loader()
    loader = None
    try:
        loader = _LOADER(text)
        return loader.get_single_data()
    except _Refused as exc:
        raise YamlError(source, exc.reason, line=exc.line) from None
    except yaml.MarkedYAMLError as exc:
        mark = _yaml_mark(exc)
        raise YamlError(
            source, _yaml_problem(exc), line=mark.line + 1 if mark else None, col=mark.column + 1 if mark else None
        ) from None
    except yaml.YAMLError as exc:
        raise YamlError(source, " ".join(str(exc).split())) from None
    except RecursionError:
        raise YamlError(source, "nested too deeply to parse") from None
    finally:
        if loader is not None:
            loader.dispose()


def _yaml_mark(exc):
    """Where a YAML syntax error is: where the parser stopped, unless that is the end of the text (an
    unclosed bracket or quote), where the construct it could not finish starts, as Python points at an
    unclosed ``(``."""
    return exc.context_mark if _unclosed(exc) else exc.problem_mark or exc.context_mark


def _unclosed(exc) -> bool:
    """The parser ran into the end of the text inside a construct that starts somewhere else."""
    problem, start, end = exc.problem or "", exc.context_mark, exc.problem_mark
    at_end = "<stream end>" in problem or "end of stream" in problem
    return at_end and start is not None and (end is None or (start.line, start.column) != (end.line, end.column))


def _yaml_problem(exc) -> str:
    """pyyaml's words for a syntax error without its marks (``in "<unicode string>", line 4, column 1``
    and a caret): the place is given once, as the error's line and column."""
    words = " ".join(part for part in (exc.context, exc.problem) if part)
    words = " ".join(words.replace("'<stream end>'", "the end of the file").split()) or "malformed YAML"
    return words + " (it starts here and is never closed)" if _unclosed(exc) else words


def _bounded_text(text: str | bytes, source: str | os.PathLike | None, max_bytes: int, error: type[ReadError]) -> str:
    """``text`` as a string, refused (as ``error``) when larger than ``max_bytes`` or not UTF-8."""
    size = len(text.encode("utf-8") if isinstance(text, str) else text)
    if size > max_bytes:
        raise error(source, f"{size} bytes is too large (more than the {max_bytes}-byte limit)")
    if isinstance(text, bytes):
        try:
            text = decode(text, source)
        except ReadError as exc:
            raise error(source, exc.reason) from None
    return text


def _yaml_text(text: str | bytes, source: str | os.PathLike | None, max_bytes: int) -> str:
    """``text`` as a string, refused (as :class:`YamlError`) before parsing when it is too large,
    not UTF-8 or holds a NUL: the cheap refusals come first."""
    text = _bounded_text(text, source, max_bytes, YamlError)
    if "\x00" in text:
        raise YamlError(source, "YAML text contains a NUL character")
    return text


def load_yaml(path: str | os.PathLike, *, max_bytes: int = MAX_BYTES) -> Any:
    """Read ``path`` within ``max_bytes`` and parse it with :func:`loads_yaml`."""
    data = read_bytes(path, limit=max_bytes, what="a YAML file")
    return loads_yaml(data, source=path, max_bytes=max_bytes)


# --------------------------------------------------------------------------- strict, positioned JSON


class JsonError(ReadError):
    """JSON text this project refuses: malformed, a duplicate key, a refused NaN or infinity, too deep or too large.

    Its message names the column too (``results.json, line 4, column 19: duplicate key ...``): a JSON
    file is often one long line, where a line alone finds nothing.
    """

    def __init__(self, path: str | os.PathLike | None, reason: str, *, line: int | None = None, col: int | None = None):
        super().__init__(path, reason, line=line, col=col)
        if line is not None and col is not None:
            where = f"{self.path}, line {line}, column {col}" if self.path else f"line {line}, column {col}"
            self.args = (f"{where}: {reason}",)


def loads_json(
    text: str | bytes,
    *,
    source: str | os.PathLike | None = None,
    max_bytes: int = MAX_BYTES,
    max_depth: int = MAX_DEPTH,
    nonfinite: str = "refuse",
) -> JsonDoc:
    """Parse one strict JSON value into a :class:`~checks.jsonread.JsonDoc` (the value, and where each key path is).

    Refused, as one :class:`JsonError` with its line and column: more than ``max_bytes``, not
    UTF-8, a syntax error (a trailing comma, a single-quoted string, a comment), a duplicate key
    in one object, nesting deeper than ``max_depth``, and, unless ``nonfinite="keep"`` (the
    arena's choice, for files known to hold them), ``NaN``, ``Infinity`` or a number too large
    for a float. ``doc.where("/scores/test/0/main_score")`` then gives a value's line and column.
    """
    text = _bounded_text(text, source, max_bytes, JsonError)
    name = str(source) if source is not None else ""
    try:
        return jsonread.parse(text, source=name, nonfinite=nonfinite, max_depth=max_depth)
    except jsonread.Malformed as exc:
        line, col = JsonDoc(None, name, text, {}).line_col(exc.offset)
        raise JsonError(source, exc.reason, line=line, col=col) from None


def load_json(
    path: str | os.PathLike, *, max_bytes: int = MAX_BYTES, max_depth: int = MAX_DEPTH, nonfinite: str = "refuse"
) -> JsonDoc:
    """Read ``path`` within ``max_bytes`` and parse it with :func:`loads_json`."""
    data = read_bytes(path, limit=max_bytes, what="a JSON file")
    return loads_json(data, source=path, max_bytes=max_bytes, max_depth=max_depth, nonfinite=nonfinite)


# --------------------------------------------------------------------------- where caches live


def sha256(data: bytes) -> str:
    """``sha256:<hex>`` of ``data``: the one digest format of decision records, manifests and indexes.

    The prefix names the algorithm, so a record stays readable if another one is ever added.
    """
    import hashlib  # noqa: PLC0415 - OpenSSL's bindings: not on the path of a pre-commit hook that digests nothing

    return "sha256:" + hashlib.sha256(data).hexdigest()


def file_sha256(path: str | os.PathLike) -> str:
    """:func:`sha256` of a file's content, read in blocks (a cache file may not fit in memory twice)."""
    import hashlib  # noqa: PLC0415 - start-up: the hooks digest nothing; hashlib loads OpenSSL

    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(1 << 20):
            digest.update(block)
    return "sha256:" + digest.hexdigest()


#: where the kernel's pseudo-filesystems live: nothing of a run's is kept, read back or written there
PSEUDO_ROOTS = ("/proc", "/sys", "/dev")


def pseudo_root(path: str | os.PathLike) -> str | None:
    """The pseudo-filesystem root (``/proc``, ``/sys``, ``/dev``) ``path`` names or resolves into, else None.

    Their entries are not files: ``/proc/self/fd/1`` is whatever the process writes to, ``/dev/full``
    fails every write, and a directory there refuses new entries.
    """
    for where in (os.path.abspath(path), os.path.realpath(path)):  # as written, and as the links resolve
        for root in PSEUDO_ROOTS:
            if where == root or where.startswith(root + "/"):
                return root
    return None


def user_cache_dir(environ: Mapping[str, str] | None = None) -> Path:
    """This user's arena-checks cache: ``$CHECKS_CACHE_DIR``, else ``$XDG_CACHE_HOME/arena-checks``,
    else ``~/.cache/arena-checks``.

    :raises UsageError: (exit 2) when it cannot hold files, naming the variable it came from and why:
        it lies in a pseudo-filesystem, it or a parent is not a directory, or it cannot be created.
    """
    env = os.environ if environ is None else environ
    if env.get("CHECKS_CACHE_DIR"):
        path, source = Path(env["CHECKS_CACHE_DIR"]), "CHECKS_CACHE_DIR"
    elif env.get("XDG_CACHE_HOME"):
        path, source = Path(env["XDG_CACHE_HOME"]) / "arena-checks", "XDG_CACHE_HOME"
    else:
        path, source = Path.home() / ".cache" / "arena-checks", "HOME"
    why = _unusable_dir(path)
    if why:
        raise UsageError(
            f"{source}: the cache directory {path} {why}; set CHECKS_CACHE_DIR to a directory of your own "
            "(e.g. ~/.cache/arena-checks)"
        )
    return path


def _unusable_dir(path: Path) -> str:
    """Why ``path`` cannot be (or become) a directory this user writes files in; empty when it can."""
    root = pseudo_root(path)
    if root:
        return f"lies in the kernel's pseudo-filesystem {root}"
    existing = path
    while True:
        try:
            info = os.stat(existing)
            break
        except FileNotFoundError:
            if existing.parent == existing:
                return "has no existing parent"
            existing = existing.parent
        except OSError as exc:
            return f"cannot be reached ({exc.strerror or exc})"
    if not stat.S_ISDIR(info.st_mode):
        what = "is" if existing == path else f"lies below {existing}, which is"
        return f"{what} not a directory"
    if not os.access(existing, os.W_OK | os.X_OK):
        return "cannot be written by this user" if existing == path else f"cannot be created in {existing}"
    return ""


# --------------------------------------------------------------------------- atomic writes

TMP, OLD = "checks-tmp", "checks-old"


def pid_running(pid: int) -> bool:
    """Whether process ``pid`` exists: temporaries of a live run are left alone, those of a killed one swept."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, owned by someone else
        return True
    return True


@contextlib.contextmanager
def replacing(path: str | os.PathLike) -> Iterator[Path]:
    """A temporary sibling of ``path`` to write (by any library); moved over ``path`` if the block succeeds.

    The temporary is ``.<name>.checks-tmp-<pid>.<random>``, so :func:`sweep_siblings` clears one a
    killed run left. On an error it is removed and ``path`` is untouched.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / f".{path.name}.{TMP}-{os.getpid()}.{os.urandom(4).hex()}"  # unique per call: threads
    try:
        yield tmp
        with contextlib.suppress(OSError), open(tmp, "rb") as fh:  # a directory or a vanished file: no fsync
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically: a reader sees the old content or the new, never a mix."""
    with replacing(path) as tmp:
        tmp.write_bytes(data)


def write_text(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` (UTF-8, newlines as given) to ``path`` atomically."""
    write_bytes(path, text.encode("utf-8"))


#: OWASP's list of what starts a formula in a spreadsheet (=, +, -, @, tab, CR), and the quote that
#: neutralises one (itself escaped, so :func:`spreadsheet_value` undoes exactly what was added)
FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "'")
#: a plain number, left alone; compiled by ``re`` on first use (every command imports this module, few write a sheet)
_PLAIN_NUMBER = r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"


def spreadsheet_safe(cell: Any) -> str:
    """``cell`` as text a spreadsheet shows rather than runs: prefixed with ``'`` when it starts like a
    formula (``=HYPERLINK(...)``, ``@SUM(...)``), as OWASP recommends; a plain number (``-0.5``) is left."""
    text = "" if cell is None else str(cell)
    if text.startswith(FORMULA_START) and not re.fullmatch(_PLAIN_NUMBER, text, re.ASCII):
        return "'" + text
    return text


def spreadsheet_value(cell: str) -> str:
    """The value :func:`spreadsheet_safe` was given."""
    return cell.removeprefix("'")


def csv_text(header: Sequence[str], rows: Iterable[Sequence[Any]], *, neutralise: bool = False) -> str:
    """``header`` and ``rows`` as CSV text, one ``\\n`` per line, that ``csv.reader`` reads back cell for cell;
    with ``neutralise`` every cell goes through :func:`spreadsheet_safe` (a file a reviewer opens).

    csv.writer quotes a cell only for the characters of its own line terminator, so with ``\\n`` a
    cell holding a bare ``\\r`` (a leaderboard cell can) went out unquoted, and every reader took
    it for the end of the line: the row fell apart into two short ones. Such a row is written
    with every cell quoted; the others as usual.
    """
    import csv  # noqa: PLC0415 - start-up: only ledgers are CSV; the hooks never load csv

    buf = io.StringIO()
    minimal = csv.writer(buf, lineterminator="\n")
    quoted = csv.writer(buf, lineterminator="\n", quoting=csv.QUOTE_ALL)
    minimal.writerow(header)
    for row in rows:
        row = [spreadsheet_safe(cell) for cell in row] if neutralise else list(row)
        (quoted if any("\r" in str(cell) for cell in row) else minimal).writerow(row)
    return buf.getvalue()


def write_zip_entry(archive, info, data: bytes, **options: Any) -> None:
    """``archive.writestr(info, data, **options)`` with Ctrl-C and SIGTERM held until the entry is whole.

    zipfile marks an archive as having an open entry before it hands out that entry's writer. An
    interrupt landing in between leaves the mark set, and closing the archive (the ``with`` block's
    exit) then raises ValueError over the interrupt: an internal error instead of an abort, and a
    leaked file. Held for the length of one entry, the interrupt arrives right after it, where the
    archive closes cleanly and the run unwinds as aborted. Signals can be held only on POSIX.
    """
    held = {signal.SIGINT, signal.SIGTERM}
    if not hasattr(signal, "pthread_sigmask"):
        archive.writestr(info, data, **options)
        return
    before = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        archive.writestr(info, data, **options)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)


@contextlib.contextmanager
def environment(values: Mapping[str, str]) -> Iterator[None]:
    """``values`` set in ``os.environ`` inside the block; after it each variable is back as it was (or unset)."""
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


@contextlib.contextmanager
def scratch_dir(prefix: str) -> Iterator[Path]:
    """A fresh private directory in the temporary directory, removed when the block ends, however it ends.

    ``tempfile.mkdtemp`` (and ``TemporaryDirectory``, built on it) creates the directory before
    the caller holds its name: a Ctrl-C or SIGTERM (taken as Ctrl-C) arriving in between strands
    it. Here the name is drawn first and the directory made inside the ``try``, so the cleanup
    always knows what to remove.
    """
    import secrets  # noqa: PLC0415 - start-up: only commands that download or stage load it
    import shutil  # noqa: PLC0415 - start-up: as secrets
    import tempfile  # noqa: PLC0415 - start-up: as secrets

    path = Path(tempfile.gettempdir()) / f"{prefix}{secrets.token_hex(8)}"
    try:
        path.mkdir(mode=0o700)
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@contextlib.contextmanager
def interrupted_query_aborts() -> Iterator[None]:
    """A DuckDB query stopped by Ctrl-C (or SIGTERM, which the ``checks`` script takes as Ctrl-C) raises
    KeyboardInterrupt, so the command ends as ``checks: aborted``.

    DuckDB catches the interrupt itself and raises ``RuntimeError('Query interrupted')``, which
    would end the command as an internal error with a traceback, or be taken for a file DuckDB
    cannot read. Any other error passes through unchanged.
    """
    try:
        yield
    except RuntimeError as exc:
        if str(exc) != "Query interrupted":
            raise
        raise KeyboardInterrupt from exc


def temp_sibling(target: str | os.PathLike) -> Path:
    """This process's temporary path next to ``target`` (same file system, so renames are atomic), cleared."""
    import shutil  # noqa: PLC0415 - with zlib, bz2 and lzma: not for the hooks, which never remove a tree

    target = Path(target)
    path = target.parent / f".{target.name}.{TMP}-{os.getpid()}"
    shutil.rmtree(path, ignore_errors=True)
    target.parent.mkdir(parents=True, exist_ok=True)
    return path


def swap_in_dir(built: Path, target: str | os.PathLike) -> bool:
    """Put the finished directory ``built`` at ``target``; returns whether a directory was replaced.

    An existing ``target`` is renamed aside first and removed only once ``built`` is in
    place; if that second rename fails, it is put back.
    """
    import shutil  # noqa: PLC0415 - start-up: the hooks never remove a tree; shutil brings zlib, bz2, lzma

    target = Path(target)
    if not target.exists():
        os.replace(built, target)
        return False
    if not target.is_dir() or target.is_symlink():
        raise FileExistsError(f"{target} exists and is not a directory")
    aside = target.parent / f".{target.name}.{OLD}-{os.getpid()}"
    shutil.rmtree(aside, ignore_errors=True)
    os.replace(target, aside)
    try:
        os.replace(built, target)
    except BaseException:
        os.replace(aside, target)
        raise
    shutil.rmtree(aside, ignore_errors=True)
    return True


def sweep_siblings(target: str | os.PathLike) -> list[str]:
    """Clear what killed runs left next to ``target``; returns one note per thing done.

    A run killed between moving the old directory aside and moving the new one in left no
    ``target`` at all: the old one is put back, so the previous state is what the next run
    sees. Temporaries of a process still running are left alone.
    """
    import shutil  # noqa: PLC0415 - start-up: the hooks never remove a tree; shutil brings zlib, bz2, lzma

    target = Path(target)
    notes: list[str] = []
    if not target.parent.is_dir():
        return notes
    left = re.compile(rf"^\.{re.escape(target.name)}\.({TMP}|{OLD})-(\d+)(\..*)?$")
    for entry in sorted(target.parent.iterdir()):
        match = left.match(entry.name)
        if match is None or entry.is_symlink() or pid_running(int(match[2])):
            continue
        if match[1] == OLD and not target.exists():
            os.replace(entry, target)
            notes.append(f"restored the previous {target.name} from {entry.name}, left by an interrupted run")
        else:
            if entry.is_dir():
                shutil.rmtree(entry, ignore_errors=True)
            else:
                entry.unlink(missing_ok=True)
            notes.append(f"removed {entry.name}, left by an interrupted run")
    return notes
