"""``checks plugin new NAME``: a plugin package that installs, lists its rule and passes its own tests as written.

Starting a plugin meant reading our source to learn the entry point, the namespace of rule
names, how a pre-commit command is declared and how to test a rule. The scaffold writes a
working package instead, built on :mod:`checks.kit`: an entry point, one result-files
declaration, one rule with its failing and passing examples, tests using
:mod:`checks.testing`, a ``.pre-commit-hooks.yaml`` and a README with the rule's section.
The author renames and extends from there (docs/writing-plugins.md).
"""

from __future__ import annotations

import re
from pathlib import Path
from string import Template

import click

from checks import io
from checks.errors import UsageError
from checks.plugins import HOUSE_FAMILIES

NAME = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")
PREFIX = re.compile(r"^[A-Z]{2,4}$")

_FILES = {
    "pyproject.toml": """\
[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[project]
name = "$name-checks"
version = "0.1.0"
description = "$name's rules for arena-checks."
readme = "README.md"
requires-python = ">=3.11"
dependencies = ["arena-checks"]

[project.entry-points.checks]
$name = "$package.plugin"

[tool.setuptools.packages.find]
include = ["$package*"]
""",
    "README.md": """\
# $name-checks

Rules for $name's result files, a plugin for arena-checks (rule prefix `$prefix`).

```
pip install .                       # beside arena-checks
checks rules                        # lists ${prefix}101
checks precommit $name results/     # judge every MODEL/TASK.json below results/
python -m pytest tests              # the plugin's own tests
```

## Rules

### ${prefix}101 ${lower}-score-in-range

Every result file's `score` is a number from 0 to 1: the leaderboard plots it on that scale.
""",
    ".pre-commit-hooks.yaml": """\
- id: $name-results
  name: $name result files
  entry: checks precommit $name
  language: python
  files: ^results/[^/]+/[^/]+\\.json$$
  require_serial: true
""",
    "$package/__init__.py": '''\
"""$name's rules for arena-checks."""

__version__ = "0.1.0"
''',
    "$package/plugin.py": '''\
"""The entry point ``$name``: its rules and ``checks precommit $name``, each imported when asked for."""

from checks import ModuleWiring

wiring = ModuleWiring(
    "$package",
    rules=("rules",),
    precommit={"$name": ("results:hook", "Check $name result files (read-only).")},
    hooks=("precommit-$name",),
)
checks_rules, checks_actions, checks_commands = wiring.hooks()
checks_gates = wiring.checks_gates
''',
    "$package/results.py": '''\
"""$name's result files, declared once: MODEL/TASK.json holding {"task": ..., "score": ...}."""

from __future__ import annotations

import attrs
from checks.kit import ResultFiles, Source


@attrs.frozen
class Result:
    source: Source
    task: str
    score: float


def record(source: Source) -> Result:
    """A file's record; a file without ``task`` or a numeric ``score`` is unreadable at that key."""
    return Result(source, source.get("/task", str), source.get("/score", (int, float)))


FILES = ResultFiles(name="$name", glob="*/*.json", record=record)
hook = FILES.hook("Check $name result files (read-only). FILES, or every MODEL/TASK.json below a folder.")
''',
    "$package/rules.py": '''\
"""$name's rules (``$prefix``)."""

from __future__ import annotations

from checks import needs, rule
from checks.kit import records

from $package.results import FILES, Result


@rule(
    "${prefix}101",
    "${lower}-score-in-range",
    actions=(FILES.action,),
    why="The leaderboard plots scores from 0 to 1; one outside that range is a unit mistake (a percent).",
    example_fail='{"task": "sts", "score": 71.2}',
    example_pass='{"task": "sts", "score": 0.712}',
)
@needs(records(Result))
def score_in_range(ctx, results):
    """Every result's ``score`` is from 0 to 1."""
    for result in results:
        if not 0 <= result.score <= 1:
            yield result.source.at("/score", f"score {result.score} is outside 0..1 (a percent?)")


RULES = [score_in_range]
''',
    "tests/test_rules.py": '''\
"""${prefix}101 fails and passes on files written the way $name writes them; the hook runs end to end."""

from pathlib import Path

from checks.testing import assert_fails, assert_passes, evaluate_rules, run_cli

from $package import rules
from $package.results import FILES


def results(tmp_path: Path, text: str):
    path = tmp_path / "results" / "acme__model" / "sts.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return FILES.gather([tmp_path / "results"])


def test_${lower}101_fails_on_a_percent(tmp_path):
    verdicts = evaluate_rules([rules.score_in_range], results(tmp_path, '{"task": "sts", "score": 71.2}'))
    assert_fails(verdicts, "${prefix}101", "outside 0..1")


def test_${lower}101_passes_on_a_fraction(tmp_path):
    verdicts = evaluate_rules([rules.score_in_range], results(tmp_path, '{"task": "sts", "score": 0.712}'))
    assert_passes(verdicts, "${prefix}101")


def test_the_hook_reports_the_place_and_refuses_a_file_that_is_not_json(tmp_path):
    results(tmp_path, '{"task": "sts",\\n "score": 71.2}')
    env = {"CHECKS_DISABLE_PLUGIN_AUTOLOAD": "1"}
    res = run_cli(["-p", "$package.plugin", "precommit", "$name", "results"], env=env, cwd=tmp_path)
    assert res.exit_code == 1 and "sts.json:2:2: ${prefix}101 score 71.2 is outside 0..1" in res.stdout
    (tmp_path / "results" / "acme__model" / "sts.json").write_text('{"task": "sts", "score": 0.7,}')
    res = run_cli(["-p", "$package.plugin", "precommit", "$name", "results"], env=env, cwd=tmp_path)
    assert res.exit_code == 2 and "sts.json:1:29: error" in res.stdout
''',
}


