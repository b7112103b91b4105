"""Header shapes of large model cards and dataset files: setting rows, deep HTML headers, index columns.

Each fixture is a small table written for these tests in the shape of a public one (the
scored suite is tests/hf/test_hf_real_shapes.py).
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from checks import InputError
from checks.testing import run_cli
from hfmigrate_checks.source import ledger


def read(tmp_path, text, fmt="markdown", name="README.md", **options):
    path = tmp_path / name
    path.write_text(text)
    return ledger.import_source(path, fmt, **options)


def cells(rows):
    return [(r.source_model, r.source_task, r.source_value, r.source_variant, r.status) for r in rows]


# ---------------------------------------------------------------- setting rows

SHOTS = """## Base model

| Model | MMLU | GSM8K | HumanEval | Metric-only |
|---|---|---|---|---|
| | 5-shot | 8-shot, CoT | 0-shot | acc_norm |
| Wren-7B | 61.2 | 40.1 | 30.5 | 70.0 |
| Wren-13B | 66.0 | 52.3 | 35.1 | 75.5 |
"""


def test_a_shot_count_row_is_read_as_column_qualifiers_not_refused(tmp_path):
    rows = read(tmp_path, SHOTS)
    assert cells(rows)[:4] == [
        ("Wren-7B", "MMLU / 5-shot", "61.2", "5-shot", "ok"),
        ("Wren-7B", "GSM8K / 8-shot, CoT", "40.1", "8-shot, CoT", "ok"),
        ("Wren-7B", "HumanEval / 0-shot", "30.5", "0-shot", "ok"),
        # a metric is no run detail: it stays in the task name, which the contract maps
        ("Wren-7B", "Metric-only / acc_norm", "70.0", "", "ok"),
    ]
    assert len(rows) == 8 and rows[0].source_locator.startswith("README.md:L6 ")


def test_a_setting_row_leaves_a_column_without_setting_its_plain_name(tmp_path):
    text = "| Model | MMLU | Avg |\n|---|---|---|\n| | 5-shot | |\n| Wren-7B | 61.2 | 60.0 |\n"
    assert cells(read(tmp_path, text)) == [
        ("Wren-7B", "MMLU / 5-shot", "61.2", "5-shot", "ok"),
        ("Wren-7B", "Avg", "60.0", "", "ok"),
    ]


@pytest.mark.parametrize(
    "first_row",
    [
        "| | 61.2 | 40.1 |",  # numbers: a row whose label is missing, not a sub-header
        "| | - | n/a |",  # no-score marks
    ],
)
def test_a_row_with_an_empty_label_and_scores_is_still_refused(tmp_path, first_row):
    text = f"| Model | MMLU | GSM8K |\n|---|---|---|\n{first_row}\n| Wren-7B | 61.2 | 40.1 |\n"
    with pytest.raises(InputError, match="empty model label in column 'Model'"):
        read(tmp_path, text)


def test_a_lone_bold_cell_under_the_header_stays_a_group_row(tmp_path):
    text = "| Model | MMLU | GSM8K |\n|---|---|---|\n| | **Open models** | |\n| Wren-7B | 61.2 | 40.1 |\n"
    rows = read(tmp_path, text)
    assert [(r.source_task, r.qualifiers) for r in rows] == [
        ("MMLU", "in the group 'Open models' of the table"),
        ("GSM8K", "in the group 'Open models' of the table"),
    ]


# ---------------------------------------------------------------- index columns

INDEXED = ",Model,MMLU,GSM8K\n0,Wren-7B,61.2,40.1\n1,Wren-13B,66.0,52.3\n"
EXPECTED = [
    ("Wren-7B", "MMLU", "61.2", "", "ok"),
    ("Wren-7B", "GSM8K", "40.1", "", "ok"),
    ("Wren-13B", "MMLU", "66.0", "", "ok"),
    ("Wren-13B", "GSM8K", "52.3", "", "ok"),
]


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_an_empty_first_header_cell_is_an_index_column_in_every_format(tmp_path, fmt):
    notices = []
    rows = read(tmp_path, INDEXED, fmt, name="board.csv", notices=notices)
    assert cells(rows) == EXPECTED
    assert notices == [
        f"{tmp_path / 'board.csv'}: the first column '' is a row index (as pandas writes it), "
        "not a label or a score; it is ignored"
    ]


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_a_pandas_index_of_model_names_is_read_as_the_labels_in_every_format(tmp_path, fmt):
    # AlpacaEval's leaderboard CSVs keep the model names in pandas' unnamed index column
    text = ",win_rate,avg_length\nHeron-MoA,74.1,1994\nLark-9b,61.9,2016\n"
    notices = []
    rows = read(tmp_path, text, fmt, name="board.csv", notices=notices, ignore_columns=["avg_length"])
    assert cells(rows) == [("Heron-MoA", "win_rate", "74.1", "", "ok"), ("Lark-9b", "win_rate", "61.9", "", "ok")]
    assert notices == [
        f"{tmp_path / 'board.csv'}: the first column '' is a pandas index holding the row labels; it is read "
        "as the labels, named 'column 1'"
    ]
    assert rows[0].source_locator.endswith("column 'win_rate'")


@pytest.mark.parametrize("name", ["__index_level_0__", "Unnamed: 0"])
def test_a_parquet_file_s_pandas_index_column_is_left_out(tmp_path, name):
    table = pa.table({name: [0, 1], "Model": ["Wren-7B", "Wren-13B"], "MMLU": [61.2, 66.0], "GSM8K": [40.1, 52.3]})
    pq.write_table(table, tmp_path / "board.parquet")
    notices = []
    rows = ledger.import_source(tmp_path / "board.parquet", "parquet", notices=notices)
    assert cells(rows) == EXPECTED and len(notices) == 1 and repr(name) in notices[0]


def test_a_named_first_column_is_read_as_the_labels(tmp_path):
    notices = []
    rows = read(tmp_path, INDEXED.replace(",Model", "Rank,Model", 1), "csv", name="board.csv", notices=notices)
    assert rows[0].source_model == "0" and notices == []


def test_the_command_reports_the_ignored_index_column(tmp_path):
    (tmp_path / "board.csv").write_text(INDEXED)
    out = tmp_path / "ledger.csv"
    result = run_cli(["hf", "ledger", str(tmp_path / "board.csv"), "--format", "csv", "--out", str(out)])
    assert result.exit_code == 0, result.stderr
    assert "the first column '' is a row index" in result.stderr
    assert [r.source_model for r in ledger.load(out)] == ["Wren-7B", "Wren-7B", "Wren-13B", "Wren-13B"]


# ---------------------------------------------------------------- deep HTML headers

DEEP = """## Function calling

