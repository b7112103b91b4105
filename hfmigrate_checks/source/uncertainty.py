"""Uncertainty printed in a column of its own, paired with the score column it qualifies.

A leaderboard that prints ``acc`` and ``acc_stderr`` side by side publishes one claim: the
score and its standard error. Read as two columns, the stderr would be a second score (or,
ignored, lost), so the pairing is made here: by the maintainer (``--uncertainty-column
SCORE=COLUMN``), else by the column's name (``stderr``, ``standard_error``, ``std``, ``se``, ``ci``, ``±``, ...)
with the score column the rest of the name gives, else the score column just left of it. The
pairing is written into each row's qualifiers in one fixed form, so the ledger file carries
it to the draft step, which puts it in the entry's notes. A column that looks like an
uncertainty but pairs with nothing is refused, naming the options, never guessed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from checks import InputError

#: the name words that say a column holds an uncertainty
_WORDS = frozenset({"stderr", "std", "stdev", "sd", "se", "sem", "ci", "ci95", "±", "+/-", "uncertainty"})
#: words left over that still name only the uncertainty ("95% CI", "std err", "ci_low")
_FILLER = frozenset({"95%", "90%", "99%", "err", "of", "the", "mean", "low", "lower", "high", "upper", "lo", "hi"})
#: the words of a name that spells it out ("standard_error", "Standard deviation")
_SPELLED = frozenset({"standard", "error", "deviation"})
_SPLIT = re.compile(r"[\s_\-/()\[\]:,.]+")
_PREFIX = "uncertainty in column "


def _tokens(name: str) -> list[str]:
    spaced = name.replace("±", " ± ").replace("+/-", " +/- ")
    return [t for t in _SPLIT.split(spaced.casefold()) if t]


def _rest(name: str) -> tuple[bool, str]:
    """Whether the name says uncertainty, and what else it names (the score column's name, or "")."""
    tokens = _tokens(name)
    spelled = "standard" in tokens and ("error" in tokens or "deviation" in tokens)
    if not spelled and not any(t in _WORDS for t in tokens):
        return False, ""
    return True, " ".join(t for t in tokens if t not in _WORDS and t not in _FILLER and t not in _SPELLED)


def pairs(columns: Sequence[str], scores: Sequence[str], named: Mapping[str, str], where: str) -> dict[str, str]:
    """Uncertainty column -> its score column: those ``named`` (score -> column) and those found by name
    among ``columns``; ``scores`` are the columns that may hold scores, in table order."""
    out = {column: score for score, column in named.items()}
    by_name = {" ".join(_tokens(s)): s for s in scores}
    for n, column in enumerate(columns):
        says, rest = _rest(column)
        if column in out or column in named or not says:
            continue
        score = by_name.get(rest) or _left_of(columns[:n], scores, out)
        if score is None or score == column:
            raise InputError(
                f"{where}: column {column!r} looks like an uncertainty (by its name) but no score column "
                f"pairs with it; pass --uncertainty-column SCORE={column} to pair it, or --drop-column "
                f"{column} if it does not qualify any score"
            )
        out[column] = score
    return out


def _left_of(before: Sequence[str], scores: Sequence[str], found: Mapping[str, str]) -> str | None:
    """The nearest score column left of an uncertainty column, past other uncertainty columns."""
    for column in reversed(before):
        if column in found or _rest(column)[0]:
            continue
        return column if column in scores else None
    return None


def parse_option(values: Sequence[str]) -> dict[str, str]:
    """``SCORE=COLUMN`` options as score -> column; a value without ``=`` is a usage error."""
    out = {}
    for value in values:
        score, sep, column = value.partition("=")
        if not sep or not score.strip() or not column.strip():
            raise InputError(f"--uncertainty-column {value!r}: expected SCORE=COLUMN, e.g. 'acc=acc_stderr'")
        out[score.strip()] = column.strip()
    return out


def qualifier(column: str, text: str) -> str:
    """The one form a paired uncertainty takes in a row's qualifiers: ``uncertainty in column 'se': ± 0.8``."""
    shown = f"± {text}" if re.fullmatch(r"\d+(?:\.\d*)?|\.\d+", text) else text
    return f"{_PREFIX}{column!r}: {shown}"


def from_qualifiers(qualifiers: str) -> list[str]:
    """The paired uncertainties a ledger row's qualifiers hold (the draft's notes say them as they are)."""
    return [part for part in qualifiers.split("; ") if part.startswith(_PREFIX)]


def pairings(rows) -> list[str]:
    """``'acc_stderr' -> 'acc'`` for each pairing the ledger rows carry, to print what was paired."""
    found = {}
    for row in rows:
        for part in from_qualifiers(row.qualifiers):
            column = part[len(_PREFIX) :].rsplit(": ", 1)[0]
            found[f"{column} -> {row.source_task!r}"] = None
    return list(found)
