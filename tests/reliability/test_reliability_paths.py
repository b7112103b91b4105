"""Hostile names never write outside the target folder: the process cache root, the upload prefix, the draft bundle.

Names come from info.py files, cache folders, leaderboards and mapping files written by
other people: a method, suite, model label or repo id holding ``..``, ``/``, an absolute
path, a NUL byte or a very long name must be refused (or made harmless), never followed.
"""

from __future__ import annotations

import gzip
import json
import pickle
from pathlib import Path

import pytest
from tests.support.hf_fixtures import board_row
from tests.support.reliability_fixtures import draft_args, hf_setup, snapshot, write_info, write_ledger
from tests.support.s3_fixtures import BUCKET, PREFIX, make_method_cache, record_process, remote_objects
from tests.support.tabarena_fixtures import make_run

from checks import ActionFailed
from checks.testing import run_cli
from hfmigrate_checks.source import ledger
from tabarena_checks.engine.cache_predictions import write_task
from tabarena_checks.testing.commands import process_args, upload_args

LONG = "n" * 300
HOSTILE = {
    "dot-dot": "../../../../escaped",
    "slash": "a/b",
    "absolute": "/tmp/arena-checks-escaped",
    "nul": "bad\x00name",
    "very-long": LONG,
}


def _cases(field):
    return [pytest.param(field, value, id=f"{field}-{name}") for name, value in HOSTILE.items()]


def _written_outside(tmp_path: Path, before: dict[str, str], allowed: Path) -> list[str]:
    after = snapshot(tmp_path)
    return sorted(
        p
        for p in after.keys() - before.keys()
        if not (tmp_path / p).is_relative_to(allowed) and not p.startswith(".checks/")
    )


def _framework_escape(data: Path, framework: str) -> None:
    """Every result of the run claims ``framework`` inside its pickle (the directories keep their names)."""
    for path in data.rglob("results.pkl"):
        result = pickle.loads(gzip.decompress(path.read_bytes()))
        result["framework"] = framework
        for key in ("pred_proba_dict_test", "pred_proba_dict_val"):
            preds = result["simulation_artifacts"][key]
            result["simulation_artifacts"][key] = {framework: next(iter(preds.values()))}
        path.write_bytes(gzip.compress(pickle.dumps(result)))


def _turned_off(code: str) -> list:
    """rules.toml texts that would turn ``code`` off: an ignore, and a waiver of every target."""
    waiver = (
        f'[[waivers]]\nrule = "{code}"\ntarget = "*"\nreason = "r"\nowner = "o@example.org"\nexpires = 2099-01-01\n'
    )
    return [pytest.param(f'ignore = ["{code}"]\n', id=f"{code}-ignored"), pytest.param(waiver, id=f"{code}-waived")]


@pytest.mark.parametrize("config", _turned_off("TA306"))
def test_framework_inside_a_pickle_never_names_a_path(tmp_path, config):
    """Fault: every results.pkl of a run says `framework = 'TA-Nori_c1_default_BAG_L1/../../../../../outside/PWNED'`,
    with the rule that reports the mismatch (TA306) ignored or waived

    Must: `checks run process` builds every path of the cache from the directory layout and validated names, never
    from a pickle: it writes only below --cache-root (raw/ named after the config directories)
    """
    data = make_run(tmp_path / "run", tasks=(363612,), folds=2, validation_protocol="8x1")
    _framework_escape(data, "TA-Nori_c1_default_BAG_L1/../../../../../outside/PWNED")
    (tmp_path / "rules.toml").write_text(config)
    ref = write_info(tmp_path / "info")
    root = tmp_path / "a" / "b" / "cache"
    before = snapshot(tmp_path)
    res = run_cli(process_args(data, ref, root), cwd=tmp_path)
    assert res.exit_code == 0, res.stdout + res.stderr
    assert _written_outside(tmp_path, before, root) == []
    raw = root / "artifacts" / "nori-2026" / "methods" / "Nori" / "raw"
    assert sorted(p.relative_to(raw).as_posix() for p in raw.rglob("results.pkl")) == [
        "Nori_c1_default_BAG_L1/363612/0_0/results.pkl",
        "Nori_c1_default_BAG_L1/363612/0_1/results.pkl",
    ]


