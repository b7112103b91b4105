"""Inline suppressions: ``# checks: ignore[TA110] reason`` in info.py and in YAML drafts.

A waiver in rules.toml is for a target and carries an owner and an expiry; an inline
suppression sits next to the line it excuses, so a reviewer sees it in the diff. Each one
must give a reason, name rules that exist and are not required (a required rule is only
ever waived), and suppress something: like ruff's RUF100 an unused suppression is
reported (CK003), and a malformed one is an error (CK004) that suppresses nothing.

Where it applies:

- at the end of a line: findings on that line; when a statement or call starts on that
  line (``nori = MethodMetadata.config(  # checks: ignore[TA110] ...``), every line of it;
- alone on its line: the next line of code, with the same rule for what starts there;
- in YAML, a line starting a list item (``- dataset: ...``) covers the whole item.
"""

from __future__ import annotations

import ast
import functools
import io
import os
import re
import tokenize
from collections.abc import Iterable

import attrs

from checks import io as checks_io
from checks.model import Finding

#: any comment that means to be a checks directive, so a malformed one is reported, not ignored
_LOOSE = re.compile(r"#\s*checks\s*:\s*ignore\b(?P<rest>.*)$")
_STRICT = re.compile(r"^\[(?P<codes>[^\]]*)\](?P<reason>.*)$")
_CODE = re.compile(r"^[A-Z]{2,4}[0-9]{3}$")
#: the file kinds scanned for suppressions
SUFFIXES = (".py", ".yaml", ".yml")
MAX_BYTES = 4_000_000


@attrs.frozen
class Suppression:
    """One ``# checks: ignore[...]`` comment: where it is, what it covers, what it names, why."""

    path: str
    line: int
    first: int
    last: int
    codes: tuple[str, ...]
    reason: str
    #: why it is malformed (it then suppresses nothing)
    problem: str = ""
    #: the column the comment starts at (1-based)
    col: int | None = None

    @property
    def id(self) -> str:
        return f"{self.path}:{self.line}"

    def covers(self, line: int | None) -> bool:
        return line is not None and self.first <= line <= self.last


def parse_comment(comment: str) -> tuple[tuple[str, ...], str, str] | None:
    """``(codes, reason, problem)`` of a comment, or None when it is no checks directive."""
    loose = _LOOSE.search(comment)
    if loose is None:
        return None
    strict = _STRICT.match(loose["rest"].strip())
    if strict is None:
        return (), "", "expected '# checks: ignore[CODE, ...] reason'"
    codes = tuple(c.strip() for c in strict["codes"].split(",") if c.strip())
    reason = strict["reason"].strip().lstrip(":-–— ").strip()
    return codes, reason, _directive_problem(codes, reason)


def _directive_problem(codes: tuple[str, ...], reason: str) -> str:
    """What is wrong with a well-formed directive's codes or reason ("" when nothing): the first problem only."""
    bad = [c for c in codes if not _CODE.match(c)]
    if not codes:
        return "names no rule code; write ignore[TA110]"
    if bad:
        return f"{', '.join(repr(c) for c in bad)} is not a rule code like 'TA110'"
    if not reason:
        return "gives no reason; write why after the bracket, e.g. ignore[TA110] dated before 2020"
    return ""


def _python(path: str, text: str) -> list[Suppression]:
    comments = _python_comments(text)
    if not comments:
        return []
    spans, code_lines = _statement_spans(text)
    out = []
    for line, comment, own_line, col in comments:
        parsed = parse_comment(comment)
        if parsed is None:
            continue
        first = line
        if own_line:
            first = next((n for n in code_lines if n > line), line)
        out.append(Suppression(path, line, first, spans.get(first, first), *parsed, col=col))
    return out


def _python_comments(text: str) -> list[tuple[int, str, bool, int]]:
    """(line, comment, alone on its line, column) of each comment; none if the file does not tokenize."""

    comments = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT:
                own_line = not tok.line[: tok.start[1]].strip()
                comments.append((tok.start[0], tok.string, own_line, tok.start[1] + 1))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return []
    return comments


def _statement_spans(text: str) -> tuple[dict[int, int], list[int]]:
    """(first line -> last line of the statements and calls starting there, the sorted first lines):
    what a directive alone on its line covers; nothing if the file does not parse."""
    try:
        nodes = [n for n in ast.walk(ast.parse(text)) if isinstance(n, (ast.stmt, ast.Call))]
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        nodes = []
    spans: dict[int, int] = {}
    for node in nodes:
        spans[node.lineno] = max(spans.get(node.lineno, node.lineno), node.end_lineno or node.lineno)
    return spans, sorted({n.lineno for n in nodes} | set(spans))


def _yaml(path: str, text: str) -> list[Suppression]:
    lines = text.splitlines()
    out = []
    for index, col, comment in _yaml_comments(text):
        parsed = parse_comment(comment)
        if parsed is None or index >= len(lines):
            continue
        first = index
        if not lines[index][:col].strip():  # alone on its line: the next line of content
            first = next((j for j in range(index + 1, len(lines)) if _content(lines[j])), index)
        last = _item_end(lines, first)
        out.append(Suppression(path, index + 1, first + 1, last + 1, *parsed, col=col + 1))
    return out


