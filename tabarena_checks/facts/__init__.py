"""The facts contract of the TabArena workflow: what each action hands its rules, and the words both share.

One module per action's facts, ``constants`` for the words rules and actions share (light: a rule
imports it at its top), ``providers`` for the facts rules declare with ``@checks.needs``.
"""
