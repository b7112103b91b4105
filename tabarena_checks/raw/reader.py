"""Read raw TabArena ``results.pkl`` files without running anything they contain.

A results.pkl is a (usually gzip-compressed) pickle, and unpickling is code execution.
Files come from cluster runs, colleagues and downloads, so they are read with a
restricted unpickler (:mod:`tabarena_checks.raw.unpickler`): only builtins, checked numpy
arrays and AutoGluon's plain container subclasses can be built; any other global is never
imported, and ends the read with :class:`UnsafePickleError` (the index alone, which only informs,
may read one in a field nothing reads as None: :data:`UNREAD_FIELDS`). Only regular files are read, and reading and decompression are capped, so a
device, a FIFO or a gzip bomb cannot exhaust memory or hang the read.

:func:`decode_row` turns one file into one flat metadata row (no prediction arrays kept)
and computes the per-file facts the rules need: task and split, metric and timings,
method metadata, the validation-protocol record and the prediction fidelity checks
TabArena runs on every load ("Not close TEST" / "Not close  VAL").
"""

from __future__ import annotations

import json
import os
import re
import reprlib
import stat
import zlib
from pathlib import Path
from collections.abc import Callable
from typing import Any, TypeVar

from checks import InputError
from tabarena_checks.raw import artifacts, unpickler
from tabarena_checks.raw.metric_names import tabarena_name

T = TypeVar("T")
GZIP_MAGIC = b"\x1f\x8b"
#: largest decompressed size accepted by default (real files are a few MiB at most)
DEFAULT_MAX_BYTES = 512 * 1024 * 1024
#: what the index's integer columns hold
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
#: TabArena compares the stored test prediction with the mean of its children at this rtol
TEST_RTOL = 5e-4
#: ... and the rebuilt validation prediction with np.isclose's default rtol
VAL_RTOL = 1e-5
#: metrics whose missing metric_error_val the native engine recomputes as TabArena does (cache_hpo_metrics)
RECOMPUTED_VAL = ("rmse", "log_loss", "roc_auc")
#: ``<repeat>_<fold>`` split directory names
SPLIT_DIR = re.compile(r"^(\d+)_(\d+)$")
#: a config directory: ``<name prefix>_c<i>`` or ``_r<i>``, then the infix and suffix
CONFIG_DIR = re.compile(r"^(?P<prefix>.+?)_[cr]\d+(?=_|$)")


class RawFileError(InputError):
    """A results.pkl that cannot be read: empty, truncated, corrupt, too large or unsafe."""

    def __init__(self, path: str | Path, reason: str):
        self.path = str(path)
        self.reason = reason
        super().__init__(f"{self.path}: {reason}")

    def __reduce__(self):
        return (RawFileError, (self.path, self.reason))


class UnsafePickleError(RawFileError):
    """The pickle holds a global outside the allow-list where it may not; nothing from it was run."""

    def __init__(self, path: str | Path, global_name: str, field: str = ""):
        self.global_name = global_name
        self.field = field
        where = f" in {field}" if field else ""
        why = (
            "nothing reads this field, but the file is published byte for byte and loading it with pickle "
            "(TabArena does) would run the class"
            if _unread_field(field)
            else "processing reads this field"
        )
        super().__init__(
            path,
            f"refused to load '{global_name}'{where}: a results.pkl may only hold builtins, numpy arrays and the "
            f"AutoGluon containers docs/tabarena-data.md lists, and {why} (nothing from the file was run). If "
            "TabArena wrote it, report the class so the reader can learn it; otherwise rewrite the file without it",
        )

    def __reduce__(self):
        return (UnsafePickleError, (self.path, self.global_name, self.field))


def read_payload(path: str | Path, *, max_bytes: int = DEFAULT_MAX_BYTES) -> bytes:
    """The pickle bytes of ``path``: gunzipped when it starts with the gzip magic, else as is."""
    return unpack(path, read_raw(path, max_bytes=max_bytes), max_bytes)


