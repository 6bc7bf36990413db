"""``dg.colored_collapse`` (DomainBed; ColoredMNIST of Arjovsky et al.): ERM with training-domain
validation reaches about the shape-only accuracy on a held-out +90% or +80% environment (DomainBed:
71.7 and 72.9 under a 75% ceiling) and collapses below chance on -90% (10.0). The shape-only limit
is measured: ERM on grayscale images of the same split and labels. ``colored_digits`` (8x8, small
CNN) by default; with ``data_root``, ``colored_mnist`` at 28x28 with DomainBed's ``mnist_cnn``.
Differences from DomainBed: our step budgets and default hyper-parameters (not 5,000 steps and a
20-draw random search), sklearn's 1,797 digits unless MNIST is given.

No positive control: no configuration is known in which ERM must come out at the shape-only
limit on +90% / +80% and below chance on -90% (the default is inconclusive at both budgets), so
the claim cannot record "not reproduced" (no control licenses it; its judge's decision is kept).
"""

from __future__ import annotations

import pandas as pd
from pydantic import Field

from genlab.claims import register
from genlab.claims.base import Case, Claim, Control, Decision, Ref
from genlab.claims.dg.common import DOMAINBED, HELDOUT, SMALL_CNN, VAL, DGConfig, dg_spec
from genlab.claims.guards import Fit, Floor, Interval, combine
from genlab.design import Design
from genlab.report.claim_figures import ArmBars

ENVS = ("+90%", "+80%", "-90%")


class ColoredCollapseConfig(DGConfig):
    """ERM on colored and on grayscale images, each environment held out in turn."""

    color_flip: list[float] = Field(
        default_factory=lambda: [0.1, 0.2, 0.9],
        min_length=3,
        max_length=3,
        description="P(color != label) per env",
    )
    data_root: str | None = Field(None, description="MNIST IDX folder: run on colored_mnist")
    limit: int | None = Field(None, ge=30, description="colored_mnist: first N shuffled images")


class ColoredCollapse(Claim):
    """ERM reaches the shape-only limit on +90%/+80% held out and collapses on -90% (DomainBed)."""

    id = "dg.colored_collapse"
    papers = (
        DOMAINBED,
        Ref(None, "Arjovsky, Bottou, Gulrajani & Lopez-Paz 2019", "Invariant risk minimization"),
    )
    statement = (
        "ERM (DomainBed defaults, training-domain validation), each environment held out in turn, "
        "paired by seed with ERM on grayscale images of the same split: on +90% and on +80% the "
        "colored arm's held-out accuracy is within 0.05 of the grayscale (shape-only) arm's (95% "
        "CI of the paired difference above -0.05), and on -90% it is below chance (CI below 0.5)."
    )
    Config = ColoredCollapseConfig
    scope = "proxy"
    scope_note = (
        "DomainBed's ColoredMNIST (MNIST, 28x28, its MNIST_CNN, 5,000 steps, a 20-draw random "
        "search) built the same way on scikit-learn's 8x8 digits with a small CNN at 201 / 1,001 "
        "steps and default hyper-parameters (with data_root: ColoredMNIST and MNIST_CNN)"
    )
    budgets = {"smoke": {"steps": 201, "eval_every": 25}, "full": {"steps": 1001, "seeds": 5}}
    MARGIN, CHANCE = 0.05, 0.5  # fixed before running: DomainBed's ERM is ~2-3 points under shape
    measures = {"heldout": HELDOUT, "val": VAL}
    fit = Fit("val", 0.6)
    floor = Floor("heldout", 0.55)
    figure = ArmBars("heldout", by=("env", "input"), lines=(("chance", 0.5),))
    controls = {
        "negative": Control(
            {"color_flip": [0.5, 0.5, 0.5]},
            "not reproduced",
            "color carries nothing in any environment, so nothing collapses on -90%",
            slow=True,
        ),
    }  # no positive control (module docstring)

    def arms(self, cfg: ColoredCollapseConfig):
        task = {"name": "colored_digits", "params": {"color_flip": cfg.color_flip}}
        model = SMALL_CNN
        if cfg.data_root is not None:
            task = {
                "name": "colored_mnist",
                "params": {**task["params"], "limit": cfg.limit, "data_root": cfg.data_root},
            }
            model = {"name": "mnist_cnn"}
        axes = {
            "env": {e: {"task.params.test_envs": [i]} for i, e in enumerate(ENVS)},
            "input": {"color": {}, "gray": {"task.params.grayscale": True}},
        }
        return Design(dg_spec(task, model, cfg), axes, seeds=cfg.seeds).expand()

    def synthetic(self, cfg: ColoredCollapseConfig, arm: dict, case: Case) -> dict[str, float]:
        """Effect: color 0.02 under gray (0.67) on +90% and +80%, 0.1 on -90%; null: color 0.12
        under gray on +90% and +80%, 0.66 on -90% (no collapse); unfit: -90% color at val 0.5."""
        gray, color = 0.67, {"effect": (0.65, 0.1), "null": (0.55, 0.66), "unfit": (0.65, 0.1)}
        plus, minus = color[case]
        v = gray if arm["input"] == "gray" else minus if arm["env"] == "-90%" else plus
        unfit = case == "unfit" and (arm["env"], arm["input"]) == ("-90%", "color")
        return {"heldout": v, "val": 0.5 if unfit else 0.8}

    def decide(self, cfg: ColoredCollapseConfig, table: pd.DataFrame) -> Decision:
        wide = table.pivot_table(index="seed", columns=["env", "input"], values="heldout")
        ivs = [
            Interval.of(
                f"{e} color - gray",
                (wide[e, "color"] - wide[e, "gray"]).dropna(),
                null=-self.MARGIN,
                smallest=-self.MARGIN,
            )
            for e in ENVS[:2]
        ]
        ivs.append(
            Interval.of(
                "-90% color",
                wide["-90%", "color"].dropna(),
                null=self.CHANCE,
                smallest=self.CHANCE,
                above=False,
            )
        )
        mean = wide.mean()
        stats = {f"{e}_{i}": mean[e, i] for e, i in mean.index}
        parts = "; ".join(
            f"{e}: color {mean[e, 'color']:.3f}, gray {mean[e, 'gray']:.3f}" for e in ENVS
        )
        return Decision(
            combine([iv.verdict() for iv in ivs]),
            stats,
            f"Held-out accuracy (mean "
            f"over {len(wide)} seeds) {parts}; {'; '.join(iv.text() for iv in ivs)}; "
            f"{cfg.steps} steps.",
            ivs,
        )


register(ColoredCollapse())