def default_prefix(name: str) -> str:
    """The rule prefix a name suggests: its first letters in capitals (``wmt`` -> ``WMT``, ``leaderboard`` -> ``LEA``)."""
    return re.sub(r"[^a-z]", "", name)[:3].upper()


def files(name: str, prefix: str) -> dict[str, str]:
    """The package's files, relative path -> text, for plugin ``name`` with rule prefix ``prefix``."""
    if not NAME.match(name):
        raise UsageError(f"plugin name {name!r}: expected lower-case letters and digits, words joined by '-' (wmt)")
    if not PREFIX.match(prefix) or prefix in HOUSE_FAMILIES:
        taken = f" ({', '.join(HOUSE_FAMILIES)} are arena-checks' own)" if prefix in HOUSE_FAMILIES else ""
        raise UsageError(f"--prefix {prefix!r}: expected 2-4 capital letters of your own{taken}, e.g. WMT")
    words = {"name": name, "package": name.replace("-", "_") + "_checks", "prefix": prefix, "lower": prefix.lower()}
    return {Template(path).substitute(words): Template(text).substitute(words) for path, text in _FILES.items()}


def write(target: Path, name: str, prefix: str) -> list[str]:
    """Write the package into the new folder ``target``, whole or not at all; returns the files written."""
    if target.exists():
        raise UsageError(f"{target}: already exists; choose another folder with --dir or remove it")
    made = files(name, prefix)
    built = io.temp_sibling(target)
    for rel, text in made.items():
        io.write_text(built / rel, text)
    io.swap_in_dir(built, target)
    return sorted(made)


def plugin_group() -> click.Group:
    """``checks plugin``: tools for plugin authors."""

    @click.group("plugin", help="Start a plugin of your own: `checks plugin new NAME` writes a working package.")
    def group() -> None:
        pass

    @group.command("new")
    @click.argument("name")
    @click.option("--prefix", default=None, metavar="ABC", help="The rule code prefix (default: NAME's first letters).")
    @click.option("--dir", "folder", default=None, type=click.Path(), help="Where to write it (default: ./NAME).")
    def new(name: str, prefix: str | None, folder: str | None) -> None:
        """Write a plugin package NAME: entry point, one rule with its examples, tests, a pre-commit hook, a README."""
        target = Path(folder or name)
        written = write(target, name, prefix or default_prefix(name))
        click.echo(f"wrote {target}/ ({len(written)} files): {', '.join(written)}")
        click.echo(f"next: pip install -e {target} && python -m pytest {target}/tests")

    return group
