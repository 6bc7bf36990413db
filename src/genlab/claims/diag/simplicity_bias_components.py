"""``diag.simplicity_bias_components`` (Teney et al., "Neural Redshift", CVPR 2024, #85): random
ReLU MLPs compute simple functions, but the simplicity comes from components, not from neural
networks as such — a tanh network at a large weight scale computes complex functions, and
residual connections with layer norm make it simpler again.

Each run is one random network (model ``random_mlp``, seed = the draw) scored at initialisation
(step 0) on the 32x32 grid of ``[-1, 1]^2`` (task ``plane_grid``; probe ``function_complexity``,
``inputs="grid"``: power-weighted mean radial frequency of the Hann-windowed map, the paper
weights by amplitude without a window — see ``probes/complexity.py``); the probe also scores an
i.i.d. Gaussian map on the same grid, the reference of a complex function. Each arm has its own
seeds. No official code was found in the index searched; the measures follow the paper's text.
Negative control (the paper's finding that tanh's complexity grows with the weight scale): at
scale 1 a tanh network is no more complex than a ReLU one. Positive control (issue #30; it was
the claim's own smoke configuration): weight scale 8, where tanh's complexity grows; measured
reproduced (30 draws per arm: ReLU / noise 0.112, P(tanh > ReLU) 1.000, P(tanh > tanh+res+LN)
0.863 [0.763, 0.944]).
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import pandas as pd
from pydantic import Field
from scipy.stats import rankdata

from genlab.claims import register
from genlab.claims.base import Case, Claim, Control, Decision, Ref
from genlab.claims.diag._common import at_step0, bootstrap_interval, unit
from genlab.claims.guards import Fit, NotApplicable, combine
from genlab.claims.measures import Derived
from genlab.design import Design
from genlab.registry import Params
from genlab.report.claim_figures import ArmBars

FOURIER = at_step0("model", "fourier_complexity")


def auc(x: np.ndarray, y: np.ndarray) -> float:
    """P(X > Y) + P(X = Y) / 2, the Mann-Whitney common-language effect size."""
    r = rankdata(np.concatenate([x, y]))
    return float((r[: len(x)].sum() - len(x) * (len(x) + 1) / 2) / (len(x) * len(y)))


class SimplicityConfig(Params):
    """Three arms of random MLPs: ReLU, the contrast activation, and the contrast activation with
    residual connections and layer norm."""

    contrast_activation: Literal["tanh", "gelu", "sin", "square"] = "tanh"
    depth: int = Field(4, ge=1, le=16)
    width: int = Field(64, ge=1, le=1024)
    scale: float = Field(4.0, gt=0, le=32, description="weight scale (std * sqrt(fan_in))")
    samples: int = Field(200, ge=5, le=2000, description="random networks per arm")
    grid: int = Field(32, ge=8, le=128)


class SimplicityBiasComponents(Claim):
    """Simplicity bias comes from ReLUs, residuals and layer norm (Teney et al., #85)."""

    id = "diag.simplicity_bias_components"
    papers = (
        Ref(
            85,
            "Teney, Nicolicioiu, Hartmann & Abbasnejad 2024",
            "Neural redshift: random networks are not random functions",
        ),
    )
    statement = (
        "Random MLPs (depth 4, width 64, weights N(0, 4^2/fan_in)) on the 32x32 grid of "
        "[-1,1]^2, each arm its own draws: (1) median Fourier complexity of ReLU networks / "
        "median of i.i.d. noise maps <= 0.5 (bootstrap CI below 1); (2) P(tanh > ReLU) >= 0.7 "
        "with its bootstrap CI above 0.5; (3) P(tanh > tanh with residuals and layer norm) >= 0.7, "
        "CI above 0.5."
    )
    Config = SimplicityConfig
    scope = "proxy"
    scope_note = (
        "the paper's setting (random MLPs scored on a grid of [-1, 1]^2 by mean Fourier "
        "frequency, 200 draws) with a Hann-windowed, power-weighted frequency in place of the "
        "paper's amplitude-weighted one, on a 32x32 grid (the paper: 64x64)"
    )
    budgets = {"smoke": {"samples": 30}, "full": {}}
    MAX_RATIO, MIN_AUC = 0.5, 0.7  # fixed before running
    measures = {
        "fourier": FOURIER,
        "noise": at_step0("model", "noise_fourier_complexity"),
        "alive": Derived(
            lambda m: float(FOURIER(m) > 0),
            "1 when the network's map is not constant (a dead network computes nothing)",
        ),
    }
    fit = Fit("alive", 0.9)  # most networks of an arm compute a non-constant function
    floor = NotApplicable("floor", "no training; the noise maps are the measured reference")
    figure = ArmBars("fourier", by="arch")
    controls = {
        "negative": Control(
            {"scale": 1.0},
            "not reproduced",
            "tanh at weight scale 1 is as "
            "simple as ReLU (the paper: its complexity grows with the scale)",
            slow=True,
        ),
        "positive": Control(
            {"scale": 8.0},
            "reproduced",
            "weight scale 8: the paper finds "
            "tanh's complexity growing with the scale, so it sits further above "
            "ReLU's, and above tanh with residuals and layer norm",
            slow=True,
        ),
    }

    def arms(self, cfg: SimplicityConfig):
        act = cfg.contrast_activation
        base = {
            "task": {"name": "plane_grid", "params": {"grid": cfg.grid}},
            "model": {
                "name": "random_mlp",
                "params": {"depth": cfg.depth, "width": cfg.width, "scale": cfg.scale},
            },
            "optimizer": {"name": "sgd", "lr": 1e-3},
            "steps": 1,
            "checkpoint_every": 1,
            "eval": {
                "every": 1,
                "log_points": 0,
                "probes": [{"name": "function_complexity", "params": {"inputs": "grid"}}],
            },
        }
        m = "model.params"
        archs = {
            "relu": {f"{m}.activation": "relu"},
            act: {f"{m}.activation": act},
            f"{act}+res+ln": {
                f"{m}.activation": act,
                f"{m}.residual": True,
                f"{m}.layer_norm": True,
            },
        }
        n = cfg.samples
        designs = [
            Design(base, axes={"arch": {k: v}}, seeds=range(i * n, (i + 1) * n))
            for i, (k, v) in enumerate(archs.items())
        ]
        return sum(designs[1:], designs[0]).expand()

    def synthetic(self, cfg: SimplicityConfig, arm: dict, case: Case) -> dict[str, float]:
        """Effect: the full run's medians (ReLU 0.027, the activation 0.055, with residuals and
        layer norm 0.039; noise 0.54), spread per draw; null: every arm at ReLU's; unfit: the
        networks of the residual arm are dead."""
        level = {"relu": 0.027, cfg.contrast_activation: 0.055}.get(arm["arch"], 0.039)
        f = (0.027 if case == "null" else level) * (1 + 0.2 * (unit(arm, "draw") - 0.5))
        dead = case == "unfit" and arm["arch"] not in ("relu", cfg.contrast_activation)
        return {"fourier": 0.0 if dead else f, "noise": 0.54, "alive": 0.0 if dead else 1.0}

    def decide(self, cfg: SimplicityConfig, table: pd.DataFrame) -> Decision:
        act = cfg.contrast_activation
        t = table[table["status"] == "done"].reset_index(drop=True)
        f, arch = t["fourier"].to_numpy(float), t["arch"].to_numpy()
        noise = float(t["noise"].median())

        def two(a: str, b: str):
            return lambda i: auc(f[i][arch[i] == a], f[i][arch[i] == b])

        relu = np.flatnonzero(arch == "relu")
        ratio = bootstrap_interval(
            "median ReLU / median noise",
            lambda i: np.median(f[relu][i]) / noise,
            len(relu),
            above=False,
            null=1.0,
            smallest=self.MAX_RATIO,
        )
        ivs = [ratio] + [
            bootstrap_interval(
                f"P({a} > {b})", two(a, b), len(t), groups=arch, null=0.5, smallest=self.MIN_AUC
            )
            for a, b in ((act, "relu"), (act, f"{act}+res+ln"))
        ]
        med = t.groupby("arch")["fourier"].median()
        stats = {
            "median_noise": noise,
            **{f"median_{k}": v for k, v in med.items()},
            "ratio_relu_noise": ratio.estimate,
            "auc_activation": ivs[1].estimate,
            "auc_components": ivs[2].estimate,
        }
        sentence = "; ".join(iv.text() for iv in ivs) + f" (Fourier complexity, grid {cfg.grid})."
        return Decision(combine([iv.verdict() for iv in ivs]), stats, sentence, ivs)


register(SimplicityBiasComponents())
