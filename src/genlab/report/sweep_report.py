"""The report of a sweep or a set of runs: final metrics with 95% CIs over seeds, the worst test
environment beside the mean, paired comparisons against the first group, learning curves with seed
bands and per-environment bars. Groups are the spec fields that vary between the runs (other than
``seed``/``data_seed``), found by ``genlab.analysis.aggregate.run_labels``."""

from __future__ import annotations

import pandas as pd

from genlab.analysis.aggregate import curves, environments, final_values, run_labels, summarize
from genlab.analysis.compare import paired_comparison
from genlab.report.document import Report
from genlab.report.figures import curve_figure, env_bars, group_name
from genlab.report.tables import fmt_ci
from genlab.store import Store

METRIC = "accuracy"


def _group_key(labels: pd.DataFrame, by: list[str]) -> pd.Series:
    if not by:
        return pd.Series("all runs", index=labels.index)
    return labels.apply(lambda r: group_name(r, by), axis=1)


def build_report(store: Store, run_ids: list[str], title: str) -> Report:
    """Everything the report shows, computed from the store alone."""
    rep = Report(title)
    runs = store.runs(where=f"run_id IN ({','.join('?' * len(run_ids))})", args=tuple(run_ids))
    labels, by = run_labels(runs)
    labels["group"] = _group_key(labels, by).values
    counts = runs["status"].value_counts().to_dict()
    rep.p(f"{len(runs)} runs ({', '.join(f'{v} {k}' for k, v in sorted(counts.items()))}); "
          f"groups differ in: {', '.join(by) or 'nothing (seeds only)'}. "
          "Intervals are 95% Student-t confidence intervals over seeds, at each run's last "
          "evaluation (diverged runs included; failed or unfinished ones left out).")  # fmt: skip
    metrics = store.metrics(run_ids)
    # diverged runs count with their last evaluation: dropping them would hide failures
    kept = set(runs.loc[runs["status"].isin(["done", "diverged"]), "run_id"])
    final = final_values(metrics[metrics["run_id"].isin(kept)]).merge(labels, on="run_id")
    if final.empty:
        rep.p("No finished run to report.")
        return rep
    acc = final[final["metric"] == METRIC]

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
        groups = sorted(acc["group"].unique())
        if len(groups) > 1:
            per_run = (acc[acc["split"].str.startswith("test/")]
                       .groupby(["run_id", "group", "seed"])["value"].mean().reset_index())  # fmt: skip
            rows = []
            for g in groups[1:]:
                r = paired_comparison(per_run, g, groups[0], method="group")
                rows.append({"group": g, "vs": groups[0], "pairs": r["n"],
                             "diff": fmt_ci(r["mean_diff"], r["ci_lo"], r["ci_hi"]),
                             "p (sign flip)": r["p_permutation"], "p (Wilcoxon)": r["p_wilcoxon"],
                             "d_z": r["cohens_dz"]})  # fmt: skip
            rep.h("Paired comparisons (mean test accuracy, paired by seed)")
            rep.table(pd.DataFrame(rows), "difference = group - vs")

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
