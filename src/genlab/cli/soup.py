"""``genlab soup``: accuracy per split along the weight path between two finished runs.

    genlab soup RUN_A RUN_B --lambdas 0:1:11            # theta = (1 - lam) A + lam B
    genlab soup RUN_A RUN_B --bn recompute --json       # re-estimate BatchNorm at each point

Reads both runs' final checkpoints from the store, checks that they share an initialisation
(``--allow-unrelated`` to skip), evaluates on run B's task (``--data A`` for run A's) and draws
``soup-<A>-<B>.png`` beside run B. WiSE-FT (Wortsman et al. 2022; Lin et al., #16) is this path from
a pre-trained A to its fine-tuned B.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import typer
from rich.table import Table

from genlab.cli.app import JsonOpt, StoreOpt, app, emit_json, err, fail, open_store, out
from genlab.errors import GenlabError


@app.command()
def soup(
    run_a: Annotated[str, typer.Argument(help="run at lambda = 0 (id or unique prefix)")],
    run_b: Annotated[str, typer.Argument(help="run at lambda = 1 (id or unique prefix)")],
    lambdas: Annotated[
        str, typer.Option("--lambdas", help="start:stop:count or a comma list")
    ] = "0:1:11",
    data: Annotated[
        Literal["A", "B"], typer.Option("--data", help="evaluate on run A's or run B's task")
    ] = "B",
    bn: Annotated[
        Literal["interpolate", "recompute"],
        typer.Option("--bn", help="BatchNorm statistics: interpolated, or re-estimated on train"),
    ] = "interpolate",
    allow_unrelated: Annotated[
        bool, typer.Option("--allow-unrelated", help="skip the shared-initialisation check")
    ] = False,
    store: StoreOpt = None,
    output: Annotated[Path | None, typer.Option("--out", "-o", help="PNG path")] = None,
    no_plot: Annotated[bool, typer.Option("--no-plot", help="skip the figure")] = False,
    json_: JsonOpt = False,
) -> None:
    """Interpolate two finished runs' weights; print and plot accuracy per split along the path."""
    from genlab.weights.load import build_task_data, finished_spec
    from genlab.weights.path import interpolation_path, parse_lambdas

    try:
        st = open_store(store)
        a, b = st.resolve(run_a), st.resolve(run_b)
        lams = parse_lambdas(lambdas)
        task = build_task_data(finished_spec(st, a if data == "A" else b))
        res = interpolation_path(st, a, b, lams, task, bn, allow_unrelated)
    except GenlabError as exc:
        fail(exc)
    plot = None
    if not no_plot:
        from genlab.report.weight_paths import plot_weight_path

        plot = plot_weight_path(
            res.table,
            output or st.run_dir(b) / f"soup-{a}-{b}.png",
            f"{a} -> {b}  ({res.shared})",
            (a[:8], b[:8]),
        )
    if json_:
        emit_json(
            {
                "run_a": a,
                "run_b": b,
                "shared": res.shared,
                "bn": bn,
                "plot": plot,
                "rows": res.table.to_dict(orient="records"),
            }
        )
        return
    wide = res.table.pivot(index="lam", columns="split", values="accuracy")
    table = Table(title=f"accuracy along {a} -> {b}", caption=res.shared, header_style="bold")
    table.add_column("lambda", justify="right")
    for col in wide.columns:
        table.add_column(col, justify="right")
    for lam, row in wide.iterrows():
        best = {c: row[c] == wide[c].max() for c in wide.columns}
        cells = [f"[bold]{row[c]:.3f}[/]" if best[c] else f"{row[c]:.3f}" for c in wide.columns]
        table.add_row(f"{lam:.2f}", *cells)
    out.print(table)
    if plot:
        err.print(f"plot: {plot}", soft_wrap=True)