def read_raw(path: str | Path, *, max_bytes: int = DEFAULT_MAX_BYTES) -> bytes:
    """The bytes of ``path`` as stored, when it is a regular file of at most ``max_bytes``.

    Opened without blocking (a FIFO named results.pkl would wait forever for a writer) and
    checked with fstat on the open file, so a device or a FIFO is refused whatever its name;
    at most ``max_bytes`` + 1 bytes are read whatever the size says (``/dev/zero`` says 0).
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise RawFileError(path, f"cannot be read ({exc.strerror or exc})") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise RawFileError(
                path,
                f"is not a regular file (a {_file_kind(st.st_mode)}); a results.pkl must be "
                "a file: replace it by the file itself",
            )
        if st.st_size > max_bytes:
            raise RawFileError(path, f"file is {st.st_size} bytes, over the {max_bytes}-byte limit")
        data = _read_capped(fd, st.st_size, max_bytes)
    except OSError as exc:
        raise RawFileError(path, f"cannot be read ({exc.strerror or exc})") from None
    finally:
        os.close(fd)
    if len(data) > max_bytes:
        raise RawFileError(path, f"file grew past the {max_bytes}-byte limit while it was read")
    if not data:
        raise RawFileError(path, "file is empty (0 bytes): the run that wrote it was interrupted; rerun that split")
    return data


def _read_capped(fd: int, size: int, cap: int) -> bytes:
    """At most ``cap`` + 1 bytes of the open file ``fd``: the ``size`` fstat gave and one more (a read of ``cap``
    bytes at once would reserve the whole cap), then in blocks until the end or past the cap.

    Plain ``os.read`` calls: a buffered file object costs more to set up than reading a whole result takes.
    """
    parts, total, want = [], 0, size + 1
    while total <= cap:
        block = os.read(fd, want)
        if not block:
            break
        parts.append(block)
        total += len(block)
        want = min(1 << 20, cap + 1 - total)
    return parts[0] if len(parts) == 1 else b"".join(parts)


def _file_kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISDIR, "directory"),
        (stat.S_ISFIFO, "FIFO"),
        (stat.S_ISCHR, "character device"),
        (stat.S_ISBLK, "block device"),
        (stat.S_ISSOCK, "socket"),
    ):
        if test(mode):
            return name
    return "special file"


def unpack(path: str | Path, data: bytes, max_bytes: int = DEFAULT_MAX_BYTES) -> bytes:
    """The pickle inside the stored bytes ``data`` of ``path``: gunzipped when they start with the gzip magic."""
    if data[:2] == GZIP_MAGIC:
        return _gunzip(path, data, max_bytes)
    return data


def _gunzip(path: Path, data: bytes, max_bytes: int) -> bytes:
    """Decompress every gzip member, never producing more than ``max_bytes`` (+1 to detect the overrun).

    ISA-L's inflate (python-isal, zlib's API) is used because gunzip is most of the cost of a read. The
    size the last member's trailer states (ISIZE) is a hint, never trusted: inflating into a buffer of that
    size first costs a sixth less than into one of the whole limit's, and a trailer that understates it only
    means inflating that member again into one buffer of the limit (never a part and its copy at once).
    """
    from isal import isal_zlib

    parts: list[bytes] = []
    total = 0
    rest = data
    hint = int.from_bytes(data[-4:], "little") + 1
    while rest:
        inflater = isal_zlib.decompressobj(16 + zlib.MAX_WBITS)
        budget = max_bytes - total + 1
        try:
            chunk = inflater.decompress(rest, min(hint, budget))
            if not inflater.eof and len(chunk) == hint < budget:
                # the trailer understated the size (a bomb's wraps round 4 GiB): inflate the member again
                # into one buffer of the budget (the first part dropped first): appending the rest would hold both
                # parts and their copy at once
                inflater = isal_zlib.decompressobj(16 + zlib.MAX_WBITS)
                chunk = b""
                chunk = inflater.decompress(rest, budget)
        except isal_zlib.error as exc:
            raise RawFileError(path, f"corrupt gzip data ({exc})") from None
        total += len(chunk)
        if total > max_bytes or inflater.unconsumed_tail:
            raise RawFileError(
                path, f"decompresses to more than {max_bytes} bytes (a gzip bomb or not a results file); refused"
            )
        if not inflater.eof:
            raise RawFileError(path, "truncated gzip data (the file ends before the compressed stream does)")
        parts.append(chunk)
        rest = inflater.unused_data
        if rest and not rest.startswith(GZIP_MAGIC):
            if rest.strip(b"\0"):
                raise RawFileError(path, f"{len(rest)} unexpected bytes after the gzip data")
            break
    return parts[0] if len(parts) == 1 else b"".join(parts)


#: fields where a global outside the allow-list is read as None instead of ending the read, when the caller asks
#: to be told (the index, so that inspect can show where; TA308 then refuses the file for process and upload):
#: neither the rules nor processing (native or TabArena's) read them. AutoGluon's model info lives in ``info``;
#: TabArena's runner records the config as generated (``hyperparameters``) and what it passed to the model's
#: constructor and fit (``init_kwargs_extra``, ``fit_kwargs_extra``: its BeyondArena bundle puts preprocessing
#: classes there). ``model_hyperparameters``, which processing writes out, is not among them.
UNREAD_FIELDS = (
    "method_metadata.info",
    "method_metadata.hyperparameters",
    "method_metadata.init_kwargs_extra",
    "method_metadata.fit_kwargs_extra",
)


def load_result(path: str | Path, *, max_bytes: int = DEFAULT_MAX_BYTES, notes: list[str] | None = None) -> dict:
    """The result dict stored in ``path``, read safely; raises :class:`RawFileError` (see :func:`unpickle`)."""
    return unpickle(path, read_payload(path, max_bytes=max_bytes), notes)


def unpickle(path: str | Path, payload: bytes, notes: list[str] | None = None) -> dict:
    """The result dict in ``payload`` (read from ``path``), through :mod:`tabarena_checks.raw.unpickler`.

    A global outside the allow-list refuses the file (:class:`UnsafePickleError`, naming the class and its
    field path). Only a caller that collects ``notes`` (the index, which informs and judges nothing) gets
    the value of a file whose unknown classes all sit in :data:`UNREAD_FIELDS`, read there as None, with
    one note per class; every caller that acts on the bytes (processing, staging an upload) passes none,
    so it fails closed.
    """
    loaded = _load(path, payload)
    for field, name in loaded.unread:
        if notes is None or not _unread_field(field):
            raise UnsafePickleError(path, name, field)
    if not isinstance(loaded.value, dict):
        raise RawFileError(path, f"holds a {type(loaded.value).__name__}, expected the dict of one result")
    if notes is not None:
        notes.extend(f"{field} holds a {name}, a class the reader does not load" for field, name in loaded.unread)
    return loaded.value


def _load(path: str | Path, payload: bytes):
    """:func:`tabarena_checks.raw.unpickler.load`, every failure turned into a :class:`RawFileError` of ``path``."""
    try:
        return unpickler.load(payload)
    except unpickler.UnpicklingRefused as exc:
        if exc.is_global:
            raise UnsafePickleError(path, exc.what) from None
        raise RawFileError(
            path, f"refused {exc.what}; nothing from the file was run (regenerate it with TabArena or delete it)"
        ) from None
    except unpickler.GraphError as exc:
        raise RawFileError(path, f"{exc.field or 'the result'} {exc.reason}; refused") from None
    except RecursionError:
        raise RawFileError(path, "pickle is nested too deeply to read") from None
    except MemoryError:
        raise RawFileError(path, "pickle needs more memory than is available") from None
    except Exception as exc:  # any other failure is a corrupt pickle, not a bug here
        raise RawFileError(path, f"not a readable pickle ({type(exc).__name__}: {_text(exc)})") from None


def _unread_field(field: str) -> bool:
    return any(field == top or field.startswith((top + ".", top + "[")) for top in UNREAD_FIELDS)


def _text(exc: BaseException) -> str:
    """An exception's message, short, whatever it holds."""
    try:
        text = str(exc)
    except Exception:
        text = "?"
    return text if len(text) <= 200 else text[:197] + "..."


