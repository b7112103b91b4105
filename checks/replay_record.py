"""The miss side of :mod:`checks.replay`: run the listing, capture its output, record what it read.

An entry is stored only when the answer is known to be reproducible from what was recorded:
exit code 0, nothing on stderr, every non-stdlib module backed by a file, and no input changed
within the last :data:`RACY_NS` (a file rewritten within the same mtime tick as the recording
would otherwise look unchanged: the racy-git problem).

Recorded inputs: every ``sys.path`` entry (installing or removing a distribution changes the
directory listing), every ``entry_points.txt`` of the distributions importlib.metadata finds
on ``sys.path``, every imported non-stdlib module file and the directory holding it (a new
module there could shadow it), and every file opened or directory listed while the command
ran (seen through audit hooks, PEP 578: a plugin that builds its rules from a data file).
A command that opens a file for writing is not a listing and is not stored.
"""

import io
import os
import sys
import time

from checks.replay import stat_input, trace

#: entries kept in the cache directory; the least recently used beyond this are removed
MAX_ENTRIES = 64
RACY_NS = 2_000_000_000
TICK_NS = 100_000_000
METADATA_SUFFIXES = (".dist-info", ".egg-info")


class _Tee(io.RawIOBase):
    """Bytes written go to ``target`` and are kept."""

    def __init__(self, target):
        self.target = target
        self.data = bytearray()

    def writable(self) -> bool:
        return True

    def write(self, b) -> int:
        self.data += b
        self.target.write(b)
        return len(b)

    def isatty(self) -> bool:
        return self.target.isatty()


class _Watch:
    """Files opened and directories listed while ``active``, from the interpreter's audit events."""

    def __init__(self) -> None:
        self.active = False
        self.read: dict[str, None] = {}
        self.problem: str | None = None
        sys.addaudithook(self._event)  # hooks cannot be removed: ``active`` bounds what it sees

    def _event(self, event: str, args: tuple) -> None:
        if not self.active or event not in ("open", "os.listdir", "os.scandir"):
            return
        try:
            target = os.curdir if args[0] is None else args[0]
            if isinstance(target, int):  # wraps a descriptor whose os.open was seen already
                return
            path = os.path.abspath(os.fsdecode(target))
            if os.path.basename(os.path.dirname(path)) == "__pycache__":
                return  # the interpreter's bytecode cache: it follows the sources, which are recorded
            if event == "open" and args[2] & (os.O_WRONLY | os.O_RDWR):
                self.problem = self.problem or f"the command opened {path} for writing"
            self.read[path] = None
        except Exception as exc:  # an audit hook must never break the command it watches
            self.problem = self.problem or f"cannot follow {event}: {exc}"


def _teed(stream):
    """A text stream like ``stream`` (same encoding, errors, newlines) whose bytes are also kept."""
    tee = _Tee(stream.buffer)
    text = io.TextIOWrapper(tee, encoding=stream.encoding, errors=stream.errors, write_through=True)
    return text, tee


def run_and_record(args: list[str], path: str, key: dict, started: int) -> int:
    """Run the command through :func:`checks.cli.main`, teeing its output, and store a clean answer.

    ``started`` is when the launcher began (``time.time_ns()``): inputs changed after it are refused.
    """
    pre_path = list(sys.path)
    real_out, real_err = sys.stdout, sys.stderr
    real_out.flush()
    real_err.flush()
    sys.stdout, out = _teed(real_out)
    sys.stderr, err = _teed(real_err)
    watch = _Watch()
    watch.active = True
    try:
        from checks.cli import main

        code = main(args)
    finally:
        watch.active = False
        sys.stdout.flush()
        sys.stderr.flush()
        sys.stdout, sys.stderr = real_out, real_err
        real_out.buffer.flush()
        real_err.buffer.flush()
    if code != 0:
        trace(f"skipped (exit code {code})")
    elif err.data:
        trace("skipped (the command wrote to stderr)")
    elif watch.problem:
        trace(f"skipped ({watch.problem})")
    else:
        _store(path, key, bytes(out.data), collect_inputs(pre_path, list(watch.read), started))
    return code