_BREAKS = "\0\r\n\x85\u2028\u2029"


def _yaml_comments(text: str) -> list[tuple[int, int, str]]:
    """(0-based line, 0-based column, text) of each comment, as pyyaml's own scanner finds them.

    Text that merely looks like a comment inside a quoted string (``"see \\" # checks: ..."``) or a
    block scalar (``|``) is content, and only the scanner knows: a text scan took such content for a
    directive. Only tokens are made (no document is built, so no alias is expanded). A file the
    scanner refuses yields none, so its findings stand.
    """
    import yaml  # only when a file has a directive-like comment: the hooks start fast

    scanner = _comment_scanner()(text)
    try:
        while not scanner.check_token(yaml.StreamEndToken):
            scanner.get_token()
    except (yaml.YAMLError, RecursionError, MemoryError):
        return []
    finally:
        scanner.dispose()
    return scanner.found


@functools.cache
def _comment_scanner() -> type:  # noqa: C901 - its methods (pyyaml's own loops) are counted as its branches
    """pyyaml's safe scanner, keeping each comment it skips in ``found`` (built on first use: yaml loads lazily)."""
    import yaml

    class CommentScanner(yaml.SafeLoader):
        def __init__(self, stream) -> None:
            super().__init__(stream)
            self.found: list[tuple[int, int, str]] = []

        def _comment(self) -> None:
            mark, chars = self.get_mark(), []
            while self.peek() not in _BREAKS:
                chars.append(self.peek())
                self.forward()
            self.found.append((mark.line, mark.column, "".join(chars)))

        def scan_to_next_token(self) -> None:  # pyyaml's loop, with each comment kept
            if self.index == 0 and self.peek() == "\ufeff":
                self.forward()
            while True:
                while self.peek() == " ":
                    self.forward()
                if self.peek() == "#":
                    self._comment()
                if not self.scan_line_break():
                    return
                if not self.flow_level:
                    self.allow_simple_key = True

        def scan_block_scalar_ignored_line(self, start_mark) -> None:  # a comment after '|' or '>'
            while self.peek() == " ":
                self.forward()
            if self.peek() == "#":
                self._comment()
            super().scan_block_scalar_ignored_line(start_mark)

    return CommentScanner


def _item_end(lines: list[str], first: int) -> int:
    """The last line a directive on line ``first`` covers: the whole item when it opens a sequence
    item (``- ...``), the line itself otherwise."""
    last = first
    content = lines[first]
    if content.lstrip().startswith("- ") or content.strip() == "-":
        indent = len(content) - len(content.lstrip())
        for j in range(first + 1, len(lines)):
            if not _content(lines[j]):
                continue
            if len(lines[j]) - len(lines[j].lstrip()) <= indent:
                break
            last = j
    return last


def _content(line: str) -> bool:
    stripped = line.strip()
    return bool(stripped) and not stripped.startswith("#")


@functools.lru_cache(maxsize=256)
def _scan_cached(path: str, key: tuple[int, int, int]) -> tuple[Suppression, ...]:
    try:
        text = checks_io.read_text(path, limit=MAX_BYTES, what="a file with suppressions")
    except (io.ReadError, OSError):
        return ()
    if "checks" not in text:
        return ()
    found = _python(path, text) if path.endswith(".py") else _yaml(path, text)
    return tuple(found)


def scan(path: str) -> tuple[Suppression, ...]:
    """The suppressions in ``path`` (a .py or YAML file), read once per version of the file."""
    if not path.endswith(SUFFIXES):
        return ()
    try:
        st = os.stat(path)
    except OSError:
        return ()
    return _scan_cached(path, (st.st_ino, st.st_size, st.st_mtime_ns))


def _identity(path: str) -> tuple[int, int] | str:
    """The file at ``path`` however it is spelt (relative, absolute, through a symlink): its device and inode.

    One stat, where resolving the path would stat every directory above it (a pre-commit hook
    judges each of its files' declarations with its own tracker). A missing file is its path
    resolved without the disk: nothing is scanned from it either way.
    """
    try:
        st = os.stat(path)
    except OSError:
        return os.path.abspath(path)
    return st.st_dev, st.st_ino


class SuppressionReport:
    """Which suppressions a run used, which are unused and which are malformed (read by CK003 and CK004).

    Working state the :class:`Tracker` fills, so a plain class like it (see its docstring).
    """

    __slots__ = ("used", "unused", "invalid")

    def __init__(
        self,
        used: dict[str, list[Suppression]] | None = None,
        unused: list[tuple[Suppression, str]] | None = None,
        invalid: list[tuple[Suppression, str]] | None = None,
    ):
        self.used = {} if used is None else used
        self.unused = [] if unused is None else unused
        self.invalid = [] if invalid is None else invalid

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and (self.used, self.unused, self.invalid) == (
            other.used,
            other.unused,
            other.invalid,
        )  # type: ignore[attr-defined]

    def __repr__(self) -> str:
        return f"SuppressionReport(used={self.used!r}, unused={self.unused!r}, invalid={self.invalid!r})"

    @property
    def count(self) -> int:
        return sum(len(v) for v in self.used.values())