# --- validation protocol -------------------------------------------------------------------------

_PROTOCOL_INTS = (
    "num_bag_folds",
    "num_bag_sets",
    "tiny_num_bag_folds",
    "tiny_num_bag_sets",
    "tiny_max_group_instances",
)


def protocol_key(protocol: dict) -> str:
    """TabArena's ``ValidationProtocol.key()`` for a protocol dict; ValueError when it is invalid."""

    def count(name: str, default: int | None, minimum: int) -> int | None:
        value = protocol.get(name, default)
        if value is None and default is None:
            return None
        if not _is_int(value) or value < minimum:
            raise ValueError(f"'{name}' must be an integer >= {minimum} (got {show(value)})")
        return int(value)

    folds = count("num_bag_folds", 8, 2)
    sets = count("num_bag_sets", 1, 1)
    tiny = (
        count("tiny_num_bag_folds", None, 2),
        count("tiny_num_bag_sets", None, 1),
        count("tiny_max_group_instances", None, 0),
    )
    if any(v is None for v in tiny) and any(v is not None for v in tiny):
        raise ValueError(f"the three tiny_* fields must be set together or not at all (got {tiny})")
    parts = [f"{folds}x{sets}"]
    if tiny[0] is not None:
        parts.append(f"tiny{tiny[0]}x{tiny[1]}<={tiny[2]}")
    if protocol.get("task_specific_validation"):
        parts.append("task-specific")
    if protocol.get("adapt_num_folds_to_n_classes"):
        parts.append("adapt-classes")
    return "+".join(parts)


def record_key(record: Any) -> str | None:
    """The validation-protocol key of a result's ``validation_protocol`` record.

    ``None`` without a record (legacy results); ``"system"`` for systems; the protocol key
    for bagged fits (``"custom"`` without a protocol); ``"<flavour>:<key>"`` or the bare
    flavour otherwise; ``"custom"``/``"custom:<key>"`` when the flavour is unset. An
    invalid protocol dict raises ValueError.
    """
    if not isinstance(record, dict) or not record:
        return None
    flavour = record.get("flavour")
    protocol = record.get("protocol")
    key = protocol_key(protocol) if isinstance(protocol, dict) else None
    if flavour == "system":
        return "system"
    if flavour == "bagged":
        return key if key is not None else "custom"
    if flavour is None:
        return "custom" if key is None else f"custom:{key}"
    return f"{flavour}:{key}" if key is not None else str(flavour)


# --- one file -> one row --------------------------------------------------------------------------


def _is_int(value: Any) -> bool:
    if type(value) is int:
        return True
    import numpy as np

    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _is_number(value: Any) -> bool:
    import numpy as np

    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))


def _repr_limits():

    limits = reprlib.Repr()
    limits.maxlevel, limits.maxstring, limits.maxother, limits.maxlong = 3, 60, 60, 40
    return limits


_REPR = _repr_limits()


def show(value: Any) -> str:
    """A short repr of a value with numpy scalars shown as the Python value they hold.

    Bounded whatever the value (reprlib cuts long containers, deep nesting, huge ints and
    long strings; numpy summarises arrays), and escaped, so it is safe to print.
    """
    item = getattr(value, "item", None)
    if callable(item) and getattr(value, "shape", None) == ():
        value = item()
    try:
        text = _REPR.repr(value)
    except Exception as exc:  # a value whose repr fails is still shown
        text = f"<{type(value).__name__}: repr failed with {type(exc).__name__}>"
    text = text.encode("ascii", "backslashreplace").decode("ascii") if not text.isascii() and not _valid(text) else text
    return text if len(text) <= 80 else text[:77] + "..."


def _valid(text: str) -> bool:
    """Whether ``text`` is valid Unicode (no lone surrogate), so it can be written as UTF-8."""
    if text.isascii():  # most text, told without encoding it
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


#: the most values (array elements, characters) a JSON-rendered field may hold; real hyperparameters hold dozens
MAX_RENDERED = 1_000_000


# shape: the loop over every value of every JSON field of every file indexed; exact types are tested
# before the isinstance chain because most values are plain scalars, and a helper call per value would
# cost more than the branches
def _rendered_size(value: Any, limit: int) -> int:
    """How many values rendering ``value`` as JSON would write, counted up to just past ``limit`` (no recursion)."""
    total, pending = 0, [value]
    while pending and total <= limit:
        item = pending.pop()
        total += 1
        kind = type(item)
        if kind in _PLAIN_SCALARS:  # most of what hyperparameters hold: checked by exact type first
            continue
        if kind is str or kind is bytes:
            total += len(item) // 16
        elif isinstance(item, dict):
            pending.extend(item.keys())
            pending.extend(item.values())
        elif isinstance(item, (list, tuple, set, frozenset)):
            pending.extend(item)
        elif isinstance(item, (str, bytes)):
            total += len(item) // 16
        elif getattr(item, "size", None) is not None and getattr(item, "ndim", 0):
            total += int(item.size) if item.dtype.kind != "O" else 0
            if item.dtype.kind == "O":
                pending.extend(item.reshape(-1).tolist())
    return total