@pytest.mark.parametrize("name", [pytest.param(v, id=k) for k, v in {**HOSTILE, "dot-dot-alone": ".."}.items()])
def test_a_dataset_name_inside_a_pickle_never_names_a_path(tmp_path, name):
    """Fault: every result of a task says `task_metadata.name = '../../../../escaped'` (or '..', 'a/b', an absolute
    path, a NUL byte, 300 characters): TabArena names the task's processed/model_predictions/ directory after it, and so
    did `checks run process`

    Must: TA406 (it cannot be ignored or waived) blocks the run naming the file and the name, nothing is written
    anywhere, and the predictions writer itself refuses such a name
    """

    data = make_run(tmp_path / "run", tasks=(363612, 363614), folds=1, validation_protocol="8x1")
    for path in data.rglob("363612/*/results.pkl"):
        result = pickle.loads(gzip.decompress(path.read_bytes()))
        result["task_metadata"]["name"] = name
        path.write_bytes(gzip.compress(pickle.dumps(result)))
    ref = write_info(tmp_path / "info")
    root = tmp_path / "a" / "b" / "cache"
    before = snapshot(tmp_path)
    res = run_cli(process_args(data, ref, root), cwd=tmp_path)
    assert res.exit_code == 1, res.stdout + res.stderr
    assert "failed TA406 cache-names-safe" in res.stdout and "363612/0_0/results.pkl" in res.stdout
    assert f"processed/model_predictions/{name!r}/" in res.stdout
    assert _written_outside(tmp_path, before, root) == [] and not root.exists()
    with pytest.raises(ActionFailed, match="cannot name a model_predictions directory"):
        write_task(tmp_path / "predictions", name, 0, [])
    assert not (tmp_path / "predictions").exists()


@pytest.mark.parametrize("config", _turned_off("TA406"))
def test_path_safety_cannot_be_ignored_or_waived(tmp_path, config):
    data = make_run(tmp_path / "run", tasks=(363612,), folds=1, validation_protocol="8x1")
    (tmp_path / "rules.toml").write_text(config)
    ref = write_info(tmp_path / "info", method="../../escaped")
    res = run_cli(process_args(data, ref, tmp_path / "c"), cwd=tmp_path)
    assert res.exit_code == 2 and "TA406" in res.stderr, res.stdout + res.stderr
    assert not (tmp_path / "escaped").exists()


@pytest.mark.parametrize("method", ["\U0001f600" * 128, "Nori\udc80"], ids=["512-bytes", "lone-surrogate"])
def test_names_too_long_in_bytes_are_a_verdict(tmp_path, method):
    """Fault: a method name of 128 four-byte characters (512 bytes in UTF-8), which used to pass TA406 and hit
    ENAMETOOLONG as an internal error (exit 3); a method name holding a lone surrogate

    Must: TA406 blocks process with a verdict naming the byte limit or the invalid text (exit 1), no traceback,
    nothing written
    """
    data = make_run(tmp_path / "run", tasks=(363612,), folds=1, validation_protocol="8x1")
    ref = write_info(tmp_path / "info", method=method)
    res = run_cli(
        process_args(data, ref, tmp_path / "c", "--format", "json"),
        cwd=tmp_path,
    )
    assert "Traceback" not in res.stdout + res.stderr
    assert res.exit_code in (1, 2), res.stdout + res.stderr
    if res.exit_code == 1:
        ta406 = {v["code"]: v for v in json.loads(res.stdout)["verdicts"]}["TA406"]
        assert ta406["outcome"] == "failed" and ("bytes" in ta406["message"] or "surrogate" in ta406["message"])
    assert not (tmp_path / "c" / "artifacts").exists()


@pytest.mark.parametrize("field, value", _cases("method") + _cases("suite"))
def test_process_never_writes_outside_the_cache_root(tmp_path, field, value):
    """Fault: a method or suite name holding '..', '/', an absolute path, a NUL byte or 300 characters

    Must: `checks run process` refuses it with a clear verdict or error (no traceback) and writes nothing outside
    --cache-root
    """
    data = make_run(tmp_path / "run", tasks=(363612,), folds=2, validation_protocol="8x1")
    names = {"method": "Nori", "suite": "nori-2026", field: value}
    ref = write_info(tmp_path / "info", **names)
    root = tmp_path / "deep" / "er" / "cache"
    before = snapshot(tmp_path)
    res = run_cli(process_args(data, ref, root), cwd=tmp_path)
    assert not Path(HOSTILE["absolute"]).exists()
    assert _written_outside(tmp_path, before, root) == []
    assert "Traceback" not in res.stdout + res.stderr
    assert res.exit_code in (1, 2), res.stdout + res.stderr


