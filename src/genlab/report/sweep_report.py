"""The report of a sweep or a set of runs.

For a domain-generalization sweep (methods x held-out environments x seeds) it opens with
DomainBed's table (Gulrajani & Lopez-Paz, "In Search of Lost Domain Generalization"): one row per
method, one column per held-out setting with the mean [95% CI] over seeds, then the average over the
settings and the worst one, per task; hyperparameter configurations of a method are chosen per
held-out setting and seed by training-domain validation (``genlab.analysis.selection``). Then, for
every group (a configuration in one held-out setting, named by ``aggregate.run_groups``): final
metrics with 95% CIs, the worst test environment beside the mean, paired comparisons against ERM (or
the first method) within each held-out setting, learning curves with seed bands and per-environment
bars.
"""

from __future__ import annotations

import pandas as pd

from genlab.analysis.aggregate import (
    curves,
    environments,
    final_values,
    heldout_table,
    run_groups,
    summarize,
)
from genlab.analysis.compare import compare_within
from genlab.analysis.selection import training_domain_validation
from genlab.report.document import Report
from genlab.report.figures import curve_figure, env_bars
from genlab.report.tables import fmt_ci, heldout_wide
from genlab.store import Store

METRIC = "accuracy"
REFERENCE = "erm"
SELECTION = ("training-domain validation (the configuration with the best mean val/* accuracy "
             "of the training domains, last checkpoint)")  # fmt: skip


def _env_names(splits: pd.Series) -> str:
    return ", ".join(sorted(s.split("/", 1)[1] for s in splits))


def per_run(acc: pd.DataFrame, labels: pd.DataFrame) -> pd.DataFrame:
    """One row per run: its labels, ``test`` (mean over its ``test/*`` splits), ``val`` (mean over
    its ``val/*`` splits), ``held_out`` (the held-out environments' names) and ``trial``."""
    by_role = {
        r: acc[acc["split"].str.startswith(r + "/")].groupby("run_id") for r in ("test", "val")
    }
    rec = labels.set_index("run_id").join(by_role["test"]["value"].mean().rename("test"))
    rec = rec.join(by_role["val"]["value"].mean().rename("val"))
    rec = rec.join(by_role["test"]["split"].agg(_env_names).rename("held_out")).reset_index()
    rec["held_out"] = rec["held_out"].fillna("")
    rec["trial"] = [f"{s}/{d}" for s, d in zip(rec["seed"], rec["data_seed"], strict=True)]
    return rec


def _method_order(methods: pd.Series) -> list[str]:
    seen = list(dict.fromkeys(methods))
    return sorted(seen, key=lambda m: (m != REFERENCE, seen.index(m)))


def add_domainbed_tables(rep: Report, rec: pd.DataFrame) -> None:
    """DomainBed's table per task, selecting each method's configuration per held-out setting and
    trial by training-domain validation."""
    rec = rec.dropna(subset=["test"])
    rec = rec[rec["held_out"] != ""]
    if rec.empty or rec["setting"].eq("").all():
        return
    rep.h("DomainBed table: held-out test accuracy per method")
    n_cfg = rec.groupby(["task", "method", "held_out", "trial"])["config"].nunique().max()
    if rec["val"].isna().any() and n_cfg > 1:
        rep.p("Not shown: several configurations per method but no val/* splits to select with.")
        return
    if n_cfg > 1:
        sel = training_domain_validation(rec, ["val"], "test", group=("task", "method", "held_out"),
                                         trial="trial", config="config")  # fmt: skip
        rule = f"model selection: {SELECTION}, among up to {n_cfg} configurations per method"
    else:
        sel = rec[["task", "method", "held_out", "trial", "config", "test"]]
        rule = f"model selection: {SELECTION}; trivial here (one configuration per method)"
    order = _method_order(rec["method"])
    sel = sel.assign(_o=sel["method"].map(order.index)).sort_values(["_o", "held_out", "trial"])
    long = heldout_table(sel, setting="held_out")
    for task, t in long.groupby("task", sort=False):
        n = int(sel.loc[sel["task"] == task, "trial"].nunique())
        rep.table(heldout_wide(t, setting="held_out"),
                  f"{task}: accuracy on the held-out environment(s) of each setting (columns), "
                  f"mean [95% CI] over {n} seed(s); avg = mean over the settings per seed; worst = "
                  f"the setting with the lowest mean; {rule}")  # fmt: skip


