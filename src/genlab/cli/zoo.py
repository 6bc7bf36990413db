"""``genlab zoo``: train a zoo of small models and rank probes as predictors of generalization."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from genlab.cli.app import JsonOpt, StoreOpt, app, emit_json, err, fail, open_store, out
from genlab.errors import GenlabError, SpecError
from genlab.spec import parse_value


def _vary(items: list[str]) -> dict[str, list]:
    """``width=32,128`` -> ``{"width": [32, 128]}`` (values parsed as TOML literals)."""
    vary: dict[str, list] = {}
    for item in items:
        key, sep, vals = item.partition("=")
        if not sep or not key.strip() or not vals.strip():
            raise SpecError(f"--vary {item!r} must look like name=v1,v2 (e.g. width=32,128)")
        vary[key.strip()] = [parse_value(v.strip()) for v in vals.split(",") if v.strip()]
    return vary


@app.command()
def zoo(
    size: Annotated[int, typer.Option(help="models in the zoo")] = 24,
    vary: Annotated[
        list[str] | None,
        typer.Option(help="hyperparameter=v1,v2 (repeatable; default: all seven of the issue)"),
    ] = None,
    probes: Annotated[
        str, typer.Option(help="comma-separated probe names to judge")
    ] = "gwa,coherence,sharpness,margins,weight_norm",
    steps: Annotated[int, typer.Option(help="optimiser steps per model")] = 1000,
    train_size: Annotated[int, typer.Option(help="digits training examples")] = 500,
    seed: Annotated[int, typer.Option(help="draws the zoo; each run's seed")] = 0,
    store: StoreOpt = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="no progress bars")] = False,
    json_: JsonOpt = False,
) -> None:
    """Train a zoo (MLPs on digits with varied hyperparameters) and rank each probe's measures
    by the PGDL conditional-MI score and Kendall's tau with the generalization gap."""
    from genlab.registry import format_validation_error
    from genlab.zoo import ZooConfig, run_zoo

    try:
        data: dict = {
            "size": size,
            "steps": steps,
            "train_size": train_size,
            "seed": seed,
            "probes": [p.strip() for p in probes.split(",") if p.strip()],
        }
        if vary:
            data["vary"] = _vary(vary)
        try:
            cfg = ZooConfig.model_validate(data)
        except ValueError as exc:  # pydantic's ValidationError
            raise SpecError(format_validation_error(exc, ZooConfig, prefix="zoo.")) from None
        from genlab.zoo.config import zoo_specs

        zoo_specs(cfg)  # validates every spec (unknown probes, bad values) before any work
        st = open_store(store)
        if not json_:
            err.print(f"zoo of {cfg.size} model(s) varying {', '.join(cfg.vary)} → {st.root}")
        result = run_zoo(cfg, st, progress=not (quiet or json_))
    except GenlabError as exc:
        fail(exc)
    if json_:
        emit_json(
            {
                "table": result.table.to_dict(orient="records"),
                "out_dir": result.out_dir,
                "figures": result.figures,
                "models": len(result.models),
            }
        )
        return
    table = Table(title=f"probes ranked on {len(result.models)} models", header_style="bold")
    for col in ("measure", "probe", "cmi", "tau", "p_value"):
        table.add_column(col, justify="left" if col in ("measure", "probe") else "right")
    for r in result.table.itertuples(index=False):
        table.add_row(r.measure, str(r.probe), f"{r.cmi:.3f}", f"{r.tau:+.3f}", f"{r.p_value:.3g}")
    out.print(table)
    out.print(f"table and scatter plots: {escape(str(result.out_dir))}")
