"""Header shapes of public leaderboards: setting rows of large model cards and deep HTML headers.

Like tests/support/real_tables.py: every table was read as GitHub renders it (its repository and path
are in its comment) and rewritten small, with other labels and numbers, keeping the shape that
makes it hard to read. ``cells`` is the ground truth written by hand from the small table: for a
sampled (model, task), the value as printed, the status and the variant (the draft's notes).
"""

from __future__ import annotations

from tests.support.real_tables import Case

CASES = [
    # baichuan-inc/Baichuan2: README.md, "通用领域 / 7B 模型结果". The header's first cell is empty and its
    # benchmark names are bold; the first body row leaves the label empty and prints one shot count per
    # column; labels are bold; "-" where a model was not run.
    Case(
        "baichuan2-general",
        "baichuan-inc/Baichuan2: README.md",
        """### 7B results
|               | **C-Eval** | **MMLU** | **CMMLU** | **BBH** |
|:---------------------:|:----------:|:--------:|:---------:|:-------:|
|               |  5-shot    |  5-shot  |  5-shot   | 3-shot  |
| **Heron-4**           | 61.40      | 80.93    | 69.33     | -       |
| **Kestrel-7B**        | 27.20      | 36.10    | 25.75     | 31.38   |
| **Wren2-7B-Base**     | 53.00      | 55.16    | 56.07     | 40.56   |
""",
        {"heading": "7B results"},
        {
            ("Heron-4", "C-Eval / 5-shot"): ("61.40", "ok", "5-shot"),
            ("Heron-4", "BBH / 3-shot"): ("-", "needs_review", "3-shot"),
            ("Kestrel-7B", "MMLU / 5-shot"): ("36.10", "ok", "5-shot"),
            ("Wren2-7B-Base", "BBH / 3-shot"): ("40.56", "ok", "3-shot"),
        },
    ),
    # baichuan-inc/Baichuan2: README.md, "数学、代码 / 7B 模型结果". The same shape with a different setting
    # in each column (4-shot, 0-shot, 3-shot), a label with a space, cells padded with spaces.
    Case(
        "baichuan2-math-code",
        "baichuan-inc/Baichuan2: README.md",
        """### 7B math and code
|               | **GSM8K** | **MATH** | **HumanEval** | **MBPP** |
|:---------------------:|:---------:|:--------:|:-------------:|:--------:|
|               |  4-shot   | 4-shot   |  0-shot       |  3-shot  |
| **Heron 3.5 Turbo**   |   56.77   | 12.96    | 51.44         |  60.40   |
| **Pipit-6B**          |   27.89   | 5.40     | 8.15          |   8.00   |
| **Falk-7B**           |   4.46    | 1.68     | -             |  11.20   |
""",
        {"heading": "7B math and code"},
        {
            ("Heron 3.5 Turbo", "GSM8K / 4-shot"): ("56.77", "ok", "4-shot"),
            ("Pipit-6B", "HumanEval / 0-shot"): ("8.15", "ok", "0-shot"),
            ("Pipit-6B", "MBPP / 3-shot"): ("8.00", "ok", "3-shot"),
            ("Falk-7B", "HumanEval / 0-shot"): ("-", "needs_review", "0-shot"),
        },
    ),
    # 01-ai/Yi: README.md, "Base model performance". A setting row whose last columns print "-" (no
    # setting: those columns average several benchmarks), a setting "3-shot@1", bold scores.
    Case(
        "yi-base",
        "01-ai/Yi: README.md",
        """### Base model performance

| Model         |   MMLU   |  C-Eval  |   BBH    | Common-sense Reasoning | Math & Code |
| :------------ | :------: | :------: | :------: | :--------------------: | :---------: |
|               |  5-shot  |  5-shot  | 3-shot@1 |           -            |      -      |
| Lark2-34B     |   61.6   |    -     |   45.1   |          68.9          |    25.0     |
| Tern-14B      |   65.3   |   71.1   |   52.4   |          72.3          |  **38.8**   |
| **Yew-34B**   | **75.3** |   80.4   | **53.3** |        **79.1**        |    36.1     |
""",
        {"heading": "Base model performance"},
        {
            ("Lark2-34B", "MMLU / 5-shot"): ("61.6", "ok", "5-shot"),
            ("Lark2-34B", "C-Eval / 5-shot"): ("-", "needs_review", "5-shot"),
            ("Tern-14B", "BBH / 3-shot@1"): ("52.4", "ok", "3-shot@1"),
            ("Tern-14B", "Math & Code"): ("**38.8**", "ok", ""),
            ("Yew-34B", "Common-sense Reasoning"): ("**79.1**", "ok", ""),
        },
    ),
    # 01-ai/Yi: README.md, "Chat model performance". Column names repeat (MMLU, MMLU) and only the setting
    # row tells them apart (0-shot, 5-shot); a header marker <sup>*</sup> whose legend sits under the table
    # with its marker in <strong>; quantised variants in the labels.
    Case(
        "yi-chat",
        "01-ai/Yi: README.md",
        """### Chat model performance

| Model                   | MMLU      | MMLU      | C-Eval(val)<sup>*</sup> | C-Eval(val)<sup>*</sup> | GSM8k     |
| ----------------------- | --------- | --------- | ----------------------- | ----------------------- | --------- |
|                         | 0-shot    | 5-shot    | 0-shot                  | 5-shot                  | 4-shot    |
| Lark2-13B-Chat          | 49.88     | 46.33     | 26.93                   | 34.88                   | 3.73      |
| Yew-6B-Chat-4bits(AWQ)  | 55.78     | 58.89     | 66.53                   | 71.29                   | 37.36     |
| Yew-34B-Chat            | **66.62** | 72.46     | 76.04                   | 77.53                   | **74.97** |

<strong>*</strong>: C-Eval results are evaluated on the validation datasets
""",
        {"heading": "Chat model performance"},
        {
            ("Lark2-13B-Chat", "MMLU / 0-shot"): ("49.88", "ok", "0-shot"),
            ("Lark2-13B-Chat", "MMLU / 5-shot"): ("46.33", "ok", "5-shot"),
            ("Yew-34B-Chat", "MMLU / 0-shot"): ("**66.62**", "ok", "0-shot"),
            ("Yew-6B-Chat-4bits(AWQ)", "GSM8k / 4-shot"): ("37.36", "ok", "4-shot"),
            # the marker's legend says the split, which a reviewer must judge
            ("Yew-34B-Chat", "C-Eval(val) / 5-shot"): ("77.53", "needs_review", "5-shot"),
        },
    ),
    # ClaraLovesFunk/FLUFFY-MLLM-Benchmark: README.md. A pandas Styler table: four header rows inside
    # <thead> (dataset, task, metric, and a blank row under the index name), colspans over 2 and 4
    # columns, model labels as <th> cells of the body, "nan" where a model has no score.
    Case(
        "fluffy-styler",
        "ClaraLovesFunk/FLUFFY-MLLM-Benchmark: README.md",
        """### run1
<table id="T_x">
<thead>
<tr>
<th class="index_name level0">Dataset</th>
<th class="col_heading level0 col0" colspan="2">okvqa-a</th>
<th class="col_heading level0 col2" colspan="2">memes</th>
<th class="col_heading level0 col4">sqa</th>
</tr>
<tr>
<th class="index_name level1">Task</th>
<th class="col_heading level1 col0">direct answer</th>
<th class="col_heading level1 col1">multiple choice</th>
<th class="col_heading level1 col2" colspan="2">hate classification</th>
<th class="col_heading level1 col4">multiple choice (sqa)</th>
</tr>
<tr>
<th class="index_name level2">Metric</th>
<th class="col_heading level2 col0">accuracy</th>
<th class="col_heading level2 col1">accuracy</th>
<th class="col_heading level2 col2">accuracy</th>
<th class="col_heading level2 col3">f1</th>
<th class="col_heading level2 col4">accuracy</th>
</tr>
<tr>
<th class="index_name level0"></th>
<th class="blank col0"> </th>
<th class="blank col1"> </th>
<th class="blank col2"> </th>
<th class="blank col3"> </th>
<th class="blank col4"> </th>
</tr>
</thead>
<tbody>
<tr>
<th class="row_heading level0 row0">blipx</th>
<td class="data row0 col0">0.21</td>
<td class="data row0 col1">0.02</td>
<td class="data row0 col2">0.60</td>
<td class="data row0 col3">0.62</td>
<td class="data row0 col4">0.36</td>
</tr>
<tr>
<th class="row_heading level0 row1">otterly</th>
<td class="data row1 col0">0.00</td>
<td class="data row1 col1">nan</td>
<td class="data row1 col2">0.52</td>
<td class="data row1 col3">0.16</td>
<td class="data row1 col4">0.07</td>
</tr>
</tbody>
</table>
""",
        {"heading": "run1"},
        {
            ("blipx", "okvqa-a / direct answer / accuracy"): ("0.21", "ok", ""),
            ("blipx", "memes / hate classification / f1"): ("0.62", "ok", ""),
            ("otterly", "okvqa-a / multiple choice / accuracy"): ("nan", "needs_review", ""),
            ("otterly", "sqa / multiple choice (sqa) / accuracy"): ("0.07", "ok", ""),
        },
    ),
    # vladimir-chernykh/coreml-model-zoo: vision/classification/alexnet/README.md. A header of bold <td>
    # cells (no <th>, no <thead>) over three rows: rowspan=3 on the first columns, colspan groups over a
    # second and a third level; the label is a link; "-" where nothing was measured; a commented-out cell.
    Case(
        "coreml-zoo-deep-td",
        "vladimir-chernykh/coreml-model-zoo: vision/classification/alexnet/README.md",
        """## Quality

<table>
  <tbody>
    <tr>
      <td rowspan=3 align="center"><b>Model</b></td>
      <td rowspan=3 align="center"><b>Size, MB</b></td>
      <td colspan=4 align="center"><b>Quality: Accuracy, %</b></td>
<!--       <td rowspan=11 align="center"></td> -->
    </tr>
    <tr>
      <td colspan="2" align="center"><b>CoreML</b></td>
      <td colspan="2" align="center"><b>Source</b></td>
    </tr>
    <tr>
      <td><b>Top-1</b></td>
      <td><b>Top-5</b></td>
      <td><b>Top-1</b></td>
      <td><b>Top-5</b></td>
    </tr>
    <tr>
      <td><a href="https://example.org/squeeze.mlmodel">SqueezeNet</a></td>
      <td>5</td>
      <td>-</td>
      <td>-</td>
      <td>57.50</td>
      <td>80.30</td>
    </tr>
  </tbody>
</table>
""",
        {"heading": "Quality", "ignore_columns": ["Size, MB"]},
        {
            ("SqueezeNet", "Quality: Accuracy, % / CoreML / Top-1"): ("-", "needs_review", ""),
            ("SqueezeNet", "Quality: Accuracy, % / Source / Top-1"): ("57.50", "ok", ""),
            ("SqueezeNet", "Quality: Accuracy, % / Source / Top-5"): ("80.30", "ok", ""),
        },
    ),
    # A-ryanVAT-S/PersuaRL: docs/pipeline.md, "Stage 2 — Reward classifiers" ("Reproducing Table 9"). A
    # two-level Markdown header whose groups are model names (encoders, each over the same two metric
    # sub-columns, its second header cell left empty) and whose first column lists the tasks; the
    # sub-column row has an empty first cell. The groups' names are none the orientation check knows, so
    # the table is read with --models-as-columns, as its maintainer must say.
    Case(
        "persuarl-model-groups",
        "A-ryanVAT-S/PersuaRL: docs/pipeline.md",
        """## Stage 2 — Scoring classifiers

Reproducing Table 4:

| scorer | DeBERTa-large | | MiniLM | | ELECTRA-base | |
|---|---|---|---|---|---|---|
| | Acc | F1 | Acc | F1 | Acc | F1 |
| Stance (STC) | 79.42 | 71.08 | 77.91 | 68.30 | 78.65 | 69.94 |
| Topic (TPC) | 86.13 | 76.27 | 83.05 | 73.81 | 82.47 | 72.15 |
""",
        {"heading": "Stage 2 — Scoring classifiers", "models_as_columns": True},
        {
            ("DeBERTa-large", "Stance (STC) / Acc"): ("79.42", "ok", ""),
            ("DeBERTa-large", "Topic (TPC) / F1"): ("76.27", "ok", ""),
            ("MiniLM", "Stance (STC) / F1"): ("68.30", "ok", ""),
            ("MiniLM", "Topic (TPC) / Acc"): ("83.05", "ok", ""),
            ("ELECTRA-base", "Stance (STC) / Acc"): ("78.65", "ok", ""),
            ("ELECTRA-base", "Topic (TPC) / F1"): ("72.15", "ok", ""),
        },
    ),
]
