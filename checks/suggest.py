"""The did-you-mean of every error message: one cut-off, one count rule and one wording.

A mistyped rule code, option value, configuration key, hook or path is answered with the closest
known names, so each message's hint is built here rather than with its own ``difflib`` call and
wording. ``difflib`` is imported only when a hint is asked for: the fast commands never need one.
"""

from collections.abc import Callable, Iterable

#: how alike (``difflib``'s ratio) a known name must be to be suggested
CUTOFF = 0.6


def closest(word: str, choices: Iterable[str], *, n: int = 1, prefix_first: bool = False) -> list[str]:
    """Up to ``n`` of ``choices`` closest to ``word``, best first.

    ``prefix_first`` puts the choices that begin with ``word`` first, in order, as a typed code's
    prefix means more than its spelling: ``TA20`` suggests ``TA201``, not ``TA320``.
    """
    import difflib

    known = list(choices)
    first = sorted(c for c in known if c.startswith(word)) if prefix_first else []
    spelled = difflib.get_close_matches(word, known, n=n, cutoff=CUTOFF)
    return [*first, *(c for c in spelled if c not in first)][:n]


def hint(matches: Iterable[str | None], *, after: str = "; ", show: Callable[[str], str] = repr) -> str:
    """``; did you mean 'X' or 'Y'?`` for ``matches``, or "" when there are none (a None is no match:
    ``hint([io.closest_path(path)], show=str)``).

    ``after`` joins the hint to the message: ``"; "`` or ``": "`` after a clause; a bare space
    after a full stop, where the hint is a sentence of its own (``Did you mean``). ``show``
    renders a match: quoted by default, ``str`` for a path or a reference.
    """
    shown = [show(m) for m in matches if m]
    if not shown:
        return ""
    phrase = "Did you mean" if not after.strip() else "did you mean"
    return f"{after}{phrase} {' or '.join(shown)}?"


def did_you_mean(
    word: str,
    choices: Iterable[str],
    *,
    n: int = 1,
    prefix_first: bool = False,
    after: str = "; ",
    show: Callable[[str], str] = repr,
) -> str:
    """:func:`hint` for the :func:`closest` of ``choices`` to ``word``."""
    return hint(closest(word, choices, n=n, prefix_first=prefix_first), after=after, show=show)