_PLAIN_SCALARS = frozenset({int, float, bool, type(None)})


def _jsonable(value: Any) -> Any:
    import numpy as np

    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=repr)
    return repr(value)


#: every JSON field of a row is written with sorted keys (configs that agree share a value); one encoder for all
#: of them, since ``json.dumps`` with options builds a new one per call
_ENCODER = json.JSONEncoder(sort_keys=True, default=_jsonable, allow_nan=True)
#: what this module builds itself (artifact facts, validation bounds) is written as built: its keys come in one
#: order already, and it holds no cycle to look for
_BUILT_ENCODER = json.JSONEncoder(default=_jsonable, check_circular=False)


def _json(value: Any, label: str = "", row: _Row | None = None) -> str | None:
    """``value`` as JSON text; None (and a problem naming ``label``) when it is too large to record.

    The text of a small value is kept (:data:`_RENDERED`): every file of a config repeats its hyperparameters
    and every file of a run its validation protocol, and looking one up costs half of rendering it.
    """
    if value is None:
        return None
    try:
        key = _memo_key(value, [_MEMO_VALUES])
    except _Unkeyed:
        key = None
    else:
        text = _RENDERED.get(key)
        if text is not None:
            return text
    if _rendered_size(value, MAX_RENDERED) > MAX_RENDERED:
        if row is not None:
            row.decode_errors.append(f"{label} is too large to record (more than {MAX_RENDERED} values)")
        return None
    text = _ENCODER.encode(value)
    if key is not None and len(text) <= _MEMO_TEXT and len(_RENDERED) < _MEMO_SIZE:
        _RENDERED[key] = text
    return text


#: rendered JSON by :func:`_memo_key`, in this process: at most :data:`_MEMO_SIZE` texts of at most
#: :data:`_MEMO_TEXT` characters (the key's strings are in its text), each of a value of at most
#: :data:`_MEMO_VALUES` scalars and containers, far below :data:`MAX_RENDERED`: a kept value was never too large
_RENDERED: dict[Any, str] = {}
_MEMO_SIZE = 1024
_MEMO_TEXT = 8192
_MEMO_VALUES = 256


class _Unkeyed(Exception):
    """A value :func:`_json` does not keep: too large, or holding a type other than JSON's own."""


def _memo_key(value: Any, left: list[int]) -> Any:
    """A hashable key equal to another value's only when both render the same JSON text.

    Exact types only, each tagged with its type (``1``, ``1.0`` and ``True`` render apart) and floats by their
    repr (``0.0`` and ``-0.0`` compare equal but render apart); dicts with text keys, in their order.
    Raises :class:`_Unkeyed` for any other type, or once more than ``left[0]`` values were met.
    """
    left[0] -= 1
    if left[0] < 0:
        raise _Unkeyed
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return kind, value
    if kind is float:
        return kind, repr(value)
    if kind is dict:
        items = []
        for name, item in value.items():
            if type(name) is not str:
                raise _Unkeyed
            items.append((name, _memo_key(item, left)))
        return kind, tuple(items)
    if kind is list or kind is tuple:
        return kind, tuple([_memo_key(item, left) for item in value])
    raise _Unkeyed


def method_prefix(config_dir: str | None, framework: str | None, is_config: bool) -> str | None:
    """The method a config directory belongs to: the name before ``_c<i>``/``_r<i>``; baselines keep the whole name."""
    name = config_dir or framework
    if not name:
        return None
    if is_config:
        match = CONFIG_DIR.match(name)
        if match:
            return match.group("prefix")
    return name


class _Row:
    """Collects one row's fields and what could not be decoded while reading them.

    ``decode_errors`` holds each value the decoder could not turn into its column (a wrong type, a
    number out of range, a section that raised, a value too large to render, a measurement whose arrays
    do not line up): a fact about decoding, since the column then holds None and nothing else says why.
    ``invalid_text`` holds (field, shown value) of each text that is not valid Unicode (it cannot be
    stored either). Whether a decoded value is acceptable is judged by the rules (TA306).
    """

    def __init__(self):
        self.values: dict[str, Any] = {}
        self.decode_errors: list[str] = []
        self.invalid_text: list[dict[str, str]] = []

    def _typed(self, source: dict, key: str, label: str, required: bool, ok, kind: str) -> Any:
        """``source[key]`` when it passes ``ok``; otherwise None and a decode error (missing or wrong type)."""
        value = source.get(key)
        if value is None:
            if required:
                self.decode_errors.append(f"{label} missing")
            return None
        if not ok(value):
            self.decode_errors.append(f"{label} is not {kind} (got {show(value)})")
            return None
        return value

    def int_field(self, source: dict, key: str, label: str, *, required: bool = True) -> int | None:
        value = self._typed(source, key, label, required, _is_int, "an integer")
        if value is None:
            return None
        value = int(value)
        if not INT64_MIN <= value <= INT64_MAX:
            self.decode_errors.append(f"{label} is out of range (got {show(value)}; a 64-bit integer is expected)")
            return None
        return value

    def float_field(self, source: dict, key: str, label: str, *, required: bool = True) -> float | None:
        """The number as a float (NaN and infinities kept: the rules judge them)."""
        value = self._typed(source, key, label, required, _is_number, "a number")
        if value is None:
            return None
        try:
            number = float(value)
        except OverflowError:
            self.decode_errors.append(f"{label} is too large for a float (got {show(value)})")
            return None
        if _is_int(value) and not INT64_MIN <= int(value) <= INT64_MAX:  # TabArena's tables keep an int an int
            self.decode_errors.append(
                f"{label} is out of range (got {show(value)}; a float or a 64-bit integer is expected)"
            )
            return None
        return number

    def str_field(self, source: dict, key: str, label: str, *, required: bool = True) -> str | None:
        value = self._typed(source, key, label, required, lambda v: isinstance(v, str), "a string")
        if value is None:
            return None
        if not _valid(value):
            self.invalid_text.append({"field": label, "shown": show(value)})
            return None
        return str(value)

    def dict_field(self, source: dict, key: str, label: str) -> dict | None:
        value = source.get(key)
        if value is not None and not isinstance(value, dict):
            self.decode_errors.append(f"{label} is not a dict (got {type(value).__name__})")
            return None
        return value


