"""A small checkout written the way TabArena writes its info.py files, one idiom per place.

``tafix`` stands for TabArena's package: per-model ``info.py`` files with a ``ModelDescriptor``
and a superseded legacy-s3 declaration next to its rerun, a systems ``info.py`` built from
``dict(...)`` spreads and module-level constants, a contexts module that imports descriptors and
declarations from the others, and a module that builds declarations in a loop.
"""

from __future__ import annotations

from pathlib import Path

IMPORT = "from tabarena.models._method_metadata import MethodMetadata, ModelDescriptor\n"
#: a model's superseded legacy-s3 declaration and its rerun as TabArena writes them, to ``.format`` with
#: ``var`` (the descriptor's and the declarations' prefix), ``name`` (the method), ``key`` (its model key)
#: and ``hpo``; benchmarks/precommit_tabarena.py builds its TabArena-sized tree from them too
LEGACY = """
# Superseded by the rerun below; kept so the hosted artifacts stay loadable.
{var}_method_metadata = {var}_descriptor.method_metadata(
    method="{name}",
    suite="tabarena-2025-06-12",
    ag_key="{key}",
    config_default="{name}_c1_BAG_L1",
    cache_type="s3",
    cache_kwargs={{"bucket": "tabarena", "prefix": "cache", "upload_as_public": True}},
    date="2025-06-12",
)
"""
RERUN = """
{var}_new_method_metadata = {var}_descriptor.method_metadata(
    method="{name}",
    suite="tabarena-2026-07-13",
    ag_key="TA-{key}",
    model_key="{key}",
    config_default="{name}_c1_default_BAG_L1",
    can_hpo={hpo},
    cache_type="r2",
    cache_kwargs={{"bucket": "tabarena", "prefix": "cache"}},
    date="2026-07-15",
)
"""

FILES = {
    "tafix/__init__.py": "",
    "tafix/models/__init__.py": "",
    "tafix/models/alpha/__init__.py": "",
    "tafix/models/alpha/info.py": IMPORT
    + """
alpha_descriptor = ModelDescriptor(
    display_name="Alpha",
    compute="gpu",
    is_bag=True,
    reference_url="https://example.org/alpha",
    date_introduced="2024-07",
)
"""
    + (LEGACY + RERUN).format(var="alpha", name="Alpha", key="ALPHA", hpo=False)
    + """
# CPU variant: the caller's keywords win over the descriptor's
alpha_cpu_method_metadata = alpha_descriptor.method_metadata(
    method="Alpha_CPU",
    suite="tabarena-2026-07-13",
    ag_key="ALPHA",
    compute="cpu",
    name_suffix="_CPU",
    display_name="Alpha (CPU)",
    cache_kwargs={"bucket": "tabarena", "prefix": "cache"},
)
""",
    "tafix/systems/__init__.py": "",
    "tafix/systems/auto/__init__.py": "",
    "tafix/systems/auto/info.py": IMPORT
    + """
_PAPER = "https://example.org/auto"
SUITE_2025 = "tabarena-2025-11-01"

_system_kwargs = dict(
    method_class="system",
    reference_url=_PAPER,
)

_common_kwargs = dict(
    suite=SUITE_2025,
    method_type="baseline",
    date="2025-11-01",
    **_system_kwargs,
)

_gpu_kwargs = dict(compute="gpu", **_common_kwargs)

auto_legacy_metadata = MethodMetadata.tabarena_legacy_s3(
    method="Auto_v1",
    name="Auto 1 (best)",
    prefix="cache_aio",
    **_gpu_kwargs,
)

auto_new_metadata = MethodMetadata.system(
    method="Auto_v2",
    name="Auto 2",
    tags=["with-llm", "closed-source-api", "with-llm"],
    **{"suite": "tabarena-2026-08-05", "date": "2026-08-05"},
    cache_kwargs={"bucket": "tabarena", "prefix": "cache"},
)

auto_portfolio_metadata = MethodMetadata.portfolio(
    method="Portfolio-N20",
    suite="tabarena-2026-08-05",
    method_class="system",
)

auto_direct_metadata = MethodMetadata("Direct", "direct-1", method_type="baseline", verified=False)
""",
    "tafix/contexts/__init__.py": "",
    "tafix/contexts/beyond/__init__.py": "",
    "tafix/contexts/beyond/methods.py": """from __future__ import annotations

from tafix.models.alpha.info import alpha_descriptor, alpha_new_method_metadata as alpha_latest
from tafix.systems.auto.info import auto_new_metadata

_common = dict(
    method_type="config",
    suite="beyond-2026",
    cache_type="r2",
    cache_kwargs={"bucket": "tabarena", "prefix": "cache"},
)
_fm_kwargs = dict(can_hpo=False, **_common)

beyond_alpha_metadata = alpha_descriptor.method_metadata(
    method="TA-Alpha",
    ag_key="TA-ALPHA",
    config_default="TA-Alpha_c1_BAG_L1",
    **_fm_kwargs,
)

methods = [beyond_alpha_metadata, alpha_latest, auto_new_metadata]
""",
    "tafix/contexts/loop/__init__.py": "",
    "tafix/contexts/loop/methods.py": IMPORT
    + """
names = ["One", "Two"]
built = []
for name in names:
    metadata = MethodMetadata.config(method=name, suite="loop-1", ag_key=name.upper())
    built.append(metadata)

listed = [MethodMetadata.config(method=n, suite="loop-2") for n in ("Three",)]
kept = MethodMetadata.config(method="Kept", suite="loop-3", ag_key="KEPT")
""",
}


def write_checkout(root: Path) -> Path:
    """Write the files under ``root``; return the source root (the directory holding ``tafix``)."""
    for rel, text in FILES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root
