"""The facts contract of the HF migration: what each action hands its rules.

One module per action's facts (``draft`` for ``checks run draft``, ``eval_files`` for ``checks hf
validate`` and the eval-results hook), ``providers`` for the facts rules declare with ``@checks.needs``
or ask for by name instead of probing ``ctx.facts``.
"""