def layout(rel: str | Path) -> dict[str, Any]:
    """What the path says: ``<config dir>/<task key>/<repeat>_<fold>/results.pkl`` (a string uses ``/``)."""
    parts = rel.split("/") if isinstance(rel, str) else rel.parts
    out: dict[str, Any] = {
        "config_dir": None,
        "task_dir": None,
        "split_dir": None,
        "dir_repeat": None,
        "dir_fold": None,
    }
    if len(parts) >= 4:
        out.update(config_dir=parts[-4], task_dir=parts[-3], split_dir=parts[-2])
        match = SPLIT_DIR.match(parts[-2])
        if match:
            out.update(dir_repeat=int(match.group(1)), dir_fold=int(match.group(2)))
    return out


def _task_metadata(result: dict, row: _Row) -> tuple[dict, bool]:
    """The task metadata and whether it came from the legacy top-level layout."""
    tm = result.get("task_metadata")
    if tm is None:
        if any(k in result for k in ("dataset", "fold", "tid")):
            fold = result.get("fold")
            return {
                "tid": result.get("tid"),
                "name": result.get("dataset"),
                "fold": fold,
                "repeat": 0,
                "sample": 0,
                "split_idx": fold,
            }, True
        row.decode_errors.append("task_metadata missing")
        return {}, False
    if not isinstance(tm, dict):
        row.decode_errors.append(f"task_metadata is not a dict (got {type(tm).__name__})")
        return {}, False
    return tm, False


def _simulation_artifacts(result: dict, row: _Row) -> dict | None:
    """The flat simulation artifacts; legacy results nest them under dataset and fold."""
    sa = row.dict_field(result, "simulation_artifacts", "simulation_artifacts")
    for _ in range(2):
        if sa is None or "bag_info" in sa or "pred_proba_dict_test" in sa or len(sa) != 1:
            break
        inner = next(iter(sa.values()))
        if not isinstance(inner, dict):
            break
        sa = inner
    return sa


def _prediction(sa: dict, key: str, framework: str | None):
    """The stored prediction TabArena's loader rebuilds: the framework's entry of ``sa[key]`` (the only entry
    when there is one, whatever its key), else ``pred_test``/``pred_val``; None when there is none."""
    import numpy as np

    preds = sa.get(key)
    if not isinstance(preds, dict):
        single = "pred_test" if key.endswith("test") else "pred_val"
        value = sa.get(single)
        return value if isinstance(value, np.ndarray) else None
    if framework in preds:
        value = preds[framework]
    elif len(preds) == 1:
        value = next(iter(preds.values()))
    else:
        return None
    return value if isinstance(value, np.ndarray) else None


def _fidelity(sa: dict, framework: str | None) -> dict[str, Any]:
    """Rebuild the test and validation predictions from the bag children, like TabArena's loader.

    A measurement that cannot be made (a stored prediction of another shape than the children's, children
    that cannot be averaged, positions outside the rows) stays None: the artifacts' facts show why, and
    TA306 says so when the gate runs (tabarena_checks.rules.raw_artifacts).
    """
    import numpy as np

    out: dict[str, Any] = dict(NO_FIDELITY)
    bag = sa.get("bag_info")
    if not isinstance(bag, dict):
        return out
    children = bag.get("pred_proba_test_per_child", bag.get("pred_test_per_child"))
    if not isinstance(children, (list, tuple)) or not children:
        return out
    out["num_bag_children"] = len(children)
    stored = _prediction(sa, "pred_proba_dict_test", framework)
    try:
        # one float64 sum down the stacked children, in their order: the same float as adding them one by one
        rebuilt = (np.add.reduce(children, axis=0, dtype=np.float64) / len(children)).astype(np.float32)
        if stored is not None and stored.shape == rebuilt.shape:
            close = _isclose(rebuilt, stored, TEST_RTOL)
            out["test_not_close_pct"] = float((1.0 - _mean(close)) * 100.0) if close.size else 0.0
    except (ValueError, TypeError):  # children or a prediction of other shapes or kinds: not measured
        pass
    out.update(_val_fidelity(sa, bag, framework))
    return out


#: the fidelity columns of a result without a bag to rebuild its predictions from
NO_FIDELITY = {
    "num_bag_children": None,
    "test_not_close_pct": None,
    "val_not_close": None,
    "val_not_close_pct": None,
    "val_labels_missing": None,
}


def _mean(flags) -> float:
    """``flags.mean()`` of a non-empty boolean array (the share of True), without numpy's Python-level wrapper:
    the count is exact, so the quotient is the same float."""
    import numpy as np

    return np.count_nonzero(flags) / flags.size


def _isclose(a, b, rtol: float):
    """``numpy.isclose(a, b, rtol)`` (atol 1e-8, NaN never close, equal infinities close), in fewer passes."""
    import numpy as np

    with np.errstate(invalid="ignore"):
        scale = np.abs(b)
        close = np.abs(a - b) <= 1e-8 + rtol * scale
    return (close & (scale != np.inf)) | (a == b)


