"""The report of a sweep or a set of runs.

For a domain-generalization sweep (methods x hyperparameter draws x held-out environments x trials)
it opens with DomainBed's table (Gulrajani & Lopez-Paz, "In Search of Lost Domain Generalization";
its ``model_selection.py`` and ``scripts/collect_results.py``): per task, one row per method, one
column per held-out setting. Per held-out setting and trial, the method's configuration (one draw of
the sweep's ``[random]`` axes, or a ``[grid]`` point) and checkpoint are chosen by training-domain
validation; the chosen held-out accuracies give mean [95% CI] over trials, then the average over
the settings and the worst setting; the test-domain oracle's, leave-one-domain-out's (where the sweep
holds its runs) and the last checkpoint's averages stand beside it (``select_rules``). As in
DomainBed, runs whose task splits the held-out environment 80/20 (``test_holdout``) report its 80%
``in`` part under every rule, and the oracle selects on the 20% ``out`` part (``test/<env>:out``).
Leave-one-domain-out needs, per configuration and trial, a run for each held-out setting ``{i}``
and one for every ``{i, j}`` (``j`` a training domain of ``{i}``); it scores the ``{i, j}`` runs
on ``j`` and reports the ``{i}`` run at the chosen step. Where this differs from DomainBed:

* accuracies get 95% percentile-bootstrap intervals over trials, which stay in [0, 1] (a
  Student-t interval over two or three trials can run past them; ``genlab.analysis.intervals``);
  DomainBed prints the standard error, and its "Avg" column is the mean of the per-setting means
  without an interval;
* the worst setting is genlab's addition;
* without ``test_holdout`` the oracle selects and reports on the whole held-out environment, and
  every rule reports it whole (DomainBed: the 80% ``in`` split);
* the draws are the sweep's: DomainBed's (fresh per trial, draw 0 the defaults, each method's own
  ranges) only with the ``[random]`` switches of ``genlab.sweep.spec``;
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
from genlab.analysis.selection import (
    last_checkpoint,
    leave_one_domain_out,
    oracle,
    training_domain_validation,
)
from genlab.datasets.domains import OUT_SUFFIX
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
    "checkpoint (DomainBed's OracleSelectionMethod: it selects on the held-out environment's 20% "
    "out split and reports its 80% in split)",
    "oracle, whole": "test-domain oracle: the configuration with the best held-out accuracy at its "
    "last checkpoint, selected and reported on the whole held-out environment (the task does not "
    "split it, test_holdout; DomainBed's OracleSelectionMethod selects on its 20% out split and "
    "reports the 80% in split)",
    "leave-one-domain-out": "per held-out setting {i} and trial, the configuration and step with "
    "the best mean accuracy on j of the runs that held out {i, j}, over every training domain j "
    "(DomainBed's LeaveOneOutSelectionMethod)",
    "last checkpoint": "training-domain validation over configurations at each run's last "
    "checkpoint (no early stopping)",
}
RUN = ("task", "method", "held_out", "trial", "config")  # one run of a DomainBed sweep


def _env_names(splits: pd.Series) -> str:
    return ", ".join(sorted(s.split("/", 1)[1] for s in splits))


def _roles(split: pd.Series) -> pd.Series:
    """``test``, ``val``, or ``test_out`` for a held-out environment's 20% (``test/<env>:out``)."""
    role = split.str.split("/", n=1).str[0]
    return role.where(~((role == "test") & split.str.endswith(OUT_SUFFIX)), "test_out")


def _evaluated(acc: pd.DataFrame) -> pd.DataFrame:
    """The ``test/*`` and ``val/*`` rows, without step 0 in runs evaluated later."""
    acc = acc[acc["split"].str.startswith(("test/", "val/"))]
    return acc[(acc["step"] > 0) | ~acc.groupby("run_id")["step"].transform("max").gt(0)]


