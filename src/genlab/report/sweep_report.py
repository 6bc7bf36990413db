"""The report of a sweep or a set of runs.

For a domain-generalization sweep (methods x hyperparameter draws x held-out environments x trials)
it opens with DomainBed's table (Gulrajani & Lopez-Paz, "In Search of Lost Domain Generalization";
its ``model_selection.py`` and ``scripts/collect_results.py``): per task, one row per method, one
column per held-out setting. Per held-out setting and trial, the method's configuration (one draw of
the sweep's ``[random]`` axes, or a ``[grid]`` point) and checkpoint are chosen by training-domain
validation; the chosen held-out accuracies give mean [95% CI] over trials, then the average over
the settings and the worst setting; the test-domain oracle's and the last checkpoint's averages
stand beside it (``select_rules``). Where this differs from DomainBed:

* accuracies get 95% percentile-bootstrap intervals over trials, which stay in [0, 1] (a
  Student-t interval over two or three trials can run past them; ``genlab.analysis.intervals``);
  DomainBed prints the standard error, and its "Avg" column is the mean of the per-setting means
  without an interval;
* the worst setting is genlab's addition; leave-one-domain-out selection is not in the table (it
  needs extra runs per setting, see ``genlab.analysis.selection``);
* the oracle selects and reports on the whole held-out environment (DomainBed: selects on its 20%
  ``out`` split, reports the 80% ``in`` split);
* a ``[random]`` draw is shared by every trial (DomainBed draws each trial's hyperparameters from
  ``seed_hash(hparams_seed, trial_seed)``), and DomainBed's draw 0 is the default configuration;
* step 0 (the untrained model) is never selected.

Then, for every group (a configuration in one held-out setting, named by ``aggregate.run_groups``):
final metrics with 95% intervals, the worst test environment beside the mean, paired comparisons
against ERM (or the first method) within each held-out setting (Student-t intervals of the paired
differences), learning curves with seed bands and per-environment bars.
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
from genlab.analysis.intervals import describe, is_proportion
from genlab.analysis.selection import last_checkpoint, oracle, training_domain_validation
from genlab.report.document import Report
from genlab.report.figures import curve_figure, env_bars
from genlab.report.tables import fmt_ci, heldout_wide
from genlab.store import Store

METRIC = "accuracy"
HOW = "bootstrap" if is_proportion(METRIC) else "t"  # intervals that stay in [0, 1]
CI = "95% bootstrap interval" if HOW == "bootstrap" else "95% CI"
MAX_PANELS = 4  # learning-curve panels: train splits first, then by name
REFERENCE = "erm"
RULES = {
    "training-domain validation": "per held-out setting and trial, the configuration and "
    "checkpoint with the best mean val/* accuracy of the training domains (DomainBed's "
    "IIDAccuracySelectionMethod)",
    "oracle": "test-domain oracle: the configuration with the best held-out accuracy at its last "
    "checkpoint (DomainBed's OracleSelectionMethod selects on 20% of the test domain and reports "
    "the other 80%; here it selects and reports on the same held-out data, so it is a touch more "
    "optimistic)",
    "last checkpoint": "training-domain validation over configurations at each run's last "
    "checkpoint (no early stopping)",
}
RUN = ("task", "method", "held_out", "trial", "config")  # one run of a DomainBed sweep


def _env_names(splits: pd.Series) -> str:
    return ", ".join(sorted(s.split("/", 1)[1] for s in splits))


def per_run(acc: pd.DataFrame, labels: pd.DataFrame) -> pd.DataFrame:
    """One row per run and evaluated ``step`` (of ``acc``: long-format accuracy rows): its labels,
    ``test`` (mean over its ``test/*`` splits), ``val`` (mean over its ``val/*`` splits),
    ``held_out`` (the held-out environments' names) and ``trial``. Step 0, the untrained model,
    is left out of runs evaluated later."""
    acc = acc[acc["split"].str.startswith(("test/", "val/"))]
    acc = acc[(acc["step"] > 0) | ~acc.groupby("run_id")["step"].transform("max").gt(0)]
    role = acc["split"].str.split("/", n=1).str[0]
    rec = acc.pivot_table(index=["run_id", "step"], columns=role, values="value", aggfunc="mean")
    rec = rec.reindex(columns=["test", "val"]).reset_index()
    names = acc[role == "test"].groupby("run_id")["split"].agg(lambda s: _env_names(s.unique()))
    rec["held_out"] = rec["run_id"].map(names).fillna("")
    rec = labels.merge(rec, on="run_id")
    rec["trial"] = [f"{s}/{d}" for s, d in zip(rec["seed"], rec["data_seed"], strict=True)]
    return rec


def last_per_run(rec: pd.DataFrame) -> pd.DataFrame:
    """The rows of ``per_run`` at each run's last evaluation."""
    return rec[rec["step"] == rec.groupby("run_id")["step"].transform("max")]


def _method_order(methods: pd.Series) -> list[str]:
    seen = list(dict.fromkeys(methods))
    return sorted(seen, key=lambda m: (m != REFERENCE, seen.index(m)))


def select_rules(rec: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Per rule of ``RULES`` (those the records allow), one row per task, method, held-out setting
    and trial: the selected ``config`` and its ``val`` and ``test``. ``rec`` holds one row per run
    and checkpoint (a ``step`` column; without one, each row is a run's last checkpoint)."""
    rec = rec if "step" in rec else rec.assign(step=0)
    last = last_checkpoint(rec, RUN)
    by = {"group": ("task", "method", "held_out"), "trial": "trial", "config": "config"}
    out = {"oracle": oracle(last, "test", **by)}
    if rec["val"].notna().any():
        out["training-domain validation"] = training_domain_validation(rec, ["val"], "test", **by)
        out["last checkpoint"] = training_domain_validation(last, ["val"], "test", **by)
    return out


def add_domainbed_tables(rep: Report, rec: pd.DataFrame) -> None:
    """DomainBed's table per task (a row per method, a column per held-out setting, the average and
    the worst setting), selecting each method's configuration per held-out setting and trial by
    training-domain validation, with the test-domain oracle's and the last checkpoint's averages
    beside it. ``rec``: ``per_run`` rows (one per run and checkpoint)."""
    rec = rec.dropna(subset=["test"])
    rec = rec[rec["held_out"] != ""]
    if rec.empty or rec["setting"].eq("").all():
        return
    rep.h("DomainBed table: held-out test accuracy per method")
    n_cfg = rec.groupby(["task", "method", "held_out", "trial"])["config"].nunique().max()
    if rec["val"].isna().any() and n_cfg > 1:
        rep.p("Not shown: several configurations per method but no val/* splits to select with.")
        return
    sel = select_rules(rec)
    main = "training-domain validation" if "training-domain validation" in sel else "oracle"
    order = _method_order(rec["method"])
    long = {}
    for rule, s in sel.items():
        s = s.assign(_o=s["method"].map(order.index)).sort_values(["_o", "held_out", "trial"])
        long[rule] = heldout_table(s, setting="held_out", how=HOW)
    rules = "; ".join(f"{k}: {RULES[k]}" for k in sel)
    for task, t in long[main].groupby("task", sort=False):
        n = int(sel[main].loc[sel[main]["task"] == task, "trial"].nunique())
        table = heldout_wide(t, setting="held_out")
        for rule, lg in long.items():
            if rule != main:
                avg = lg[(lg["task"] == task) & (lg["kind"] == "avg")].set_index("method")
                table[f"{rule} avg"] = [
                    fmt_ci(*avg.loc[m, ["mean", "ci_lo", "ci_hi"]]) if m in avg.index else "–"
                    for m in table["method"]
                ]
        rep.table(
            table,
            f"{task}: accuracy on the held-out environment(s) of each setting "
            f"(columns), model selection by {main}, among up to {n_cfg} configuration(s) per "
            f"method, setting and trial; mean [{CI}] over {n} trial(s) (seed/data_seed); "
            f"avg = mean over the settings per trial; worst = the setting with the lowest "
            f"mean. Rules: {rules}.",
        )


def _comparisons(rep: Report, rec: pd.DataFrame) -> None:
    rec = rec.dropna(subset=["test"])
    if rec["config"].nunique() < 2:
        return
    order = list(
        dict.fromkeys(
            rec.sort_values("method", key=lambda s: s != REFERENCE, kind="stable")["config"]
        )
    )
    rec = rec.assign(_o=rec["config"].map(order.index)).sort_values("_o", kind="stable")
    ref = next(
        (c for c, m in zip(rec["config"], rec["method"], strict=True) if m == REFERENCE), None
    )
    cmp = compare_within(rec, ["task", "held_out"], method="config", value="test", reference=ref)
    if cmp.empty:
        return
    rep.h("Paired comparisons (mean test accuracy, paired within each held-out setting)")
    rep.table(
        pd.DataFrame(
            {
                "task": cmp["task"],
                "held out": cmp["held_out"],
                "group": cmp["config"],
                "vs": cmp["vs"],
                "pairs": cmp["n"],
                "diff": [fmt_ci(*r) for r in cmp[["mean_diff", "ci_lo", "ci_hi"]].values],
                "p (sign flip)": cmp["p_permutation"],
                "p (Wilcoxon)": cmp["p_wilcoxon"],
                "d_z": cmp["cohens_dz"],
            }
        ),
        f"difference = group - vs, over runs of the same task, held-out setting, seed and "
        f"data_seed, at the last evaluation (no model selection); vs = {REFERENCE} where it is in "
        "the sweep, else the first group",
    )


def dropped_note(dropped: list[str]) -> str:
    """What the learning-curve figure leaves out, and why (empty when it shows every split)."""
    if not dropped:
        return ""
    return (
        f"not drawn: {', '.join(dropped)} (the figure shows {MAX_PANELS} splits at most, "
        "training splits first, then by name; the tables above hold every split)"
    )


def build_report(store: Store, run_ids: list[str], title: str) -> Report:
    """Everything the report shows, computed from the store alone."""
    rep = Report(title)
    runs = store.runs(where=f"run_id IN ({','.join('?' * len(run_ids))})", args=tuple(run_ids))
    order = {r: i for i, r in enumerate(run_ids)}
    runs = runs.sort_values("run_id", key=lambda s: s.map(order)).reset_index(drop=True)
    labels = run_groups(runs)
    counts = runs["status"].value_counts().to_dict()
    rep.p(
        f"{len(runs)} runs ({', '.join(f'{v} {k}' for k, v in sorted(counts.items()))}) in "
        f"{labels['group'].nunique()} group(s). Intervals of {METRIC} are {describe(HOW)}; "
        "paired differences have 95% Student-t intervals. Values are each run's last "
        "evaluation (diverged runs included; failed or unfinished ones left out)."
    )
    metrics = store.metrics(run_ids)
    # diverged runs count with their last evaluation: dropping them would hide failures
    kept = set(runs.loc[runs["status"].isin(["done", "diverged"]), "run_id"])
    final = final_values(metrics[metrics["run_id"].isin(kept)]).merge(labels, on="run_id")
    if final.empty:
        rep.p("No finished run to report.")
        return rep
    acc = final[final["metric"] == METRIC]
    kept_metrics = metrics[metrics["run_id"].isin(kept) & (metrics["metric"] == METRIC)]
    rec = per_run(kept_metrics, labels)
    add_domainbed_tables(rep, rec)
    rec = last_per_run(rec)

    rep.h(f"Final {METRIC} per split")
    s = summarize(acc, ["group", "split"], how=HOW)
    s["cell"] = [
        fmt_ci(m, lo, hi) for m, lo, hi in zip(s["mean"], s["ci_lo"], s["ci_hi"], strict=True)
    ]
    table = s.pivot(index="group", columns="split", values="cell").reset_index()
    runs_per = acc.groupby("group")["run_id"].nunique().rename("runs").reset_index()
    table = table.merge(runs_per, on="group")
    rep.table(table, f"{METRIC}: mean [{CI}] over seeds")

    env = environments(final, ["group"], role="test", metric=METRIC, how=HOW)
    if not env.empty:
        rep.h("Test environments: mean and worst")
        rep.table(
            pd.DataFrame(
                {
                    "group": env["group"],
                    "test envs": env["n_envs"],
                    "mean over envs": [fmt_ci(*r) for r in env[["mean", "ci_lo", "ci_hi"]].values],
                    "worst env": env["worst_env"],
                    "worst": [
                        fmt_ci(*r) for r in env[["worst", "worst_ci_lo", "worst_ci_hi"]].values
                    ],
                }
            ),
            "the worst environment is the one with the lowest mean over seeds",
        )
        _comparisons(rep, rec)

    rep.h("Learning curves")
    ordered = sorted(acc["split"].unique(), key=lambda s: (not s.startswith("train"), s))
    splits, dropped = ordered[:MAX_PANELS], ordered[MAX_PANELS:]
    panels = {
        sp: curves(metrics, labels[["run_id", "group"]], ["group"], sp, METRIC, how=HOW)
        for sp in splits
    }
    why = dropped_note(dropped)
    rep.fig(
        "curves",
        curve_figure(panels, ["group"], METRIC, note=why),
        f"{METRIC} per split, mean over seeds with a {CI} band" + (f"; {why}" if why else ""),
    )
    bars = summarize(acc, ["group", "split"], how=HOW)
    rep.fig(
        "environments",
        env_bars(bars, ["group"], METRIC, interval=CI),
        f"final {METRIC} per split and group, {CI} over seeds",
    )
    return rep