def _val_fidelity(sa: dict, bag: dict, framework: str | None) -> dict[str, Any]:
    """Whether the stored validation predictions match the children's (``val_not_close`` and its share), and
    for a single child that records row labels, whether one is missing from ``y_val_idx``
    (``val_labels_missing``).

    Nothing when the predictions or the children's positions are missing or cannot be compared (other
    lengths, positions outside the rows): the artifacts' facts say which.
    """
    stored = _prediction(sa, "pred_proba_dict_val", framework)
    val_idx = bag.get("val_idx_per_child")
    y_val_idx = sa.get("y_val_idx")
    if stored is None or not isinstance(val_idx, (list, tuple)) or not val_idx or y_val_idx is None:
        return {}
    n = len(y_val_idx)
    if len(stored) != n:
        return {}
    per_child = bag.get("pred_val_per_child")
    val_idx, missing = _child_positions(val_idx, per_child, y_val_idx)
    if val_idx is None:
        return {"val_labels_missing": missing}
    try:
        bad = _val_not_close(stored, val_idx, per_child, n)
    except (IndexError, ValueError):
        return {"val_labels_missing": missing}
    return {
        "val_not_close": bool(bad.any()),
        "val_not_close_pct": float(_mean(bad) * 100.0) if bad.size else 0.0,
        "val_labels_missing": missing,
    }


def _child_positions(val_idx, per_child, y_val_idx) -> tuple[list | None, bool | None]:
    """Each child's validation positions (None when they cannot be found), and for a single child that
    records row labels whether one of them is missing from ``y_val_idx`` (None for other bags).

    Apart because a single (use_child_oof) child without its own predictions records training-row
    labels; TabArena maps them to positions, and a label missing from ``y_val_idx`` is a damaged result.
    """
    import numpy as np

    val_idx = [np.asarray(idx) for idx in val_idx]
    if len(val_idx) != 1 or per_child is not None:
        return val_idx, None
    positions = _label_positions(np.asarray(y_val_idx), val_idx[0])
    return (None, True) if positions is None else ([positions], False)


def _label_positions(labels, wanted):
    """The positions in ``labels`` of each of the ``wanted`` labels, or None when one is missing."""
    import numpy as np

    n = len(labels)
    order = np.argsort(labels, kind="stable")
    pos = np.clip(np.searchsorted(labels[order], wanted), 0, max(n - 1, 0))
    if n == 0 or not np.array_equal(labels[order][pos], wanted):
        return None
    return order[pos]


def _val_not_close(stored, val_idx: list, per_child, n: int):
    """Per validation row, whether the out-of-fold rebuild from the children differs from the stored prediction.

    :raises IndexError, ValueError: a child's positions fall outside the ``n`` rows.
    """
    import numpy as np

    if isinstance(per_child, (list, tuple)) and len(per_child) == len(val_idx):
        total = np.zeros(stored.shape, dtype=np.float64)
        count = np.zeros(n, dtype=np.int64)
        for idx, pred in zip(val_idx, per_child):
            count[idx] += 1
            total[idx] += pred
        with np.errstate(invalid="ignore", divide="ignore"):
            rebuilt = (total / (count if total.ndim == 1 else count[:, None])).astype(np.float32)
        return ~_isclose(rebuilt, stored, VAL_RTOL)
    # Without per-child predictions TabArena takes each child's as the stored prediction at
    # the child's rows, so the average over the children holding a row out is exactly that
    # row's stored value; it differs (NaN) only where no child held the row out, or the
    # stored value is NaN. Equivalent to the full rebuild, without the arithmetic.
    covered = np.zeros(n, dtype=bool)
    covered[np.concatenate(val_idx)] = True
    return np.isnan(stored) | (~covered if stored.ndim == 1 else ~covered[:, None])


def _protocol_fields(result: dict, row: _Row) -> dict[str, Any]:
    record = result.get("validation_protocol")
    out: dict[str, Any] = dict(_PROTOCOL_NONE)
    if record is None:
        return out
    if not isinstance(record, dict):
        row.decode_errors.append(f"validation_protocol is not a dict (got {type(record).__name__})")
        return out
    out["has_vp_record"] = bool(record)
    if record:
        out.update(_record_fields(record, row))
    return out


def _record_fields(record: dict, row: _Row) -> dict[str, Any]:
    """The fields of a non-empty validation-protocol record; a field of the wrong kind is a problem of the row."""
    out: dict[str, Any] = {}
    try:
        out["vp_key"] = record_key(record)
    except ValueError as exc:
        row.decode_errors.append(f"validation_protocol.protocol is invalid: {exc}")
    out.update(_flavour_and_protocol(record, row))
    stored = record.get("key")
    out["vp_stored_key"] = stored if isinstance(stored, str) else None
    for kind in ("folds", "sets"):
        _bag_count(record, kind, out, row)
    child_oof = record.get("child_oof")
    out["vp_child_oof"] = bool(child_oof) if child_oof is not None else None
    models = record.get("num_child_models")
    out["vp_num_child_models"] = int(models) if _is_int(models) else None
    return out


def _flavour_and_protocol(record: dict, row: _Row) -> dict[str, Any]:
    """``vp_flavour`` (a string) and ``vp_protocol`` (the protocol dict as JSON); other kinds are decode errors."""
    out: dict[str, Any] = {}
    flavour = record.get("flavour")
    if flavour is not None and not isinstance(flavour, str):
        row.decode_errors.append(f"validation_protocol.flavour is not a string (got {show(flavour)})")
    else:
        out["vp_flavour"] = flavour
    protocol = record.get("protocol")
    if protocol is not None and not isinstance(protocol, dict):
        row.decode_errors.append(f"validation_protocol.protocol is not a dict (got {type(protocol).__name__})")
    out["vp_protocol"] = _json(protocol, "validation_protocol.protocol", row) if isinstance(protocol, dict) else None
    return out