<table>
<thead>
<tr><th rowspan="3">Benchmark</th><th colspan="4">Wren-7B</th><th colspan="2">Wren-13B&dagger;</th></tr>
<tr><th colspan="2">5-shot</th><th colspan="2">0-shot</th><th colspan="2">5-shot</th></tr>
<tr><th>func</th><th>value</th><th>func</th><th>value</th><th>func</th><th>value</th></tr>
</thead>
<tr><td>BFCL</td><td>1.1</td><td>1.2</td><td>2.1</td><td>2.2</td><td>3.1</td><td><b>3.2</b></td></tr>
</table>

&dagger; uses a tool-calling scaffold
"""


def test_an_html_header_of_three_rows_names_each_column_by_every_cell_over_it(tmp_path):
    rows = read(tmp_path, DEEP, models_as_columns=True)
    scaffold = "uses a tool-calling scaffold"
    assert cells(rows) == [
        ("Wren-7B", "BFCL / 5-shot / func", "1.1", "5-shot / func", "ok"),
        ("Wren-7B", "BFCL / 5-shot / value", "1.2", "5-shot / value", "ok"),
        ("Wren-7B", "BFCL / 0-shot / func", "2.1", "0-shot / func", "ok"),
        ("Wren-7B", "BFCL / 0-shot / value", "2.2", "0-shot / value", "ok"),
        ("Wren-13B", "BFCL / 5-shot / func", "3.1", f"5-shot / func; {scaffold}", "ok"),
        ("Wren-13B", "BFCL / 5-shot / value", "**3.2**", f"5-shot / value; {scaffold}", "ok"),
    ]


def test_a_deep_header_over_models_as_rows_joins_its_levels(tmp_path):
    text = """<table>
<tr><th rowspan="3">Model</th><th colspan="3">Reasoning</th><th rowspan="3">Avg</th></tr>
<tr><th colspan="2">Math</th><th rowspan="2">Logic</th></tr>
<tr><th>GSM8K</th><th>MATH</th></tr>
<tr><td>Wren-7B</td><td>40.1</td><td>12.0</td><td>55.5</td><td>35.9</td></tr>
</table>
"""
    rows = read(tmp_path, text)
    assert [(r.source_task, r.source_value) for r in rows] == [
        ("Reasoning / Math / GSM8K", "40.1"),
        ("Reasoning / Math / MATH", "12.0"),
        ("Reasoning / Logic", "55.5"),
        ("Avg", "35.9"),
    ]


# ---------------------------------------------------------------- models as groups

GROUPED = """## Function calling

