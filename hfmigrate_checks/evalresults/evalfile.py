"""One ``.eval_results`` file, parsed (:class:`EvalFile`), and the date rule its entries follow.

The Hub's state (:mod:`hfmigrate_checks.hub.state`), the ledger importers
(:mod:`hfmigrate_checks.source.ledger`) and the draft validator
(:mod:`hfmigrate_checks.drafts.validate`) all read these; the validator holds the rest of the
per-entry checks.
"""

from __future__ import annotations

import datetime as dt
import functools
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import attrs

from checks import Finding, io


@attrs.frozen
class EvalFile:
    """One ``.eval_results`` file: its path, text, and the parsed data or why it did not parse."""

    path: str
    text: str
    data: Any = None
    error: str = ""
    #: where ``error`` was found (1 when the file as a whole is at fault)
    error_line: int = 1
    #: its column, when the parser knows it
    error_col: int | None = None

    @classmethod
    def parse(cls, path: str, text: str) -> EvalFile:
        try:
            return cls(path, text, io.loads_yaml(text))
        except io.YamlError as exc:
            return cls(path, text, None, f"cannot parse YAML: {exc.reason}", exc.line or 1, exc.col)

    @classmethod
    def read(cls, path: str | Path, name: str | None = None) -> EvalFile:
        """Read ``path`` within :mod:`checks.io`'s limits and parse it; ``name`` reports it (default: the path)."""
        name = name or Path(path).as_posix()
        try:
            text = io.read_text(path, what="an .eval_results file")
        except io.ReadError as exc:
            return cls(name, "", None, f"cannot read file: {exc.reason}", error_line=exc.line or 1, error_col=exc.col)
        return cls.parse(name, text)

    def at(self, n: int, key: str | None = None) -> dict[str, int]:
        """``line``/``col`` (1-based) of entry ``n``'s ``key`` (dotted: ``dataset.task_id``), else of the entry.

        Keyword arguments for :class:`checks.Finding`; empty when the text has no such entry.
        """
        found = positions(self.text)
        if not 1 <= n <= len(found):
            return {}
        start, keys = found[n - 1]
        line, col = keys.get(key, start) if key else start
        return {"line": line, "col": col}

    def entries(self) -> list[tuple[int, dict]]:
        """(1-based index, entry) for each mapping entry of a list root; anything else yields nothing."""
        if not isinstance(self.data, list):
            return []
        return [(n, e) for n, e in enumerate(self.data, start=1) if isinstance(e, dict)]


def entry_findings(
    files: Iterable[EvalFile], problem_of: Callable[[dict], str | None], key: str, *, unparsed: bool = False
) -> Iterator[Finding]:
    """A finding ``entry N: <problem>`` at ``key`` of each entry ``problem_of`` finds a problem in, file by file
    (with ``unparsed``, a file that could not be read or parsed is a finding of its own).

    The rules that judge entries one by one word and place their findings alike through it, so a
    reviewer reads every entry's problem the same way, at the key to edit.
    """
    for file in files:
        if unparsed and file.error:
            yield Finding(file.error, path=file.path)
        for n, entry in file.entries():
            problem = problem_of(entry)
            if problem:
                yield Finding(f"entry {n}: {problem}", path=file.path, **file.at(n, key))


def date_problem(entry: dict) -> str | None:
    """``date`` must be a quoted ISO-8601 string naming a real date (or datetime)."""
    if "date" not in entry:
        return None
    value = entry["date"]
    if isinstance(value, io.Timestamp):
        try:
            dt.datetime.fromisoformat(str(value).replace("Z", "+00:00"))
        except ValueError:
            return (
                f"'date' must be a real calendar date (got {str(value)!r}), written as a quoted string; "
                "unquoted, YAML 1.1 readers fail on it"
            )
        return f'date must be a quoted string like "{value}" (unquoted, YAML 1.1 readers turn it into a date object)'
    if not isinstance(value, str):
        return f"date must be an ISO-8601 string (got {value!r})"
    try:
        dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return f"date must be a real ISO-8601 date or datetime (got {value!r})"
    return None


@functools.lru_cache(maxsize=256)
def positions(text: str) -> tuple[tuple[tuple[int, int], dict[str, tuple[int, int]]], ...]:
    """Where each top-level list item starts and where each of its keys is, as 1-based (line, col).

    Keys of nested mappings are dotted (``dataset.task_id``). The text is composed into YAML
    nodes (no values are built) only when a rule reports a finding; text that does not
    compose, or whose root is not a list, has no positions.
    """
    import yaml

    try:
        root = yaml.compose(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError:
        return ()
    if not isinstance(root, yaml.SequenceNode):
        return ()

    def mark(node) -> tuple[int, int]:
        return node.start_mark.line + 1, node.start_mark.column + 1

    def keys(node, prefix: str, out: dict[str, tuple[int, int]]) -> dict[str, tuple[int, int]]:
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                if isinstance(key, yaml.ScalarNode):
                    out.setdefault(prefix + key.value, mark(key))
                    keys(value, f"{prefix}{key.value}.", out)
        return out

    return tuple((mark(item), keys(item, "", {})) for item in root.value)
