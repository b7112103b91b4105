"""The words the HF rules and actions share, in a module light enough for a rule to import at its top.

A rule names the actions it binds to and the bundle files it judges without importing the action or
the writer: both are named here, and the draft action and the bundle's writer take them from here
too, so the two cannot drift apart. It imports nothing, so ``checks rules`` and the pre-commit hooks
load it for nothing.
"""

from __future__ import annotations

#: ``checks run draft``
DRAFT_ACTION = "draft"
#: ``checks precommit eval-results``
PRECOMMIT_ACTION = "precommit-eval-results"
#: ``checks hf validate``
VALIDATE_ACTION = "hf-validate"
#: the rules only the draft judges: they read the live Hub facts and the decisions
DRAFT = (DRAFT_ACTION,)
#: the draft action, the eval-results hook and ``checks hf validate``, which judge the same files (the
#: eval-files view, :mod:`hfmigrate_checks.facts.eval_files`)
EVAL_FILES = (DRAFT_ACTION, PRECOMMIT_ACTION, VALIDATE_ACTION)
#: the review bundle's files besides the drafts, as the draft action writes them
REVIEW_MD = "review.md"
REVIEW_HTML = "review.html"
SOURCE_LEDGER = "source-ledger.csv"
VALIDATION = "validation.txt"
BUNDLE_FILES = (REVIEW_MD, REVIEW_HTML, SOURCE_LEDGER, VALIDATION)
