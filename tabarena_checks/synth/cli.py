"""``checks tabarena synth``: write a synthetic run to try the checks on (see tabarena_checks.synth.generate).

Declared by name in tabarena_checks/cli.py and imported only when it runs or shows its help.
"""

from __future__ import annotations

import click

from checks import UsageError, progress
from tabarena_checks.synth import generate as synth


def _task_ids(values: tuple[str, ...]) -> tuple[int, ...]:
    out = []
    for value in values:
        for part in value.split(","):
            part = part.strip()
            if not part:
                continue
            if not part.isdigit():
                raise click.BadParameter(f"task ids are integers like 363612 (got {part!r})", param_hint="--tasks")
            out.append(int(part))
    return tuple(out)


@click.command("synth")
@click.argument("out", type=click.Path(file_okay=False))
@click.option("--configs", default=1, show_default=True, help="Configs per method (_c1, _r1, _r2, ...).")
@click.option("--repeats", default=1, show_default=True)
@click.option("--folds", default=3, show_default=True)
@click.option(
    "--tasks",
    multiple=True,
    help=f"Task ids, repeatable or comma-separated (known: {', '.join(map(str, synth.TASKS))}).",
)
@click.option("--method", default="Nori", show_default=True)
@click.option("--name-prefix", default="TA-Nori", show_default=True)
@click.option("--ag-key", default="TA-NORI", show_default=True)
@click.option("--bag-children", default=8, show_default=True)
@click.option(
    "--validation-protocol",
    default=None,
    help=f"Record a validation protocol: {', '.join(synth.PROTOCOL_PRESETS)} or <folds>x<sets> (default: no record).",
)
@click.option("--use-child-oof", is_flag=True, help="One child with out-of-bag predictions (RF/XT style).")
@click.option("--gpus", default=0.0, show_default=True, type=float)
@click.option("--kind", type=click.Choice(synth.KINDS), default="config", show_default=True)
@click.option("--legacy", is_flag=True, help="Older layout: top-level dataset/fold/tid, no method metadata.")
@click.option(
    "--defect", "defects", multiple=True, type=click.Choice(synth.DEFECTS), help="Plant a defect (repeatable)."
)
@click.option("--array-scale", default=1.0, show_default=True, type=float, help="Scale the prediction arrays' rows.")
@click.option("--seed", default=0, show_default=True)
@progress.quiet_option()
def synth_cmd(
    out,
    configs,
    repeats,
    folds,
    tasks,
    method,
    name_prefix,
    ag_key,
    bag_children,
    validation_protocol,
    use_child_oof,
    gpus,
    kind,
    legacy,
    defects,
    array_scale,
    seed,
):
    """Write a synthetic TabArena run to OUT (files under OUT/data) and print the data directory."""
    try:
        data = synth.generate_run(
            out,
            configs=configs,
            repeats=repeats,
            folds=folds,
            tasks=_task_ids(tasks) or tuple(synth.TASKS),
            method=method,
            name_prefix=name_prefix,
            ag_key=ag_key,
            bag_children=bag_children,
            validation_protocol=validation_protocol,
            use_child_oof=use_child_oof,
            gpus=gpus,
            kind=kind,
            legacy_layout=legacy,
            defects=defects,
            array_scale=array_scale,
            seed=seed,
        )
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    count = sum(1 for _ in data.rglob("results.pkl"))
    click.echo(f"wrote {count} results.pkl under {data}")
