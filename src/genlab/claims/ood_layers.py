"""``ood.intermediate_layers``: an intermediate-layer linear probe beats the penultimate layer on
held-out environments in most shifts (Uselis & Oh, "Intermediate Layer Classifiers", #103).

Zero-shot ILCs: ERM (DomainBed defaults) trains on the training environments; at the last step the
``layer_probes`` probe fits a logistic regression on each layer's features of the training
environments and scores it on every held-out environment. Each held-out environment is one shift.
Per shift, the best intermediate layer is the one with the highest mean held-out accuracy over
seeds (the paper's "some intermediate layer", an oracle choice of layer, which favours it slightly);
its paired gain over the penultimate layer is taken per seed with a Student-t CI.

Control (must come out *not reproduced*): ``heldout="val"`` scores the same probes on the training
environments' validation splits, i.e. without a shift, where the penultimate layer is expected best.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
from pydantic import Field, field_validator  # noqa: E402

from genlab.analysis.stats import mean_ci  # noqa: E402
from genlab.claims import register  # noqa: E402
from genlab.claims.base import Claim, ClaimResult, Verdict  # noqa: E402
from genlab.claims.dg import dg_spec  # noqa: E402
from genlab.datasets.domains import check_test_envs  # noqa: E402
from genlab.registry import Params  # noqa: E402
from genlab.spec import RunSpec, parse_spec  # noqa: E402

CNN = {"name": "cnn", "params": {"channels": [16, 32, 64], "pool_every": 1}}
MLP = {"name": "mlp", "params": {"width": 128, "depth": 3}}
TASKS = {  # task -> (number of environments, model)
    "rotated_digits": (6, CNN),
    "colored_digits": (3, CNN),
    "style_digits": (5, CNN),
    "mnist1d_domains": (5, MLP),
}
SHIFTS = ["rotated_digits:5", "colored_digits:2", "style_digits:1,2,3,4", "mnist1d_domains:4"]


class LayersConfig(Params):
    """Runs ``task:i,j`` (environments i, j held out); every held-out environment is one shift."""

    shifts: list[str] = Field(default_factory=lambda: list(SHIFTS), min_length=1)
    heldout: Literal["test", "val"] = Field(
        "test", description="score probes on held-out envs (test) or in-distribution (val)"
    )
    steps: int = Field(301, ge=2)
    seeds: int = Field(3, ge=2)
    probe_steps: int = Field(100, ge=1, description="L-BFGS iterations per probe")
    grid: int = Field(4, ge=1, le=8, description="CNN maps pooled to grid x grid and flattened")

    @field_validator("shifts")
    @classmethod
    def _shifts(cls, v: list[str]) -> list[str]:
        for item in v:
            task, _, idx = item.partition(":")
            envs = idx.split(",")
            if task not in TASKS or not idx or not all(e.isdigit() for e in envs):
                raise ValueError(
                    f"shift {item!r} must be task:i[,j...] with task in {', '.join(TASKS)}"
                )
            check_test_envs([int(e) for e in envs], TASKS[task][0])
        return v


def _spec(task: str, envs: list[int], cfg: LayersConfig, seed: int) -> RunSpec:
    base = dg_spec(task, {"test_envs": envs}, TASKS[task][1], "erm", None, cfg.steps, seed,
                   eval_every=cfg.steps - 1)  # fmt: skip
    d = base.model_dump(mode="json")
    d["eval"]["probes"] = [
        {"name": "accuracy"},
        {"name": "layer_probes", "params": {"min_step": cfg.steps - 1, "steps": cfg.probe_steps,
                                            "grid": cfg.grid}},
    ]  # fmt: skip
    return parse_spec(d)


def layer_table(runs: pd.DataFrame, metrics: pd.DataFrame, heldout: str) -> pd.DataFrame:
    """Long table ``run_id, task, seed, shift, layer, acc`` at each run's last probed step."""
    tasks = {r.run_id: json.loads(r.spec) for r in runs.itertuples()}
    m = metrics[metrics["metric"].str.endswith("_probe_acc")]
    m = m[m["split"].str.startswith(f"{heldout}/")]
    if m.empty:
        return pd.DataFrame(columns=["run_id", "task", "seed", "shift", "layer", "acc"])
    last = m.groupby("run_id")["step"].transform("max")
    m = m[m["step"] == last]
    out = pd.DataFrame({
        "run_id": m["run_id"],
        "task": [tasks[r]["task"]["name"] for r in m["run_id"]],
        "seed": [tasks[r]["seed"] for r in m["run_id"]],
        "shift": m["split"].str.partition("/")[2],
        "layer": m["metric"].str.extract(r"layer(\d+)_")[0].astype(int),
        "acc": m["value"],
    })  # fmt: skip
    out["shift"] = out["task"] + ":" + out["shift"]
    return out.reset_index(drop=True)


