"""``graphs.density_loss`` (#94, Knyazev et al., "Graph density-aware losses for novel compositions
in scene graph generation", BMVC 2020; tier T3): the standard edge loss of scene graph generation
averages over all of an image's candidate edges, so each annotated edge of a large sparse graph
weighs little, although such graphs hold many of the rare compositions; normalising the edge loss
by the number of foreground edges (the paper's hyperparameter-free ``dnorm``) improves zero- and
few-shot triplet recall, by more than two-fold on some metrics (Visual Genome, GQA).

genlab's proxy on ``relation_graphs`` (synthetic scene graphs, PredCls: object classes given):
half of the graphs are typical (5 objects, 8 of their 20 ordered pairs annotated, each mostly
with its class pair's usual predicate: the frequency bias), half diverse (14 objects, 8 of 182
pairs annotated, predicates uniform: the rare compositions); a fifth of the unusual (subject,
predicate, object) triplets never occurs in training (zero-shot). Each candidate edge carries a
noisy "visual" pair feature (the predicate's prototype plus noise, std 0.75). One per-edge MLP
(``edge_mlp``, 64-64) is trained with the ``density_edge_loss`` method under ``edges`` (the
standard per-graph mean) and ``foreground`` (dnorm), same seeds, same data (data seed = seed),
Adam lr 3e-3, 600 steps of 16 graphs; read by triplet recall@20 without graph constraint on
held-out graphs of the same mixture, over the zero-shot triplets (the decision), the few-shot
ones (1-5 training occurrences) and all.

Differences from the paper: synthetic graphs with a Gaussian pair feature instead of images with
a detector's features; a per-edge MLP instead of IMP or Neural Motifs (no message passing, no
context); PredCls only (no object loss: the paper's loss is ``L_node + γ L_edge`` and dnorm also
changes the balance of the two); the loss normalised per graph (the official code, bknyaz/sgg
``main.py``, read for the loss, normalises over a batch of images); graph sizes, density and
the placement of rare compositions in the sparse graphs are genlab's construction (in Visual
Genome it is the paper's observation); the paper's weighted triplet recall is not computed;
frequency-bias models (Motifs with its bias term) are not compared. Pilot (before the freeze),
the ``edges`` arm alone on one data seed: its overall validation recall@20 and step time under
pair-feature noise 1.0 (0.62), 0.5 (0.96) and 0.75 (0.77), which set the noise to 0.75 (room
both ways); nothing was read of the ``foreground`` arm or of zero- or few-shot recall.

Measured Dec 3 2026 at full (4 seeds, 24 runs with the controls; 704 s wall on the loaded 2-core
machine, load average ~9): reproduced. Zero-shot recall@20 0.529 (standard) vs 0.639 (dnorm), gain
0.109 [0.062, 0.156]; all triplets 0.779 vs 0.814. Negative control (rare compositions in the
dense graphs): not reproduced, gain -0.015 [-0.028, -0.002] (zero-shot 0.875 vs 0.861). Positive
control (diverse graphs of 20 objects): reproduced, gain 0.108 [0.061, 0.154]. The gain is about
1.2-fold, not the paper's two-fold (whose zero-shot recalls on Visual Genome are a few percent).
The few-shot recall is NaN in every run: with 16,000 training edges over 320 triplets no test
triplet occurs only 1-5 times in training (a reported measure, not the decision's).
"""

from __future__ import annotations

import pandas as pd
from pydantic import Field

from genlab.claims import register
from genlab.claims.base import Case, Claim, Control, Decision, Ref
from genlab.claims.guards import Ceiling, Fit, Floor, Interval
from genlab.claims.measures import Final
from genlab.design import Design
from genlab.registry import Params
from genlab.report.claim_figures import ArmBars


class DensityLossConfig(Params):
    """The synthetic scene graphs, the edge classifier and its training."""

    noise: float = Field(0.75, ge=0)
    small_nodes: int = Field(5, ge=2)
    large_nodes: int = Field(14, ge=2)
    fg_edges: int = Field(8, ge=1)
    swap: bool = False
    n_train: int = Field(2000, ge=10)
    n_test: int = Field(500, ge=10)
    width: int = Field(64, ge=1)
    steps: int = Field(600, ge=1)
    batch: int = Field(16, ge=1)
    lr: float = Field(3e-3, gt=0)
    k: int = Field(20, ge=1, description="recall@k")
    seeds: int = Field(4, ge=2, description="each seed draws its own graphs, shared by both losses")


