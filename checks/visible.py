"""Text that came from data (file names, messages, values), made safe to print to a terminal or a CI log.

A run directory can be named ``"\\n::error file=README.md::..."`` or hold ``ESC ] 52``: printed
raw, the first starts a GitHub Actions workflow command in the job's log, the second writes
the reader's clipboard. So every human-facing output shows control characters visibly
(``\\x1b``, ``\\n``, ``\\u202e``) instead of sending them, and no line it prints can start a
workflow command (``::`` or ``##[`` after leading blanks, as the runner parses them). Structured
formats (JSON, SARIF) escape through their own encoders; JUnit's XML cannot carry these
characters at all, so it gets the visible form too.
"""

from __future__ import annotations

import functools

#: what makes a line a workflow command for the GitHub runner (after leading whitespace)
_COMMAND_STARTS = ("::", "##[")


#: what is shown as its escape, as ``[start, stop)`` code point ranges: C0 and C1 controls, DEL, the Arabic
#: letter mark, the bidi marks and overrides and the line/paragraph separators, the bidi isolates, lone
#: surrogates (undecodable file names) and the XML non-characters
_SHOWN = (
    (0x00, 0x20),
    (0x7F, 0xA0),
    (0x061C, 0x061D),
    (0x200E, 0x2010),
    (0x2028, 0x202F),
    (0x2066, 0x206A),
    (0xD800, 0xE000),
    (0xFFFE, 0x10000),
)
_NAMED = {0x09: "\\t", 0x0A: "\\n", 0x0D: "\\r"}


class _Escapes(dict):
    """``str.translate`` table filled as characters are met: each code point maps to its escape (see
    :data:`_SHOWN`) or to itself.

    Filled on demand because a table of every escaped code point (over 2,000, the surrogates) costs
    more to build than printing a pre-commit hook's findings; a text meets a few dozen.
    """

    def __init__(self, keep_newlines: bool) -> None:
        super().__init__()
        self.keep_newlines = keep_newlines

    def __missing__(self, code: int) -> str:
        if (code == 0x0A and self.keep_newlines) or not any(start <= code < stop for start, stop in _SHOWN):
            shown = chr(code)
        else:
            shown = _NAMED.get(code) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")
        self[code] = shown
        return shown


@functools.cache
def _table(keep_newlines: bool) -> _Escapes:
    return _Escapes(keep_newlines)


def visible(text: str, *, keep_newlines: bool = False) -> str:
    """``text`` with every control character shown as its escape; ``keep_newlines`` leaves ``\\n`` alone
    (for text whose line breaks are its own, such as an error listing several problems)."""
    return text.translate(_table(keep_newlines))


def guarded(line: str) -> str:
    """``line`` unable to start a workflow command: its first ``:`` or ``#`` shown as ``\\x3a``/``\\x23``
    when it would (the text stays readable and says what was there)."""
    stripped = line.lstrip()
    if not stripped.startswith(_COMMAND_STARTS):
        return line
    at = len(line) - len(stripped)
    return f"{line[:at]}\\x{ord(line[at]):02x}{line[at + 1 :]}"


def safe_lines(text: str) -> str:
    """Multi-line ``text`` for a terminal or log: controls shown (line breaks kept), every line guarded."""
    return "\n".join(guarded(line) for line in visible(text, keep_newlines=True).split("\n"))


def safe_data(value, *, keep_newlines: bool = False):
    """Every string inside ``value`` (dicts, lists, tuples) shown visibly, for a human report built from it.

    ``keep_newlines`` for data holding text of several lines (a generated snippet); print the report
    through :func:`safe_lines` then, so a line break from a name still starts no command.
    """
    if isinstance(value, str):
        return visible(value, keep_newlines=keep_newlines)
    if isinstance(value, dict):
        return {
            safe_data(k, keep_newlines=keep_newlines): safe_data(v, keep_newlines=keep_newlines)
            for k, v in value.items()
        }
    if isinstance(value, (list, tuple)):
        return type(value)(safe_data(v, keep_newlines=keep_newlines) for v in value)
    return value
