"""The Arrow schemas of the raw index: a decoded row, and an unreadable file's place and reason.

Apart from the index so that the decoding workers, the cache reader and the rules that query the
index share one definition without importing each other.
"""

from __future__ import annotations

import functools


@functools.cache  # built once per process: each batch of files asks for it
def schema():
    """The explicit Arrow schema of a row (``error`` is set only for unreadable files).

    A row holds what its file says, decoded and typed, and nothing judged: the rules judge it when
    the gate runs (tabarena_checks.rules.raw_fields), so no index, however old, carries a verdict.
    ``artifact_facts`` and ``val_position_bounds`` are JSON (tabarena_checks.raw.artifacts.facts);
    ``decode_errors`` says why a value could not be decoded into its column (or a measurement could not
    be made), ``invalid_text`` which text was not valid Unicode.
    """
    import pyarrow as pa

    s, i, f, b = pa.string(), pa.int64(), pa.float64(), pa.bool_()
    return pa.schema(
        [
            ("path", s),
            ("size", i),
            ("mtime_ns", i),
            ("sha256", s),
            ("config_dir", s),
            ("task_dir", s),
            ("split_dir", s),
            ("dir_repeat", i),
            ("dir_fold", i),
            ("method_prefix", s),
            ("framework", s),
            ("tid", i),
            ("dataset", s),
            ("repeat", i),
            ("fold", i),
            ("sample", i),
            ("split_idx", i),
            ("problem_type", s),
            ("metric", s),
            ("metric_error", f),
            ("metric_error_val", f),
            ("time_train_s", f),
            ("time_infer_s", f),
            ("num_cpus", i),
            ("num_gpus", f),
            ("disk_usage", f),
            ("model_cls", s),
            ("model_type", s),
            ("ag_key", s),
            ("name_prefix", s),
            ("name_suffix", s),
            ("has_method_metadata", b),
            ("has_sim_artifacts", b),
            ("is_legacy_layout", b),
            ("num_bag_children", i),
            ("use_child_oof", b),
            ("child_oof", b),
            ("has_vp_record", b),
            ("vp_key", s),
            ("vp_flavour", s),
            ("vp_num_bag_folds", i),
            ("vp_num_bag_sets", i),
            ("vp_child_oof", b),
            ("vp_num_child_models", i),
            ("vp_protocol", s),
            ("vp_stored_key", s),
            ("test_not_close_pct", f),
            ("val_not_close", b),
            ("val_not_close_pct", f),
            ("val_labels_missing", b),
            ("val_rows", i),
            ("test_rows", i),
            ("labels_digest", s),
            ("hyperparameters", s),
            ("method_hyperparameters", s),
            ("metric_error_val_state", s),
            ("has_model_type_key", b),
            ("model_hyperparameters_kind", s),
            ("model_hyperparameters_shown", s),
            ("artifact_facts", s),
            ("val_position_bounds", s),
            ("decode_errors", pa.list_(s)),
            ("invalid_text", pa.list_(pa.struct([("field", s), ("shown", s)]))),
            ("unread", pa.list_(s)),
            ("error", s),
        ]
    )


def unreadable_schema():
    """Columns of the ``unreadable`` table: where each unreadable file sits and why it failed."""
    import pyarrow as pa

    return pa.schema(
        [
            ("path", pa.string()),
            ("config_dir", pa.string()),
            ("task_dir", pa.string()),
            ("split_dir", pa.string()),
            ("dir_repeat", pa.int64()),
            ("dir_fold", pa.int64()),
            ("reason", pa.string()),
        ]
    )
