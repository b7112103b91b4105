"""Good and bad info.py declarations and .eval_results drafts, one pair per rule the hooks run."""

from __future__ import annotations

from pathlib import Path

HEADER = "from tabarena.models import MethodMetadata\n\n"

GOOD_INFO = (
    "nori = MethodMetadata.config(\n"
    '    method="Nori",\n'
    '    suite="nori-2026-03",\n'
    '    ag_key="TA-NORI",\n'
    '    date="2026-02-28",\n'
    '    date_introduced="2024-03",\n'
    '    tags=["with-llm"],\n'
    '    cache_kwargs={"bucket": "tabarena", "prefix": "cache"},\n'
    '    validation_protocol="8x1",\n'
    ")\n"
)

#: code -> (failing declaration, passing declaration)
INFO_CASES = {
    "TA101": (
        'm = MethodMetadata.config(method="Nori", ag_key="TA-NORI")',
        'm = MethodMetadata.config(method="Nori", suite="nori-2026", ag_key="TA-NORI")',
    ),
    "TA110": (
        'm = MethodMetadata.config(method="Nori", suite="s", ag_key="K", date="2026-02-30")',
        'm = MethodMetadata.config(method="Nori", suite="s", ag_key="K", date="2026-02-28")',
    ),
    "TA111": (
        'm = MethodMetadata.config(method="Nori", suite="s", ag_key="K", date_introduced="March 2024")',
        'm = MethodMetadata.config(method="Nori", suite="s", ag_key="K", date_introduced="2024-03")',
    ),
    "TA112": (
        'm = MethodMetadata.config(method="Nori", suite="s", ag_key="K", tags=["llm"])',
        'm = MethodMetadata.config(method="Nori", suite="s", ag_key="K", tags=["with-llm"])',
    ),
    "TA113": (
        'm = MethodMetadata.config(method="Auto", suite="s", ag_key="K", method_class="system")',
        'm = MethodMetadata.system(method="Auto", suite="s", name="Auto")',
    ),
    "TA114": (
        'm = MethodMetadata.baseline(method="Pre", suite="s", name="Pre", ag_key="K", can_hpo=True)',
        'm = MethodMetadata.baseline(method="Pre", suite="s", name="Pre")',
    ),
    "TA115": (
        'm = MethodMetadata.config(method="Nori", suite="s", ag_key="K", cache_type="r2", '
        'cache_kwargs={"bucket": "tabarena"})',
        'm = MethodMetadata.config(method="Nori", suite="s", ag_key="K", '
        'cache_kwargs={"bucket": "tabarena", "prefix": "cache"})',
    ),
    "TA117": (
        'm = MethodMetadata.config(method="Nori", suite="s", ag_key="K", compute="tpu")',
        'm = MethodMetadata.config(method="Nori", suite="s", ag_key="K", compute="gpu")',
    ),
    "TA203": (
        'm = MethodMetadata.config(method="Nori", suite="s", ag_key="K", validation_protocol="8-fold")',
        'm = MethodMetadata.config(method="Nori", suite="s", ag_key="K", '
        'validation_protocol="8x1+tiny5x5<=500+task-specific+adapt-classes")',
    ),
}

#: code -> the field its failing declaration points at (None: the declaring call itself)
INFO_FIELD = {
    "TA101": None,
    "TA110": "date",
    "TA111": "date_introduced",
    "TA112": "tags",
    "TA113": "method_class",
    "TA114": "ag_key",
    "TA115": "cache_kwargs",
    "TA117": "compute",
    "TA203": "validation_protocol",
}


def expected_col(code: str) -> int:
    """1-based column of the keyword (or of the call) the finding of ``code`` must point at."""
    bad = INFO_CASES[code][0]
    field = INFO_FIELD[code]
    return (bad.index(f" {field}=") + 2) if field else bad.index("MethodMetadata") + 1


GOOD_DRAFT = (
    "- dataset:\n"
    "    id: Idavidrein/gpqa\n"
    "    task_id: diamond\n"
    "  value: 41.2\n"
    '  date: "2025-01-15"\n'
    "  source:\n"
    "    url: https://example.org/leaderboard\n"
    "    name: Example board\n"
)

EVAL_YAML = "name: GPQA\ntasks:\n  - id: diamond\n  - id: main\n"


def _draft(task_id: str = "diamond", value: str = "41.2", extra: str = "") -> str:
    return f"- dataset:\n    id: Idavidrein/gpqa\n    task_id: {task_id}\n  value: {value}\n{extra}"


#: code -> (failing draft, passing draft); HF102 needs --eval-yaml
DRAFT_CASES = {
    "HF102": (_draft(task_id="gpqa_diamondd"), _draft(task_id="main")),
    "HF103": (_draft(task_id="overall"), _draft(task_id="diamond")),
    "HF201": (_draft(value='"71.2*"'), _draft(value="71.2")),
    "HF501": (_draft(extra='  verifyToken: "eyJhbGciOiJIUzI1NiJ9.copied"\n'), _draft()),
    "HF502": (_draft(extra="  date: 2025-01-15\n"), _draft(extra='  date: "2025-01-15"\n')),
    "HF503": (
        _draft(extra='  notes: "fetched with hf_AbCdEfGhIjKlMnOpQrStUvWxYz012345"\n'),
        _draft(extra='  notes: "copied from the paper, table 2"\n'),
    ),
}


def write_info(root: Path, folder: str, body: str) -> Path:
    path = root / "models" / folder / "info.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(HEADER + body + "\n")
    return path


def write_draft(root: Path, model: str, name: str, text: str) -> Path:
    path = root / "drafts" / model / ".eval_results" / f"{name}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path
