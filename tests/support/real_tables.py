"""Minimal tables with the shapes of real public leaderboards, and the ground truth of each.

Every table below was read on GitHub (its source repository and path are in its comment),
then rewritten small, with other labels and numbers, keeping what makes it hard to read:
its layout, markup, markers and legends. Nothing is fetched at test time. ``cells`` is the
ground truth written by hand from how GitHub renders the small table: for a sampled
(model, task), the value as printed, the status, and the variant (the draft's notes).
"""

from __future__ import annotations

from typing import NamedTuple


SAMPLED = (
    "For benchmarks requiring sampling, we use a temperature of 0.7 and draw 32 responses per query to estimate pass@1."
)
LIBRISPEECH = "Librispeech dev-clean | dev other | test-clean | test-other"
TEMPERATURE = "Benchmarks with fewer than 1000 samples are tested multiple times at varying temperature settings."


class Case(NamedTuple):
    name: str
    #: where the shape comes from (repository: path)
    source: str
    text: str
    options: dict
    #: (model, task) -> (value as printed, status, variant)
    cells: dict
    fmt: str = "markdown"
    #: (model, task) -> text its qualifiers must hold (an uncertainty, a collapsed section's summary)
    kept: dict = {}


CASES = [
    # hendrycks/test: README.md. A paragraph line runs straight into the table, labels are links
    # followed by a run detail "(few-shot)", an Authors text column, rows without a closing pipe and
    # one row with a cell more than the header.
    Case(
        "mmlu-test-readme",
        "hendrycks/test: README.md",
        """## Test Leaderboard

Scores of the test:
| Model | Authors | Humanities | STEM | Average |
|---|---|:--:|:--:|:--:|
| [Orca-Q](https://arxiv.org/abs/0000.00001) | Doe et al., 2020 | 45.1 | 40.9 | 43.0
| [Heron-L](https://arxiv.org/abs/0000.00002) (few-shot) | Roe et al., 2020 | 40.2 | 36.3 | 38.1
| Chance | N/A | 25.0 | 25.0 | 25.0 | 25.0
""",
        {"heading": "Test Leaderboard", "ignore_columns": ["Authors"]},
        {
            ("Orca-Q", "Humanities"): ("45.1", "ok", ""),
            ("Orca-Q", "Average"): ("43.0", "ok", ""),
            ("Heron-L", "STEM"): ("36.3", "ok", "few-shot"),
            ("Heron-L", "Average"): ("38.1", "ok", "few-shot"),
            ("Chance", "Average"): ("25.0", "ok", ""),
        },
    ),
    # openai/simple-evals: README.md. GFM footnotes on labels (two on one label), on headers and on a
    # text column's "n/a"; bold group rows; a header with <br>; "-" for no score; a leading zero; the
    # footnote definitions far below under their own heading, one with no space after the colon.
    Case(
        "simple-evals",
        "openai/simple-evals: README.md",
        """## Benchmark Results

| Model | Prompt | MMLU | GPQA [^3] | DROP[^2]<br>(F1, 3-shot) |
|:--:|:--:|:--:|:--:|:--:|
| **k2 family** | | | | |
| k2-high [^5] | n/a [^4] | 91.0 | 80.5 | 88.1 |
| k2 [^1] [^5] | n/a | 90.2 | 79.9 | 79.0 |
| **Older** | | | | |
| j1-mini | assistant | 84.0 | 58.8 | - |
| j1-nano | assistant | 79.3 | 49.0 | 07.6 |

## Notes

[^1]:The default effort level for k2 is "medium".
[^2]:We think this eval is saturated, reported for completeness.
[^3]:Includes an answer regex tweak.
[^4]:k-series models take no system prompt.
[^5]:These results are with no tools enabled.
""",
        {"heading": "Benchmark Results", "ignore_columns": ["Prompt"]},
        {
            ("k2-high", "MMLU"): (
                "91.0",
                "ok",
                "These results are with no tools enabled.; k-series models take no system prompt.",
            ),
            ("k2", "MMLU"): (
                "90.2",
                "ok",
                'The default effort level for k2 is "medium".; These results are with no tools enabled.',
            ),
            ("k2", "GPQA"): (
                "79.9",
                "needs_review",
                'The default effort level for k2 is "medium".; These results are with no tools enabled.',
            ),
            ("j1-mini", "DROP (F1, 3-shot)"): ("-", "needs_review", "F1, 3-shot; Prompt: assistant"),
            ("j1-nano", "DROP (F1, 3-shot)"): ("07.6", "ok", "F1, 3-shot; Prompt: assistant"),
            ("j1-nano", "MMLU"): ("79.3", "ok", "Prompt: assistant"),
        },
    ),
    # meta-llama/llama-models: models/llama3_2/MODEL_CARD.md, "Base Pretrained Models". Benchmarks down
    # the rows, models across; the benchmark is the second column, a category column left empty on
    # continued rows, "# Shots" and "Metric" columns with escaped Markdown.
    Case(
        "llama-card-base",
        "meta-llama/llama-models: models/llama3_2/MODEL_CARD.md",
        """### Base Pretrained Models

| Category | Benchmark | \\# Shots | Metric | Lark 1B | Lark 3B |
| ----- | ----- | :---: | :---: | :---: | :---: |
| General | MMLU | 5 | macro\\_avg/acc\\_char | 31.0 | 57.5 |
|  | ARC-Challenge | 25 | acc\\_char | 30.1 | 68.8 |
| Reading comprehension | SQuAD | 1 | em | 48.0 | 66.1 |
""",
        {"models_as_columns": True, "task_column": "Benchmark", "ignore_columns": ["Category", "# Shots", "Metric"]},
        {
            ("Lark 1B", "MMLU"): ("31.0", "ok", "# Shots: 5"),
            ("Lark 3B", "ARC-Challenge"): ("68.8", "ok", "# Shots: 25"),
            ("Lark 3B", "SQuAD"): ("66.1", "ok", "# Shots: 1"),
        },
    ),
    # meta-llama/llama-models: models/llama3_2/MODEL_CARD.md, "Instruction Tuned Models". An escaped
    # "\*\*" on some model headers with its legend written escaped under the table; an empty header
    # cell; run details in benchmark labels; N/A where a model was not run.
    Case(
        "llama-card-instruct",
        "meta-llama/llama-models: models/llama3_2/MODEL_CARD.md",
        """### Instruction Tuned Models

| Capability |  | Benchmark | \\# Shots | Lark 1B bf16 | Lark 1B PTQ\\*\\* | Lark 3B bf16 |
| :---: | ----- | :---: | :---: | :---: | :---: | :---: |
| General |  | MMLU | 5 | 48.1 | 42.0 | 62.9 |
| Math |  | GSM8K (CoT) | 8 | 43.0 | 32.2 | 76.4 |
| Long Context |  | NIH/Multi-needle | 0 | 74.0 | N/A | 83.5 |

\\*\\*for comparison purposes only. Model not released.
""",
        {
            "models_as_columns": True,
            "task_column": "Benchmark",
            "ignore_columns": ["Capability", "column 2", "# Shots"],
        },
        {
            ("Lark 1B bf16", "MMLU"): ("48.1", "ok", "# Shots: 5"),
            ("Lark 1B PTQ", "MMLU"): ("42.0", "needs_review", "# Shots: 5"),
            ("Lark 3B bf16", "GSM8K (CoT)"): ("76.4", "ok", "CoT; # Shots: 8"),
            ("Lark 1B PTQ", "NIH/Multi-needle"): ("N/A", "needs_review", "# Shots: 0"),
        },
    ),
    # meta-llama/llama-models: models/llama3_2/MODEL_CARD.md, "Multilingual Benchmarks". One benchmark
    # over several rows that differ only in their Language cell, its label cell left empty below.
    Case(
        "llama-card-multilingual",
        "meta-llama/llama-models: models/llama3_2/MODEL_CARD.md",
        """### Multilingual Benchmarks

| Category | Benchmark | Language | Lark 1B | Lark 3B |
| :---: | :---: | :---: | :---: | :---: |
| General | MMLU (5-shot, macro_avg/acc) | Portuguese | 38.7 | 53.0 |
| | | Spanish | 40.1 | 54.2 |
| | | Thai | 33.3 | 43.9 |
""",
        {"models_as_columns": True, "task_column": "Benchmark", "ignore_columns": ["Category", "Language"]},
        {
            ("Lark 1B", "MMLU (5-shot, macro_avg/acc)", "Portuguese"): (
                "38.7",
                "ok",
                "5-shot, macro_avg/acc; Language: Portuguese",
            ),
            ("Lark 3B", "MMLU (5-shot, macro_avg/acc)", "Thai"): (
                "43.9",
                "ok",
                "5-shot, macro_avg/acc; Language: Thai",
            ),
        },
    ),
    # allenai/olmocr: olmocr/bench/README.md. An HTML <table> with <thead>, align attributes, <strong>
    # best scores, "± 1.1" on the overall score, and rows commented out with <!-- -->.
    Case(
        "olmocr-bench-html",
        "allenai/olmocr: olmocr/bench/README.md",
        """## Results

<table>
  <thead>
    <tr>
      <th align="left"><strong>Model</strong></th>
      <th align="center">ArXiv</th>
      <th align="center">Tables</th>
      <th align="center">Overall</th>
    </tr>
  </thead>
  <tbody>
    <tr>
      <td align="left">Scan-OCR v2 (base, force_ocr)</td>
      <td align="center"><strong>81.0</strong></td>
      <td align="center">70.4</td>
      <td align="center">74.6 ± 1.1</td>
    </tr>
    <!-- <tr>
      <td align="left">Scan-OCR v1</td>
      <td align="center">70.0</td>
      <td align="center">55.0</td>
      <td align="center">68.0 ± 1.1</td>
    </tr> -->
    <tr>
      <td align="left">Page-VL (No Anchor)</td>
      <td align="center">50.0</td>
      <td align="center">68.2</td>
      <td align="center"><strong>67.7 ± 1.2</strong></td>
    </tr>
  </tbody>
</table>
""",
        {"heading": "Results"},
        {
            ("Scan-OCR v2 (base, force_ocr)", "ArXiv"): ("**81.0**", "ok", ""),
            ("Scan-OCR v2 (base, force_ocr)", "Overall"): ("74.6 ± 1.1", "ok", ""),
            ("Page-VL (No Anchor)", "Overall"): ("**67.7 ± 1.2**", "ok", ""),
            ("Page-VL (No Anchor)", "Tables"): ("68.2", "ok", ""),
        },
    ),
    # TIGER-AI-Lab/MMLU-Pro: README.md, "Mini-Leaderboard". An emoji in the heading, spaces after the
    # closing pipe, a centred score column.
    Case(
        "mmlu-pro-mini",
        "TIGER-AI-Lab/MMLU-Pro: README.md",
        """## 🏆 Mini-Leaderboard
| Model                          | Overall Accuracy | 
|--------------------------------|:----------------:|
| Finch-3.5-Large                | 75.02            |
| Finch-3-Small                  | 55.90            | 
""",
        {"heading": "Mini-Leaderboard"},
        {
            ("Finch-3.5-Large", "Overall Accuracy"): ("75.02", "ok", ""),
            ("Finch-3-Small", "Overall Accuracy"): ("55.90", "ok", ""),
        },
    ),
    # fit-alessandro-berti/hallucin-pm-bench: stats/self_evaluation.md. Text columns of emoji
    # short codes, an average column, bold best cells.
    Case(
        "hallucin-pm-bench",
        "fit-alessandro-berti/hallucin-pm-bench: stats/self_evaluation.md",
        """## Overall Leaderboard

| LLM | LRM | OS | AVG | C01 | C02 |
|:--|:--|:--|--:|:--|:--|
| wren-flash-preview | :x: | :x: | 8.01 | 2.2 | **2.9** |
| kestrel-scout | :x: | :white_check_mark: | 7.70 | **2.5** | 2.4 |
""",
        {"heading": "Overall Leaderboard", "ignore_columns": ["LRM", "OS"]},
        {
            ("wren-flash-preview", "AVG"): ("8.01", "ok", ""),
            ("wren-flash-preview", "C02"): ("**2.9**", "ok", ""),
            ("kestrel-scout", "C01"): ("**2.5**", "ok", ""),
        },
    ),
    # MykolaPinchuk/demas_v03: BENCHMARKS.md. The model is the second column; a timestamp first; one
    # model run twice, told apart only by its timestamp; a notes column naming the run's temperature.
    Case(
        "demas-benchmarks-log",
        "MykolaPinchuk/demas_v03: BENCHMARKS.md",
        """### Leaderboard (full suite only)

<!-- MAIN_TABLE_START -->
| timestamp | model | pass_rate | notes |
|---|---|---|---|
| 20250901_100000 | acme/Kite-72B | 0.57 | full sweep, temp=0 |
| 20250902_110000 | acme/Kite-72B | 0.43 | full sweep, temp=0 |
| 20250902_120000 | acme/Robin-8B | 0.00 | full sweep, temp=0 |
""",
        {"heading": "Leaderboard (full suite only)", "model_column": "model", "ignore_columns": ["timestamp", "notes"]},
        {
            ("acme/Kite-72B", "pass_rate", "20250901_100000"): (
                "0.57",
                "ok",
                "notes: full sweep, temp=0; timestamp: 20250901_100000",
            ),
            ("acme/Kite-72B", "pass_rate", "20250902_110000"): (
                "0.43",
                "ok",
                "notes: full sweep, temp=0; timestamp: 20250902_110000",
            ),
            ("acme/Robin-8B", "pass_rate"): ("0.00", "ok", "notes: full sweep, temp=0"),
        },
    ),
    # ruxiliang/ZeroEval: result_dirs/crux.summary.md. A decoding "Mode" column, provider suffixes in
    # labels, counts beside the score.
    Case(
        "zeroeval-summary",
        "ruxiliang/ZeroEval: result_dirs/crux.summary.md",
        """| Model | Mode | Acc | No answer | Total |
|---|---|---|---|---|
| Kite-405B-Inst-fp8@hostA | greedy | 74.0 | 2.50 | 800 |
| Kite-405B-Inst@hostB | greedy | 73.1 | 1.00 | 800 |
""",
        {"ignore_columns": ["Mode", "Total"]},
        {
            ("Kite-405B-Inst-fp8@hostA", "Acc"): ("74.0", "ok", "Mode: greedy"),
            ("Kite-405B-Inst@hostB", "No answer"): ("1.00", "ok", "Mode: greedy"),
        },
    ),
    # saucam/model_evals: saucam/Orpomis-Prime-7B/README.md. A suite name in the first column, the
    # model (a Hub link) second, right-aligned scores, no spaces around the pipes.
    Case(
        "model-evals-summary",
        "saucam/model_evals: saucam/Orpomis-Prime-7B/README.md",
        """## nous results

|Benchmark|Model|agieval|truthfulqa|Average|
|---------|-----|------:|---------:|------:|
|nous     |[Owl-7B](https://huggingface.co/acme/Owl-7B)|   35.1|     40.02|  45.90|
""",
        {"heading": "nous results", "model_column": "Model", "ignore_columns": ["Benchmark"]},
        {
            ("Owl-7B", "agieval"): ("35.1", "ok", ""),
            ("Owl-7B", "truthfulqa"): ("40.02", "ok", ""),
        },
    ),
    # The R.R. (Recollect and Rank) paper README, found by code search (its repository path was not
    # resolved): an HTML table whose header spans models over three sub-columns with colspan, the row
    # label header spanning both header rows with rowspan, <strong> best cells.
    Case(
        "html-colspan-models",
        "R.R. README (HTML, colspan/rowspan header)",
        """### Results

<table>
  <thead>
    <tr>
      <th rowspan="2">Attack</th>
      <th colspan="2">Lark-8B</th>
      <th colspan="2">Wren-3B</th>
    </tr>
    <tr>
      <th>ECHR</th><th>Enron</th>
      <th>ECHR</th><th>Enron</th>
    </tr>
  </thead>
  <tbody>
    <tr>
      <td>Plain</td>
      <td>6.10</td><td>2.50</td>
      <td>3.60</td><td>2.10</td>
    </tr>
    <tr>
      <td>Ranked</td>
      <td><strong>25.70</strong></td><td><strong>33.30</strong></td>
      <td><strong>14.80</strong></td><td><strong>20.60</strong></td>
    </tr>
  </tbody>
</table>
""",
        {"heading": "Results", "models_as_columns": True},
        {
            ("Lark-8B", "Plain / ECHR"): ("6.10", "ok", ""),
            ("Wren-3B", "Ranked / Enron"): ("**20.60**", "ok", ""),
            ("Lark-8B", "Ranked / Enron"): ("**33.30**", "ok", ""),
        },
    ),
    # The Llama 3.2 instruct table of meta-llama/llama-models: models/llama3_2/MODEL_CARD.md exported
    # to CSV by a maintainer: the "**" survives in the header, its legend does not.
    Case(
        "llama-card-csv-export",
        "meta-llama/llama-models: models/llama3_2/MODEL_CARD.md (as CSV)",
        "Benchmark,Lark 1B bf16,Lark 1B PTQ**\nMMLU,48.1,42.0\nGSM8K (CoT),43.0,32.2\n",
        {"models_as_columns": True},
        {
            ("Lark 1B bf16", "MMLU"): ("48.1", "ok", ""),
            ("Lark 1B PTQ", "MMLU"): ("42.0", "needs_review", ""),
            ("Lark 1B PTQ", "GSM8K (CoT)"): ("32.2", "needs_review", "CoT"),
        },
        fmt="csv",
    ),
    # deepseek-ai/DeepSeek-V3: README.md, "Base Model / Standard Benchmarks". Inside a centred <div>:
    # an empty first header cell, models as columns, attribute rows ("Architecture") among the scores,
    # the metric in parentheses after each benchmark, a "# Shots" column, and an alert under the
    # table whose sentence names one model column without qualifying its runs.
    Case(
        "deepseek-base",
        "deepseek-ai/DeepSeek-V3: README.md",
        """#### Standard Benchmarks

<div align="center">


|  | Benchmark (Metric) | # Shots | Kite-V2 | Owl 72B | Kite-V3 |
|---|---|---|---|---|---|
| | Architecture | - | MoE | Dense | MoE |
| English | Pile-test (BPB) | - | 0.606 | **0.538** | 0.548 |
| | MMLU (Acc.) | 5-shot | 78.4 | 85.0 | **87.1** |
| Code | HumanEval (Pass@1) | 0-shot | 43.3 | 53.0 | **65.2** |

</div>

> [!NOTE]
> Best results are shown in bold. Kite-V3 achieves the best performance on most benchmarks.
""",
        {
            "heading": "Standard Benchmarks",
            "models_as_columns": True,
            "task_column": "Benchmark (Metric)",
            "ignore_columns": ["column 1", "# Shots"],
        },
        {
            ("Kite-V3", "MMLU (Acc.)"): ("**87.1**", "ok", "# Shots: 5-shot"),
            ("Kite-V2", "Pile-test (BPB)"): ("0.606", "ok", ""),
            ("Owl 72B", "HumanEval (Pass@1)"): ("53.0", "ok", "Pass@1; # Shots: 0-shot"),
            ("Kite-V3", "Architecture"): ("MoE", "needs_review", ""),
        },
    ),
    # deepseek-ai/DeepSeek-V3: README.md, "Chat Model / Standard Benchmarks (Models larger than 67B)".
    # Bold header cells, "-" for a closed model's missing score, a run detail inside a benchmark label
    # ("3-shot F1"), and an alert under the table saying how small benchmarks were run, naming no column.
    Case(
        "deepseek-chat",
        "deepseek-ai/DeepSeek-V3: README.md",
        """#### Standard Benchmarks (Models larger than 67B)
<div align="center">

| | **Benchmark (Metric)** | **Kite V2.5-0905** | **Owl 72B-Inst.** | **Sonnet-1022** | **Kite V3** |
|---|---|---|---|---|---|
| | Architecture | MoE | Dense | - | MoE |
| English | MMLU (EM) | 80.6 | 85.3 | **88.3** | **88.5** |
| | DROP (3-shot F1) | 87.8 | 76.7 | 88.3 | **91.6** |
| Code | SWE Verified (Resolved) | - | 23.8 | **50.8** | 42.0 |

</div>

> [!NOTE]
> All models are evaluated with the output limited to 8K. Benchmarks with fewer than 1000 samples are \
tested multiple times at varying temperature settings.
""",
        {
            "heading": "Standard Benchmarks (Models larger than 67B)",
            "models_as_columns": True,
            "task_column": "Benchmark (Metric)",
            "ignore_columns": ["column 1"],
        },
        {
            ("Kite V3", "DROP (3-shot F1)"): ("**91.6**", "ok", "3-shot F1; " + TEMPERATURE),
            ("Kite V2.5-0905", "SWE Verified (Resolved)"): ("-", "needs_review", TEMPERATURE),
            ("Sonnet-1022", "MMLU (EM)"): ("**88.3**", "ok", TEMPERATURE),
        },
    ),
    # tatsu-lab/alpaca_eval: src/alpaca_eval/leaderboards/data_AlpacaEval_2/
    # weighted_alpaca_eval_gpt4_turbo_leaderboard.csv. Each score has its standard error in the next
    # column ("standard_error" after "win_rate", "lc_standard_error" after "length_controlled_winrate"),
    # some standard errors are empty, and counts, a mode and a length sit between them. (The real
    # file's first header cell, the model names' column, is empty: a pandas index.)
    Case(
        "alpaca-eval-csv",
        "tatsu-lab/alpaca_eval: src/alpaca_eval/leaderboards/data_AlpacaEval_2/*_leaderboard.csv",
        """name,win_rate,standard_error,n_wins,n_total,mode,avg_length,length_controlled_winrate,lc_standard_error
Heron-MoA-v1,74.1234,1.2871,610,805,community,1994,77.0123,0.4311
Lark-9b-it-DPO,61.9876,1.4022,520,805,community,2016,66.5432,0.6605
Kestrel-turbo,45.5,1.47,370,805,minimal,1802,55.0153,
ref_baseline,50.0,0.0,0,805,minimal,2049,50.0,
""",
        {"ignore_columns": ["n_wins", "n_total", "mode", "avg_length"]},
        {
            ("Heron-MoA-v1", "win_rate"): ("74.1234", "ok", ""),
            ("Lark-9b-it-DPO", "length_controlled_winrate"): ("66.5432", "ok", ""),
            ("Kestrel-turbo", "length_controlled_winrate"): ("55.0153", "ok", ""),
            ("ref_baseline", "win_rate"): ("50.0", "ok", ""),
        },
        fmt="csv",
        kept={
            ("Heron-MoA-v1", "win_rate"): "uncertainty in column 'standard_error': ± 1.2871",
            ("Lark-9b-it-DPO", "length_controlled_winrate"): "uncertainty in column 'lc_standard_error': ± 0.6605",
            ("Kestrel-turbo", "length_controlled_winrate"): "mode: minimal",
            ("ref_baseline", "win_rate"): "uncertainty in column 'standard_error': ± 0.0",
        },
    ),
    # tatsu-lab/alpaca_eval: src/alpaca_eval/leaderboards/data_AlpacaEval/alpaca_eval_gpt4_leaderboard.csv
    # (AlpacaEval 1), written by pandas' to_csv: the first header cell is empty, its column the index of
    # model names; the standard error follows the win rate, then win, loss and draw counts, the total, a
    # mode and an average length; the reference model's row prints 50.0 and a standard error of 0.0, and
    # some rates carry 14 decimals and others 8, as printed.
    Case(
        "alpaca-eval-1-csv-index",
        "tatsu-lab/alpaca_eval: src/alpaca_eval/leaderboards/data_AlpacaEval/alpaca_eval_gpt4_leaderboard.csv",
        """,win_rate,standard_error,n_wins,n_wins_base,n_draws,n_total,mode,avg_length
osprey-70b-v0.2,94.81203007518797,0.7811254018331409,762,41,2,805,community,1702
wren-2-13b-chat-hf,80.99378882,1.384912301,651,153,1,805,minimal,1488
text_davinci_003,50.0,0.0,0,0,805,805,minimal,307
finch-7b,24.96894410,1.52011873,199,598,8,805,verified,702
""",
        {"ignore_columns": ["n_wins", "n_wins_base", "n_draws", "n_total", "mode", "avg_length"]},
        {
            ("osprey-70b-v0.2", "win_rate"): ("94.81203007518797", "ok", ""),
            ("wren-2-13b-chat-hf", "win_rate"): ("80.99378882", "ok", ""),
            ("text_davinci_003", "win_rate"): ("50.0", "ok", ""),
            ("finch-7b", "win_rate"): ("24.96894410", "ok", ""),
        },
        fmt="csv",
        kept={
            ("osprey-70b-v0.2", "win_rate"): "uncertainty in column 'standard_error': ± 0.7811254018331409",
            ("text_davinci_003", "win_rate"): "n_draws: 805",
            ("finch-7b", "win_rate"): "mode: verified",
        },
    ),
    # deepseek-ai/DeepSeek-R1: README.md, "4. Evaluation Results / DeepSeek-R1-Evaluation". The paragraph
    # that says how every score was sampled sits directly above the table, before a centring <div> and
    # blank lines; the first columns are a category and the benchmark with its metric in parentheses.
    Case(
        "deepseek-r1-eval",
        "deepseek-ai/DeepSeek-R1: README.md",
        """## 4. Evaluation Results

### R1 Evaluation
 For all our models, the output is limited to 16K. For benchmarks requiring sampling, we use a \
temperature of 0.7 and draw 32 responses per query to estimate pass@1.
<div align="center">


| Category | Benchmark (Metric) | Osprey-1022 | Finch 0513 | Wren R1 |
|----------|-------------------|----------------------|------------|--------------|
| | Architecture | - | - | MoE |
| English | MMLU (Pass@1) | 86.1 | 85.0 | **90.2** |
| | DROP (3-shot F1) | 87.3 | 82.4 | **91.0** |
| Code | Codeforces (Rating) | 701 | 748 | **1999** |

</div>


### Distilled Model Evaluation
""",
        {
            "heading": "R1 Evaluation",
            "models_as_columns": True,
            "task_column": "Benchmark (Metric)",
            "ignore_columns": ["Category"],
        },
        {
            ("Wren R1", "MMLU (Pass@1)"): ("**90.2**", "ok", "Pass@1; " + SAMPLED),
            ("Finch 0513", "DROP (3-shot F1)"): ("82.4", "ok", "3-shot F1; " + SAMPLED),
            ("Osprey-1022", "Codeforces (Rating)"): ("701", "ok", SAMPLED),
            ("Osprey-1022", "Architecture"): ("-", "needs_review", SAMPLED),
        },
    ),
    # QwenLM/Qwen3-Omni: README.md, "Performance", <details><summary>AudioVisual -> Text</summary>. Two
    # HTML tables in one collapsed section (the Instruct and the Thinking models), and malformed bold:
    # a cell closes a <b> it never opened ("75.8</b>"), the next opens one it never closes ("<b>76.2").
    Case(
        "qwen3-omni-audiovisual",
        "QwenLM/Qwen3-Omni: README.md",
        """### Performance

<details>
<summary>AudioVisual -> Text</summary>

<table>
  <thead>
    <tr>
      <th>Datasets</th>
      <th>Previous Open-source SoTA</th>
      <th>Tern-Flash</th>
      <th>Auk-30B-Instruct</th>
    </tr>
  </thead>
  <tbody>
    <tr>
      <td>WorldSense</td>
      <td>46.2</td>
      <td>51.3</td>
      <td><strong>53.9</strong></td>
    </tr>
  </tbody>
</table>

<table>
  <thead>
    <tr>
      <th>Datasets</th>
      <th>Previous Open-source SoTA</th>
      <th>Tern-Flash-Thinking</th>
      <th>Auk-30B-Thinking</th>
    </tr>
  </thead>
  <tbody>
    <tr>
      <td>DailyOmni</td>
      <td>68.1</td>
      <td>73.5</td>
      <td>74.9</b></td>
    </tr>
    <tr>
      <td>VideoHolmes</td>
      <td>54.2</td>
      <td>48.8</td>
      <td><b>56.1</td>
    </tr>
  </tbody>
</table>

</details>
""",
        {"heading": "Performance", "table": 2, "models_as_columns": True},
        {
            ("Auk-30B-Thinking", "DailyOmni"): ("74.9", "ok", ""),
            ("Auk-30B-Thinking", "VideoHolmes"): ("**56.1**", "ok", ""),
            ("Previous Open-source SoTA", "DailyOmni"): ("68.1", "ok", ""),
            ("Tern-Flash-Thinking", "VideoHolmes"): ("48.8", "ok", ""),
        },
        kept={("Auk-30B-Thinking", "DailyOmni"): "[collapsed section] AudioVisual -> Text"},
    ),
    # QwenLM/Qwen3-Omni: README.md, <details><summary>Vision -> Text</summary>, the Thinking models. The
    # category rows are one cell spread over the row, bold only through a style attribute (so GitHub,
    # which drops styles, prints them plain); "–" (an en dash) where a model has no score.
    Case(
        "qwen3-omni-vision",
        "QwenLM/Qwen3-Omni: README.md",
        """<details>
<summary>Vision -> Text</summary>

<table style="width:100%; border-collapse: collapse;">
  <thead>
    <tr style="border-bottom: 1px solid black;">
      <th align="left" style="padding: 6px;">Datasets</th>
      <th align="center" style="padding: 6px;">Tern-flash-thinking</th>
      <th align="center" style="padding: 6px;">Auk-30B-Thinking</th>
    </tr>
  </thead>
  <tbody>
    <tr style="border-top: 2px solid black;">
      <td colspan="3" align="center" style="padding: 6px 0; font-weight: bold;">Math & STEM</td>
    </tr>
    <tr>
      <td style="padding: 6px;">MMMU_val</td>
      <td align="center" style="padding: 6px;">76.1</td>
      <td align="center" style="padding: 6px;"><b>77.0</b></td>
    </tr>
    <tr>
      <td style="padding: 6px;">MMMU_pro</td>
      <td align="center" style="padding: 6px;"><b>64.9</b></td>
      <td align="center" style="padding: 6px;">–</td>
    </tr>
  </tbody>
</table>

</details>
""",
        {"models_as_columns": True},
        {
            ("Auk-30B-Thinking", "MMMU_val"): ("**77.0**", "ok", ""),
            ("Tern-flash-thinking", "MMMU_pro"): ("**64.9**", "ok", ""),
            ("Auk-30B-Thinking", "MMMU_pro"): ("–", "needs_review", ""),
        },
        kept={("Tern-flash-thinking", "MMMU_val"): "[collapsed section] Vision -> Text"},
    ),
    # QwenLM/Qwen2.5-Omni: README.md, <details><summary>Audio -> Text</summary>. A long table (dataset,
    # model, performance) whose dataset cell spans its models' rows, a full-width plain row naming the
    # task family ("ASR"), and several splits' scores joined by "|" in one cell.
    Case(
        "qwen25-omni-audio",
        "QwenLM/Qwen2.5-Omni: README.md",
        """<details>
<summary>Audio -> Text</summary>

<table class="tg"><thead>
  <tr>
    <th class="tg-0lax">Datasets</th>
    <th class="tg-0lax">Model</th>
    <th class="tg-0lax">Performance</th>
  </tr></thead>
<tbody>
  <tr>
    <td class="tg-9j4x" colspan="3">ASR</td>
  </tr>
  <tr>
    <td class="tg-0lax" rowspan="3">Librispeech<br>dev-clean | dev other | test-clean | test-other</td>
    <td class="tg-0lax">SALMON-X</td>
    <td class="tg-0lax">-|-|2.3|5.0</td>
  </tr>
  <tr>
    <td class="tg-0lax">Whisp-L3</td>
    <td class="tg-0lax">-|-|1.9|3.7</td>
  </tr>
  <tr>
    <td class="tg-0lax">Omni-7B</td>
    <td class="tg-0lax">1.7|3.6|1.9|3.5</td>
  </tr>
  <tr>
    <td class="tg-9j4x" colspan="3">SER</td>
  </tr>
  <tr>
    <td class="tg-0lax" rowspan="2">Meld</td>
    <td class="tg-0lax">WavLM-L</td>
    <td class="tg-0lax">0.531</td>
  </tr>
  <tr>
    <td class="tg-0lax">Omni-7B</td>
    <td class="tg-0lax"><strong>0.566</strong></td>
  </tr>
</tbody></table>
</details>
""",
        {"model_column": "Model", "task_column": "Datasets", "value_column": "Performance"},
        {
            ("Omni-7B", "Meld"): ("**0.566**", "ok", ""),
            ("WavLM-L", "Meld"): ("0.531", "ok", ""),
            ("Whisp-L3", LIBRISPEECH): ("-|-|1.9|3.7", "needs_review", ""),
            ("Omni-7B", LIBRISPEECH): ("1.7|3.6|1.9|3.5", "needs_review", ""),
        },
        kept={("WavLM-L", "Meld"): "[collapsed section] Audio -> Text"},
    ),
    # ScandEval/scandeval.github.io: english-nlu.md. An HTML leaderboard whose header names sit in tooltip
    # <span>s, every cell followed by an HTML comment, two metrics with their spread in one cell
    # ("91.88 ± 0.70 / 91.67 ± 0.56"), run details in a label ("(few-shot, val)") and version columns.
    Case(
        "scandeval-english-nlu",
        "ScandEval/scandeval.github.io: english-nlu.md",
        """<center>Last updated: 10/01/2025 12:30:41 CET</center>

<div class="blocked table-wrapper centered">
<table id="english-nlu" class="sortable fixed centered small-font">
 <thead>
  <tr>
   <th><span data-toggle="tooltip" title="Hugging Face Hub Model ID">Model ID</span></th>
   <th><span data-toggle="tooltip" title="Number of parameters, in millions">Parameters</span></th>
   <th id="rank-col"><span data-toggle="tooltip" title="1 + the average number of standard deviations">Rank</span></th>
   <th><span data-toggle="tooltip" title="English sentiment classification">SST5</span></th>
   <th><span data-toggle="tooltip" title="English question answering">SQuAD</span></th>
   <th>SST5 version</th>
  </tr>
 </thead>
 <tbody>
  <tr class="not-merged-model">
   <td>acme/roberta-xl</td> <!-- Model ID -->
   <td class="num_model_parameters">434</td> <!-- Number of trainable parameters -->
   <td class="rank">1.09</td> <!-- ScandEval rank -->
   <td class="en sent">63.14 ± 1.52 / 66.02 ± 1.49</td> <!-- SST5 -->
   <td class="en qa">73.41 ± 1.10 / 84.95 ± 0.81</td> <!-- SQuAD -->
   <td>0.0.0</td> <!-- SST5 version -->
  </tr>
  <tr class="not-merged-model">
   <td>lark-lm/Lark-70B (few-shot, val)</td> <!-- Model ID -->
   <td class="num_model_parameters">70554</td> <!-- Number of trainable parameters -->
   <td class="rank">1.54</td> <!-- ScandEval rank -->
   <td class="en sent">64.90 ± 2.55 / 67.83 ± 2.11</td> <!-- SST5 -->
   <td class="en qa">75.02 ± 1.61 / 86.44 ± 1.09</td> <!-- SQuAD -->
   <td>12.7.0</td> <!-- SST5 version -->
  </tr>
 </tbody>
</table>
</div>
""",
        {"ignore_columns": ["Parameters", "Rank", "SST5 version"]},
        {
            ("acme/roberta-xl", "SST5"): ("63.14 ± 1.52 / 66.02 ± 1.49", "needs_review", ""),
            ("lark-lm/Lark-70B", "SQuAD"): ("75.02 ± 1.61 / 86.44 ± 1.09", "needs_review", "few-shot, val"),
        },
        kept={
            ("acme/roberta-xl", "SST5"): "Rank: 1.09",
            ("lark-lm/Lark-70B", "SQuAD"): "SST5 version: 12.7.0",
        },
    ),
]