class Tracker:
    """Matches one run's findings against the suppressions of the files the run looked at.

    ``sources`` are files the run judged even if no finding points at them (the info.py a
    pre-commit hook checks), so their unused suppressions are reported too. A source may end in
    ``#L3-L9`` (GitHub's line anchor): the run judged only those lines of it (one declaration of an
    info.py holding several), so only suppressions reaching into them can be unused; one on a
    sibling declaration is that declaration's business. A plain class (the
    runner's own working state, never handed to a plugin).
    """

    def __init__(
        self,
        known: frozenset[str],
        required: frozenset[str],
        sources: tuple[str, ...] = (),
        *,
        report: SuppressionReport | None = None,
        waiver_only: frozenset[str] = frozenset(),
    ):
        self.known, self.required, self.sources = known, required, sources
        #: rules an inline comment may not silence (``Rule.inline`` False): only a waiver excuses them
        self.waiver_only = waiver_only
        self.report = SuppressionReport() if report is None else report
        self._files: dict[tuple[int, int] | str, tuple[Suppression, ...]] = {}
        self._hits: set[tuple[str, str]] = set()
        #: file -> the line spans judged, for a source given with ``#Lfirst-Llast``
        self._spans: dict[tuple[int, int] | str, list[tuple[int, int]]] = {}
        for source in sources:
            path, span = split_span(source)
            self._file(path)
            if span is not None:
                self._spans.setdefault(_identity(path) if path else "", []).append(span)

    def _file(self, path: str) -> tuple[Suppression, ...]:
        key = _identity(path) if path else ""
        if key not in self._files:
            self._files[key] = scan(path) if path else ()
        return self._files[key]

    def split(
        self, code: str, findings: Iterable[Finding]
    ) -> tuple[tuple[Finding, ...], list[tuple[Finding, Suppression]]]:
        """The findings no valid suppression covers, and each other finding with the suppression that covered it."""
        kept, covered, used = [], [], []
        for finding in findings:
            hit = self._covering(code, finding)
            if hit is None:
                kept.append(finding)
                continue
            self._hits.add((hit.id, code))
            covered.append((finding, hit))
            if hit not in used:
                used.append(hit)
        if used:
            self.report.used.setdefault(code, []).extend(s for s in used if s not in self.report.used.get(code, []))
        return tuple(kept), covered

    def _covering(self, code: str, finding: Finding) -> Suppression | None:
        """The first valid suppression of ``code`` covering the finding's line; a required rule is never covered."""
        if not (finding.path and finding.line) or code in self.required or code in self.waiver_only:
            return None
        return next(
            (s for s in self._file(finding.path) if not self.problem(s) and code in s.codes and s.covers(finding.line)),
            None,
        )

    def problem(self, s: Suppression) -> str:
        if s.problem:
            return s.problem
        unknown = [c for c in s.codes if c not in self.known]
        if unknown:
            return f"names {', '.join(unknown)}, which no loaded plugin defines"
        return self._only_waived(s)

    def _only_waived(self, s: Suppression) -> str:
        """Why ``s`` names a rule only a waiver may excuse ("" when it names none)."""
        required = [c for c in s.codes if c in self.required]
        if required:
            return (
                f"{', '.join(required)} is a required rule: it cannot be suppressed inline, "
                f"only waived in rules.toml with an owner and expiry"
            )
        gates = [c for c in s.codes if c in self.waiver_only]
        if gates:
            return (
                f"{', '.join(gates)} gates what is published: it cannot be suppressed inline, only waived in "
                f"rules.toml with an owner and expiry"
            )
        return ""

    def finish(self, evaluated: Iterable[str]) -> SuppressionReport:
        """Fill the report: malformed suppressions, and codes of rules that ran without using theirs."""
        evaluated = set(evaluated)
        for key, suppressions in self._files.items():
            for s in suppressions:
                problem = self.problem(s)
                if problem:
                    self.report.invalid.append((s, problem))
                elif self._judged(key, s):
                    self.report.unused += [
                        (s, code) for code in s.codes if code in evaluated and (s.id, code) not in self._hits
                    ]
        return self.report

    def _judged(self, key: tuple[int, int] | str, s: Suppression) -> bool:
        """Whether the run judged the lines ``s`` covers: all of a file given whole, else its spans."""
        spans = self._spans.get(key)
        return spans is None or any(s.first <= last and first <= s.last for first, last in spans)


_SPAN = re.compile(r"#L(\d+)-L(\d+)$")


def split_span(source: str) -> tuple[str, tuple[int, int] | None]:
    """``path#L3-L9`` -> ``(path, (3, 9))``; a plain path -> ``(path, None)`` (the whole file)."""
    match = _SPAN.search(source)
    if match is None:
        return source, None
    return source[: match.start()], (int(match[1]), int(match[2]))
