"""Which way a results table runs: models as rows (the usual leaderboard) or as columns (a model card).

A model card often lists benchmarks down the first column and its model sizes across
("Llama 3.2 1B | Llama 3.2 3B"). Read the usual way, every model becomes a task and every
benchmark a model, and each score is still a clean number, so nothing would flag it. The
ledger therefore looks before it reads: when the header looks like model names and the
first column like benchmark names, it refuses to guess and asks for ``--models-as-columns``
(or ``--models-as-rows`` to read it as printed).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

#: a parameter count ("8B", "1.5B", "70b", "350M", "8x7B") or a chat/instruct/base tag
_MODEL = re.compile(
    r"(?<![\w.])(?:\d+x)?\d+(?:\.\d+)?\s?[BMbm]\b|\b(?:instruct|chat|base|it|preview|distill\w*)\b"
    r"|\b(?:llama|qwen|mistral|mixtral|gemma|phi|gpt|claude|gemini|deepseek|falcon|olmo|yi|command|grok"
    r"|internlm|glm|granite|nemotron|smollm|baichuan|vicuna|chinchilla|palm|opt|bloom|pythia|stablelm)\b",
    re.I,
)
#: benchmark names model cards print down their first column
_BENCHMARK = re.compile(
    r"\b(?:mmlu\w*|gsm-?8k|math(?:-500)?|humaneval\+?|mbpp\+?|gpqa|arc(?:-[ce])?|hellaswag|winogrande|piqa|siqa"
    r"|boolq|bbh|big-?bench\w*|drop|triviaqa|naturalquestions|nq|squad|race|ifeval|mt-?bench|alpacaeval\w*"
    r"|arena-?hard|aime\w*|livecodebench|swe-?bench\w*|bfcl\w*|simpleqa|hotpotqa|agieval|truthfulqa|openbookqa"
    r"|commonsenseqa|lambada|mgsm|flores|wmt\w*|c-?eval|cmmlu|musr|nexus|tau-?bench|infinitebench|ruler"
    r"|chartqa|docvqa|mmmu\w*|mathvista|ai2d|textvqa|scienceqa|hle|codeforces|multipl-?e)\b",
    re.I,
)


def _naming(texts: Sequence[str], pattern: re.Pattern, unless: re.Pattern) -> list[str]:
    """The texts that match ``pattern`` and not ``unless`` ("GSM8K (Llama judge)" is no model)."""
    return [t for t in texts if pattern.search(t) and not unless.search(t)]


def transposed_evidence(score_columns: Sequence[str], first_column: Sequence[str]) -> str:
    """Why the table looks like models as columns ("" when it does not): most score columns name
    a model and not a benchmark, and most first-column labels name a benchmark and not a model."""
    columns = [c for c in score_columns if c.strip()]
    labels = [t for t in first_column if t.strip()]
    models = _naming(columns, _MODEL, _BENCHMARK)
    benches = _naming(labels, _BENCHMARK, _MODEL)
    if columns and labels and len(models) * 2 >= len(columns) and len(benches) * 2 >= len(labels):
        return (f"the header names models ({', '.join(map(repr, models[:3]))}) and the first column names "
                f"benchmarks ({', '.join(map(repr, benches[:3]))})")
    return ""