def _store(path: str, key: dict, stdout: bytes, collected: tuple[list[list], str | None]) -> None:
    import json

    inputs, problem = collected
    if problem:
        trace(f"skipped ({problem})")
        return
    entry = {"key": key, "inputs": inputs, "stdout": stdout.decode("utf-8", "surrogateescape")}
    directory = os.path.dirname(path)
    tmp = os.path.join(directory, f".tmp-{os.getpid()}-{os.path.basename(path)}")
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(entry, f)
        os.replace(tmp, path)
        _prune(directory)
    except (OSError, ValueError) as exc:
        try:
            os.remove(tmp)
        except OSError:
            pass
        trace(f"skipped (cannot write the cache: {exc})")
        return
    trace("stored")


def collect_inputs(pre_path: list[str], read: list[str], started: int) -> tuple[list[list], str | None]:
    """The recorded inputs, or a reason the answer cannot be cached.

    They are stat-ed after the command ran, so an input is refused if it may have changed
    after it was read: its mtime is within :data:`RACY_NS` of now, or its ctime (which no
    one can back-date) is after the command started, less :data:`TICK_NS` of clock granularity.
    """
    paths: dict[str, None] = {}
    for entry in [*pre_path, *sys.path]:
        paths[os.path.abspath(entry or os.curdir)] = None
    for directory in list(paths):
        paths.update(dict.fromkeys(_entry_point_files(directory)))
    in_stdlib = _stdlib_test()
    files, problem = _module_files(in_stdlib)
    if problem:
        return [], problem
    for file in files:
        paths[file] = None
        paths[os.path.dirname(file)] = None
    for file in read:
        if not in_stdlib(file):
            paths[file] = None
    inputs = [stat_input(p) for p in paths]
    recent = time.time_ns() - RACY_NS
    for recorded in inputs:
        if len(recorded) > 1 and recorded[1] > recent:
            return [], f"{recorded[0]} changed less than {RACY_NS // 10**9} s ago"
        if len(recorded) > 1 and recorded[2] > started - TICK_NS:
            return [], f"{recorded[0]} changed while the command ran"
    return inputs, None


def _entry_point_files(directory: str) -> list[str]:
    """The entry_points.txt files importlib.metadata would read in one ``sys.path`` entry."""
    if directory.lower().endswith(".egg"):
        return [os.path.join(directory, "EGG-INFO", "entry_points.txt")]
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    return [os.path.join(directory, n, "entry_points.txt") for n in names if n.lower().endswith(METADATA_SUFFIXES)]


def _stdlib_test():
    """Whether an absolute path is in the standard library (site-packages may sit inside it, and is not)."""
    import sysconfig

    paths = sysconfig.get_paths()
    stdlib = tuple(_dir_prefix(paths[k]) for k in ("stdlib", "platstdlib"))
    site = tuple(_dir_prefix(paths[k]) for k in ("purelib", "platlib"))
    return lambda path: path.startswith(stdlib) and not path.startswith(site)


def _module_files(in_stdlib) -> tuple[list[str], str | None]:
    """Files of the imported modules outside the standard library, or why one has none."""
    from types import ModuleType

    files = []
    for name, module in list(sys.modules.items()):
        if not isinstance(module, ModuleType) or name in sys.builtin_module_names:
            continue
        spec = getattr(module, "__spec__", None)
        if spec is not None and spec.origin in ("built-in", "frozen"):
            continue
        file = getattr(module, "__file__", None)
        if file is None:
            locations = list(getattr(spec, "submodule_search_locations", None) or ())
            if spec is not None and spec.origin is None and locations:  # a namespace package: its directories
                files += [os.path.abspath(d) for d in locations]
                continue
            if name == "__main__":  # `python -c`: the code is in argv, which is part of the key
                continue
            return [], f"module {name!r} has no file to re-check"
        file = os.path.abspath(file)
        if in_stdlib(file):
            continue
        if not os.path.isfile(file):
            return [], f"module {name!r} comes from {file}, which is not a file to re-check"
        files.append(file)
    return files, None


def _dir_prefix(path: str) -> str:
    return os.path.join(os.path.abspath(path), "")


def _prune(directory: str) -> None:
    """Keep the newest :data:`MAX_ENTRIES` entries; drop temp files a crashed writer left behind."""
    entries, now = [], time.time()
    for name in os.listdir(directory):
        full = os.path.join(directory, name)
        try:
            mtime = os.stat(full).st_mtime
        except OSError:
            continue
        if name.endswith(".json"):
            entries.append((mtime, full))
        elif name.startswith(".tmp-") and mtime < now - 60:
            os.remove(full)
    for _, full in sorted(entries, reverse=True)[MAX_ENTRIES:]:
        os.remove(full)
