"""``genlab site OUT_DIR [--publish]``: a static site of the store's papers, claims, verdicts,
runs and sweeps."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from genlab.cli.app import StoreOpt, app, err, fail, open_store, out, output_error
from genlab.errors import GenlabError


@app.command()
def site(
    out_dir: Annotated[Path, typer.Argument(help="folder to write the site into")],
    store: StoreOpt = None,
    publish: Annotated[
        bool,
        typer.Option(
            "--publish",
            help="ready for any static host: a .nojekyll file, no machine "
            "paths, every link checked to resolve inside OUT_DIR",
        ),
    ] = False,
) -> None:
    """A static site from the store: index of the 120 papers and the claims with their recorded
    verdicts and evidence figures, a page per claim, per run and per sweep. Open
    OUT_DIR/index.html (works from disk, no network), or serve OUT_DIR as it is."""
    from genlab.claims import CLAIMS
    from genlab.report.site import build_site

    try:
        st = open_store(store, reading=True)
        if not st.db_path.exists():
            err.print(
                f"note: no store at {st.root} yet; the site lists papers, claims and "
                "their recorded verdicts (docs/verdicts.json) only"
            )
        try:
            index = build_site(
                st, out_dir, {e.name: e.obj for e in CLAIMS.entries()}, publish=publish
            )
        except OSError as exc:
            raise output_error(exc, f"the site into {out_dir}") from None
    except GenlabError as exc:
        fail(exc)
    out.print(
        f"site: {index}" + (" (ready to publish: serve its folder as it is)" if publish else "")
    )