@pytest.mark.parametrize("method", ["../../../x", "..", "a/../../b"], ids=["dot-dot", "parent", "embedded"])
def test_upload_refuses_climbing_names(tmp_path, s3_env, s3_proxy, method):
    """Fault: `checks run upload --from-cache` with a method name that climbs out of the cache

    Must: refused before any request: nothing is uploaded, least of all outside the bucket prefix
    """
    make_method_cache(tmp_path / "cache")
    res = run_cli(
        upload_args(tmp_path / "cache", "--no-dry-run", method=method),
        cwd=tmp_path,
    )
    assert res.exit_code != 0
    assert "Traceback" not in res.stdout + res.stderr
    assert s3_proxy.puts() == [] and remote_objects(s3_env) == {}


def test_upload_keys_never_hold_dot_dot(tmp_path, s3_env, s3_proxy):
    """Fault: `checks run upload --from-cache '../methods/Dummy' SUITE`: a climbing name that still finds a cache

    Must: refused before any request; no key with a '..' segment is ever sent
    """
    make_method_cache(tmp_path / "cache")
    run_cli(
        upload_args(tmp_path / "cache", "--no-dry-run", method="../methods/Dummy"),
        cwd=tmp_path,
    )
    keys = [p.split("?")[0].split(f"/{BUCKET}/", 1)[-1] for p in s3_proxy.puts()]
    assert all(".." not in k.split("/") for k in keys), keys


def test_draft_never_writes_outside_the_bundle(tmp_path):
    """Fault: leaderboard labels holding '..', '/', absolute paths, NUL bytes or 5,000 characters; a mapping file naming
    repo ids like '../../etc', 'owner/../../x' or '/abs/x'

    Must: the mapping file is refused with a clear error naming the entry (exit 2, nothing written); with the labels
    alone, `checks run draft` writes only below the bundle and only drafts/<owner>--<name>/ paths of valid Hub ids
    """

    labels = ["../../../escaped", "/tmp/arena-checks-escaped", "evil\x00label", "x" * 5000, "a/../../b"]
    with hf_setup(tmp_path, models=2) as (env, hub):
        write_ledger(tmp_path / "ledger.csv", models=2, base=50.0)
        rows = ledger.load(tmp_path / "ledger.csv")
        rows += [board_row(label, "Main", "1.0", 1) for label in labels]
        ledger.write(tmp_path / "ledger.csv", rows)
        good_mapping = (tmp_path / "models.yaml").read_text()
        for label, repo in [
            ("../../../escaped", "../../etc"),
            ("a/../../b", "owner/../../x"),
            ("/tmp/arena-checks-escaped", "/abs/x"),
        ]:
            (tmp_path / "models.yaml").write_text(good_mapping + f"{json.dumps(label)}: {{repo: {json.dumps(repo)}}}\n")
            before = snapshot(tmp_path)
            refused = run_cli(draft_args(tmp_path), env=env, cwd=tmp_path)
            assert refused.exit_code == 2 and "models.yaml" in refused.stderr and repo in refused.stderr
            assert "Traceback" not in refused.stdout + refused.stderr
            assert snapshot(tmp_path).keys() - before.keys() <= {".checks/decisions.jsonl"}
        (tmp_path / "models.yaml").write_text(good_mapping)
        before = snapshot(tmp_path)
        res = run_cli(draft_args(tmp_path), env=env, cwd=tmp_path)
    assert "Traceback" not in res.stdout + res.stderr
    bundle = tmp_path / "bundle"
    assert _written_outside(tmp_path, before, bundle) == []
    assert not Path("/tmp/arena-checks-escaped").exists()
    drafted = sorted(p.relative_to(bundle).as_posix() for p in (bundle / "drafts").rglob("*") if p.is_file())
    assert drafted == [f"drafts/fill-org--Model-{i}-7B/.eval_results/toy-bench.yaml" for i in range(2)], drafted
    assert res.exit_code in (0, 1), res.stdout + res.stderr


def _draft_with_slug(tmp_path, slug):
    with hf_setup(tmp_path, models=2) as (env, hub):
        write_ledger(tmp_path / "ledger.csv", models=2, base=50.0)
        contract = json.loads((tmp_path / "contract.json").read_text())
        contract["slug"] = slug
        (tmp_path / "contract.json").write_text(json.dumps(contract))
        before = snapshot(tmp_path)
        return before, run_cli(draft_args(tmp_path), env=env, cwd=tmp_path)


