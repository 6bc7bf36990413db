"""Train a zoo through the engine, collect each model's gap and probe values, rank, plot.

Every model goes through ``genlab.engine.run_spec``, so a zoo that died resumes and every run
lands in the store. Measures are the probes' final-step values on training splits (and the
``model`` split): a generalization measure may not look at held-out data. The gap is the final
train accuracy (on the labels trained on) minus the test accuracy.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from genlab.engine import run_spec
from genlab.engine.train import prepare
from genlab.errors import GenlabError, SpecError
from genlab.probes import EvalContext
from genlab.report.plots import gap_scatter
from genlab.spec import RunSpec
from genlab.store import Store
from genlab.zoo.config import ZooConfig, zoo_specs
from genlab.zoo.score import rank_measures

TRAIN, TEST = "train/main", "test/heldout"
NOT_MEASURES = {"accuracy", "loss"}


@dataclass
class ZooResult:
    """The ranked table, one row per model (hyperparameters, gap, measures), and the figures."""

    table: pd.DataFrame
    models: pd.DataFrame
    out_dir: Path
    figures: dict[str, Path] = field(default_factory=dict)
    measures_of: dict[str, list[str]] = field(default_factory=dict)


def measure_name(split: str, metric: str) -> str:
    return metric if split in (TRAIN, "model") else f"{split}:{metric}"


def probe_measures(spec: RunSpec) -> dict[str, list[str]]:
    """Which measures each probe gives, by running the probes once on the untrained first model.

    This also checks, before anything is trained or written, that the probes work on this model
    (a per-sample-gradient probe on a model that cannot give them raises ``SpecError``)."""
    prep = prepare(spec)
    ctx = EvalContext(prep.model, prep.data, 0)
    out: dict[str, list[str]] = {}
    for comp, (fn, params) in zip(spec.eval.probes, prep.probes, strict=True):
        if comp.name in NOT_MEASURES:
            continue
        keys = fn(prep.model, ctx, params)
        out[comp.name] = sorted(
            measure_name(s, m) for s, m in keys if s.startswith("train/") or s == "model"
        )
    return out


def config_id(cfg: ZooConfig) -> str:
    text = json.dumps(cfg.model_dump(mode="json"), sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def collect(store: Store, models: list[tuple[dict, RunSpec]]) -> pd.DataFrame:
    """One row per finished model: run id, hyperparameters, train/test accuracy, gap, measures."""
    ids = [s.run_id for _, s in models]
    runs = store.runs(where=f"run_id IN ({','.join('?' * len(ids))})", args=tuple(ids))
    return frame(models, runs, store.metrics(ids))


def frame(
    models: list[tuple[dict, RunSpec]], runs: pd.DataFrame, metrics: pd.DataFrame
) -> pd.DataFrame:
    """``collect`` from the store's ``runs`` rows and long-format ``metrics`` (as claims get them)."""
    status = dict(runs[["run_id", "status"]].itertuples(index=False))
    last = metrics.loc[metrics.groupby("run_id")["step"].transform("max") == metrics["step"]]
    rows = []
    for h, spec in models:
        if status.get(spec.run_id) != "done":
            continue
        d = last[last["run_id"] == spec.run_id]
        vals = {(s, m): v for s, m, v in d[["split", "metric", "value"]].itertuples(index=False)}
        row = {"run_id": spec.run_id, **h}
        row["train_acc"] = vals.get((TRAIN, "accuracy"))
        row["test_acc"] = vals.get((TEST, "accuracy"))
        row["gap"] = row["train_acc"] - row["test_acc"]
        for (s, m), v in vals.items():
            if (s.startswith("train/") or s == "model") and m not in NOT_MEASURES:
                row[measure_name(s, m)] = v
        rows.append(row)
    return pd.DataFrame(rows)


def markdown(table: pd.DataFrame) -> str:
    """A plain markdown table (floats to 3 significant digits)."""
    fmt = [[f"{v:.3g}" if isinstance(v, float) else str(v) for v in row] for row in table.values]
    lines = ["| " + " | ".join(table.columns) + " |", "|" + "---|" * len(table.columns)]
    return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in fmt]) + "\n"


def run_zoo(cfg: ZooConfig, store: Store, progress: bool = False) -> ZooResult:
    """Train (or reuse) every model of the zoo, then rank the probes' measures; see the module."""
    models = zoo_specs(cfg)
    measures_of = probe_measures(models[0][1])
    for _, spec in models:
        try:
            run_spec(spec, store, progress=progress)
        except SpecError:
            raise
        except GenlabError:
            continue  # recorded as failed in the store; the zoo goes on without it
    df = collect(store, models)
    if len(df) < 2:
        raise GenlabError(f"only {len(df)} zoo model(s) finished; nothing to rank")
    names = [n for ns in measures_of.values() for n in ns if n in df.columns]
    hps = df[list(cfg.vary)]
    table = rank_measures(df[names], df["gap"], hps)
    probe_of = {n: p for p, ns in measures_of.items() for n in ns}
    table.insert(1, "probe", table["measure"].map(probe_of))
    out_dir = store.root / "zoo" / config_id(cfg)
    out_dir.mkdir(parents=True, exist_ok=True)
    table.to_csv(out_dir / "table.csv", index=False)
    df.to_csv(out_dir / "models.csv", index=False)
    (out_dir / "table.md").write_text(markdown(table))
    figs = {
        p: gap_scatter(df, ns, table, out_dir / f"scatter-{p}.png", f"zoo: {p} ({len(df)} models)")
        for p, ns in measures_of.items()
        if any(n in df.columns for n in ns)
    }
    return ZooResult(table, df, out_dir, figs, measures_of)