def shift_gains(table: pd.DataFrame) -> pd.DataFrame:
    """Per shift: best intermediate layer (highest mean over seeds), penultimate mean, paired gain
    mean [95% CI] over seeds."""
    rows = []
    for shift, df in table.groupby("shift", sort=True):
        wide = df.pivot_table(index="seed", columns="layer", values="acc")
        last = int(wide.columns.max())
        inter = [c for c in wide.columns if c < last]
        if not inter:
            continue
        best = int(wide[inter].mean().idxmax())
        g = mean_ci((wide[best] - wide[last]).dropna().tolist())
        rows.append({"shift": shift, "best_layer": best, "n_layers": last + 1,
                     "best_mean": float(wide[best].mean()), "penult_mean": float(wide[last].mean()),
                     "gain": g["mean"], "ci_lo": g["ci_lo"], "ci_hi": g["ci_hi"], "n": g["n"]})  # fmt: skip
    return pd.DataFrame(rows)


class IntermediateLayers(Claim):
    """A zero-shot intermediate-layer probe beats the penultimate one in most shifts (#103)."""

    id = "ood.intermediate_layers"
    family = "ood"
    papers = (103,)
    statement = (
        "ERM (DomainBed defaults) on rotated_digits (75deg held out), colored_digits (-90%), "
        "style_digits (4 appearance envs) and mnist1d_domains (noise); logistic-regression probes "
        "fitted on each layer's training-environment features at the last step. A shift is won when "
        "the best intermediate layer's held-out accuracy exceeds the penultimate layer's by a paired "
        "mean gain >= 0.01 with 95% CI above 0. Reproduced when more than half of the shifts are "
        "won; not reproduced when, even counting every shift whose CI reaches 0.01, half or fewer "
        "could be won; otherwise inconclusive."
    )
    Config = LayersConfig
    budgets = {
        "smoke": {"steps": 201, "seeds": 3},
        "full": {"steps": 1001, "seeds": 5},
    }
    MIN_GAIN = 0.01  # fixed before running: a gain below one point is parity

    def specs(self, cfg: LayersConfig) -> list[RunSpec]:
        out = []
        for item in cfg.shifts:
            task, _, idx = item.partition(":")
            envs = [int(e) for e in idx.split(",")]
            out += [_spec(task, envs, cfg, seed) for seed in range(cfg.seeds)]
        return out

    def judge(self, cfg: LayersConfig, runs: pd.DataFrame, metrics: pd.DataFrame) -> ClaimResult:
        gains = shift_gains(layer_table(runs, metrics, cfg.heldout))
        if gains.empty:
            return ClaimResult(self.id, "inconclusive", {}, "no layer-probe results", gains)
        won = (gains["gain"] >= self.MIN_GAIN) & (gains["ci_lo"] > 0)
        possible = won | (gains["ci_hi"] >= self.MIN_GAIN)
        n = len(gains)
        verdict: Verdict = (
            "reproduced" if won.sum() > n / 2
            else "not reproduced" if possible.sum() <= n / 2
            else "inconclusive"
        )  # fmt: skip
        stat = {"shifts": float(n), "won": float(won.sum()), "possible": float(possible.sum()),
                "mean_gain": float(gains["gain"].mean()),
                "mean_best_intermediate": float(gains["best_mean"].mean()),
                "mean_penultimate": float(gains["penult_mean"].mean())}  # fmt: skip
        parts = [f"{r.shift} L{r.best_layer} {r.best_mean:.3f} vs {r.penult_mean:.3f} "
                 f"({r.gain:+.3f} [{r.ci_lo:+.3f}, {r.ci_hi:+.3f}])"
                 for r in gains.itertuples()]  # fmt: skip
        evidence = (
            f"{int(won.sum())}/{n} shifts won (gain >= {self.MIN_GAIN}, CI > 0), "
            f"{int(possible.sum())} possible; best intermediate vs penultimate probe accuracy on "
            f"{cfg.heldout} splits, paired over {cfg.seeds} seeds: "
            + "; ".join(parts)
            + f" ({cfg.steps} steps)."
        )
        return ClaimResult(self.id, verdict, stat, evidence, gains)

    def figure(self, cfg: LayersConfig, metrics: pd.DataFrame, path: Path) -> Path | None:
        specs = {s.run_id: s for s in self.specs(cfg)}
        runs = pd.DataFrame(
            {"run_id": list(specs), "spec": [s.canonical_json() for s in specs.values()]}
        )
        table = layer_table(runs, metrics[metrics["run_id"].isin(specs)], cfg.heldout)
        if table.empty:
            return None
        fig, ax = plt.subplots(figsize=(6.4, 3.8))
        for i, (shift, df) in enumerate(table.groupby("shift", sort=True)):
            by = df.groupby("layer")["acc"]
            ci = pd.DataFrame({k: mean_ci(v.tolist()) for k, v in by}).T
            ax.errorbar(ci.index, ci["mean"], yerr=[ci["mean"] - ci["ci_lo"], ci["ci_hi"] -
                        ci["mean"]], marker="o", capsize=3, label=shift, color=f"C{i}")  # fmt: skip
        ax.set(xlabel="layer (last = penultimate)", ylabel=f"probe accuracy ({cfg.heldout})",
               title=f"{self.id}: accuracy by layer", ylim=(0, 1.02))  # fmt: skip
        ax.set_xticks(sorted(table["layer"].unique()))
        ax.legend(fontsize=7, ncol=2)
        fig.tight_layout()
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path, dpi=110)
        plt.close(fig)
        return path


register(IntermediateLayers())
