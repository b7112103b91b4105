"""A click choice whose refusal names the closest choice, for every choice option of the framework.

A typo'd value is answered with the valid choices (click's own text) and the closest one, as
mistyped commands, config keys and arena names are: the fix is in the message.
"""

from __future__ import annotations

import click


class Choice(click.Choice):
    """click's Choice whose refusal also names the closest choice (``'jsn' is not one of ...; did you mean
    'json'?``), as every other typo this command line answers does."""

    def get_invalid_choice_message(self, value, ctx) -> str:
        import difflib

        close = difflib.get_close_matches(str(value), [str(c) for c in self.choices], n=1)
        text = super().get_invalid_choice_message(value, ctx)
        return f"{text.rstrip('.')}; did you mean {close[0]!r}?" if close else text
