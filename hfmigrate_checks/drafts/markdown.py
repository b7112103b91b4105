"""Text from a leaderboard or the Hub written into review.md as Markdown that shows it as written.

Apart from the bundle that writes review.md because HF203 looks its rows up the same way: a rule
reads this, never the writer.
"""

from __future__ import annotations

import re

#: what Markdown would read as markup in text from a leaderboard or the Hub: a link ([...](...)), a
#: code span, a table cell's end, an escape; '<', '>' and '&' become entities, so no raw HTML
#: (<script>, <img onerror>) and no autolink (<javascript:...>) survives
_MD_MARKUP = re.compile(r"([\\`\[\]|])")


def md_text(text: object) -> str:
    """``text`` on one line, shown as written in Markdown: no HTML, link, code span or cell break of its own."""
    flat = " ".join(str(text).split())
    return _MD_MARKUP.sub(r"\\\1", flat.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;"))


def md_cell(text: object) -> str:
    """One table cell of review.md (:func:`md_text`; '-' when empty). HF203 looks for labels this way."""
    return md_text(text) or "-"
