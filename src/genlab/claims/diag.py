"""Diagnostics claims (catalogue cluster C6): probes that should predict generalization.

- ``diag.coherence_real_vs_random`` (Chatterjee & Zielinski, #51): early in training, per-example
  gradients are much more coherent on real labels than on random labels.
- ``diag.gwa_early_stopping`` (Hoelzl et al., #11): under label noise, the epoch of highest
  gradient-weight alignment is within a few epochs of the epoch of best held-out accuracy, and
  per-sample GWA separates corrupted from clean labels.
- ``diag.constrained_margin`` (Mouton et al., #99): on a zoo of models (``genlab.zoo``), the
  constrained input margin ranks the generalization gap better than the plain input margin.

Both train MLPs on scikit-learn digits (``tasks/digits.py``) with plain SGD.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from pydantic import Field  # noqa: E402

from genlab.claims import register  # noqa: E402
from genlab.claims.base import Claim, ClaimResult, Verdict  # noqa: E402
from genlab.registry import Params  # noqa: E402
from genlab.report.plots import save_figure
from genlab.spec import RunSpec, parse_spec  # noqa: E402

TRAIN, TEST = "train/main", "test/heldout"


def digits_spec(
    *, train_size: int, width: int, depth: int, lr: float, batch_size: int, steps: int,
    every: int, probes: list[dict], seed: int, label_noise: float = 0.0,
    random_labels: bool = False, method: dict | None = None,
) -> RunSpec:  # fmt: skip
    """An SGD-trained MLP on digits, evaluated every ``every`` steps."""
    return parse_spec({
        "task": {"name": "digits", "params": {"train_size": train_size, "label_noise": label_noise,
                                              "random_labels": random_labels}},
        "model": {"name": "mlp", "params": {"width": width, "depth": depth}},
        "method": method or {"name": "erm"},
        "optimizer": {"name": "sgd", "lr": lr}, "steps": steps, "batch_size": batch_size,
        "eval": {"every": every, "log_points": 0,
                 "probes": [{"name": "accuracy"}, {"name": "loss"}, *probes]},
        "checkpoint_every": steps, "seed": seed, "data_seed": seed,
    })  # fmt: skip


def seed_verdict(n_ok: int, n: int, min_seeds: int) -> Verdict:
    """Reproduced when every seed passes (and there are enough); not reproduced when at most
    half do; inconclusive in between."""
    if n >= min_seeds and n_ok == n:
        return "reproduced"
    return "not reproduced" if 2 * n_ok <= n else "inconclusive"


def series(metrics: pd.DataFrame, run_id: str, split: str, metric: str) -> pd.Series:
    d = metrics[(metrics["run_id"] == run_id) & (metrics["split"] == split)]
    d = d[d["metric"] == metric].sort_values("step")
    return pd.Series(d["value"].to_numpy(), index=d["step"].to_numpy(), name=metric)


# ---- diag.coherence_real_vs_random (#51) ------------------------------------------------------


class CoherenceConfig(Params):
    """Real-label and contrast runs of one MLP on digits, per seed."""

    contrast: Literal["random", "real"] = Field(
        "random", description="labels of the contrast arm ('real' is the negative control)"
    )
    train_size: int = Field(1000, ge=50, le=1700)
    width: int = Field(128, ge=1)
    depth: int = Field(2, ge=1)
    lr: float = Field(0.1, gt=0)
    batch_size: int = Field(100, ge=1)
    steps: int = Field(400, ge=1)
    early_steps: int = Field(100, ge=1, description="'early in training': steps (0, early_steps]")
    every: int = Field(10, ge=1, description="evaluation interval")
    max_samples: int = Field(500, ge=2, description="samples for per-example gradients")
    seeds: int = Field(3, ge=1)


class CoherenceRealVsRandom(Claim):
    """Early in training, gradients on real labels are far more coherent than on random labels
    (Chatterjee & Zielinski, #51)."""

    id = "diag.coherence_real_vs_random"
    family = "diag"
    papers = (51,)
    MIN_RATIO = 2.0  # "much higher", fixed before running
    statement = (
        "For every seed (>= 3), the mean per-example gradient coherence alpha (all parameters, "
        "torch.func per-sample gradients) over evaluations in the first `early_steps` steps of "
        "SGD on real digits labels is >= 2x the same mean on random labels."
    )
    Config = CoherenceConfig
    budgets = {
        "smoke": {"train_size": 300, "width": 64, "steps": 60, "early_steps": 60,
                  "max_samples": 200, "every": 10},
        "full": {},
    }  # fmt: skip

    def _spec(self, cfg: CoherenceConfig, seed: int, random_labels: bool) -> RunSpec:
        probe = {"name": "coherence", "params": {"mode": "full", "max_samples": cfg.max_samples}}
        return digits_spec(
            train_size=cfg.train_size, width=cfg.width, depth=cfg.depth, lr=cfg.lr,
            batch_size=cfg.batch_size, steps=cfg.steps, every=cfg.every, probes=[probe],
            seed=seed, random_labels=random_labels,
        )  # fmt: skip

    def specs(self, cfg: CoherenceConfig) -> list[RunSpec]:
        out = []
        for s in range(cfg.seeds):
            out.append(self._spec(cfg, s, False))
            if cfg.contrast == "random":
                out.append(self._spec(cfg, s, True))
        return out

    def judge(self, cfg: CoherenceConfig, runs: pd.DataFrame, metrics: pd.DataFrame) -> ClaimResult:
        rows = []
        for s in range(cfg.seeds):
            real = self._spec(cfg, s, False).run_id
            # contrast "real" (the negative control) compares the real-label run with itself
            other = self._spec(cfg, s, cfg.contrast == "random").run_id
            early = []
            for rid in (real, other):
                c = series(metrics, rid, TRAIN, "coherence")
                early.append(float(c[(c.index > 0) & (c.index <= cfg.early_steps)].mean()))
            rows.append({"seed": s, "real_run": real, "contrast_run": other,
                         "coherence_real": early[0], "coherence_contrast": early[1],
                         "ratio": early[0] / early[1] if early[1] > 0 else np.nan})  # fmt: skip
        table = pd.DataFrame(rows)
        ok = table["ratio"] >= self.MIN_RATIO
        verdict = seed_verdict(int(ok.sum()), len(table), 3)
        stat = {"seeds": float(len(table)), "seeds_passing": float(ok.sum()),
                "median_ratio": float(table["ratio"].median()),
                "min_ratio": float(table["ratio"].min()),
                "median_coherence_real": float(table["coherence_real"].median()),
                "median_coherence_contrast": float(table["coherence_contrast"].median()),
                }  # fmt: skip
        evidence = (
            f"{int(ok.sum())}/{len(table)} seeds had early coherence on real labels >= "
            f"{self.MIN_RATIO:g}x that on {cfg.contrast} labels (median ratio "
            f"{stat['median_ratio']:.2f}, lowest {stat['min_ratio']:.2f}; alpha "
            f"{stat['median_coherence_real']:.4f} vs {stat['median_coherence_contrast']:.4f}) over "
            f"steps 1-{cfg.early_steps}, {cfg.train_size} digits, width {cfg.width}, "
            f"SGD lr {cfg.lr}."
        )
        return ClaimResult(self.id, verdict, stat, evidence, table)

    def figure(self, cfg: CoherenceConfig, metrics: pd.DataFrame, path: Path) -> Path | None:
        fig, ax = plt.subplots(figsize=(6, 4))
        for s in range(cfg.seeds):
            for random_labels, style in ((False, "-"), (True, "--")):
                if random_labels and cfg.contrast == "real":
                    continue
                c = series(metrics, self._spec(cfg, s, random_labels).run_id, TRAIN, "coherence")
                label = f"seed {s} {'random' if random_labels else 'real'}"
                ax.plot(c.index, c.values, style, color=f"C{s}", label=label)
        ax.axvline(cfg.early_steps, color="grey", lw=0.8)
        ax.set(xlabel="step", ylabel="coherence alpha", yscale="log", title=self.id)
        ax.legend(fontsize=7, frameon=False, ncol=2)
        return save_figure(fig, path)


# ---- diag.gwa_early_stopping (#11) ------------------------------------------------------------


class GWAConfig(Params):
    """Noisy-label digits runs evaluated every epoch."""

    label_noise: float = Field(0.3, ge=0, le=1)
    train_size: int = Field(1000, ge=50, le=1700)
    width: int = Field(256, ge=1)
    depth: int = Field(2, ge=1)
    lr: float = Field(0.1, gt=0)
    batch_size: int = Field(100, ge=1)
    epochs: int = Field(300, ge=2)
    tolerance: int = Field(5, ge=0, description="'within a few epochs'")
    min_auroc: float = Field(0.75, ge=0.5, le=1)
    seeds: int = Field(3, ge=1)


class GWAEarlyStopping(Claim):
    """Under label noise, the epoch of highest GWA is near the epoch of best held-out accuracy,
    and per-sample GWA flags the corrupted labels (Hoelzl, Rueckert & Kaissis, #11)."""

    id = "diag.gwa_early_stopping"
    family = "diag"
    papers = (11,)
    statement = (
        "For every seed (>= 3) of an MLP trained by SGD on digits with corrupted labels, the epoch "
        "maximising the GWA score on the training set is within `tolerance` (5) epochs of the "
        "epoch of best test accuracy, and per-sample GWA at that epoch separates corrupted from "
        "clean labels with AUROC >= `min_auroc` (0.75)."
    )
    Config = GWAConfig
    budgets = {"smoke": {"train_size": 500, "width": 128, "epochs": 60}, "full": {}}

    def steps_per_epoch(self, cfg: GWAConfig) -> int:
        return max(1, cfg.train_size // cfg.batch_size)

    def specs(self, cfg: GWAConfig) -> list[RunSpec]:
        spe = self.steps_per_epoch(cfg)
        return [
            digits_spec(
                train_size=cfg.train_size,
                width=cfg.width,
                depth=cfg.depth,
                lr=cfg.lr,
                batch_size=cfg.batch_size,
                steps=cfg.epochs * spe,
                every=spe,
                probes=[{"name": "gwa"}, {"name": "label_fit"}],
                seed=s,
                label_noise=cfg.label_noise,
            )  # fmt: skip
            for s in range(cfg.seeds)
        ]

    def judge(self, cfg: GWAConfig, runs: pd.DataFrame, metrics: pd.DataFrame) -> ClaimResult:
        spe = self.steps_per_epoch(cfg)
        rows = []
        for s, spec in enumerate(self.specs(cfg)):
            rid = spec.run_id
            score = series(metrics, rid, TRAIN, "gwa")
            score = score[score.index > 0]
            acc = series(metrics, rid, TEST, "accuracy")
            acc = acc[acc.index > 0]
            auroc = series(metrics, rid, TRAIN, "gwa_noise_auroc")
            if score.empty or acc.empty:
                rows.append({"seed": s, "run_id": rid})
                continue
            t_gwa, t_best = int(score.idxmax()), int(acc.idxmax())
            rows.append({
                "seed": s, "run_id": rid, "epoch_gwa": t_gwa / spe, "epoch_best": t_best / spe,
                "epoch_gap": abs(t_gwa - t_best) / spe, "acc_at_gwa": float(acc.get(t_gwa)),
                "acc_best": float(acc.max()), "acc_final": float(acc.iloc[-1]),
                "auroc_at_gwa": float(auroc.get(t_gwa, np.nan)),
            })  # fmt: skip
        table = pd.DataFrame(rows)
        for col in ("epoch_gap", "auroc_at_gwa", "acc_at_gwa", "acc_best", "acc_final"):
            if col not in table:
                table[col] = np.nan
        ok = (table["epoch_gap"] <= cfg.tolerance) & (table["auroc_at_gwa"] >= cfg.min_auroc)
        verdict = seed_verdict(int(ok.sum()), len(table), 3)
        stat = {"seeds": float(len(table)), "seeds_passing": float(ok.sum()),
                "median_epoch_gap": float(table["epoch_gap"].median()),
                "median_auroc_at_gwa": float(table["auroc_at_gwa"].median()),
                "median_acc_regret": float((table["acc_best"] - table["acc_at_gwa"]).median()),
                "median_acc_best": float(table["acc_best"].median()),
                "median_acc_final": float(table["acc_final"].median())}  # fmt: skip
        evidence = (
            f"{int(ok.sum())}/{len(table)} seeds: GWA peak within {cfg.tolerance} epochs of the "
            f"best test accuracy and noise AUROC >= {cfg.min_auroc:g} (median gap "
            f"{stat['median_epoch_gap']:.1f} epochs, AUROC {stat['median_auroc_at_gwa']:.3f}, test "
            f"accuracy lost by stopping at the GWA peak {stat['median_acc_regret']:.3f}; best "
            f"{stat['median_acc_best']:.3f}, final {stat['median_acc_final']:.3f}) with "
            f"{cfg.label_noise:.0%} label noise over {cfg.epochs} epochs."
        )
        return ClaimResult(self.id, verdict, stat, evidence, table)

    def figure(self, cfg: GWAConfig, metrics: pd.DataFrame, path: Path) -> Path | None:
        spe = self.steps_per_epoch(cfg)
        fig, (a1, a2) = plt.subplots(2, 1, figsize=(6, 5.5), sharex=True)
        for s, spec in enumerate(self.specs(cfg)):
            score = series(metrics, spec.run_id, TRAIN, "gwa")
            acc = series(metrics, spec.run_id, TEST, "accuracy")
            if score.empty:
                continue
            a1.plot(score.index / spe, score.values, color=f"C{s}", label=f"seed {s}")
            a2.plot(acc.index / spe, acc.values, color=f"C{s}")
            a1.axvline(score[score.index > 0].idxmax() / spe, color=f"C{s}", ls=":")
            a2.axvline(acc[acc.index > 0].idxmax() / spe, color=f"C{s}", ls=":")
        a1.set(ylabel="GWA score (train)", title=f"{self.id} ({cfg.label_noise:.0%} noise)")
        a2.set(xlabel="epoch", ylabel="test accuracy")
        a1.legend(fontsize=7, frameon=False)
        return save_figure(fig, path)


# ---- diag.constrained_margin (#99) ------------------------------------------------------------


class MarginZooConfig(Params):
    """A zoo of MLPs on digits (``genlab.zoo``) with the input and constrained margins measured."""

    contender: Literal["constrained", "input"] = Field(
        "constrained", description="measure set against the input margin ('input': control)"
    )
    size: int = Field(16, ge=4)
    steps: int = Field(600, ge=1)
    train_size: int = Field(500, ge=10, le=1700)
    vary: dict[str, list[Any]] = Field(
        default_factory=lambda: {"width": [32, 128, 512], "depth": [1, 2, 3],
                                 "weight_decay": [0.0, 0.1], "label_noise": [0.0, 0.2]}
    )  # fmt: skip
    max_samples: int = Field(128, ge=1)
    pca_variance: float = Field(0.9, gt=0, le=1)
    seed: int = Field(0, ge=0)


class ConstrainedMargin(Claim):
    """Across a zoo, the constrained input margin ranks generalization better than the plain
    input margin (Mouton, Theunissen & Davel, #99)."""

    id = "diag.constrained_margin"
    family = "diag"
    papers = (99,)
    MIN_GAIN = 0.05  # fixed before running
    statement = (
        "On a zoo of MLPs on digits, Kendall's tau between the constrained margin (DeepFool in "
        "the top principal components of the training data) and the generalization gap is "
        "negative and at least 0.05 lower than the plain input margin's tau."
    )
    Config = MarginZooConfig
    budgets = {
        "smoke": {"size": 6, "steps": 150, "train_size": 300, "max_samples": 48,
                  "vary": {"width": [16, 64, 256], "label_noise": [0.0, 0.3]}},
        "full": {},
    }  # fmt: skip

    def zoo(self, cfg: MarginZooConfig) -> list[tuple[dict, RunSpec]]:
        from genlab.zoo import ZooConfig, zoo_specs

        params = {"measures": ["input", "constrained"], "max_samples": cfg.max_samples,
                  "pca_variance": cfg.pca_variance}  # fmt: skip
        return zoo_specs(ZooConfig(
            size=cfg.size, vary=cfg.vary, probes=["margins"], steps=cfg.steps,
            train_size=cfg.train_size, seed=cfg.seed, probe_params={"margins": params},
        ))  # fmt: skip

    def specs(self, cfg: MarginZooConfig) -> list[RunSpec]:
        return [s for _, s in self.zoo(cfg)]

    def judge(self, cfg: MarginZooConfig, runs: pd.DataFrame, metrics: pd.DataFrame) -> ClaimResult:
        from genlab.zoo.run import frame
        from genlab.zoo.score import cmi_score, kendall_tau

        df = frame(self.zoo(cfg), runs, metrics)
        stat: dict[str, float] = {"models": float(len(df))}
        for name in ("input", cfg.contender):
            col = f"{name}_margin"
            m = df[col].to_numpy(float) if col in df else np.full(len(df), np.nan)
            g, hps = df["gap"].to_numpy(float) if len(df) else np.array([]), df[list(cfg.vary)]
            stat[f"tau_{name}"], stat[f"p_{name}"] = kendall_tau(m, g)
            stat[f"cmi_{name}"] = cmi_score(m, g, hps) if len(df) else np.nan
        t_in, t_c = stat["tau_input"], stat[f"tau_{cfg.contender}"]
        if len(df) < 4 or not np.isfinite([t_in, t_c]).all():
            verdict: Verdict = "inconclusive"
        elif t_c < 0 and t_c <= t_in - self.MIN_GAIN:
            verdict = "reproduced"
        else:
            verdict = "not reproduced"
        evidence = (
            f"On {len(df)} models, tau({cfg.contender} margin, gap) = {t_c:+.3f} vs tau(input "
            f"margin, gap) = {t_in:+.3f} (needs < 0 and <= input - {self.MIN_GAIN:g}); CMI "
            f"{stat[f'cmi_{cfg.contender}']:.3f} vs {stat['cmi_input']:.3f}."
        )
        cols = ["run_id", *cfg.vary, "gap", "input_margin", f"{cfg.contender}_margin"]
        return ClaimResult(self.id, verdict, stat, evidence, df[[c for c in cols if c in df]])

    def figure(self, cfg: MarginZooConfig, metrics: pd.DataFrame, path: Path) -> Path | None:
        from genlab.report.plots import gap_scatter as scatter
        from genlab.zoo.run import frame

        runs = pd.DataFrame({"run_id": metrics["run_id"].unique(), "status": "done"})
        df = frame(self.zoo(cfg), runs, metrics)
        names = [c for c in ("input_margin", f"{cfg.contender}_margin") if c in df]
        if df.empty or not names:
            return None
        return scatter(df, names, None, path, self.id)


register(CoherenceRealVsRandom())
register(GWAEarlyStopping())
register(ConstrainedMargin())
