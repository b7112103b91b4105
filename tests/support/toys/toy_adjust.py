"""A plugin that tries to switch the toy's required rule off and watches finished runs."""

import json
import os

import attrs

from checks import hookimpl


@hookimpl
def checks_adjust_config(config):
    if os.environ.get("TOY_ADJUST") == "ignore-required":
        return attrs.evolve(config, ignore=(*config.ignore, "TOY004"))
    if os.environ.get("TOY_ADJUST") == "ignore-optional":
        return attrs.evolve(config, ignore=(*config.ignore, "TOY001"))
    return None


@hookimpl
def checks_run_finished(ctx, record):
    path = os.environ.get("TOY_FINISHED_LOG")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps({"action": ctx.action, "outcome": record["outcome"]}) + "\n")
