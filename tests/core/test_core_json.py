"""checks.io's JSON reader: strict (duplicate keys, NaN policy, limits) and positioned (key path -> line:col)."""

from __future__ import annotations

import math

import pytest

from checks import io

RESULT = """{
  "dataset_revision": "e8379541af4e31359cca9fbcf4b00f2671dba205",
  "task_name": "Banking77Classification",
  "scores": {
    "test": [
      {"main_score": 0.8123, "hf_subset": "default", "languages": ["eng-Latn"]}
    ]
  }
}
"""


def test_every_key_path_maps_to_the_line_and_column_of_its_key_or_item():
    doc = io.loads_json(RESULT, source="Banking77Classification.json")
    assert doc.value["scores"]["test"][0]["main_score"] == 0.8123
    assert doc.where("") == (1, 1)
    assert doc.where("/task_name") == (3, 3)
    assert doc.where("/scores/test/0") == (6, 7)
    assert doc.where(("scores", "test", 0, "main_score")) == (6, 8)
    assert doc.where("/scores/test/0/languages/0") == (6, 68)
    assert doc.pointers()[:3] == ["", "/dataset_revision", "/task_name"]
    with pytest.raises(KeyError):
        doc.where("/scores/validation")


def test_a_key_with_a_slash_or_tilde_is_escaped_in_its_pointer():
    doc = io.loads_json('{"a/b": {"c~d": 1}}')
    assert io.pointer(["a/b", "c~d"]) == "/a~1b/c~0d"
    assert doc.where("/a~1b/c~0d") == (1, 10)


def test_a_duplicate_key_is_refused_at_the_second_naming_the_first():
    text = '{\n  "main_score": 0.5,\n  "main_score": 0.9\n}'
    with pytest.raises(io.JsonError) as caught:
        io.loads_json(text, source="r.json")
    err = caught.value
    assert (err.line, err.col) == (3, 3)
    assert str(err) == "r.json, line 3, column 3: duplicate key 'main_score' (first written on line 2); keep one"


def test_the_same_key_in_two_objects_is_not_a_duplicate():
    assert io.loads_json('[{"a": 1}, {"a": 2}]').value == [{"a": 1}, {"a": 2}]


@pytest.mark.parametrize("word", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_non_finite_numbers_are_refused_by_default_at_their_position(word):
    with pytest.raises(io.JsonError) as caught:
        io.loads_json(f'{{"max_tokens": {word}}}', source="model_meta.json")
    assert (caught.value.line, caught.value.col) == (1, 16)
    assert "is not a JSON number" in caught.value.reason


def test_an_arena_that_keeps_non_finite_numbers_gets_them_with_their_place():
    doc = io.loads_json('{"max_tokens": Infinity, "main_score": NaN, "n": -Infinity}', nonfinite="keep")
    assert doc.value["max_tokens"] == math.inf and doc.value["n"] == -math.inf
    assert math.isnan(doc.value["main_score"])
    assert doc.where("/main_score") == (1, 26)


def test_an_unknown_policy_is_a_programming_error():
    with pytest.raises(ValueError, match="nonfinite must be one of refuse, keep"):
        io.loads_json("1", nonfinite="null")


@pytest.mark.parametrize(
    ("text", "where", "words"),
    [
        ('{"a": 1,}', (1, 8), "trailing comma"),
        ("[1, 2,\n]", (1, 6), "trailing comma"),
        ("{'a': 1}", (1, 2), "a key in double quotes"),
        ('{"a": 1} {"b": 2}', (1, 10), "more text after the JSON value"),
        ('{"a": 1 // note\n}', (1, 9), "expected ',' or '}'"),
        ('{"a": [1, 2}', (1, 12), "expected ',' or ']'"),
        ('{"a": "unclosed}', (1, 7), "not closed"),
        ('{"a": "\\ud800"}', (1, 7), "unpaired surrogate"),
        ('{"a": 01}', (1, 8), "expected ',' or '}'"),
        ('{"a": tru}', (1, 7), "a JSON value"),
        ('{"a": [', (1, 8), "the text ends"),
        ("   \n ", (2, 2), "no JSON value"),
    ],
)
def test_text_that_is_not_strict_json_is_one_error_at_its_position(text, where, words):
    with pytest.raises(io.JsonError) as caught:
        io.loads_json(text, source="x.json")
    assert (caught.value.line, caught.value.col) == where, caught.value
    assert words in caught.value.reason
    assert "\n" not in str(caught.value)


def test_depth_and_size_limits_are_enforced_before_anything_is_built():
    with pytest.raises(io.JsonError, match="nested deeper than 4 levels") as caught:
        io.loads_json("[[[[[1]]]]]", max_depth=4)
    assert caught.value.col == 5
    assert io.loads_json("[[[[1]]]]", max_depth=4).value == [[[[1]]]]
    with pytest.raises(io.JsonError, match="too large"):
        io.loads_json("[" + "1," * 100 + "1]", max_bytes=100)
    with pytest.raises(io.JsonError, match="integer of 5000 digits"):
        io.loads_json("1" * 5000)


def test_a_file_is_read_bounded_and_decoded_strictly(tmp_path):
    good = tmp_path / "r.json"
    good.write_bytes(b"\xef\xbb\xbf" + RESULT.encode())  # a byte-order mark is ignored
    assert io.load_json(good).where("/task_name") == (3, 3)
    latin = tmp_path / "latin.json"
    latin.write_bytes(b'{"name": "caf\xe9"}')
    with pytest.raises(io.JsonError, match="not UTF-8"):
        io.load_json(latin)
    with pytest.raises(io.ReadError, match="no such file"):
        io.load_json(tmp_path / "missing.json")


def test_the_fast_and_the_careful_reading_agree():
    """Plain JSON is read by the standard library and placed only when asked; what it would let through (an
    unpaired surrogate, a duplicate, NaN) goes to the careful parser, so both give one answer."""
    text = '{"emoji": "\\ud83d\\ude00", "n": [1, -0, 2.5e3, {"k": null}]}'
    doc = io.loads_json(text)
    assert doc.value == {"emoji": "\U0001f600", "n": [1, 0, 2500.0, {"k": None}]}
    assert doc.where("/n/3/k") == (1, 48) and doc.pointers()[-1] == "/n/3/k"
    with pytest.raises(io.JsonError, match="nested too deeply"):
        io.loads_json("[" * 5000 + "]" * 5000, max_depth=10**5, max_bytes=10**6)
