"""``diag.gwa_early_stopping`` (Hölzl, Rueckert & Kaissis, NeurIPS 2025, #11): under label noise,
stopping where gradient-weight alignment peaks — a score from the training data alone — is as
good as stopping by a validation set, and per-sample GWA flags the corrupted labels.

GWA is the kurtosis-corrected mean ``mean / (excess kurtosis + 1.2)`` of the per-sample cosine
between the head's descent direction and its weights (the ``gwa`` probe; the official code,
github.com/hlzl/gwa, computes the same closed form from the penultimate features). Evaluated
every epoch, as the paper scores each epoch. Differences: an MLP on 8x8 digits with 30%
symmetric label noise and SGD (the paper: CNNs and transformers on CIFAR-10(N) and ImageNet);
the paper's validation-based criterion is compared on test accuracy at each stopping epoch,
here the epoch of best accuracy on a clean 200-image validation split. The official code
aggregates per epoch the per-sample scores recorded at every update of that epoch; the probe
scores the weights at the epoch's end on the whole training set, which leaves early-epoch
transients unsmoothed.

No positive control is known, so the claim cannot record "not reproduced" (no control licenses
it; issue #30). Measured history: docs/diagnostics.md (diag.gwa_early_stopping).
"""

from __future__ import annotations

from typing import Literal

import pandas as pd
from pydantic import Field

from genlab.claims import register
from genlab.claims.base import Case, Claim, Control, Decision, Ref
from genlab.claims.diag._common import TEST, TRAIN, VAL, digits_base
from genlab.claims.guards import Fit, Interval, NotApplicable, combine
from genlab.claims.measures import AtBest, Derived, Extreme, series
from genlab.design import Design
from genlab.registry import Params
from genlab.report.claim_figures import Curves


def _overfit(m: pd.DataFrame) -> float:
    val = series(m, VAL, "accuracy")
    return float(val.max() - val.iloc[-1]) if len(val) else float("nan")


class GWAConfig(Params):
    """Noisy-label digits runs evaluated every epoch."""

    label_noise: float = Field(0.3, gt=0, le=0.8)
    noise_mask: Literal["changed", "placebo"] = Field(
        "changed",
        description="'placebo': the AUROC is scored against unchanged labels (negative control)",
    )
    train_size: int = Field(1000, ge=100, le=1400)
    width: int = Field(256, ge=1)
    lr: float = Field(0.1, gt=0)
    batch_size: int = Field(100, ge=1)
    epochs: int = Field(150, ge=2)
    seeds: int = Field(10, ge=3)


class GWAEarlyStopping(Claim):
    """GWA-based early stopping matches validation-based stopping (Hölzl et al., #11)."""

    id = "diag.gwa_early_stopping"
    papers = (
        Ref(
            11,
            "Hölzl, Rueckert & Kaissis 2025",
            "Gradient-weight alignment as a "
            "train-time proxy for generalization in classification tasks",
        ),
    )
    statement = (
        "Over >= 3 seeds (10 at full budget) of an MLP trained by SGD on digits with 30% label "
        "noise: (a) test accuracy at the epoch of highest GWA (training data only) minus test "
        "accuracy at the epoch of best validation accuracy has a 95% CI above -0.01 (matches or "
        "surpasses validation-based stopping, within 1 point); (b) per-sample GWA at the GWA "
        "epoch separates corrupted from clean labels: mean AUROC >= 0.75, 95% CI above 0.5."
    )
    Config = GWAConfig
    scope = "proxy"
    scope_note = (
        "the paper trains CNNs and transformers on CIFAR-10(N) and ImageNet; here a 2-layer MLP "
        "on scikit-learn's digits with 30% symmetric label noise, SGD, GWA scored each epoch"
    )
    budgets = {"smoke": {"seeds": 3, "train_size": 600, "epochs": 100}, "full": {}}
    TOLERANCE, MIN_AUROC = 0.01, 0.75
    measures = {
        "test_at_gwa": AtBest(TEST, select=TRAIN, select_metric="gwa"),
        "test_at_val": AtBest(TEST, select=VAL),
        "auroc": AtBest(TRAIN, "gwa_noise_auroc", select=TRAIN, select_metric="gwa"),
        "best_val": Extreme(VAL, "accuracy"),
        "overfit": Derived(_overfit, "best minus final validation accuracy"),
    }
    fit = Fit("best_val", 0.8)  # learned the clean signal despite the noise
    extra_guards = (Fit("overfit", 0.02),)  # no late decline: no early-stopping point to find
    floor = NotApplicable(
        "floor", "one arm; a GWA stop far below the validation stop is the refutation"
    )
    figure = Curves((TRAIN, TEST), metric="accuracy", logx=False)
    controls = {
        "negative": Control(
            {"noise_mask": "placebo"},
            "not reproduced",
            "the AUROC scored "
            "against as many clean labels: GWA can flag only labels that "
            "disagree with the data",
            slow=True,
        ),
    }

    def arms(self, cfg: GWAConfig):
        spe = max(1, cfg.train_size // cfg.batch_size)
        base = digits_base(
            train_size=cfg.train_size,
            val_size=200,
            width=cfg.width,
            depth=2,
            lr=cfg.lr,
            batch_size=cfg.batch_size,
            steps=cfg.epochs * spe,
            every=spe,
            probes=[{"name": "gwa"}],
            label_noise=cfg.label_noise,
            noise_mask=cfg.noise_mask,
        )
        return Design(base, seeds=cfg.seeds).expand()

    def synthetic(self, cfg: GWAConfig, arm: dict, case: Case) -> dict[str, float]:
        """Effect: the GWA stop tests as the validation stop (0.93) and flags the noise (AUROC
        0.95); null: it stops 0.08 lower and flags nothing (0.5); unfit: best validation 0.6."""
        null = case == "null"
        return {
            "test_at_gwa": 0.85 if null else 0.93,
            "test_at_val": 0.93,
            "auroc": 0.5 if null else 0.95,
            "best_val": 0.6 if case == "unfit" else 0.94,
            "overfit": 0.05,
        }

    def decide(self, cfg: GWAConfig, table: pd.DataFrame) -> Decision:
        diff = (table["test_at_gwa"] - table["test_at_val"]).tolist()
        iv = Interval.of(
            "test acc (GWA stop - validation stop)",
            diff,
            null=-self.TOLERANCE,
            smallest=-self.TOLERANCE,
        )
        auroc = Interval.of(
            "noise AUROC", table["auroc"].tolist(), null=0.5, smallest=self.MIN_AUROC
        )
        stats = {
            "seeds": len(table),
            "mean_diff": iv.estimate,
            "diff_lo": iv.lo,
            "diff_hi": iv.hi,
            "auroc": auroc.estimate,
            "auroc_lo": auroc.lo,
            "test_at_gwa": table["test_at_gwa"].mean(),
            "test_at_val": table["test_at_val"].mean(),
        }
        sentence = (
            f"Stopping at the GWA peak: test accuracy {stats['test_at_gwa']:.3f} vs "
            f"{stats['test_at_val']:.3f} at the best-validation epoch ({iv.text()}); "
            f"{auroc.text()}; {cfg.label_noise:.0%} label noise, {cfg.epochs} epochs."
        )
        return Decision(combine([iv.verdict(), auroc.verdict()]), stats, sentence, [iv, auroc])


register(GWAEarlyStopping())
