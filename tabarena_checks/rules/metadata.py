"""TA1xx: MethodMetadata fields, and their agreement with the raw results.

Rules bound to ``precommit-info`` read only ``ctx.facts.metadata`` so they also run on a
bare ``info.py`` with no raw data. The mismatch rules (TA102-TA109) read the rows of
:mod:`tabarena_checks.metadata.compare`, the same rows ``checks inspect`` prints.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import TYPE_CHECKING

from checks import ChecksError, Finding, Severity, fact, needs, provides, rule
from tabarena_checks.facts.constants import INFO_ACTIONS, PRECOMMIT_INFO, PROCESS, PROCESS_UPLOAD
from tabarena_checks.facts.providers import at, declared_metadata, single_method_inference

if TYPE_CHECKING:  # the model and the comparison load when a rule runs, not when `checks rules` lists them
    from tabarena_checks.metadata.model import MethodMetadata

ALLOWED_TAGS = ("closed-source-api", "with-llm")
METHOD_TYPES = ("config", "baseline", "portfolio")
METHOD_CLASSES = ("model", "system")
COMPUTES = ("cpu", "gpu")
CACHE_TYPES = ("local", "r2", "s3")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_DATE_INTRODUCED = re.compile(r"^\d{4}(-\d{2}(-\d{2})?)?$")


# --------------------------------------------------------------------------- fields


@rule(
    "TA101",
    "method-not-suite",
    actions=INFO_ACTIONS,
    required=True,
    why="The suite names the artifact directory and bucket prefix a method's results live under; "
    "TabArena defaults it to the method, and a later rerun would then overwrite the published "
    "artifacts of the first run in place.",
    example_fail='MethodMetadata.config(method="Nori", ag_key="TA-NORI")  # suite defaults to "Nori"',
    example_pass='MethodMetadata.config(method="Nori", suite="nori-2026-03", ag_key="TA-NORI")',
)
@needs(declared_metadata)
def method_not_suite(ctx, md):
    """The method must declare an explicit ``suite`` distinct from its ``method`` name."""
    if md.effective_suite != md.method:
        return
    how = "is set to the method name" if "suite" in md.declared else "defaults to `method` when left unset"
    yield at(
        md,
        f"method == suite (both {md.method!r}): set an explicit, distinct `suite` (it {how})",
        "suite" if "suite" in md.declared else None,
    )


@rule(
    "TA110",
    "date-calendar",
    actions=INFO_ACTIONS,
    why="The date orders reruns and the leaderboard's history; TabArena refuses a date that is not "
    "a real day when the metadata is built, long after the run finished.",
    example_fail='date="2026-02-30"',
    example_pass='date="2026-02-28"',
)
@needs(declared_metadata)
def date_calendar(ctx, md):
    """``date``, when set, must be a real calendar date written YYYY-MM-DD."""
    if md.date is None:
        return
    ok = isinstance(md.date, str) and _DATE.match(md.date)
    if ok:
        try:
            dt.date.fromisoformat(md.date)
        except ValueError:
            ok = False
    if not ok:
        yield at(md, f"'date' must be a real calendar date YYYY-MM-DD (got {md.date!r})", "date")


def _valid_partial_date(text: str) -> bool:
    parts = [int(p) for p in text.split("-")]
    if len(parts) >= 2 and not 1 <= parts[1] <= 12:
        return False
    if len(parts) == 3:
        try:
            dt.date(*parts)
        except ValueError:
            return False
    return True


@rule(
    "TA111",
    "date-introduced-format",
    actions=INFO_ACTIONS,
    why="date_introduced says when the model was published; the leaderboard sorts and filters on it "
    "and only understands a year, a month or a day.",
    example_fail='date_introduced="March 2024"',
    example_pass='date_introduced="2024-03"',
)
@needs(declared_metadata)
def date_introduced_format(ctx, md):
    """``date_introduced``, when set, must be YYYY, YYYY-MM or YYYY-MM-DD (a real month and day)."""
    if md.date_introduced is None:
        return
    value = md.date_introduced
    if not (isinstance(value, str) and _DATE_INTRODUCED.match(value) and _valid_partial_date(value)):
        yield at(md, f"'date_introduced' must be YYYY, YYYY-MM or YYYY-MM-DD (got {value!r})", "date_introduced")


@rule(
    "TA112",
    "tags-allowed",
    actions=INFO_ACTIONS,
    why="Tags drive leaderboard filters (e.g. hiding methods that call an LLM or a closed API); an "
    "unknown tag filters nothing and hides the intent.",
    example_fail='tags=["llm"]',
    example_pass='tags=["with-llm"]',
)
@needs(declared_metadata)
def tags_allowed(ctx, md):
    """``tags`` must be a list drawn from ``with-llm`` and ``closed-source-api``."""
    if not isinstance(md.tags, (list, tuple)):
        yield at(md, f"'tags' must be a list of strings (got {md.tags!r})", "tags")
        return
    for tag in md.tags:
        if tag not in ALLOWED_TAGS:
            yield at(md, f"'tags' holds {tag!r}; allowed tags are {', '.join(ALLOWED_TAGS)}", "tags")


@rule(
    "TA113",
    "system-declared-as-system",
    actions=INFO_ACTIONS,
    why="A system (an AutoML pipeline, an ensemble of models) cannot be tuned or ensembled as a "
    "config; TabArena records its results as a baseline and refuses method_class='system' on a config "
    "(a portfolio may be grouped with the systems). MethodMetadata.system(...) sets both fields right.",
    example_fail='MethodMetadata.config(method="MyAutoML", method_class="system", ...)',
    example_pass='MethodMetadata.system(method="MyAutoML", suite="myautoml-2026", name="MyAutoML")',
)
@needs(declared_metadata)
def system_declared_as_system(ctx, md):
    """A method with ``method_class='system'`` cannot be a config: declare it with ``MethodMetadata.system(...)``."""
    if md.method_class != "system" or md.method_type != "config":
        return
    yield at(
        md,
        "method_class='system' with method_type='config': a system's results are recorded as a "
        "baseline; declare it with MethodMetadata.system(...)",
        "method_class",
    )


_CONFIG_ONLY = ("ag_key", "model_key", "config_default", "name_suffix")


@rule(
    "TA114",
    "non-config-fields",
    actions=INFO_ACTIONS,
    why="Baselines, systems and portfolios have no per-config results: a config key, a default "
    "config or HPO/bagging flags on them make processing look for results that do not exist.",
    example_fail='MethodMetadata.baseline(method="MyPreset", name="MyPreset", can_hpo=True)',
    example_pass='MethodMetadata.baseline(method="MyPreset", name="MyPreset")',
)
@needs(declared_metadata)
def non_config_fields(ctx, md):
    """Non-config methods cannot set ag_key, model_key, config_default, name_suffix, can_hpo=True or is_bag=True."""
    if md.method_type == "config":
        return
    for name in _CONFIG_ONLY:
        if getattr(md, name) is not None:
            yield at(
                md,
                f"{name!r} is only for configs; remove it from this {md.method_type} (got {getattr(md, name)!r})",
                name,
            )
    for name in ("can_hpo", "is_bag"):
        if getattr(md, name) is True:
            yield at(md, f"{name}=True is only for configs; remove it from this {md.method_type}", name)


@rule(
    "TA115",
    "cache-settings-consistent",
    actions=INFO_ACTIONS,
    why="The cache settings say where the artifacts are published; a remote store without a bucket "
    "and prefix has nowhere to go, and a local cache with them hides an unfinished switch.",
    example_fail='cache_type="r2", cache_kwargs={"bucket": "tabarena"}',
    example_pass='cache_kwargs={"bucket": "tabarena", "prefix": "cache"}  # r2 inferred',
)
@needs(declared_metadata)
def cache_settings_consistent(ctx, md):
    """r2/s3 need ``bucket`` and ``prefix`` in ``cache_kwargs``; ``local`` must have neither."""
    kwargs = md.cache_kwargs
    if kwargs is not None and not isinstance(kwargs, dict):
        yield at(md, f"'cache_kwargs' must be a dict with 'bucket' and 'prefix' (got {kwargs!r})", "cache_kwargs")
        return
    kwargs = kwargs or {}
    kind = md.effective_cache_type
    if kind not in CACHE_TYPES:
        yield at(md, f"'cache_type' must be one of {', '.join(CACHE_TYPES)} (got {kind!r})", "cache_type")
    elif kind == "local":
        yield from _local_cache_problems(md, kwargs)
    else:
        yield from _remote_cache_problems(md, kind, kwargs)


def _local_cache_problems(md: MethodMetadata, kwargs: dict):
    """A local cache has no bucket or prefix; the finding points at whichever field the author wrote."""
    present = [k for k in ("bucket", "prefix") if k in kwargs]
    if present:
        yield at(
            md,
            f"cache_type 'local' cannot have {' and '.join(present)} in cache_kwargs; "
            f"set cache_type='r2' or remove them",
            "cache_type" if md.cache_type else "cache_kwargs",
        )


def _remote_cache_problems(md: MethodMetadata, kind: str, kwargs: dict):
    """An r2/s3 cache needs a bucket and a prefix, each a finding of its own."""
    for key in ("bucket", "prefix"):
        if not kwargs.get(key):
            yield at(
                md,
                f"cache_type {kind!r} needs cache_kwargs[{key!r}]; cache_kwargs is missing {key!r}",
                "cache_kwargs" if md.cache_kwargs else "cache_type",
            )


def _bad_values(md: MethodMetadata):
    """``(field, problem)`` for each field holding a value of the wrong kind."""
    for name in ("method", "suite"):
        value = getattr(md, name)
        if (value is not None or name == "method") and not (isinstance(value, str) and value.strip()):
            yield name, f"{name!r} must be a non-empty string (got {value!r})"
    for name, allowed in (("method_type", METHOD_TYPES), ("method_class", METHOD_CLASSES), ("compute", COMPUTES)):
        if getattr(md, name) not in allowed:
            yield name, f"{name!r} must be one of {', '.join(allowed)} (got {getattr(md, name)!r})"
    for name in ("is_bag", "has_raw", "has_processed", "has_results", "verified"):
        if not isinstance(getattr(md, name), bool):
            yield name, f"{name!r} must be True or False (got {getattr(md, name)!r})"
    yield from _bad_combinations(md)


def _bad_combinations(md: MethodMetadata):
    """``(field, problem)`` for an optional field of the wrong kind, or fields that exclude each other."""
    if md.can_hpo is not None and not isinstance(md.can_hpo, bool):
        yield "can_hpo", f"'can_hpo' must be True, False or unset (got {md.can_hpo!r})"
    if md.name is not None and md.method_type == "config":
        yield "name", "'name' is not allowed on a config; its display name comes from model_key and name_suffix"
    if md.name is not None and md.name_suffix is not None:
        yield "name_suffix", "'name' and 'name_suffix' are mutually exclusive; keep one"
    if md.validation_protocol is not None and not isinstance(md.validation_protocol, str):
        yield (
            "validation_protocol",
            f"'validation_protocol' must be a key string like '8x1' (got {md.validation_protocol!r})",
        )


@rule(
    "TA117",
    "field-values-valid",
    actions=INFO_ACTIONS,
    why="TabArena asserts these when it builds the metadata and stops at the first; checking them "
    "all up front reports every problem at once, before hours of processing.",
    example_fail='MethodMetadata.config(method="Nori", compute="tpu", is_bag="yes")',
    example_pass='MethodMetadata.config(method="Nori", compute="gpu", is_bag=True)',
)
@needs(declared_metadata)
def field_values_valid(ctx, md):
    """Fields hold values of the right kind: non-empty names, known enums, booleans, name rules."""
    for field, problem in _bad_values(md):
        yield at(md, problem, field)


@rule(
    "TA118",
    "metadata-readable",
    actions=PRECOMMIT_INFO,
    required=True,
    why="A declaration the hook cannot read is a declaration no rule has judged; passing it silently "
    "would let the very file the hook guards through. Reading follows TabArena's own signatures, so "
    "what TabArena would refuse on import (an unknown keyword, a keyword given twice) is refused too.",
    example_fail='m = MethodMetadata.config(method="Nori", colour="red")  # TabArena: unexpected keyword',
    example_pass='m = MethodMetadata.config(method="Nori", suite="nori-2026-03", **_common)  # _common = dict(...)',
)
def metadata_readable(ctx):
    """Every MethodMetadata declaration of the file can be read statically (and TabArena would accept its call)."""
    problem = fact("problem")(ctx)
    if problem is not None:
        yield Finding(problem.message, path=problem.path, line=problem.line, col=problem.col)


@rule(
    "TA119",
    "legacy-s3-not-reprocessed",
    actions=PROCESS,
    why="cache_type='s3' is the legacy public S3 store: TabArena keeps those declarations (next to their "
    "rerun) only so the artifacts hosted there stay loadable. Processing results under one writes a cache "
    "whose upload is refused (TA401) and whose metadata points readers at a store nothing is published to "
    "any more; the pre-commit hook lets such declarations through because a commit keeping them breaks "
    "nothing.",
    example_fail='MethodMetadata.tabarena_legacy_s3(method="CatBoost", suite="tabarena-2025-06-12", ...)',
    example_pass='MethodMetadata.config(method="CatBoost", suite="tabarena-2026-07-13", ..., '
    'cache_kwargs={"bucket": "tabarena", "prefix": "cache"})  # r2',
)
@needs(declared_metadata)
def legacy_s3_not_reprocessed(ctx, md):
    """Results are not processed under a declaration whose cache is the legacy public S3 store (``cache_type='s3'``)."""
    if md.effective_cache_type != "s3":
        return
    yield at(
        md,
        f"'{md.method}' (suite {md.effective_suite!r}) declares the legacy s3 cache, kept so hosted "
        f"artifacts stay loadable; process a rerun under its own declaration with its own suite and "
        f"cache_type='r2' (cache_kwargs={{'bucket': ..., 'prefix': ...}})",
        "cache_type",
    )


@rule(
    "TA116",
    "metadata-present",
    actions=PROCESS_UPLOAD,
    required=True,
    why="Processing and uploading rename, describe and publish results under the declared "
    "metadata; without it (or with a reference that does not resolve) nothing can be verified.",
    example_fail="checks run process --raw run/data",
    example_pass="checks run process --raw run/data --method-metadata models/nori/info.py:nori",
)
def metadata_present(ctx):
    """The action needs ``--method-metadata``, and the reference must resolve to a MethodMetadata."""
    if not provides(ctx.facts, "metadata"):
        yield "this action gathered no metadata: pass --method-metadata path/to/info.py:VARIABLE"
        return
    try:
        md = ctx.facts.metadata
    except ChecksError as exc:
        located = all(getattr(exc, name, None) for name in ("message", "path", "line", "col"))
        # an info.py the static reader could not read: at the place to edit, like the pre-commit hook says it
        yield Finding(exc.message, path=exc.path, line=exc.line, col=exc.col) if located else str(exc)
        return
    if md is None:
        yield "no metadata given: pass --method-metadata path/to/info.py:VARIABLE (or package.module:VARIABLE)"


# --------------------------------------------------------------------------- against raw


def _mismatch(md, inference, field: str, only_declared: bool = False):
    from tabarena_checks.metadata import compare  # noqa: PLC0415 - start-up: the comparison loads the metadata model's attrs classes, and `checks rules` imports every rule module

    row = compare.row_for(md, inference, field)
    if row is None or row.matches or (only_declared and row.declared is None):
        return
    yield at(md, row.message, field)


#: the raw-vs-declared checks of what the leaderboard publishes as the method's kind: one comment in a pull
#: request must not turn them off, so only a waiver (an owner and an expiry) excuses them
PUBLISHING_GATES = ("TA104", "TA106", "TA107")


def _mismatch_rule(
    code: str,
    name: str,
    field: str,
    severity: Severity,
    summary: str,
    why: str,
    example_fail: str,
    example_pass: str,
    only_declared: bool = False,
):
    @needs(declared_metadata, single_method_inference)
    def check(ctx, md, inference):
        return _mismatch(md, inference, field, only_declared)

    check.__doc__ = summary
    return rule(
        code,
        name,
        actions=PROCESS,
        severity=severity,
        why=why,
        publishing=code in PUBLISHING_GATES,
        example_fail=example_fail,
        example_pass=example_pass,
    )(check)


method_name = _mismatch_rule(
    "TA102",
    "method-name",
    "method",
    Severity.WARNING,
    "The declared ``method`` differs from the name the raw results carry (warn only).",
    "Raw configs are named after the model class, often with a TA- prefix that processing "
    "renames away; a different base name is worth a look but not a blocker.",
    'raw name prefix "TA-Nori", info.py method="Nori"',
    'raw name prefix "Nori", info.py method="Nori"',
)
method_type = _mismatch_rule(
    "TA103",
    "method-type",
    "method_type",
    Severity.ERROR,
    "The declared ``method_type`` must match the raw results (config iff they carry simulation artifacts).",
    "Configs and baselines are processed into different tables; the wrong type produces empty or wrong results.",
    "raw results with simulation artifacts, MethodMetadata.baseline(...)",
    "MethodMetadata.config(...)",
)
ag_key = _mismatch_rule(
    "TA104",
    "ag-key",
    "ag_key",
    Severity.ERROR,
    "A config's declared ``ag_key`` must match the model key the raw results record.",
    "ag_key ties the results to the model class that produced them; a wrong key points users at the wrong model.",
    'raw model_type "TA-NORI", ag_key="NORI"',
    'ag_key="TA-NORI"',
)
compute = _mismatch_rule(
    "TA105",
    "compute",
    "compute",
    Severity.ERROR,
    "The declared ``compute`` must match the raw results (gpu iff any config used a GPU).",
    "CPU and GPU methods are compared on separate footings; a wrong label misplaces the method "
    "(baselines record no GPU: waive with a reason when a preset really used one).",
    'num_gpus=1 in the raw results, compute="cpu"',
    'compute="gpu"',
)
can_hpo = _mismatch_rule(
    "TA106",
    "can-hpo",
    "can_hpo",
    Severity.ERROR,
    "A config's ``can_hpo`` must match the raw results (true iff the run holds more than one config).",
    "Tuned and tuned+ensemble rows are simulated from the random configs; claiming HPO with one "
    "config (or hiding it with many) produces wrong leaderboard rows.",
    "one config in the raw results, can_hpo left at its default True",
    "can_hpo=False",
)
is_bag = _mismatch_rule(
    "TA107",
    "is-bag",
    "is_bag",
    Severity.ERROR,
    "A config's ``is_bag`` must match the raw results (true iff a result was bagged with more than one child).",
    "Bagged and unbagged results are not comparable; a single use_child_oof child is not a bag.",
    "8-fold bagged raw results, is_bag=False",
    "is_bag=True",
)
config_default = _mismatch_rule(
    "TA108",
    "config-default",
    "config_default",
    Severity.ERROR,
    "A declared ``config_default`` must equal the single raw config after renaming to the method "
    "(undeclared is fine: it is then resolved from the processed results).",
    "The default config is the 'default' row of the leaderboard and the start of HPO trajectories; "
    "a name that matches no config leaves them empty.",
    'raw TA-Nori_c1_default_BAG_L1 with method "Nori", config_default="Nori_c1_BAG_L1"',
    'config_default="Nori_c1_default_BAG_L1"',
    only_declared=True,
)
model_key = _mismatch_rule(
    "TA109",
    "model-key",
    "model_key",
    Severity.INFO,
    "A config's ``model_key`` (default: ag_key) differs from the raw model key (for information).",
    "model_key groups configs of one model family; it may deliberately differ from ag_key, so this is only reported.",
    'raw model_type "TA-NORI", model_key="NORI"',
    "model_key left unset (defaults to ag_key)",
)


RULES = [
    method_not_suite,
    method_name,
    method_type,
    ag_key,
    compute,
    can_hpo,
    is_bag,
    config_default,
    model_key,
    date_calendar,
    date_introduced_format,
    tags_allowed,
    system_declared_as_system,
    non_config_fields,
    cache_settings_consistent,
    metadata_present,
    field_values_valid,
    metadata_readable,
    legacy_s3_not_reprocessed,
]