def _bag_count(record: dict, kind: str, out: dict[str, Any], row: _Row) -> None:
    """``vp_num_bag_<kind>`` from the fitted count, else the resolved one (an integer, or a problem)."""
    for source in (f"num_bag_{kind}_fitted", f"num_bag_{kind}_resolved"):
        value = record.get(source)
        if value is None:
            continue
        if _is_int(value):
            out[f"vp_num_bag_{kind}"] = int(value)
        else:
            row.decode_errors.append(f"validation_protocol.{source} is not an integer (got {show(value)})")
        return


def _method_fields(result: dict, row: _Row) -> dict[str, Any]:
    mm = row.dict_field(result, "method_metadata", "method_metadata")
    out: dict[str, Any] = {"has_method_metadata": mm is not None}
    mm = mm or {}
    hp = mm.get("model_hyperparameters") if isinstance(mm.get("model_hyperparameters"), dict) else {}
    out.update(_config_entry_facts(mm))
    ag_args = hp.get("ag_args") if isinstance(hp.get("ag_args"), dict) else {}
    ensemble = hp.get("ag_args_ensemble") if isinstance(hp.get("ag_args_ensemble"), dict) else {}
    model_cls = mm.get("model_cls")
    out["model_cls"] = model_cls if isinstance(model_cls, str) else (None if model_cls is None else show(model_cls))
    out["model_type"] = row.str_field(mm, "model_type", "method_metadata.model_type", required=False)
    ag_key = mm.get("ag_key", mm.get("model_type"))
    out["ag_key"] = ag_key if isinstance(ag_key, str) else None
    out["name_prefix"] = row.str_field(mm, "name_prefix", "method_metadata.name_prefix", required=False)
    suffix = ag_args.get("name_suffix")
    out["name_suffix"] = suffix if isinstance(suffix, str) else None
    out["num_cpus"] = row.int_field(mm, "num_cpus", "method_metadata.num_cpus", required=False)
    out["num_gpus"] = row.float_field(mm, "num_gpus", "method_metadata.num_gpus", required=False)
    out["disk_usage"] = row.float_field(mm, "disk_usage", "method_metadata.disk_usage", required=False)
    use_child_oof = ensemble.get("use_child_oof")
    out["use_child_oof"] = bool(use_child_oof) if use_child_oof is not None else None
    out["hyperparameters"] = _json(mm.get("model_hyperparameters"), "method_metadata.model_hyperparameters", row)
    out["method_hyperparameters"] = _json(mm.get("hyperparameters"), "method_metadata.hyperparameters", row)
    return out


def _config_entry_facts(mm: dict) -> dict[str, Any]:
    """Which keys of a config's entry of configs_hyperparameters.json method_metadata (``mm``) holds: whether
    ``model_type`` is there, and ``model_hyperparameters`` as "missing", "dict" or "other" (then shown).
    All None when method_metadata is missing or empty."""
    if not mm:
        return {"has_model_type_key": None, "model_hyperparameters_kind": None, "model_hyperparameters_shown": None}
    hp = mm.get("model_hyperparameters", _MISSING)
    kind = "missing" if hp is _MISSING else "dict" if isinstance(hp, dict) else "other"
    return {
        "has_model_type_key": "model_type" in mm,
        "model_hyperparameters_kind": kind,
        "model_hyperparameters_shown": show(hp) if kind == "other" else None,
    }


_MISSING = object()


def row_from_result(result: dict, rel: str | Path) -> dict[str, Any]:
    """The metadata row of one loaded result at ``rel`` (relative to the data directory, see :func:`layout`)."""
    row = _Row()
    v = row.values
    v.update(layout(rel))
    v["framework"] = row.str_field(result, "framework", "framework")
    v.update(_task_fields(result, row))
    v.update(_score_fields(result, row))
    v.update(_guarded(row, "method_metadata", lambda: _method_fields(result, row), _METHOD_NONE))
    v.update(_artifact_fields(result, v, row))
    v.update(_guarded(row, "validation_protocol", lambda: _protocol_fields(result, row), _PROTOCOL_NONE))
    single_oof = bool(v["use_child_oof"]) and v["num_bag_children"] == 1
    v["child_oof"] = v["vp_child_oof"] if v["vp_child_oof"] is not None else single_oof
    v["method_prefix"] = method_prefix(v["config_dir"], v["framework"], v["has_sim_artifacts"])
    _drop_invalid_text(v, row)
    v["decode_errors"] = row.decode_errors
    v["invalid_text"] = row.invalid_text
    return v


def _task_fields(result: dict, row: _Row) -> dict[str, Any]:
    """The task and split a result is for; the legacy layout keeps them at the top level under other names."""
    tm, legacy = _task_metadata(result, row)
    return {
        "is_legacy_layout": legacy,
        "tid": row.int_field(tm, "tid", "tid" if legacy else "task_metadata.tid"),
        "dataset": row.str_field(tm, "name", "dataset" if legacy else "task_metadata.name"),
        "repeat": row.int_field(tm, "repeat", "task_metadata.repeat", required=not legacy and bool(tm)),
        "fold": row.int_field(tm, "fold", "fold" if legacy else "task_metadata.fold", required=bool(tm) or legacy),
        "sample": row.int_field(tm, "sample", "task_metadata.sample", required=False),
        "split_idx": row.int_field(tm, "split_idx", "task_metadata.split_idx", required=False),
    }