def per_run(acc: pd.DataFrame, labels: pd.DataFrame) -> pd.DataFrame:
    """One row per run and evaluated ``step`` (of ``acc``: long-format accuracy rows): its labels,
    ``test`` (mean over its ``test/*`` splits; with ``test_holdout``, their 80% ``in`` parts),
    ``test_out`` (mean over the held-out environments' 20% ``out`` parts, ``test/*:out``; NaN
    without them), ``val`` (mean over its ``val/*`` splits), ``held_out`` (the held-out
    environments' names) and ``trial``. Step 0, the untrained model, is left out of runs
    evaluated later."""
    acc = _evaluated(acc)
    role = _roles(acc["split"])
    rec = acc.pivot_table(index=["run_id", "step"], columns=role, values="value", aggfunc="mean")
    rec = rec.reindex(columns=["test", "val", "test_out"]).reset_index()
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


def per_env(acc: pd.DataFrame, labels: pd.DataFrame) -> pd.DataFrame:
    """One row per run, evaluated ``step`` and held-out environment (``test/<env>``, its 80%
    ``in`` part where the task splits it): ``task``, ``method``, ``config``, ``trial``,
    ``held_out`` (all the run's held-out environments), ``env`` and ``value``."""
    acc = _evaluated(acc)
    acc = acc[_roles(acc["split"]) == "test"]
    names = acc.groupby("run_id")["split"].agg(lambda s: _env_names(s.unique()))
    out = acc.assign(env=acc["split"].str.split("/", n=1).str[1], held_out=acc["run_id"].map(names))
    out = labels.merge(out[["run_id", "step", "env", "held_out", "value"]], on="run_id")
    out["trial"] = [f"{s}/{d}" for s, d in zip(out["seed"], out["data_seed"], strict=True)]
    return out


def _n_held_out(held_out: pd.Series) -> pd.Series:
    return held_out.str.count(", ") + held_out.ne("").astype(int)


def lodo_records(rec: pd.DataFrame, env: pd.DataFrame) -> pd.DataFrame:
    """Rows for ``selection.leave_one_domain_out`` (DomainBed's ``LeaveOneOutSelectionMethod``),
    per step: every run of a held-out setting {i} (``rec`` rows, ``val_env`` empty) and, for
    each run that held out {i, j} (``env`` rows), a row of setting {i} scoring domain ``j``
    (``val_env``). A (configuration, trial, step) counts only with a {i, j} run for every
    training domain j of {i} (its ``val/*`` splits); ``config`` gains ``@<step>``."""
    key = ["task", "method", "trial", "config", "step"]
    full = rec[_n_held_out(rec["held_out"]) == 1]
    pairs = env[_n_held_out(env["held_out"]) == 2]
    if full.empty or pairs.empty:
        return pd.DataFrame()
    rows = []
    for (*k, _held), g in pairs.groupby([*key, "held_out"], sort=False):
        for i in g["env"]:
            j = g.loc[g["env"] != i]
            rows.append(
                {
                    **dict(zip(key, k, strict=True)),
                    "held_out": i,
                    "val_env": j["env"].iloc[0],
                    "score": j["value"].iloc[0],
                }
            )
    lodo = pd.DataFrame(rows)
    full = full.assign(val_env="", score=float("nan"))
    need = full.set_index([*key, "held_out"])["n_train"]
    have = lodo.groupby([*key, "held_out"])["val_env"].nunique()
    complete = have[have.eq(need.reindex(have.index))].index
    lodo = lodo.set_index([*key, "held_out"]).loc[complete].reset_index()
    if lodo.empty:
        return pd.DataFrame()
    out = pd.concat([full, lodo], ignore_index=True)
    return out.assign(config=out["config"] + "@" + out["step"].astype(str))


def _oracle_split(rec: pd.DataFrame) -> bool:
    """Whether every run splits its held-out environment (``test_out``), so that the oracle
    selects on the 20% ``out`` part as DomainBed does."""
    return "test_out" in rec and bool(rec["test_out"].notna().all())


