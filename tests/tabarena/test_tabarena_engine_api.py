"""The engine's interface on its own: a Job of judged facts and metadata in, the cache files out.

Process is the only caller in the product, but the interface is what a TabArena release that
changes the cache touches, so it is held here without the gate: the native engine fills an empty
directory with the method cache (the same files process publishes), says what it wrote, and
reports the raw copies by the digests the index judged.
"""

from __future__ import annotations

import attrs
import pytest
from tests.support.reliability_fixtures import write_info
from tests.support.tabarena_fixtures import build, make_run

from checks import io
from checks.options import declared_params
from tabarena_checks.engine import api
from tabarena_checks.metadata import load as metadata_load
from tabarena_checks.publish.process import PROCESS
from tabarena_checks.raw.inference import infer


@pytest.fixture(scope="module")
def job(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("engine")
    data = make_run(tmp / "run", tasks=(363612,), folds=2, validation_protocol="8x1")
    meta = metadata_load.load(write_info(tmp / "info"))
    index = build(data, use_cache=False)
    return api.Job(index=index, inference=infer(index), metadata=meta, data_dir=data, workers=1)


def test_the_native_engine_writes_the_cache_and_names_its_raw_copies(job, tmp_path):
    built = api.build("native", job, tmp_path)
    files = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file())
    assert {"metadata.yaml", "processed/configs.parquet", "results/model_results.parquet"} <= set(files)
    judged = dict(job.index.query("SELECT path, sha256 FROM results"))
    assert len(built.copied) == len(judged) and set(built.copied.values()) == set(judged.values())
    assert all(io.file_sha256(tmp_path / rel) == digest for rel, digest in built.copied.items())
    assert any(line.startswith("raw/") for line in built.written)


def test_without_the_raw_copy_nothing_is_copied(job, tmp_path):

    built = api.build("native", attrs.evolve(job, cache_raw=False), tmp_path)
    assert built.copied == {} and not (tmp_path / "raw").exists()


def test_the_engines_are_the_command_lines_choices():

    engine = next(p for p in declared_params(PROCESS.options) if p.name == "engine")
    assert list(engine.type.choices) == list(api.ENGINES)