def _comparisons(rep: Report, rec: pd.DataFrame) -> None:
    rec = rec.dropna(subset=["test"])
    if rec["config"].nunique() < 2:
        return
    order = list(dict.fromkeys(rec.sort_values("method", key=lambda s: s != REFERENCE,
                                               kind="stable")["config"]))  # fmt: skip
    rec = rec.assign(_o=rec["config"].map(order.index)).sort_values("_o", kind="stable")
    ref = next((c for c, m in zip(rec["config"], rec["method"], strict=True) if m == REFERENCE),
               None)  # fmt: skip
    cmp = compare_within(rec, ["task", "held_out"], method="config", value="test", reference=ref)
    if cmp.empty:
        return
    rep.h("Paired comparisons (mean test accuracy, paired within each held-out setting)")
    rep.table(pd.DataFrame({
        "task": cmp["task"], "held out": cmp["held_out"], "group": cmp["config"], "vs": cmp["vs"],
        "pairs": cmp["n"],
        "diff": [fmt_ci(*r) for r in cmp[["mean_diff", "ci_lo", "ci_hi"]].values],
        "p (sign flip)": cmp["p_permutation"], "p (Wilcoxon)": cmp["p_wilcoxon"],
        "d_z": cmp["cohens_dz"],
    }), f"difference = group - vs, over runs of the same task, held-out setting, seed and "
        f"data_seed, at the last evaluation (no model selection); vs = {REFERENCE} where it is in "
        "the sweep, else the first group")  # fmt: skip


def build_report(store: Store, run_ids: list[str], title: str) -> Report:
    """Everything the report shows, computed from the store alone."""
    rep = Report(title)
    runs = store.runs(where=f"run_id IN ({','.join('?' * len(run_ids))})", args=tuple(run_ids))
    order = {r: i for i, r in enumerate(run_ids)}
    runs = runs.sort_values("run_id", key=lambda s: s.map(order)).reset_index(drop=True)
    labels = run_groups(runs)
    counts = runs["status"].value_counts().to_dict()
    rep.p(f"{len(runs)} runs ({', '.join(f'{v} {k}' for k, v in sorted(counts.items()))}) in "
          f"{labels['group'].nunique()} group(s). Intervals are 95% Student-t confidence intervals "
          "over seeds, at each run's last evaluation (diverged runs included; failed or "
          "unfinished ones left out).")  # fmt: skip
    metrics = store.metrics(run_ids)
    # diverged runs count with their last evaluation: dropping them would hide failures
    kept = set(runs.loc[runs["status"].isin(["done", "diverged"]), "run_id"])
    final = final_values(metrics[metrics["run_id"].isin(kept)]).merge(labels, on="run_id")
    if final.empty:
        rep.p("No finished run to report.")
        return rep
    acc = final[final["metric"] == METRIC]
    rec = per_run(acc, labels)
    add_domainbed_tables(rep, rec)

    rep.h(f"Final {METRIC} per split")
    s = summarize(acc, ["group", "split"])
    s["cell"] = [
        fmt_ci(m, lo, hi) for m, lo, hi in zip(s["mean"], s["ci_lo"], s["ci_hi"], strict=True)
    ]
    table = s.pivot(index="group", columns="split", values="cell").reset_index()
    runs_per = acc.groupby("group")["run_id"].nunique().rename("runs").reset_index()
    table = table.merge(runs_per, on="group")
    rep.table(table, f"{METRIC}: mean [95% CI] over seeds")

    env = environments(final, ["group"], role="test", metric=METRIC)
    if not env.empty:
        rep.h("Test environments: mean and worst")
        rep.table(pd.DataFrame({
            "group": env["group"], "test envs": env["n_envs"],
            "mean over envs": [fmt_ci(*r) for r in env[["mean", "ci_lo", "ci_hi"]].values],
            "worst env": env["worst_env"],
            "worst": [fmt_ci(*r) for r in env[["worst", "worst_ci_lo", "worst_ci_hi"]].values],
        }), "the worst environment is the one with the lowest mean over seeds")  # fmt: skip
        _comparisons(rep, rec)

    rep.h("Learning curves")
    splits = sorted(acc["split"].unique(), key=lambda s: (not s.startswith("train"), s))[:4]
    panels = {
        sp: curves(metrics, labels[["run_id", "group"]], ["group"], sp, METRIC) for sp in splits
    }
    rep.fig("curves", curve_figure(panels, ["group"], METRIC),
            f"{METRIC} per split, mean over seeds with a 95% CI band")  # fmt: skip
    bars = summarize(acc, ["group", "split"])
    rep.fig("environments", env_bars(bars, ["group"], METRIC),
            f"final {METRIC} per split and group, 95% CI over seeds")  # fmt: skip
    return rep
