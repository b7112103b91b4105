"""Which of a table's column and row names a sentence names, in time linear in the sentence.

A sentence under a table qualifies the columns or rows it names. Testing every name against
every sentence is quadratic: 3,000 rows under 3,000 sentences took 26 s. Here each name's form
is keyed by its words (lower case), a sentence's runs of words are looked up, and only the
names found that way are confirmed with the exact test (the form as a whole word, any case).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

_WORD = re.compile(r"\w+")
#: runs of up to this many words are looked up; a longer name is keyed by its first words
_MAX_WORDS = 8


def forms(name: str) -> set[str]:
    """The spellings that name a column or row: its text, and its text before a parenthesis
    (``GSM8K (CoT)`` is named by "GSM8K")."""
    return {f for f in (name, name.split(" (")[0]) if len(f) >= 2}


class NameIndex:
    """The names of one table, ready to be looked for in each sentence under it. A form's exact test
    is compiled the first time its words are found (compiling 25,000 row names up front took 3 s)."""

    def __init__(self, names: Iterable[str]) -> None:
        self.order: dict[str, int] = {}
        self.by_words: dict[tuple[str, ...], list[tuple[str, str]]] = {}
        self.wordless: list[tuple[str, str]] = []
        for name in names:
            if name in self.order:
                continue
            self.order[name] = len(self.order)
            for form in forms(name):
                key = tuple(w.lower() for w in _WORD.findall(form))[:_MAX_WORDS]
                (self.by_words.setdefault(key, []) if key else self.wordless).append((name, form))

    def named_in(self, sentence: str) -> tuple[str, ...]:
        """The names the sentence names, in the order they were given. Each name found by its words
        is confirmed only in a window around them, so a long sentence is not searched once per name."""
        named = {name for name, form in self.wordless if _exact(form).search(sentence)}
        words = list(_WORD.finditer(sentence))
        lowered = [w.group().lower() for w in words]
        for start in range(len(words)):
            for stop in range(start + 1, min(start + _MAX_WORDS, len(words)) + 1):
                for name, form in self.by_words.get(tuple(lowered[start:stop]), ()):
                    low, high = max(0, words[start].start() - len(form)), words[stop - 1].end() + len(form) + 1
                    if name not in named and _exact(form).search(sentence, low, min(high, len(sentence))):
                        named.add(name)
        return tuple(sorted(named, key=self.order.__getitem__))


@functools.lru_cache(maxsize=4096)
def _exact(form: str) -> re.Pattern:
    """The form as a whole word, in any case."""
    return re.compile(rf"(?<!\w){re.escape(form)}(?!\w)", re.I)
