"""checks.kit (a file-tree arena declared once) and checks.options (an action's options declared once)."""

from __future__ import annotations

import sys
from pathlib import Path

import attrs
import click
import click.testing
import pytest

from checks import io, kit
from checks.errors import InputError, PluginLoadError
from checks.options import argument, declared_params, option, params
from checks.testing import run_cli

ROOT = Path(__file__).resolve().parents[2]
ENV = {"CHECKS_DISABLE_PLUGIN_AUTOLOAD": "1"}


@attrs.frozen
class Score:
    source: kit.Source
    task: str
    score: float


def score(source: kit.Source) -> Score:
    return Score(source, source.get("/task", str), source.get("/result/score", (int, float)))


FILES = kit.ResultFiles(name="toyarena", glob="*/*.json", record=score)


def write(tmp_path, rel: str, text: str) -> str:
    path = tmp_path / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return str(path)


def test_a_declaration_with_a_bad_name_or_policy_is_a_load_error():
    with pytest.raises(PluginLoadError, match="ResultFiles name 'Toy Arena'"):
        kit.ResultFiles(name="Toy Arena", glob="*.json", record=score)
    with pytest.raises(PluginLoadError, match="nonfinite='null' is not a policy; use one of refuse, keep"):
        kit.ResultFiles(name="toy", glob="*.json", record=score, nonfinite="null")


def test_files_match_by_their_last_segments_wherever_the_tree_is(tmp_path):
    assert FILES.matches("m1/a.json") and FILES.matches("deep/tree/m1/a.json")
    assert not FILES.matches("a.json") and not FILES.matches("m1/a.yaml")
    write(tmp_path, "tree/m1/a.json", "{}")
    write(tmp_path, "tree/m1/notes.txt", "")
    write(tmp_path, "tree/m2/b.json", "{}")
    assert [p.removeprefix(str(tmp_path)) for p in FILES.files([tmp_path / "tree"])] == [
        "/tree/m1/a.json",
        "/tree/m2/b.json",
    ]


def test_records_carry_their_source_and_a_finding_names_its_key_path(tmp_path):
    path = write(tmp_path, "m1/a.json", '{\n  "task": "t",\n  "result": {"score": 0.5}\n}\n')
    facts = FILES.gather([path])
    (record,) = facts.of(Score)
    assert (record.task, record.score) == ("t", 0.5)
    assert facts.digests() == {path: record.source.digest} and record.source.digest.startswith("sha256:")
    finding = record.source.at("/result/score", "too low")
    assert (finding.path, finding.line, finding.col) == (path, 3, 14)  # a member is placed at its key
    assert finding.target == f"{path}#/result/score"


@pytest.mark.parametrize(
    ("text", "reason", "where"),
    [
        ('{"task": "t"}', "no '/result/score' (expected an integer or a number)", (1, 1)),
        (
            '{"task": "t", "result": {"score": "high"}}',
            "/result/score is a string, expected an integer or a number",
            (1, 26),
        ),
        (
            '{"task": "t", "result": {"score": true}}',
            "/result/score is true or false, expected an integer or a number",
            (1, 26),
        ),
        ('{"task": 3, "result": {"score": 1}}', "/task is an integer, expected a string", (1, 2)),
        ('{"task": "t", "task": "u"}', "duplicate key 'task' (first written on line 1); keep one", (1, 15)),
        ('{"task": "t", "result": {"score": NaN}}', "NaN is not a JSON number", (1, 35)),
    ],
)
def test_a_file_the_record_cannot_use_is_unreadable_at_its_place(tmp_path, text, reason, where):
    path = write(tmp_path, "m1/a.json", text)
    with pytest.raises(kit.Unreadable) as caught:
        FILES.read(path)
    assert reason in caught.value.reason
    assert (caught.value.line, caught.value.col) == where


def test_an_optional_value_may_be_absent_or_null_and_a_required_null_is_named(tmp_path):
    path = write(tmp_path, "m1/a.json", '{"task": null, "note": null, "items": [null]}')
    source = kit.Source(path, io.load_json(path))
    assert source.get("/note", str, required=False) is None and source.get("/gone", str, required=False) is None
    with pytest.raises(kit.Unreadable, match="/task is null, expected a string"):
        source.get("/task", str)
    with pytest.raises(kit.Unreadable, match="/items/0 is null, expected an object"):
        source.get("/items/0", dict)
    with pytest.raises(kit.Unreadable, match="no '/items/1'"):
        source.get("/items/1", dict)


def test_gather_reports_every_unreadable_file_once_in_one_error(tmp_path):
    good = write(tmp_path, "m1/a.json", '{"task": "t", "result": {"score": 1}}')
    bad = [write(tmp_path, f"m{i}/b.json", '{"task": "t",}') for i in (2, 3)]
    with pytest.raises(InputError) as caught:
        FILES.gather([good, *bad])
    message = str(caught.value)
    assert message.startswith("2 input files cannot be read (no rule ran; fix the file):")
    assert all(message.count(f"{b}:1:13: a trailing comma") == 1 for b in bad)
    assert good not in message


