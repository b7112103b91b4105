"""info.py is untrusted input: a pull request writes it, the pre-commit hook and process read it.

The static reader must stay inside the checkout (a link out of it is a finding, and nothing from
the file it points at is shown), mask credentials however a formatter re-spaces them, and bound
what a value expands to when it is written out (repr, YAML, the decision record).
"""

from __future__ import annotations

import json
import re

import pytest
from tests.support.reliability_fixtures import INFO_PY
from tests.support.tabarena_fixtures import make_run
from tests.support.reliability_fixtures import measured

from checks.testing import run_cli
from tabarena_checks.cache.layout import render_metadata_yaml
from tabarena_checks.metadata.model import MethodMetadata
from tabarena_checks.testing.commands import process_args

SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"


def _process(tmp_path, info_dir, env=None):
    data = make_run(tmp_path / "run", tasks=(363612,), folds=1, validation_protocol="8x1")
    return run_cli(
        process_args(data, f"{info_dir / 'info.py'}:nori", tmp_path / "cache", "--format", "json"),
        cwd=tmp_path,
        env=env,
    )


def _declaring(checkout, extra_line: str, **fields: str) -> None:
    """An info.py in ``checkout`` that runs ``extra_line`` first and declares Nori with ``fields`` replaced."""
    checkout.mkdir(parents=True, exist_ok=True)
    text = INFO_PY.format(var="nori", method="Nori", suite="nori-2026", can_hpo=False)
    for name, expr in fields.items():
        text = re.sub(rf"{name}=[^,]+,", f"{name}={expr},", text, count=1)
    head, rest = text.split("\n", 1)
    (checkout / "info.py").write_text(f"{head}\n{extra_line}\n{rest}")


@pytest.mark.parametrize("how", ["file-link", "directory-link"])
def test_an_import_linked_out_of_the_checkout_is_a_finding(tmp_path, how):
    """Fault: info.py doing `from creds import X` where creds.py (or the package holding it) is a link to a credentials
    file outside the repository: the file was read, parsed and its values printed in TA118 messages, through the
    pre-commit hook too

    Must: the reader never follows the link out of the checkout: one finding naming the import and the link (process
    blocked, exit 1), and no value of the outside file appears in any output
    """
    outside = tmp_path / "home" / "creds"
    outside.mkdir(parents=True)
    (outside / "creds.py").write_text('SUITE = "outside-value-4711"\n')
    checkout = tmp_path / "repo"
    if how == "file-link":
        _declaring(checkout, "from creds import SUITE", suite="SUITE")
        (checkout / "creds.py").symlink_to(outside / "creds.py")
    else:
        _declaring(checkout, "from vault.creds import SUITE", suite="SUITE")
        (checkout / "vault").symlink_to(outside)
    res = _process(tmp_path, checkout)
    assert res.exit_code == 1, res.stdout + res.stderr
    assert "outside-value-4711" not in res.stdout + res.stderr
    ta116 = {v["code"]: v for v in json.loads(res.stdout)["verdicts"]}["TA116"]
    assert ta116["outcome"] == "failed" and "a link leading outside this checkout" in ta116["message"], ta116
    hook = run_cli(["precommit", "info-py", str(checkout / "info.py")], cwd=checkout)
    assert hook.exit_code == 1 and "outside this checkout" in hook.stdout, hook.stdout + hook.stderr
    assert "outside-value-4711" not in hook.stdout + hook.stderr


def test_an_import_linked_inside_the_checkout_is_read(tmp_path):
    checkout = tmp_path / "repo"
    _declaring(checkout, "from creds import SUITE", suite="SUITE")
    (checkout / "shared").mkdir()
    (checkout / "shared" / "values.py").write_text('SUITE = "nori-2026"\n')
    (checkout / "creds.py").symlink_to(checkout / "shared" / "values.py")
    res = _process(tmp_path, checkout)
    assert {v["code"]: v for v in json.loads(res.stdout)["verdicts"]}["TA116"]["outcome"] == "passed", res.stdout


def test_a_secret_respaced_by_the_reader_is_masked(tmp_path):
    """Fault: a credential in R2_SECRET_ACCESS_KEY that parses as Python (`a/b/c`), written into info.py: the reader's
    message quoted it through ast.unparse, which re-spaces it (`a / b / c`), and the redactor missed it

    Must: every secret is masked whatever whitespace sits between its characters: neither spelling appears in stdout,
    stderr or the decision record
    """
    checkout = tmp_path / "repo"
    _declaring(checkout, f"KEY = {SECRET}", ag_key="KEY")
    res = _process(tmp_path, checkout, env={"R2_SECRET_ACCESS_KEY": SECRET})
    assert res.exit_code == 1, res.stdout + res.stderr
    log = (tmp_path / ".checks" / "decisions.jsonl").read_text()
    for blob in (res.stdout, res.stderr, log):
        assert "".join(SECRET.split("/")) not in re.sub(r"[\s/]", "", blob), blob
        assert "wJalrXUtnFEMI" not in blob


