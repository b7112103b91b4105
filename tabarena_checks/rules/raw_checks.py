"""TA320-TA389: the checks of each raw result's fields and artifacts, one rule per check, group TA306.

They were one rule, TA306, that nobody could select, waive or explain one check of. :data:`TABLE` declares
each check once (code, name, what it checks, why, a failing and a passing example); :data:`RULES` is
generated from it. The predicates and messages stay where the single pass computes them all at once
(:func:`tabarena_checks.rules.raw_fields.judged`: SQL over the index for the fields and the comparisons
across results, :mod:`tabarena_checks.rules.raw_artifacts` for the artifacts), each problem tagged with the
name of its check; each rule reports the problems of its own name, and the pass runs once per index.
Every rule declares ``group="TA306"``, so a configuration that selects, ignores or waives TA306 covers them
all, as it covered TA306 (docs/tabarena-rules.md maps the old checks to the new codes).
"""

from __future__ import annotations

from typing import NamedTuple

from checks import Finding, Rule, needs, rule
from tabarena_checks.facts.constants import PROCESS
from tabarena_checks.facts.providers import raw_index

#: the code the checks had as one rule, now the group that selects, ignores or waives them together
GROUP = "TA306"


class Check(NamedTuple):
    """One row of :data:`TABLE`: a rule's code and name, what it checks (its summary), why, and two examples."""

    code: str
    name: str
    summary: str
    why: str
    example_fail: str
    example_pass: str


#: why an artifact processing cannot align is refused
_ARRAYS = (
    "Processing turns simulation_artifacts into aligned predictions and label files; one it cannot align stops "
    "it (TabArena's and the native engine's) halfway, after every file was decoded."
)

