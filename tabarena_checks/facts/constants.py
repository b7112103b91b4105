"""The words TabArena's rules and actions share, in a module light enough for a rule to import at its top.

A rule judges what an action will do without importing it: the store's credential variables, the
landmarks of an arena's methods.py and the metrics the native engine simulates are named here, and
the actions import them from here too, so the two cannot drift apart. Only the standard library is
imported, so ``checks rules`` and the pre-commit hooks load it for nothing.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

#: the actions the rules bind to, each set named once for every rule family (``checks run ACTION``, and
#: ``precommit-info``, the info-py pre-commit hook)
PROCESS = ("process",)
UPLOAD = ("upload",)
UNPUBLISH = ("unpublish",)
REGISTER = ("register",)
LOG = ("log",)
PRECOMMIT_INFO = ("precommit-info",)
#: the actions that read the run's data or its cache and write or publish it
PROCESS_UPLOAD = ("process", "upload")
#: the actions that need the store's credentials for real
STORE_WRITES = ("upload", "unpublish")
#: the actions whose facts hold a declaration: the rules decidable from info.py alone bind to them
INFO_ACTIONS = ("process", "upload", "precommit-info")
#: the environment variables a real upload or unpublish needs (read only from the environment)
CREDENTIAL_ENV = ("R2_ACCOUNT_ID", "R2_ACCESS_KEY_ID", "R2_SECRET_ACCESS_KEY")
#: an arena's methods.py: the collection's list argument, its group comments, the list of replaced metadata
COLLECTION_ARG = "method_metadata_lst"
SUPERSEDED = "methods_superseded"
GROUP_SYSTEMS = "# Systems"
GROUP_CPU = "# Default tabular models (CPU)"
GROUP_GPU = "# Neural / GPU / foundation models"
GROUPS = (GROUP_SYSTEMS, GROUP_CPU, GROUP_GPU)
#: the metrics the native engine simulates TabArena's HPO results for, under the names results record them
SIMULATED = ("log_loss", "roc_auc", "rmse", "mae")


def missing_credentials(environ: Mapping[str, str] | None = None) -> list[str]:
    """The variables of :data:`CREDENTIAL_ENV` that ``environ`` (default: the process's) lacks or leaves empty."""
    env = os.environ if environ is None else environ
    return [name for name in CREDENTIAL_ENV if not env.get(name)]
