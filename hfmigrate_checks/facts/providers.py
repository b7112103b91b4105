"""The facts HF rules ask for by name instead of probing ``ctx.facts`` (pytest's fixtures, for rules).

A rule shared by several actions reads here what only some of them provide, so what an action
without that fact means is decided once: None, and the rule judges as without it. Light: rules import
it at their top, and ``checks rules`` imports every rule module.
"""

from __future__ import annotations

from checks import fact

#: (decision, proposal, entry) for every entry a draft adds (``checks run draft``); None for the actions
#: that judge files already written (the eval-results hook, ``checks hf validate``)
planned_additions = fact("planned_additions")