BOMBS = {
    "dicts": (
        "d0 = {'k': 'xxxxxxxx'}",
        "d{i} = dict(p=d{j}, q=d{j})",
        "cache_kwargs={{'bucket': 'tabarena', 'prefix': d40}}",
    ),
    "tuples": ("t0 = ('xxxxxxxx',)", "t{i} = (t{j}, t{j})", "date=t40"),
    "prefix": ("p0 = 'cache'", "p{i} = [p{j}, p{j}]", "cache_kwargs={{'bucket': 'tabarena', 'prefix': p40}}"),
}


@pytest.mark.parametrize("kind", sorted(BOMBS))
def test_reference_bombs_in_info_py_are_refused(tmp_path, kind):
    """Fault: info.py reference bombs: 1.2 KB of dicts, tuples or lists each used twice by the next line (2^40 when
    written out), one of them as cache_kwargs.prefix: the hook and process grew to 2 GB in 30 s and never finished, and
    the prefix variant passed process with a metadata.yaml of 63 YAML anchors

    Must: the reader counts what a value expands to (each shared value once, memoised) and refuses it past 4,000,000
    items and characters with a finding naming the line (process blocked, exit 1); metadata.yaml is written without
    anchors; measured on the shared 2-core machine: process exits 1 in 1.1-1.2 s with a peak RSS of 162-166 MiB
    """
    first, line, field = BOMBS[kind]
    bomb = "\n".join([first, *(line.format(i=i, j=i - 1) for i in range(1, 41))])
    text = INFO_PY.format(var="nori", method="Nori", suite="nori-2026", can_hpo=False)
    head, rest = text.split("\n", 1)
    rest = rest.replace('date="2026-01-01"', field.format())
    (tmp_path / "info.py").write_text(f"{head}\n{bomb}\n{rest}")
    data = make_run(tmp_path / "run", tasks=(363612,), folds=1, validation_protocol="8x1")
    code, out, err, peak, seconds = measured(
        process_args(data, f"{tmp_path / 'info.py'}:nori", tmp_path / "cache", "--format", "json"),
        tmp_path,
        timeout=120,
    )
    assert code == 1, (code, out[-2000:], err[-2000:])
    assert "expands to more than 4,000,000" in out and "Traceback" not in err, out[-3000:]
    assert peak < 256 and seconds < 60, (peak, seconds)
    assert not (tmp_path / "cache" / "artifacts").exists()


def test_a_value_used_twice_is_written_out_without_yaml_anchors():

    shared = ["a", "b"]
    meta = MethodMetadata(
        method="Nori",
        suite="s",
        ag_key="TA-N",
        cache_type="r2",
        cache_kwargs={"bucket": "tabarena", "prefix": "cache", "x": shared, "y": shared},
    )
    text = render_metadata_yaml(meta, "8x1")
    assert "&" not in text and "*" not in text and text.count("- a") == 2, text


def test_the_hook_refuses_an_info_py_linked_out_of_the_checkout(tmp_path):
    """Fault: a models/<name>/info.py committed as a link to a file outside the repository (a credentials file that
    parses as Python), handed to the pre-commit hook

    Must: `checks precommit info-py` reports the file as unreadable input, a link leading outside the checkout (exit
    2), and reads nothing from it: no value of the outside file is printed
    """
    outside = tmp_path / "home" / "credentials.py"
    outside.parent.mkdir()
    outside.write_text(
        'from tabarena.models import MethodMetadata\n\nnori = MethodMetadata.config(method="Nori", '
        'suite="outside-value-4711", date="2026-02-30")\n'
    )
    checkout = tmp_path / "repo" / "models" / "nori"
    checkout.mkdir(parents=True)
    (checkout / "info.py").symlink_to(outside)
    res = run_cli(["precommit", "info-py", "models/nori/info.py"], cwd=tmp_path / "repo")
    # the read check's answer: the file cannot be read as input, whatever is selected (exit 2, docs/precommit.md)
    assert res.exit_code == 2 and "a link leading outside this checkout" in res.stdout, res.stdout + res.stderr
    assert "outside-value-4711" not in res.stdout + res.stderr
