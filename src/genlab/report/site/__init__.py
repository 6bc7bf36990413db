"""``genlab site OUT_DIR``: a static site from the store, readable offline and on a phone.

``index.html`` lists the 120 catalogue papers (tier, cluster, components, claims, recorded and latest
verdict) and every claim with its recorded verdict (``docs/verdicts.json`` of the repository: budget,
date, scope and an evidence figure drawn from the file, so a fresh clone with an empty store shows
what was measured) beside the store's, filterable and sortable in the page; ``claims/<id>.html`` has
one claim's statement, papers, recorded verdicts (both budgets), description (its ``describe()``,
as ``genlab claims list --json`` gives it), each verdict of the store with its evidence, figure, the
command that reproduces it and its provenance; ``runs.html`` lists the store's runs, filterable by
kind, preset, status, method and a final metric, and ``runs/<id>.html`` has one run's configuration,
final metrics, curves and the command that reproduces it; ``sweeps/<id>.html`` has a sweep's
DomainBed-style report and its spec as a sweep file. Plain HTML from Jinja2 templates
(``templates/``, autoescaped), one CSS and one JS file, relative links only and no CDN: it works
from ``file://`` and, built with ``publish=True`` (``genlab site OUT --publish``), from any static
host.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

from genlab.errors import GenlabError, SpecError
from genlab.report.site import pages
from genlab.report.site.data import BUDGETS, RECORDED, gather, slug
from genlab.report.site.links import outside_links
from genlab.store import Store

SUBDIRS = ("claims", "sweeps", "runs", "figures")


def _copy_assets(out: Path) -> None:
    dest = out / "assets"
    dest.mkdir(parents=True, exist_ok=True)
    for name in ("site.css", "site.js"):
        src = resources.files("genlab.report.site").joinpath("assets", name)
        (dest / name).write_text(src.read_text(encoding="utf-8"), encoding="utf-8")


def build_site(
    store: Store,
    out: Path,
    claims: Mapping[str, Any],
    recorded: Path | None = RECORDED,
    publish: bool = False,
) -> Path:
    """Write the site into ``out`` (created; its ``claims``/``sweeps``/``runs``/``figures`` are
    replaced) and return the index's path; ``claims`` maps claim ids to the registered claim
    objects, and ``recorded`` is the verdict file shown beside the store's verdicts (the
    repository's ``docs/verdicts.json``; none when it is absent, as in an installed wheel).
    ``publish``: ready for a static host (a ``.nojekyll`` file, the store named without its path,
    and every link checked to resolve inside ``out``)."""
    from genlab.analysis.aggregate import final_values
    from genlab.provenance import git_commit
    from genlab.report.site.evidence import figure as evidence_figure
    from genlab.report.site.runs import write_runs
    from genlab.report.site.view import footer
    from genlab.report.sweep_report import build_report
    from genlab.sweep.spec import as_sweep_file

    if out.exists() and not out.is_dir():
        raise SpecError(f"OUT_DIR {out} is a file; give a folder for the site")
    data = gather(store, claims, recorded)
    site = {"footer": footer(str(store.root), git_commit()[0], data.recorded_from, publish)}
    out.mkdir(parents=True, exist_ok=True)
    for sub in SUBDIRS:
        shutil.rmtree(out / sub, ignore_errors=True)
        (out / sub).mkdir()
    _copy_assets(out)

    for cid, entry in data.recorded.items():
        (out / pages.evidence_path(cid)).write_text(
            evidence_figure(cid, entry, BUDGETS), encoding="utf-8"
        )
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
        html = pages.claim_page(
            cid,
            data.claims.get(cid),
            recs,
            claims.get(cid),
            papers,
            final,
            figures,
            site,
            data.recorded.get(cid),
        )
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
        sweep = {"id": sw.sweep_id, "n": len(ids), "total": len(found["runs"]), "runs": ids}
        html = pages.report_page(f"sweep {sw.name}", rep.blocks, figures, sweep, site)
        (out / "sweeps" / f"{sw.sweep_id}.html").write_text(html, encoding="utf-8")

    runs = write_runs(store, data, out, site)
    index = out / "index.html"
    index.write_text(pages.index_page(data, site, runs), encoding="utf-8")
    if publish:
        (out / ".nojekyll").write_text("", encoding="utf-8")
        bad = outside_links(out)
        if bad:
            raise GenlabError(
                f"the site in {out} has {len(bad)} link(s) that do not resolve "
                f"inside it, e.g. {bad[0]}; it was not published"
            )
    return index