# --------------------------------------------------------------------------- options declared once


@attrs.frozen
class Options:
    submission: str = argument(help="What to accept.")
    results: str = option(help="Where to.", default="results", path=True)
    force: bool = option(help="Replace.", flag=True)
    tag: tuple = option(help="A tag; repeat.", multiple=True)
    owner: str = option(help="Who answers for it.")


def test_the_options_class_generates_its_click_parameters():
    made = {p.name: p for p in params(Options)}
    assert list(made) == ["submission", "results", "force", "tag", "owner"]
    assert isinstance(made["submission"], click.Argument)
    assert made["results"].opts == ["--results"] and made["results"].default == "results"
    assert made["force"].is_flag and not made["force"].required
    assert made["tag"].multiple and made["owner"].required

    @click.command(params=list(params(Options)))
    def command(**values):
        print(Options(**values))

    result = click.testing.CliRunner().invoke(command, ["sub", "--owner", "ana", "--tag", "a", "--tag", "b"])
    assert result.exit_code == 0, result.output
    assert "Options(submission='sub', results='results', force=False, tag=('a', 'b'), owner='ana')" in result.output
    missing = click.testing.CliRunner().invoke(command, ["sub"])
    assert missing.exit_code == 2 and "Missing option '--owner'" in missing.output


@attrs.frozen
class Shapes:
    """The option forms the TabArena actions need beyond a plain --name VALUE."""

    run: str = argument(help="The run.", metavar="RUN", type=click.Path(exists=True, file_okay=False))
    ref: str | None = option(help="Required here, optional to a caller.", default=None, required=True, metavar="REF")
    pair: tuple[str, str] | None = option(help="Two at once.", nargs=2, metavar="A B")
    engine: str = option(help="Which.", default="native", type=click.Choice(["native", "other"]))
    tags: str | tuple[str, ...] = option(help="One or several.", multiple=True, converter=lambda v: tuple(v))
    size: str | None = option(help="Checked as given.", default=None, callback=lambda ctx, param, v: _small(v))


def _small(value: str | None) -> str | None:
    if value is not None and len(value) > 3:
        raise click.BadParameter(f"{value!r} is longer than 3")
    return value


def test_an_option_may_be_required_take_two_values_or_a_choice():
    by_name = {p.name: p for p in params(Shapes)}
    assert by_name["ref"].required and Shapes(run="r").ref is None
    assert by_name["pair"].nargs == 2 and Shapes(run="r", pair=["a", "b"]).pair == ("a", "b")
    assert Shapes(run="r").pair is None and by_name["run"].type.exists
    assert list(by_name["engine"].type.choices) == ["native", "other"] and by_name["engine"].show_default
    assert Shapes(run="r", tags=["x"]).tags == ("x",)
    command = click.Group(commands=[click.Command("sub", params=list(params(Shapes)), callback=lambda **o: None)])
    missing = click.testing.CliRunner().invoke(command, ["sub", "."])
    assert missing.exit_code == 2 and "Missing option '--ref'" in missing.output
    wrong = click.testing.CliRunner().invoke(command, ["sub", ".", "--ref", "x", "--engine", "x"])
    assert wrong.exit_code == 2 and "'x' is not one of 'native', 'other'" in wrong.output
    checked = click.testing.CliRunner().invoke(command, ["sub", ".", "--ref", "x", "--size", "long"])
    assert checked.exit_code == 2 and "'long' is longer than 3" in checked.output


def test_a_field_without_a_command_line_form_is_a_load_error():
    @attrs.frozen
    class Half:
        results: str = option(help="Where to.", default="results")
        forgotten: int = 3

    with pytest.raises(PluginLoadError, match="field 'forgotten' has no command-line form; declare it as"):
        params(Half)
    with pytest.raises(PluginLoadError, match="must be an attrs class"):
        params(dict)


def test_an_action_giving_only_its_options_class_gets_its_parameters_from_it(tmp_path):
    assert declared_params(None) == () and declared_params(PlainOptions) == ()
    assert [p.name for p in declared_params(Options)] == ["submission", "results", "force", "tag", "owner"]
    sys.path.insert(0, str(ROOT / "plugins" / "mteb"))
    try:
        res = run_cli(["-p", "mteb_checks.plugin", "run", "mteb-accept", "--help"], env=ENV, cwd=tmp_path)
    finally:
        sys.path.remove(str(ROOT / "plugins" / "mteb"))
    assert res.exit_code == 0 and "--results PATH" in res.stdout and "SUBMISSION" in res.stdout, res.stdout


@attrs.frozen
class PlainOptions:
    """An options class written before checks.options: its action lists its click parameters itself."""

    name: str = "x"


def test_gathering_nothing_is_an_error_not_an_empty_pass(tmp_path):
    write(tmp_path, "notes/readme.txt", "")
    with pytest.raises(InputError, match=r"no toyarena result file \(\*/\*\.json\) below it"):
        FILES.gather([tmp_path])
