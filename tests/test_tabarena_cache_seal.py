"""The seal on the index cache: only caches this user wrote are read back."""

from __future__ import annotations

import stat

from tabarena_fixtures import build, make_run

from tabarena_checks import cache_seal, index


def test_the_key_is_private_stable_and_per_user(tmp_path, monkeypatch):
    monkeypatch.setenv("CHECKS_CACHE_DIR", str(tmp_path / "alice"))
    first = cache_seal.key()
    assert first is not None and len(first) == 32 and cache_seal.key() == first
    key_file = tmp_path / "alice" / cache_seal.KEY_FILE
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    mark = cache_seal.seal(b"rows")
    assert cache_seal.verify(b"rows", mark) and not cache_seal.verify(b"rowz", mark)
    monkeypatch.setenv("CHECKS_CACHE_DIR", str(tmp_path / "bob"))
    assert cache_seal.key() != first and not cache_seal.verify(b"rows", mark)


def test_a_cache_written_elsewhere_or_altered_is_decoded_again(tmp_path, monkeypatch):
    data = make_run(tmp_path / "run", tasks=(363612,), folds=2)
    monkeypatch.setenv("CHECKS_CACHE_DIR", str(tmp_path / "alice"))
    assert build(data).decoded == 2 and build(data).decoded == 0
    cache = data / index.CACHE_DIR_NAME / index.CACHE_FILE
    seal = cache.with_name(cache.name + ".seal")
    assert seal.is_file()

    monkeypatch.setenv("CHECKS_CACHE_DIR", str(tmp_path / "bob"))
    assert build(data).decoded == 2, "another user's (or a submitter's) cache is not believed"
    assert build(data).decoded == 0, "and is replaced by one sealed with this user's key"

    seal.write_text("0" * 64 + "\n")
    assert build(data).decoded == 2, "a seal that does not match means no cache"
    seal.unlink()
    assert build(data).decoded == 2 and seal.is_file()


def test_without_a_usable_key_no_cache_is_written(tmp_path, monkeypatch):
    data = make_run(tmp_path / "run", tasks=(363612,), folds=1)
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    monkeypatch.setenv("CHECKS_CACHE_DIR", str(blocker))
    built = build(data)
    assert built.cache_path is None and built.fingerprint is None and len(built) == 1
    assert not (data / index.CACHE_DIR_NAME / index.CACHE_FILE).exists()
