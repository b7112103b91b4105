"""Which way a results table runs: models as rows (the usual leaderboard) or as columns (a model card).

A model card often lists benchmarks down the first column and its model sizes across
("Llama 3.2 1B | Llama 3.2 3B"). Read the usual way, every model becomes a task and every
benchmark a model, and each score is still a clean number, so nothing would flag it. The
ledger therefore looks before it reads: when the header looks like model names and a text
column (the first, or a "Benchmark" column after a "Category" one) like benchmark names, it
refuses to guess and asks for ``--models-as-columns`` with that column (or
``--models-as-rows`` to read the table as printed). A two-level header weighs too: when its
groups name models over their sub-columns (``GPT-4o`` over ``func | param | value``), the
columns are models whatever the first column holds, so that is refused the same way.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence

#: a parameter count ("8B", "1.5B", "70b", "350M", "8x7B") or a chat/instruct/base tag
_MODEL = re.compile(
    r"(?<![\w.])(?:\d+x)?\d+(?:\.\d+)?\s?[BMbm]\b|\b(?:instruct|chat|base|it|preview|distill\w*)\b"
    r"|\b(?:llama|qwen|mistral|mixtral|gemma|phi|gpt|claude|gemini|deepseek|falcon|olmo|yi|command|grok"
    r"|internlm|glm|granite|nemotron|smollm|baichuan|vicuna|chinchilla|palm|opt|bloom|pythia|stablelm"
    # encoders and embedding models, which papers and benchmark READMEs group their sub-columns under
    r"|bert|roberta|deberta\w*|distilbert|albert|electra|xlnet|minilm|mpnet|t5|flan-?t5|bart|xlm-?r\w*"
    r"|e5|bge|gte|sentence-?t5|longformer|bigbird|ernie)\b",
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


def transposed_evidence(
    score_columns: Sequence[str], label_columns: Callable[[], Mapping[str, Sequence[str]]]
) -> tuple[str, str]:
    """Why the table looks like models as columns, and the column naming its benchmarks (("", "") when it
    does not): most score columns name a model and not a benchmark, and most labels of one text column
    (the first, or another such as "Benchmark" after a "Category" column) name a benchmark and not a model.
    ``label_columns`` gives those columns' labels; it is called only when the header names models, so the
    labels of a leaderboard whose header names benchmarks are not gathered."""
    columns = [c for c in score_columns if c.strip()]
    models = _naming(columns, _MODEL, _BENCHMARK)
    if not columns or len(models) * 2 < len(columns):
        return "", ""
    found = [_benchmark_share(name, texts) for name, texts in label_columns().items()]
    found = [f for f in found if f[0] >= 0.5]
    if not found:
        return "", ""
    *_, name, benches = max(found)  # the column most plainly of benchmarks ("Math" alone makes no Category one)
    return (
        f"the header names models ({', '.join(map(repr, models[:3]))}) and the column {name!r} names "
        f"benchmarks ({', '.join(map(repr, benches[:3]))})"
    ), name


def _benchmark_share(name: str, texts: Sequence[str]) -> tuple[float, int, str, list[str]]:
    """(share of the column's labels that name a benchmark, their count, the column, those labels)."""
    labels = [t for t in texts if t.strip()]
    benches = _naming(labels, _BENCHMARK, _MODEL)
    return (len(benches) / len(labels) if labels else 0.0), len(benches), name, benches


def grouped_evidence(parts: Mapping[str, tuple[str, str]]) -> str:
    """Why a two-level header looks like models over sub-columns ("" when it does not): most of its
    groups name a model and not a benchmark."""
    groups = list(dict.fromkeys(group for group, sub in parts.values() if sub))
    models = _naming(groups, _MODEL, _BENCHMARK)
    if not groups or len(models) * 2 < len(groups):
        return ""
    subs = list(dict.fromkeys(sub for _, sub in parts.values() if sub))
    return (
        f"the header's groups name models ({', '.join(map(repr, models[:3]))}) over the sub-columns "
        f"({', '.join(map(repr, subs[:3]))})"
    )