| Category | | GPT-4o | | | Qwen2.5 7B Instruct | |
|---|---|---|---|---|---|---|
| | func | param | value | func | param | value |
| Simple | 90.1 | 80.2 | 70.3 | 60.1 | 50.2 | 40.3 |
| Parallel | 91.0 | 81.0 | 71.0 | 61.0 | 51.0 | 41.0 |
"""


def test_a_header_whose_groups_name_models_is_refused_naming_the_option(tmp_path):
    with pytest.raises(
        InputError,
        match=r"the header's groups name models \('GPT-4o', 'Qwen2.5 7B Instruct'\) over the sub-columns "
        r"\('func', 'param', 'value'\), so the models may be the columns .* pass --models-as-columns",
    ):
        read(tmp_path, GROUPED)


def test_a_header_whose_groups_name_models_reads_with_the_option_either_way(tmp_path):
    rows = read(tmp_path, GROUPED, models_as_columns=True)
    assert cells(rows)[:2] == [
        ("GPT-4o", "Simple / func", "90.1", "", "ok"),
        ("GPT-4o", "Simple / param", "80.2", "", "ok"),
    ]
    as_printed = read(tmp_path, GROUPED, models_as_columns=False)
    assert {r.source_model for r in as_printed} == {"Simple", "Parallel"}


def test_a_header_whose_groups_name_benchmarks_is_read_as_printed(tmp_path):
    text = GROUPED.replace("GPT-4o", "BFCL").replace("Qwen2.5 7B Instruct", "Nexus")
    assert {r.source_model for r in read(tmp_path, text)} == {"Simple", "Parallel"}


def test_a_setting_row_may_mark_a_column_without_setting(tmp_path):
    text = "| Model | MMLU | BBH | Avg |\n|---|---|---|---|\n| | 5-shot | 3-shot@1 | - |\n| Wren-7B | 61.2 | 40.1 | 50.0 |\n"
    assert [r.source_task for r in read(tmp_path, text)] == ["MMLU / 5-shot", "BBH / 3-shot@1", "Avg"]


def test_a_first_row_describing_the_models_stays_a_row(tmp_path):
    # an architecture row under a model card's header is no setting of the benchmarks
    text = """| | Benchmark | Kite V2 | Owl 72B |
|---|---|---|---|
| | Architecture | MoE | Dense |
| English | MMLU | 80.6 | 85.3 |
"""
    rows = read(tmp_path, text, models_as_columns=True, task_column="Benchmark", ignore_columns=["column 1"])
    assert [(r.source_model, r.source_task, r.source_value) for r in rows] == [
        ("Kite V2", "Architecture", "MoE"),
        ("Owl 72B", "Architecture", "Dense"),
        ("Kite V2", "MMLU", "80.6"),
        ("Owl 72B", "MMLU", "85.3"),
    ]


def test_the_reported_index_column_is_printed_safely(tmp_path):
    path = tmp_path / "b\x1b[31m.csv"
    path.write_text(INDEXED)
    result = run_cli(["hf", "ledger", str(path), "--format", "csv", "--out", str(tmp_path / "l.csv")])
    assert result.exit_code == 0 and "\x1b" not in result.stderr and "b\\x1b[31m.csv" in result.stderr


def test_encoder_names_over_metric_sub_columns_are_weighed_as_model_groups(tmp_path):
    """Encoders (BERT, DeBERTa, MiniLM) group the sub-columns of papers' tables as LLM names do: such a
    header is refused with the option to name, and the same header told its orientation reads."""
    page = (
        "| Task | BERT-large | BERT-large | DeBERTa-v3 | DeBERTa-v3 | MiniLM-L12 | MiniLM-L12 |\n"
        "|---|---|---|---|---|---|---|\n"
        "| | Acc | F1 | Acc | F1 | Acc | F1 |\n"
        "| Stance | 71.2 | 70.4 | 75.0 | 74.1 | 68.3 | 67.9 |\n"
        "| Persuasion | 64.8 | 63.0 | 69.5 | 68.8 | 61.1 | 60.2 |\n"
    )
    path = tmp_path / "README.md"
    path.write_text(page)
    with pytest.raises(InputError, match="--models-as-columns"):
        ledger.import_source(path, "markdown")