class DensityLoss(Claim):
    """Density-normalised edge loss improves zero-shot triplet recall (#94)."""

    id = "graphs.density_loss"
    papers = (
        Ref(
            94,
            "Knyazev et al. 2020",
            "Graph density-aware losses for novel compositions in scene graph generation",
        ),
    )
    statement = (
        "On relation_graphs (dense graphs of frequent compositions, sparse graphs of rare ones), "
        "an edge classifier trained with the density-normalised edge loss (dnorm) recalls more "
        "zero-shot triplets (recall@20 on held-out graphs) than the same classifier trained with "
        "the standard per-graph mean: gain >= 0.05, paired over seeds, 95% CI above 0. Not "
        "reproduced when the gain's CI lies wholly below 0.05."
    )
    Config = DensityLossConfig
    scope = "proxy"
    scope_note = (
        "Visual Genome / GQA scene graphs with IMP and Neural Motifs replaced by synthetic "
        "PredCls graphs (dense typical graphs, sparse diverse ones, a Gaussian pair feature) and "
        "a per-edge MLP; the loss normalised per graph; zero-shot recall@20 only"
    )
    budgets = {"smoke": {"steps": 40, "seeds": 2, "n_train": 200, "n_test": 100}, "full": {}}
    smoke_decides = False  # 40 steps: the classifier has not fit
    GAIN = 0.05  # fixed before running
    measures = {
        "zero": Final("test/main", "zero_shot_recall"),
        "few": Final("test/main", "few_shot_recall"),
        "all": Final("test/main", "recall"),
        "val": Final("val/main", "recall"),
    }
    fit = Fit("val", 0.6)
    floor = Floor("zero", 0.05)
    extra_guards = (Ceiling("zero", 0.97),)
    figure = ArmBars("zero", by="loss")
    controls = {
        "negative": Control(
            {"swap": True},
            "not reproduced",
            "the rare compositions live in the small dense graphs and the "
            "typical ones in the large sparse graphs: the standard loss already "
            "weighs the rare ones fully, and density normalisation only moves "
            "weight to the sparse typical graphs, so by the paper's logic it "
            "cannot raise zero-shot recall",
            budget="full",
            heavy=True,
        ),
        "positive": Control(
            {"large_nodes": 20},
            "reproduced",
            "sparser diverse graphs (20 objects, 8 of 380 pairs annotated): the "
            "standard loss weighs their annotated edges 19 times less than a "
            "typical graph's (9 times in the claim), so the gain must show",
            budget="full",
            heavy=True,
        ),
    }

    def arms(self, cfg: DensityLossConfig):
        task = {
            "name": "relation_graphs",
            "params": {
                "noise": cfg.noise,
                "small_nodes": cfg.small_nodes,
                "large_nodes": cfg.large_nodes,
                "fg_edges": cfg.fg_edges,
                "swap": cfg.swap,
                "n_train": cfg.n_train,
                "n_val": cfg.n_test,
                "n_test": cfg.n_test,
            },
        }
        base = {
            "task": task,
            "model": {"name": "edge_mlp", "params": {"width": cfg.width}},
            "optimizer": {"name": "adam", "lr": cfg.lr},
            "steps": cfg.steps,
            "batch_size": cfg.batch,
            "checkpoint_every": cfg.steps,
            "eval": {
                "every": cfg.steps,
                "log_points": 0,
                "probes": [{"name": "triplet_recall", "params": {"k": cfg.k}}],
            },
        }
        losses = {
            n: {"method": {"name": "density_edge_loss", "params": {"normalize": n}}}
            for n in ("edges", "foreground")
        }
        return Design(base, axes={"loss": losses}, seeds=cfg.seeds).expand()

    def synthetic(self, cfg: DensityLossConfig, arm: dict, case: Case) -> dict[str, float]:
        """Effect: zero-shot recall 0.40 (standard) vs 0.55 (dnorm); null: both 0.45; unfit: as
        effect but the standard loss's validation recall at 0.4."""
        dnorm = arm["loss"] == "foreground"
        zero = 0.45 if case == "null" else (0.55 if dnorm else 0.40)
        val = 0.4 if case == "unfit" and not dnorm else 0.8
        return {"zero": zero, "few": zero + 0.1, "all": 0.78, "val": val}

    def decide(self, cfg: DensityLossConfig, table: pd.DataFrame) -> Decision:
        wide = table.pivot_table(index="seed", columns="loss", values=list(self.measures))
        gain = (wide["zero"]["foreground"] - wide["zero"]["edges"]).dropna()
        iv = Interval.of(
            "dnorm - standard (zero-shot recall@k)", gain.tolist(), null=0.0, smallest=self.GAIN
        )
        mean = table.groupby("loss")[list(self.measures)].mean()
        stats = {
            f"{m}_{loss}": float(mean.loc[loss, m]) for loss in mean.index for m in mean.columns
        } | {"gain": float(gain.mean())}
        sentence = (
            f"Recall@{cfg.k} on held-out graphs over {len(gain)} seeds, standard vs "
            "dnorm: "
            + "; ".join(
                f"{m} {stats.get(f'{m}_edges', float('nan')):.3f} vs "
                f"{stats.get(f'{m}_foreground', float('nan')):.3f}"
                for m in ("zero", "few", "all", "val")
            )
            + f" (swap {cfg.swap}, large graphs {cfg.large_nodes} objects); "
            + iv.text()
            + "."
        )
        return Decision(iv.verdict(), stats, sentence, [iv])


register(DensityLoss())