#: every check of a raw result, by code; the names are the ones the single pass tags each problem with
TABLE: tuple[Check, ...] = (
    # the fields of one result (rules/raw_fields.py: ROW_CHECKS, WORDED_CHECKS, and the reader's decode errors)
    Check(
        "TA320",
        "result-fields-decoded",
        "Every field processing reads must decode to the type it needs.",
        "A result with a string fold, a metric_error that is no number or no task_metadata decodes but cannot be "
        "placed or scored, so it would be dropped or mis-filed.",
        "task_metadata.fold is not an integer (got '0')",
        "task_metadata={'tid': 363612, 'fold': 0, ...}",
    ),
    Check(
        "TA321",
        "text-valid",
        "Every text field must be valid Unicode.",
        "Text holding a lone surrogate cannot be written to the cache's parquet and YAML files.",
        "model_cls is not valid text (got 'Nori\\udc80', which holds a lone surrogate)",
        "task_metadata.name='airfoil_self_noise'",
    ),
    Check(
        "TA322",
        "numbers-finite",
        "Errors, times and resources must be finite numbers.",
        "A NaN or infinite metric_error ranks and averages as nothing a run measured.",
        "metric_error is NaN",
        "metric_error=0.12",
    ),
    Check(
        "TA323",
        "numbers-non-negative",
        "Errors, times and resources must not be negative.",
        "TabArena's errors are the distance to the metric's optimum, and times and resources count up from 0: "
        "a negative one would rank or plot as a real figure.",
        "time_train_s is negative (got -0.5); errors, times and resources are never below 0: record the value the run ...",
        "metric_error=0.12, time_train_s=3.5",
    ),
    Check(
        "TA324",
        "task-dir-matches-tid",
        "A numeric task directory must name the task its result holds.",
        "Processing places a result by its task_metadata.tid; a file under another task's directory is a copy "
        "or a mix-up.",
        "directory '363614' holds task 363619",
        "363612/0_0/results.pkl with tid 363612",
    ),
    Check(
        "TA325",
        "split-dir-named",
        "A split directory must be named <repeat>_<fold>.",
        "The split directory says which split the file holds; any other name cannot be checked against it.",
        "split directory 'fold0' is not <repeat>_<fold>",
        "363612/0_0/results.pkl",
    ),
    Check(
        "TA326",
        "split-dir-matches",
        "The split directory must name the split the result holds.",
        "A result filed under another split's directory is a copy or a mix-up (no repeat is repeat 0).",
        "directory '0_1' says repeat 0 fold 1 but the result says repeat 0 fold 0",
        "0_1/results.pkl with repeat 0, fold 1",
    ),
    Check(
        "TA327",
        "path-layout",
        "A result must lie at <config>/<task>/<repeat>_<fold>/results.pkl.",
        "The layout names the config, task and split each result is counted for.",
        "path does not follow <config>/<task>/<repeat>_<fold>/results.pkl",
        "TA-Nori_c1_BAG_L1/363612/0_0/results.pkl",
    ),
    Check(
        "TA328",
        "split-idx-consistent",
        "task_metadata.split_idx must be n_folds * repeat + fold for some n_folds.",
        "TabArena files a result's predictions under its split_idx; a wrong one lands on (and overwrites) "
        "another split's.",
        "task_metadata.split_idx is 5, which no number of folds gives for repeat 0, fold 0 (split_idx = n_folds * ...",
        "repeat 1, fold 1, split_idx 4 (three folds)",
    ),
    Check(
        "TA329",
        "split-idx-present",
        "task_metadata.split_idx must be recorded.",
        "TabArena places a result by its split_idx and its processing fails without it.",
        "task_metadata.split_idx is missing; add split_idx = n_folds * repeat + fold (repeat 0, fold 0) to ...",
        "task_metadata={'split_idx': 0, ...}",
    ),
    Check(
        "TA330",
        "model-type-present",
        "A config with simulation artifacts must record method_metadata.model_type.",
        "Processing (TabArena's renaming) takes the config's model type from it and stops without it.",
        "method_metadata.model_type is missing: processing renames the config's model type from it; record the model's ...",
        "method_metadata={'model_type': 'NORI', ...}",
    ),
    Check(
        "TA331",
        "model-hyperparameters-present",
        "A config with simulation artifacts must record method_metadata.model_hyperparameters.",
        "It is the config's entry of configs_hyperparameters.json; TabArena's simulation stops when a config has none.",
        "method_metadata.model_hyperparameters is missing: processing takes the config's hyperparameters and model ...",
        "method_metadata={'model_hyperparameters': {'lr': 0.1}, ...}",
    ),
    Check(
        "TA332",
        "model-hyperparameters-dict",
        "method_metadata.model_hyperparameters must be a dict.",
        "It is written as the config's entry of configs_hyperparameters.json, which TabArena refuses to load "
        "otherwise.",
        "method_metadata.model_hyperparameters must be a dict of the config's hyperparameters (got [1, 2]): processing ...",
        "method_metadata={'model_hyperparameters': {'lr': 0.1}, ...}",
    ),
    Check(
        "TA333",
        "val-labels-in-row-ids",
        "A single use_child_oof child's validation labels must all be in y_val_idx.",
        "TabArena's loader maps the child's row labels to validation rows through y_val_idx and stops on a "
        "missing one.",
        "simulation_artifacts.bag_info.val_idx_per_child[0] of the single child holds row labels missing from ...",
        "val_idx_per_child[0] holds only labels of y_val_idx",
    ),
    Check(
        "TA334",
        "metric-error-val-not-none",
        "metric_error_val must not be None.",
        "TabArena takes float() of metric_error_val; None stops it.",
        "metric_error_val is None: record the validation error, or remove the key to have it recomputed from the ...",
        "metric_error_val=0.15",
    ),
    Check(
        "TA335",
        "metric-error-val-recomputable",
        "A config without metric_error_val must be scored on a metric whose validation error can be recomputed.",
        "TabArena recomputes a missing validation error with AutoGluon's scorer, which the native engine "
        "reproduces for a few metrics only.",
        "metric_error_val missing: TabArena 0.1.0 recomputes it from the stored validation predictions with ...",
        "metric_error_val=0.15 (or a metric the native engine recomputes)",
    ),
    Check(
        "TA336",
        "config-dir-names-framework",
        "The config directory must be named after the result's framework.",
        "The directory names the config a result is counted for; another framework's result there is a mix-up.",
        "directory 'TA-Nori_c1_default_BAG_L1' holds framework 'TA-Nori_c2_default_BAG_L1'",
        "TA-Nori_c1_BAG_L1/... with framework 'TA-Nori_c1_BAG_L1'",
    ),
    Check(
        "TA337",
        "name-prefix-starts-framework",
        "A config's method_metadata.name_prefix must be recorded and start its framework.",
        "Processing renames a config to the method plus what follows the name prefix in its framework; without "
        "it every config of the run gets one name.",
        "method_metadata.name_prefix 'Other' does not start the framework 'TA-Nori_c1_default_BAG_L1': processing ...",
        "name_prefix 'TA-Nori' for framework 'TA-Nori_c1_BAG_L1'",
    ),
    # across the results of a method (rules/raw_fields.py: _PREFIX_DIFFERS, _SUITE_DIFFERS, _SPLIT_DIFFERS)
    Check(
        "TA340",
        "name-prefix-shared",
        "Every config of a method must record the same name prefix.",
        "Processing renames every config of a method by what follows one name prefix.",
        "method_metadata.name_prefix is 'TA-Nori_', but TA-Nori_c1_default_BAG_L1/363612/0_0/results.pkl of the same ...",
        "every config records name_prefix 'TA-Nori'",
    ),
    Check(
        "TA341",
        "suite-task-name",
        "A task of the TabArena-v0.1 suite must carry the suite's name.",
        "TabArena looks a suite task's results up by the suite's name and stops on any other.",
        "task_metadata.name is 'anneal2', but TabArena-v0.1 names task 363614 'anneal'; TabArena looks the task's ...",
        "tid 363612, task_metadata.name 'airfoil_self_noise'",
    ),
    Check(
        "TA342",
        "suite-task-tid",
        "A suite task's name must come with the suite's tid.",
        "TabArena would fetch the task by its tid from OpenML and not find these results under its name.",
        "task_metadata.tid is 1, but 'anneal' is TabArena-v0.1's task 363614; TabArena would fetch task 1 from OpenML ...",
        "task_metadata.name 'airfoil_self_noise' with tid 363612",
    ),
    Check(
        "TA343",
        "suite-problem-type",
        "A suite task must be run as the problem type the suite defines.",
        "Every method on a suite task is compared in one problem type and metric; TabArena would publish this "
        "result beside results it cannot be compared with.",
        "problem_type is 'binary', but TabArena-v0.1's task 363614 (anneal) is 'multiclass', scored with 'log_loss' ...",
        "task 363612 run as 'regression'",
    ),
    Check(
        "TA344",
        "suite-metric",
        "A suite task must be scored with the suite's metric.",
        "Every method's metric_error on a suite task is compared with the others'.",
        "metric is 'accuracy', but TabArena-v0.1 scores task 363614 (anneal) with 'log_loss'; every method's ...",
        "task 363612 scored with 'rmse'",
    ),
    Check(
        "TA345",
        "task-name-unique",
        "Two tasks of a method must not share a task_metadata.name.",
        "A task's results and predictions are filed under its name, so the two tasks would be mixed.",
        "task_metadata.name is 'mine' for task 2, but TA-Nori_c1_default_BAG_L1/363612/0_0/results.pkl of the same ...",
        "each task has its own task_metadata.name",
    ),
    Check(
        "TA346",
        "split-idx-unique",
        "Two splits of a task must not share a split_idx.",
        "A split's predictions are filed under its split_idx: one would overwrite the other.",
        "task_metadata.split_idx is 0 for repeat 0, fold 1, but TA-Nori_c1_default_BAG_L1/363614/0_0/results.pkl of ...",
        "split_idx 0 for fold 0 and 1 for fold 1",
    ),
    Check(
        "TA347",
        "split-shares-split-idx",
        "Every config of a task split must record the same split_idx.",
        "Processing takes a split's configs together and files their predictions under one split_idx.",
        "task_metadata.split_idx is '3', but TA-Nori_c1_default_BAG_L1/363614/0_0/results.pkl of the same task split ...",
        "every config of split 0_0 records split_idx 0",
    ),
    Check(
        "TA348",
        "task-shares-name",
        "Every result of a task must record the same task_metadata.name.",
        "TabArena looks the task up by that name and files its predictions under it.",
        "task_metadata.name is 'anneal2', but TA-Nori_c1_default_BAG_L1/363614/0_0/results.pkl of the same task says ...",
        "every result of task 363612 names it 'airfoil_self_noise'",
    ),
    Check(
        "TA349",
        "task-shares-metric",
        "Every result of a task must record the same metric.",
        "TabArena keeps one metric per dataset, and the configs of a split are ensembled on it.",
        "metric is 'accuracy', but TA-Nori_c1_default_BAG_L1/363614/0_0/results.pkl of the same task says 'log_loss' ...",
        "every result of the task scored on 'rmse'",
    ),
    Check(
        "TA350",
        "task-shares-problem-type",
        "Every result of a task must record the same problem type.",
        "TabArena keeps one problem type per dataset.",
        "problem_type is 'binary', but TA-Nori_c1_default_BAG_L1/363614/0_0/results.pkl of the same task says ...",
        "every result of the task is 'multiclass'",
    ),
    Check(
        "TA351",
        "split-rows-agree",
        "Every config of a task split must predict the same number of rows.",
        "Processing stacks a split's configs' predictions and scores them against the first config's labels.",
        "simulation_artifacts holds 30 validation and 16 test labels, but ...",
        "every config of the split holds 10 validation and 20 test labels",
    ),
    Check(
        "TA352",
        "split-labels-agree",
        "Every config of a task split must hold the same labels.",
        "Processing scores every config of a split against the first config's labels.",
        "simulation_artifacts holds other labels than TA-Nori_c1_default_BAG_L1/363614/0_0/results.pkl of the same ...",
        "every config of the split holds the same y_val, y_test and row ids",
    ),
    # the simulation artifacts of one result (rules/raw_artifacts.py)
    Check(
        "TA360",
        "label-present",
        "simulation_artifacts.label must be recorded.",
        "It names the label column of the split's label files; TabArena stops without it.",
        "simulation_artifacts.label is missing: it names the label column of the split's label files (TabArena stops ...",
        "simulation_artifacts.label='y'",
    ),
    Check(
        "TA361",
        "label-name-valid",
        "simulation_artifacts.label must be a string or an integer.",
        _ARRAYS,
        "simulation_artifacts.label must name the label column, a string or an integer (got a float)",
        "simulation_artifacts.label='y'",
    ),
    Check(
        "TA362",
        "class-order-length",
        "ordered_class_labels_transformed must list one class per column of the predictions.",
        _ARRAYS,
        "simulation_artifacts.ordered_class_labels_transformed must list 5 classes, one per column of the predictions ...",
        "three classes for a 3-column prediction",
    ),
    Check(
        "TA363",
        "prediction-rows-match-labels",
        "A prediction must have a row per label.",
        _ARRAYS,
        "simulation_artifacts: the test prediction has 15 rows but y_test has 16",
        "20 test rows, 20 labels",
    ),
    Check(
        "TA364",
        "prediction-dict-is-dict",
        "pred_proba_dict_<part> must be a dict.",
        _ARRAYS,
        "simulation_artifacts.pred_proba_dict_test is not a dict (got list)",
        "pred_proba_dict_test={'TA-Nori_c1_BAG_L1': array(...)}",
    ),
    Check(
        "TA365",
        "prediction-present",
        "Every config result must hold a validation and a test prediction.",
        _ARRAYS,
        "simulation_artifacts has no test prediction (pred_proba_dict_test or pred_test); processing needs one for ...",
        "pred_proba_dict_val and pred_proba_dict_test present",
    ),
    Check(
        "TA366",
        "prediction-numeric-array",
        "A prediction must be a 1-D or 2-D numeric array.",
        _ARRAYS,
        "simulation_artifacts.pred_proba_dict_test['TA-Nori_c1_default_BAG_L1'] must be a 1-D or 2-D numeric array ...",
        "pred_test=array([0.1, 0.9, ...])",
    ),
    Check(
        "TA367",
        "predictions-finite",
        "A prediction (stored or a bag child's) must hold no infinite value.",
        "Errors and ensembles scored from it would be infinite or NaN.",
        "simulation_artifacts.pred_proba_dict_test['TA-Nori_c1_default_BAG_L1'] holds 1 infinite value: a model ...",
        "pred_test holds finite numbers",
    ),
    Check(
        "TA368",
        "multiclass-prediction-columns",
        "A multiclass prediction must have a column per class.",
        _ARRAYS,
        "simulation_artifacts: the multiclass test prediction must have a column per class (got shape (16,))",
        "a (20, 3) prediction for three classes",
    ),
    Check(
        "TA369",
        "prediction-class-columns",
        "A 2-D classification prediction must have at least two columns.",
        _ARRAYS,
        "simulation_artifacts: the test prediction must have a column per class (got shape (16, 1))",
        "a (20, 2) binary prediction",
    ),
    Check(
        "TA370",
        "labels-present",
        "y_val and y_test must be recorded.",
        _ARRAYS,
        "simulation_artifacts.y_test is missing; processing writes it as the split's labels",
        "y_test=array([0, 1, ...])",
    ),
    Check(
        "TA371",
        "labels-numeric-vector",
        "y_val and y_test must be 1-D arrays of numbers.",
        _ARRAYS,
        "simulation_artifacts.y_test must be a 1-D array of numbers (got a int8 array of shape (16, 1))",
        "y_test=array([0, 1, ...])",
    ),
    Check(
        "TA372",
        "labels-class-numbers",
        "Classification labels must be class numbers (integers).",
        "AutoGluon stores classification labels as class numbers; the predictions' columns are those classes.",
        "simulation_artifacts.y_test must hold class numbers (integers), as AutoGluon stores them (got float64 values)",
        "y_test=array([0, 1, 1, ...])",
    ),
    Check(
        "TA373",
        "labels-within-classes",
        "Classification labels must be within the predictions' classes.",
        "A label without a column in the predictions cannot be scored.",
        "simulation_artifacts.y_test holds class 7 but the predictions have 5 classes (0 .. 4)",
        "labels 0 .. 2 for three columns",
    ),
    Check(
        "TA374",
        "row-ids-vector",
        "y_val_idx and y_test_idx (when present) must be 1-D arrays.",
        _ARRAYS,
        "simulation_artifacts.y_test_idx must be a 1-D array of row ids (got a int64 array of shape (16, 1))",
        "y_test_idx=array([4, 9, ...])",
    ),
    Check(
        "TA375",
        "row-ids-match-labels",
        "y_val_idx and y_test_idx must have a row id per label.",
        _ARRAYS,
        "simulation_artifacts.y_test_idx has 15 row ids but its labels have 16 rows",
        "20 labels, 20 row ids",
    ),
    Check(
        "TA376",
        "bag-row-ids-present",
        "A bagged result must hold usable y_val_idx and y_test_idx.",
        "A bag's predictions are rebuilt by row id.",
        "simulation_artifacts has bag_info but no usable y_val_idx; the bag's predictions are rebuilt by row id",
        "bag_info with y_val_idx and y_test_idx",
    ),
    Check(
        "TA377",
        "bag-positions-listed",
        "bag_info.val_idx_per_child must be a non-empty list of 1-D integer arrays.",
        _ARRAYS,
        "simulation_artifacts.bag_info.val_idx_per_child must be a non-empty list of 1-D integer arrays (got a str)",
        "val_idx_per_child=[array([0, 2]), array([1, 3])]",
    ),
    Check(
        "TA378",
        "bag-test-shape-matches-val",
        "Each bag child's test prediction must have the columns of the validation predictions.",
        _ARRAYS,
        "simulation_artifacts.bag_info.pred_proba_test_per_child: each child's test prediction has shape (16, 4) ...",
        "children's test predictions of shape (20,)",
    ),
    Check(
        "TA379",
        "bag-val-children-match-positions",
        "pred_val_per_child must hold one prediction per child, as long as its val_idx_per_child.",
        _ARRAYS,
        "simulation_artifacts.bag_info: pred_val_per_child must have one prediction per child, as many rows as that ...",
        "two children, two validation predictions of their positions' lengths",
    ),
    Check(
        "TA380",
        "bag-children-arrays",
        "A bag's per-child predictions must be a non-empty list of numeric arrays.",
        _ARRAYS,
        "simulation_artifacts.bag_info.pred_proba_test_per_child must be a non-empty list of 1-D or 2-D numeric arrays ...",
        "pred_test_per_child=[array([...]), array([...])]",
    ),
    Check(
        "TA381",
        "bag-children-columns-agree",
        "A bag's children must predict the same columns.",
        _ARRAYS,
        "simulation_artifacts.bag_info.pred_proba_test_per_child: the children's predictions differ in columns ((16 ...",
        "every child predicts shape (20, 3)",
    ),
    Check(
        "TA382",
        "bag-children-test-rows",
        "Every bag child must predict every test row.",
        _ARRAYS,
        "simulation_artifacts.bag_info.pred_proba_test_per_child: every child must predict all 16 test rows (one per ...",
        "every child predicts 20 rows for 20 y_test_idx",
    ),
    Check(
        "TA383",
        "bag-positions-within-rows",
        "A bag child's validation positions must fall within the rows.",
        _ARRAYS,
        "simulation_artifacts.bag_info.val_idx_per_child[1] holds positions outside the 30 validation rows",
        "positions 0 .. 9 for 10 validation rows",
    ),
    Check(
        "TA384",
        "bag-test-children-present",
        "A bagged result must hold per-child test predictions.",
        "TabArena's loader rebuilds the stored test prediction from them (TA305 measures how close it comes).",
        "simulation_artifacts.bag_info has no per-child test predictions",
        "bag_info.pred_test_per_child present",
    ),
    Check(
        "TA385",
        "prediction-keyed-by-framework",
        "A bagged result's single prediction entry must be keyed by its framework.",
        "TabArena's loader reads the prediction of the result's framework from pred_proba_dict_<part>.",
        "simulation_artifacts.pred_proba_dict_test is keyed 'other', not the framework 'TA-Nori_c1_default_BAG_L1'",
        "pred_proba_dict_test={'TA-Nori_c1_BAG_L1': array(...)}",
    ),
    Check(
        "TA386",
        "prediction-entry-for-framework",
        "A bagged result's prediction dict must hold an entry for its framework.",
        "TabArena's loader reads the prediction of the result's framework from pred_proba_dict_<part>.",
        "simulation_artifacts.pred_proba_dict_test has no entry for framework 'TA-Nori_c1_default_BAG_L1'",
        "pred_proba_dict_test={'TA-Nori_c1_BAG_L1': array(...)}",
    ),
    Check(
        "TA387",
        "bag-test-rebuild-shape",
        "A bag's children must predict the stored test prediction's shape.",
        "TabArena's loader rebuilds the stored test prediction as the children's mean, which another shape cannot be.",
        "simulation_artifacts.bag_info.pred_proba_test_per_child: each child's test prediction has shape (16, 5), but ...",
        "children and stored test prediction of shape (16, 5)",
    ),
    Check(
        "TA388",
        "artifacts-match-result",
        "The metric and problem type the artifacts repeat must be the result's.",
        "TabArena 0.1.0 asserts each equal to the result's: artifacts scored or fitted under another are another "
        "task's or metric's (AutoGluon's aliases of a metric are the same metric).",
        "simulation_artifacts.eval_metric is 'roc_auc' but the result's metric is 'log_loss': the artifacts are ...",
        "simulation_artifacts.eval_metric 'mean_absolute_error' for metric 'mae'",
    ),
    Check(
        "TA389",
        "bag-info-dict",
        "simulation_artifacts.bag_info must be a dict.",
        _ARRAYS,
        "simulation_artifacts.bag_info is not a dict (got list)",
        "bag_info={'pred_test_per_child': [...], ...}",
    ),
)

#: the names of the checks, the ones the single pass may tag a problem with
NAMES = frozenset(check.name for check in TABLE)


def _generated(check: Check) -> Rule:
    """The rule of one row of :data:`TABLE`: it reports the problems the pass tagged with its name."""

    @needs(raw_index)
    def judge(ctx, index):
        from tabarena_checks.rules import raw_fields  # noqa: PLC0415 - start-up: it loads the raw index and readers (multiprocessing, pickle) only when the rules run

        found = raw_fields.by_check(index, check.name)
        if check.name == raw_fields.DECODED:  # fail closed: a problem of a check no rule names is reported here
            found += raw_fields.unclaimed(index, NAMES)
        for path, message in found:
            yield Finding(message, path=path)

    judge.__doc__ = check.summary
    judge.__name__ = judge.__qualname__ = check.name.replace("-", "_")
    return rule(
        check.code,
        check.name,
        actions=PROCESS,
        why=check.why,
        example_fail=check.example_fail,
        example_pass=check.example_pass,
        group=GROUP,
    )(judge)


RULES = [_generated(check) for check in TABLE]