def select_rules(rec: pd.DataFrame, env: pd.DataFrame | None = None) -> dict[str, pd.DataFrame]:
    """Per rule of ``RULES`` (those the records allow), one row per task, method, held-out setting
    and trial: the selected ``config`` and its ``val`` and ``test``. ``rec`` holds one row per run
    and checkpoint (a ``step`` column; without one, each row is a run's last checkpoint); the runs
    of the table's settings, and with ``env`` (``per_env`` rows) and an ``n_train`` column (the
    number of training domains) the runs that leave-one-domain-out needs besides."""
    rec = rec if "step" in rec else rec.assign(step=0)
    lodo = pd.DataFrame()
    if env is not None and "n_train" in rec:
        lodo = lodo_records(rec, env)
    n = _n_held_out(rec["held_out"])
    rec = rec[n == n.groupby(rec["task"]).transform("min")]  # {i, j} runs serve LODO alone
    last = last_checkpoint(rec, RUN)
    by = {"group": ("task", "method", "held_out"), "trial": "trial", "config": "config"}
    split = _oracle_split(last)
    out = {"oracle": oracle(last, "test", val="test_out" if split else None, **by)}
    if rec["val"].notna().any():
        out["training-domain validation"] = training_domain_validation(rec, ["val"], "test", **by)
        out["last checkpoint"] = training_domain_validation(last, ["val"], "test", **by)
    if not lodo.empty:
        sel = leave_one_domain_out(lodo, "val_env", "score", "test", **by)
        out["leave-one-domain-out"] = sel.assign(config=sel["config"].str.rsplit("@", n=1).str[0])
    return out


def add_domainbed_tables(rep: Report, rec: pd.DataFrame, env: pd.DataFrame | None = None) -> None:
    """DomainBed's table per task (a row per method, a column per held-out setting, the average and
    the worst setting), selecting each method's configuration per held-out setting and trial by
    training-domain validation, with the test-domain oracle's, leave-one-domain-out's (given
    ``env``, ``per_env`` rows, where the sweep holds its runs) and the last checkpoint's averages
    beside it. ``rec``: ``per_run`` rows (one per run and checkpoint)."""
    rec = rec.dropna(subset=["test"])
    rec = rec[rec["held_out"] != ""]
    if rec.empty or rec["setting"].eq("").all():
        return
    rep.h("DomainBed table: held-out test accuracy per method")
    n = _n_held_out(rec["held_out"])
    main_rec = rec[n == n.groupby(rec["task"]).transform("min")]
    n_cfg = main_rec.groupby(["task", "method", "held_out", "trial"])["config"].nunique().max()
    if rec["val"].isna().any() and n_cfg > 1:
        rep.p("Not shown: several configurations per method but no val/* splits to select with.")
        return
    sel = select_rules(rec, env)
    main = "training-domain validation" if "training-domain validation" in sel else next(iter(sel))
    order = _method_order(rec["method"])
    long = {}
    for rule, s in sel.items():
        s = s.assign(_o=s["method"].map(order.index)).sort_values(["_o", "held_out", "trial"])
        long[rule] = heldout_table(s, setting="held_out", how=HOW)
    whole = "" if _oracle_split(main_rec) else ", whole"
    rules = "; ".join(f"{k}: {RULES[k + whole if k == 'oracle' else k]}" for k in sel)
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
    val_envs = kept_metrics[kept_metrics["split"].str.startswith("val/")]
    n_train = val_envs.groupby("run_id")["split"].nunique().rename("n_train")
    rec = rec.merge(n_train, left_on="run_id", right_index=True, how="left")
    add_domainbed_tables(rep, rec, per_env(kept_metrics, labels))
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

    whole_envs = final[~final["split"].str.endswith(OUT_SUFFIX)]  # the oracle's 20%: not an env
    env = environments(whole_envs, ["group"], role="test", metric=METRIC, how=HOW)
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