def _score_fields(result: dict, row: _Row) -> dict[str, Any]:
    """The problem type, the metric (under TabArena's name for it) and the test error and times."""
    problem_type = row.str_field(result, "problem_type", "problem_type")
    metric = row.str_field(result, "metric", "metric")
    return {
        "problem_type": problem_type,
        "metric": tabarena_name(metric) if metric else metric,
        "metric_error": row.float_field(result, "metric_error", "metric_error"),
        "time_train_s": row.float_field(result, "time_train_s", "time_train_s"),
        "time_infer_s": row.float_field(result, "time_infer_s", "time_infer_s"),
    }


def _artifact_fields(result: dict, v: dict[str, Any], row: _Row) -> dict[str, Any]:
    """Whether the result holds simulation artifacts, its validation error (and whether the key is there, None or
    missing), what the artifacts hold (:func:`tabarena_checks.raw.artifacts.facts`, as JSON), and how faithfully
    the stored predictions reproduce its errors (``None`` without artifacts)."""
    sa = _simulation_artifacts(result, row)
    state = (
        "missing" if "metric_error_val" not in result else "none" if result["metric_error_val"] is None else "present"
    )
    out = {
        "has_sim_artifacts": sa is not None,
        "metric_error_val": row.float_field(result, "metric_error_val", "metric_error_val", required=False),
        "metric_error_val_state": state,
        "artifact_facts": None,
        "val_position_bounds": None,
    }
    out.update(artifacts.label_rows(sa))
    if sa is None:
        return {**out, **NO_FIDELITY}
    out.update(_guarded(row, "simulation_artifacts", lambda: _artifact_json(sa, v["framework"]), {}))
    return {**out, **_guarded(row, "simulation_artifacts", lambda: _fidelity(sa, v["framework"]), NO_FIDELITY)}


#: artifact fields that repeat one of the result's (TabArena 0.1.0 asserts each equal to it when present)
REPEATED = ("eval_metric", "metric", "problem_type", "problem_type_transform")


def _artifact_json(sa: dict, framework: str | None) -> dict[str, str | None]:
    """``artifact_facts``: :func:`tabarena_checks.raw.artifacts.facts` of ``sa`` with the names it repeats
    (:func:`_text_or_shown` per key present), as JSON (configs of a task split share it when their artifacts
    agree: facts are built with their keys in one order), and ``val_position_bounds``: the bag children's
    validation positions, JSON."""
    facts = artifacts.facts(sa, framework, show)
    bounds = facts["bag"].pop("position_bounds") if facts["bag"] is not None else None
    facts["repeated"] = {key: _text_or_shown(sa[key]) for key in REPEATED if key in sa}
    return {
        "artifact_facts": _BUILT_ENCODER.encode(facts),
        "val_position_bounds": None if bounds is None else _BUILT_ENCODER.encode(bounds),
    }


def _text_or_shown(value: Any) -> list[str | None]:
    """``[value, None]`` for valid text, else ``[None, how it is shown]``."""
    return [value, None] if isinstance(value, str) and _valid(value) else [None, show(value)]


def _drop_invalid_text(v: dict[str, Any], row: _Row) -> None:
    """Text that is not valid Unicode (a lone surrogate) cannot be stored, printed or written as UTF-8: the
    value becomes ``None`` and ``(field, shown value)`` an entry of the row's ``invalid_text``."""
    if "".join([value for value in v.values() if type(value) is str]).isascii():  # the usual row, in one check
        return
    for key, value in v.items():
        if type(value) is str and not value.isascii() and not _valid(value):
            row.invalid_text.append({"field": key, "shown": show(value)})
            v[key] = None


#: the fields of a section that could not be read at all
_METHOD_NONE = {
    "has_method_metadata": False,
    "has_model_type_key": None,
    "model_hyperparameters_kind": None,
    "model_hyperparameters_shown": None,
    "model_cls": None,
    "model_type": None,
    "ag_key": None,
    "name_prefix": None,
    "name_suffix": None,
    "num_cpus": None,
    "num_gpus": None,
    "disk_usage": None,
    "use_child_oof": None,
    "hyperparameters": None,
    "method_hyperparameters": None,
}
_PROTOCOL_NONE = {
    "has_vp_record": False,
    "vp_key": None,
    "vp_flavour": None,
    "vp_num_bag_folds": None,
    "vp_num_bag_sets": None,
    "vp_child_oof": None,
    "vp_num_child_models": None,
    "vp_protocol": None,
    "vp_stored_key": None,
}


def _guarded(row: _Row, field: str, read: Callable[[], T], default: T) -> T:
    """``read()``, or ``default`` and a decode error naming ``field`` when reading it raised (an odd type, a 0-d
    array where rows are expected, an index out of range): one odd field is that file's finding, not a crash."""
    try:
        return read()
    except Exception as exc:
        row.decode_errors.append(f"{field} cannot be read ({type(exc).__name__}: {_text(exc)})")
        return default


def decode_row(
    path: str | Path, *, root: str | Path | None = None, max_bytes: int = DEFAULT_MAX_BYTES
) -> dict[str, Any]:
    """Read ``path`` safely and return its metadata row (``path`` relative to ``root`` when given)."""
    path = Path(path)
    try:
        st = path.stat()
    except OSError as exc:
        raise RawFileError(path, f"cannot be read ({exc.strerror or exc})") from None
    rel = path.relative_to(root) if root is not None else path
    notes: list[str] = []
    row = row_from_result(load_result(path, max_bytes=max_bytes, notes=notes), rel)
    row.update(path=rel.as_posix(), size=st.st_size, mtime_ns=st.st_mtime_ns, unread=notes)
    return row
