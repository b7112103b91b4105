"""What a published file of a method cache may be: its name in the layout the engines write, its bytes of that kind.

Upload checks every file it publishes against the manifest that a signed process record names, so
a file is published only as process wrote it. This is the check behind that one, which holds even
when the evidence does not (a leaked key, a record signed for other bytes): a file is published only
under a name the engines write (docs/tabarena-data.md; the two engines write the same list, the
parity tests say so), and only when its bytes are what that name says: a parquet file with its
footer, JSON, a label archive of one entry, a results.pkl the reader reads in its strict mode. So no
pickle reaches processed.zip, and no raw file holds a class the reader does not load, whatever the
manifest lists.
"""

from __future__ import annotations

import io
import json
import re
import zipfile

from checks import io as checks_io
from tabarena_checks.raw import reader

#: the tables of results/ (TabArena 0.1.0: model results, the HPO simulation's two, a portfolio's)
RESULT_TABLES = frozenset({"model_results", "hpo_results", "hpo_trajectories", "portfolio_results"})
#: the files at the top of processed/
PROCESSED_FILES = frozenset(
    {
        "configs.parquet",
        "baselines.parquet",
        "task_metadata.parquet",
        "configs_hyperparameters.json",
        "metadata.json",
        "context.json",
    }
)
#: the files of one task split under processed/model_predictions/<dataset>/<split>/
PREDICTION_FILES = frozenset(
    {"metadata.json", "pred-val.dat", "pred-test.dat", "label-val.csv.zip", "label-test.csv.zip"}
)
_SEGMENT = r"[^/\x00]+"
_LAYOUT = re.compile(
    rf"metadata\.yaml"
    rf"|results/(?P<table>{_SEGMENT})\.parquet"
    rf"|processed/model_predictions/{_SEGMENT}/\d+/(?P<prediction>{_SEGMENT})"
    rf"|processed/(?P<processed>{_SEGMENT})"
    rf"|raw/{_SEGMENT}/\d+/\d+_\d+/results\.pkl"
)
#: the JSON files are small (a few MiB for thousands of configs); larger is not what an engine wrote
MAX_JSON = 64 * 1024 * 1024
#: a label CSV holds one row per test or validation row: far below this for any TabArena task
MAX_LABELS = 1024 * 1024 * 1024


def problem(rel: str, data: bytes) -> str:
    """Why ``data`` may not be published as the cache file ``rel`` (relative to the method's directory), or ""."""
    match = _LAYOUT.fullmatch(rel)
    if (
        match is None
        or (match["table"] is not None and match["table"] not in RESULT_TABLES)
        or (match["prediction"] is not None and match["prediction"] not in PREDICTION_FILES)
        or (match["processed"] is not None and match["processed"] not in PROCESSED_FILES)
        or any(part in ("", ".", "..") for part in rel.split("/"))
    ):
        return f"{rel}: not a file the engines write (docs/tabarena-data.md lists the cache's layout)"
    return _content_problem(rel, data)


def _content_problem(rel: str, data: bytes) -> str:
    """Why the bytes are not of the kind ``rel``'s name says, or ""."""
    if rel.endswith(".parquet"):
        return _parquet_problem(rel, data)
    if rel.endswith(".json"):
        return _json_problem(rel, data)
    if rel.endswith(".csv.zip"):
        return _label_zip_problem(rel, data)
    if rel.endswith("results.pkl"):
        try:
            reader.unpickle(rel, reader.unpack(rel, data))
        except reader.RawFileError as exc:
            return str(exc)
    return ""


def _parquet_problem(rel: str, data: bytes) -> str:
    import pyarrow as pa
    import pyarrow.parquet as pq

    if not (data.startswith(b"PAR1") and data.endswith(b"PAR1")):
        return f"{rel}: not a parquet file (no PAR1 magic at both ends)"
    try:
        pq.read_metadata(pa.BufferReader(data))
    except (pa.ArrowException, OSError, ValueError) as exc:
        return f"{rel}: its parquet footer cannot be read ({exc})"
    return ""


def _json_problem(rel: str, data: bytes) -> str:
    if len(data) > MAX_JSON:
        return f"{rel}: {len(data)} bytes, more than the {MAX_JSON}-byte limit of a JSON file the engines write"
    try:
        json.loads(checks_io.decode(data, rel))
    except checks_io.ReadError as exc:
        return f"{rel}: not UTF-8 JSON ({exc.reason})"
    except ValueError as exc:
        return f"{rel}: not JSON ({exc})"
    return ""


def _label_zip_problem(rel: str, data: bytes) -> str:
    """A label archive holds one entry, the CSV named after the archive (as pandas' ``compression="zip"``)."""
    want = rel.rsplit("/", 1)[-1].removesuffix(".zip")
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            names = [info.filename for info in zf.infolist()]
            if names != [want]:
                return f"{rel}: holds the entries {names!r}, expected only {want!r}"
            size = 0
            with zf.open(want) as entry:  # its CRC is checked as it is read to the end, within a bound
                while chunk := entry.read(1 << 20):
                    size += len(chunk)
                    if size > MAX_LABELS:
                        return f"{rel}: {want} expands beyond {MAX_LABELS} bytes"
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        return f"{rel}: not a readable zip ({exc})"
    return ""
