"""``genlab site OUT_DIR``: a static site from the store, readable offline and on a phone.

``index.html`` lists the 120 catalogue papers (tier, cluster, components, claims, recorded and latest
verdict) and every claim, filterable and sortable in the page; ``claims/<id>.html`` has one claim's
statement, papers, recorded verdicts (``docs/verdicts.json`` of the repository, both budgets, beside
the store's), description (its ``describe()``, as ``genlab claims list --json`` gives it), each
verdict of the store with its evidence, figure, the command that reproduces it and its provenance;
``sweeps/<id>.html`` has a sweep's DomainBed-style report and its spec as a sweep file. Plain HTML,
one CSS and one JS file, no CDN: it works from ``file://``.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

from genlab.errors import SpecError
from genlab.report.site import pages
from genlab.report.site.data import RECORDED, gather, slug
from genlab.store import Store


def _copy_assets(out: Path) -> None:
    dest = out / "assets"
    dest.mkdir(parents=True, exist_ok=True)
    for name in ("site.css", "site.js"):
        src = resources.files("genlab.report.site").joinpath("assets", name)
        (dest / name).write_text(src.read_text(encoding="utf-8"), encoding="utf-8")


def build_site(store: Store, out: Path, claims: Mapping[str, Any],
               recorded: Path | None = RECORDED) -> Path:  # fmt: skip
    """Write the site into ``out`` (created; its ``claims``/``sweeps``/``figures`` are replaced) and
    return the index's path; ``claims`` maps claim ids to the registered claim objects, and
    ``recorded`` is the verdict file shown beside the store's verdicts (the repository's
    ``docs/verdicts.json``; none when it is absent, as in an installed wheel)."""
    from genlab.analysis.aggregate import final_values
    from genlab.provenance import git_commit
    from genlab.report.sweep_report import build_report
    from genlab.sweep.spec import as_sweep_file

    if out.exists() and not out.is_dir():
        raise SpecError(f"OUT_DIR {out} is a file; give a folder for the site")
    data = gather(store, claims, recorded)
    footer = pages.footer_html(str(store.root), git_commit()[0], data.recorded_from)
    out.mkdir(parents=True, exist_ok=True)
    for sub in ("claims", "sweeps", "figures"):
        shutil.rmtree(out / sub, ignore_errors=True)
        (out / sub).mkdir()
    _copy_assets(out)

    papers = {p.number: p for p in data.papers}
    all_ids = [r for recs in data.verdicts.values() for rec in recs for r in rec.run_ids]
    final = final_values(store.metrics(sorted(set(all_ids))))
    for cid in sorted(set(data.claims) | set(data.verdicts)):
        recs = data.verdicts.get(cid, [])
        figures = {}
        for rec in recs:
            if rec.figure and Path(rec.figure).is_file():
                name = f"figures/{slug(cid)}-{slug(rec.budget)}-{rec.config_id}.png"
                shutil.copyfile(rec.figure, out / name)
                figures[rec.config_id] = name
        claim = claims.get(cid)
        html = pages.claim_page(cid, data.claims.get(cid), recs, claim, papers, final, figures,
                                footer, data.recorded.get(cid))  # fmt: skip
        (out / "claims" / f"{cid}.html").write_text(html, encoding="utf-8")

    for sw in data.sweeps.itertuples():
        found = store.sweep(sw.sweep_id)
        ids = [r["run_id"] for r in found["runs"] if store.status(r["run_id"]) is not None]
        if not ids:
            continue
        rep = build_report(store, ids, f"sweep {sw.name}")
        figures = {}
        for kind, val in rep.blocks:
            if kind == "fig":
                name, png, _ = val
                figures[name] = f"figures/sweep-{sw.sweep_id}-{slug(name)}.png"
                (out / figures[name]).write_bytes(png)
        (out / "sweeps" / f"{sw.sweep_id}.json").write_text(
            json.dumps(as_sweep_file(found["spec"]), indent=2), encoding="utf-8"
        )
        intro = (f'<p class="lead">Sweep <code>{sw.sweep_id}</code>: {len(ids)} of '
                 f"{len(found['runs'])} runs in the store. Reproduce: save "
                 f'<a href="{sw.sweep_id}.json">its spec</a> and run</p><pre><code>genlab sweep '
                 f"{sw.sweep_id}.json &amp;&amp; genlab report {sw.sweep_id}</code></pre>"
                 '<p class="muted">(relative paths in the spec are read from the folder of the '
                 "sweep file)</p>")  # fmt: skip
        html = pages.report_page(f"sweep {sw.name}", rep.blocks, figures, intro, footer)
        (out / "sweeps" / f"{sw.sweep_id}.html").write_text(html, encoding="utf-8")

    index = out / "index.html"
    index.write_text(pages.index_page(data, footer), encoding="utf-8")
    return index