def test_draft_with_a_climbing_slug_writes_nothing(tmp_path):
    """Fault: a hand-edited contract.json whose slug climbs ('../../../evil')

    Must: `checks run draft` is blocked (fails closed, no traceback) and writes no file, in or out of the bundle
    """
    before, res = _draft_with_slug(tmp_path, "../../../evil")
    assert "Traceback" not in res.stdout + res.stderr
    assert res.exit_code != 0
    assert snapshot(tmp_path).keys() - before.keys() <= {".checks/decisions.jsonl"}
    assert not (tmp_path / "bundle").exists()


def test_draft_with_a_climbing_slug_names_the_contract(tmp_path):
    """Fault: a hand-edited contract.json whose slug is not a plain file stem

    Must: one clear input error naming contract.json and the slug (exit 2), not crashed rules
    """
    _, res = _draft_with_slug(tmp_path, "../../../evil")
    assert res.exit_code == 2, res.stdout
    assert "contract.json" in res.stderr and "slug" in res.stderr


CLIMBING_PREFIXES = [
    "cache/../../victim-suite/methods/Victim",
    "/cache",
    "..",
    "cache//x",
    "cache/\x1b]52;c;x\x07",
    "cache\\..\\x",
    "x" * 300,
]


@pytest.mark.parametrize(
    "prefix",
    CLIMBING_PREFIXES,
    ids=["dot-dot", "leading-slash", "only-dot-dot", "empty-segment", "control", "backslash", "long"],
)
def test_a_climbing_key_prefix_is_refused(tmp_path, s3_env, s3_proxy, prefix):
    """Fault: `cache_kwargs.prefix` of the metadata holding '..' segments (`cache/../../victim-suite/methods/Victim`
    uploaded eight keys with '..' segments), a leading '/', an empty segment, a control character, a backslash or 300
    characters

    Must: TA406 (required, cannot be waived) blocks `checks run upload --no-dry-run` naming cache_kwargs and the
    prefix (exit 1) and nothing is sent to the store; `checks run unpublish --prefix` refuses the same values (exit 2)
    """
    path = make_method_cache(tmp_path / "cache")
    meta = path / "metadata.yaml"
    meta.write_text(meta.read_text().replace(f"prefix: {PREFIX}", f"prefix: {json.dumps(prefix)}"))
    assert json.dumps(prefix) in meta.read_text()
    record_process(path)
    res = run_cli(
        upload_args(tmp_path / "cache", "--no-dry-run", "--format", "json"),
        cwd=tmp_path,
    )
    assert res.exit_code == 1, res.stdout + res.stderr
    ta406 = {v["code"]: v for v in json.loads(res.stdout)["verdicts"]}["TA406"]
    assert ta406["outcome"] == "failed" and "cache_kwargs['prefix']" in ta406["message"], ta406
    assert s3_proxy.puts() == []
    refused = run_cli(
        [
            "run",
            "unpublish",
            "--method",
            "Dummy",
            "--suite",
            "dummy-2026-11-01",
            "--bucket",
            BUCKET,
            "--prefix",
            prefix,
            "--yes",
            "--cache-root",
            str(tmp_path / "cache"),
        ],
        cwd=tmp_path,
    )
    assert refused.exit_code == 2 and "the prefix must" in refused.stderr, refused.stdout + refused.stderr


def test_a_plain_key_prefix_passes_ta406(tmp_path, s3_env):
    make_method_cache(tmp_path / "cache")
    res = run_cli(
        upload_args(tmp_path / "cache", "--format", "json"),
        cwd=tmp_path,
    )
    assert {v["code"]: v for v in json.loads(res.stdout)["verdicts"]}["TA406"]["outcome"] == "passed"


def test_process_refuses_a_climbing_key_prefix(tmp_path):
    data = make_run(tmp_path / "run", tasks=(363612,), folds=2, validation_protocol="8x1")
    ref = write_info(tmp_path / "info")
    info = tmp_path / "info" / "info.py"
    info.write_text(
        info.read_text().replace(
            'date="2026-01-01"',
            'date="2026-01-01", cache_type="r2", cache_kwargs={"bucket": "tabarena", "prefix": "cache/../../v"}',
        )
    )
    res = run_cli(process_args(data, ref, tmp_path / "cache"), cwd=tmp_path)
    assert res.exit_code == 1 and "TA406" in res.stdout and "cache/../../v" in res.stdout, res.stdout
    assert not (tmp_path / "cache" / "artifacts").exists()
