"""The one did-you-mean: its matches, its wording, and that no other module builds its own."""

import ast
from pathlib import Path

from checks import suggest

ROOT = Path(__file__).resolve().parents[2]
CODES = ["TA101", "TA201", "TA202", "TA203", "TA320"]


def test_a_close_word_is_suggested_in_the_house_wording():
    assert suggest.closest("jsn", ["human", "json", "junit"]) == ["json"]
    assert suggest.did_you_mean("jsn", ["human", "json", "junit"]) == "; did you mean 'json'?"
    assert suggest.did_you_mean("sevrity", ["severity"], after=": ") == ": did you mean 'severity'?"


def test_after_a_full_stop_the_hint_is_a_sentence_of_its_own():
    assert suggest.did_you_mean("rnu", ["run", "rules"], n=2, after=" ") == " Did you mean 'run'?"
    assert suggest.hint(["a", "b"], after=" ", show=str) == " Did you mean a or b?"


def test_nothing_close_is_no_hint_at_all():
    assert suggest.closest("zzzz", ["human", "json"]) == []
    assert suggest.did_you_mean("zzzz", ["human", "json"]) == ""
    assert suggest.hint([], after=" ") == "" and suggest.hint([None], show=str) == ""


def test_a_typed_prefix_comes_before_a_spelling_match():
    # TA320 is as close by spelling as TA201 is, but TA20 begins only the TA20x codes
    assert suggest.closest("TA20", CODES, n=3, prefix_first=True) == ["TA201", "TA202", "TA203"]
    assert suggest.closest("TA20", CODES, n=3)[0] == "TA320"


def _calls_get_close_matches(path: Path) -> bool:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return any(
        isinstance(node, (ast.Attribute, ast.Name, ast.alias))
        and "get_close_matches" in (getattr(node, "attr", None), getattr(node, "id", None), getattr(node, "name", None))
        for node in ast.walk(tree)
    )


def test_no_module_but_checks_suggest_calls_get_close_matches():
    packages = ["checks", "tabarena_checks", "hfmigrate_checks", "plugins"]
    sources = [p for package in packages for p in (ROOT / package).rglob("*.py")]
    own = ROOT / "checks" / "suggest.py"
    assert own in sources and _calls_get_close_matches(own)
    others = sorted(str(p.relative_to(ROOT)) for p in sources if p != own and _calls_get_close_matches(p))
    assert others == [], f"build these hints with checks.suggest: {others}"
