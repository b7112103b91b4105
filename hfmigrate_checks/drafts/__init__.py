"""The migration's output: decide and render the drafts, validate them, write the review bundle; the ``draft``
action and ``checks precommit eval-results``."""
