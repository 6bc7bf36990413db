"""``ens.wise_ft_fft`` (Lin et al., ICLR 2024, #16): the midpoint of a pre-trained and a fine-tuned
model beats both out of distribution, by getting right examples that both ends get wrong.

A is trained on data whose spurious features ``pre_features`` follow the class (p = 0.9); B is
fine-tuned from A on data where the *other* features ``ft_features`` do; B_bang is B fine-tuned
with label smoothing and Mixup (BANG). The ``wise`` probe of each fine-tuned run interpolates it
with A (lambda = 0.5, fixed before running) on the OOD split, where every spurious feature is
random. Differences from the paper: MultiColorMNIST becomes 12x12 scikit-learn digits with 8
colour patches read by a one-hidden-layer MLP (or the paper's Gaussian model, ``task =
"gaussian_spurious"``), A is trained on coloured data rather than pre-trained at scale, one lambda
instead of the paper's sweep. No positive control: on the Gaussian model (10 spurious features,
disjoint sets) at smoke budget the fine-tuned ends did not fit (train 0.86) and the midpoint did
not beat them (-0.003), so no setting is known yet where ``reproduced`` is reached at this scale.
"""

from __future__ import annotations

from typing import Literal

import pandas as pd
from pydantic import Field

from genlab.claims import register
from genlab.claims.base import Claim, Control, Decision, Ref
from genlab.claims.ens._common import arms, by_seed, from_run, run
from genlab.claims.guards import Fit, Floor, Interval, combine
from genlab.claims.measures import Final
from genlab.registry import Params
from genlab.report.claim_figures import ArmBars
from genlab.spec import parse_spec

OOD, LAM = "test/ood", 0.5
MLP = {"name": "mlp", "params": {"width": 256, "depth": 1}}
TASKS = {"multicolor_digits": ("n_patches", {"train_size": 1000}, MLP),
         "gaussian_spurious": ("n_spurious", {"n_train": 2000, "n_test": 2000},
                               {"name": "mlp", "params": {"width": 128, "depth": 1}})}  # fmt: skip


class WiseConfig(Params):
    """Task, spurious features of each end, budgets and seeds."""

    task: Literal["multicolor_digits", "gaussian_spurious"] = "multicolor_digits"
    n_features: int = Field(8, ge=2)
    pre_features: list[int] = [0, 1, 2, 3]
    ft_features: list[int] = [4, 5, 6, 7]
    p_train: float = Field(0.9, ge=0, le=1)
    pre_steps: int = Field(600, ge=1)
    ft_steps: int = Field(300, ge=1)
    lr: float = Field(3e-3, gt=0)
    ft_lr: float = Field(3e-3, gt=0)
    seeds: int = Field(5, ge=3)


class WiseFTFFT(Claim):
    """WiSE-FT's midpoint beats both ends OOD, with many FalseFalseTrue examples; BANG >= it."""

    id = "ens.wise_ft_fft"
    papers = (Ref(16, "Lin, Tan, Hao, Wong, Dong, Zhang, Yang & Zhang 2024", "Spurious feature "
                  "diversification improves out-of-distribution generalization"),)  # fmt: skip
    statement = (
        "Over >= 3 seeds, at lambda = 0.5 the interpolation of A and B has a higher OOD accuracy "
        "than the better end (paired CI above 0, mean >= 0.01); the share of OOD examples both "
        "ends get wrong and the midpoint gets right has its CI above 1%; and BANG's midpoint is "
        "not worse than WiSE-FT's (CI of the difference above -0.01, mean >= 0)."
    )
    Config = WiseConfig
    budgets = {"smoke": {"pre_steps": 300, "ft_steps": 150, "seeds": 3}, "full": {}}
    measures = {
        "train": Final("train/main"), "ood": Final(OOD),
        "ood_pre": Final(OOD, "wise_acc@0"), "ood_ft": Final(OOD, "wise_acc@1"),
        "ood_mid": Final(OOD, f"wise_acc@{LAM:g}"), "fft": Final(OOD, f"fft@{LAM:g}"),
    }  # fmt: skip
    fit = Fit("train", 0.9)
    floor = Floor("ood", 0.2)  # 10 (or 5) classes: chance 0.1 (0.2)
    figure = ArmBars("ood_mid", by="arm")
    controls = {
        "negative": Control({"ft_features": [0, 1, 2, 3]}, "not reproduced", "B fine-tuned on "
                            "the same spurious features as A: no diversity to average, so no "
                            "FalseFalseTrue examples and no midpoint gain (the paper's mechanism)",
                            slow=True),
    }  # fmt: skip

    def arms(self, cfg: WiseConfig):
        size_key, sizes, model = TASKS[cfg.task]

        def task(feats: list[int]) -> dict:
            return {size_key: cfg.n_features, "p_train": cfg.p_train, "correlated": feats, **sizes}

        pre = [run(cfg.task, task(cfg.pre_features), model, cfg.pre_steps, cfg.lr, seed=s,
                   data_seed=s) for s in range(cfg.seeds)]  # fmt: skip
        probes = ["accuracy", {"name": "wise", "params": {"lambdas": [LAM]}}]
        fts = {f"{m}:{s}": run(cfg.task, task(cfg.ft_features),
                               from_run(parse_spec(pre[s]).run_id), cfg.ft_steps, cfg.ft_lr,
                               probes=probes, method=m, seed=s, data_seed=s)
               for m in ("erm", "bang") for s in range(cfg.seeds)}  # fmt: skip
        rows = [({"arm": "A"}, p) for p in pre]
        rows += [({"arm": "B" if k.startswith("erm") else "B_bang"}, v) for k, v in fts.items()]
        return arms(rows)

    def decide(self, cfg: WiseConfig, table: pd.DataFrame) -> Decision:
        mid, pre, ft = (by_seed(table, "B", m) for m in ("ood_mid", "ood_pre", "ood_ft"))
        gain = mid - pd.concat([pre, ft], axis=1).max(axis=1)
        fft = by_seed(table, "B", "fft")
        bang = by_seed(table, "B_bang", "ood_mid") - mid
        ivs = [
            Interval.of("midpoint - better end", gain.tolist(), null=0, smallest=0.01),
            Interval.of("FalseFalseTrue share", fft.tolist(), null=0.01, smallest=0.01),
            Interval.of("BANG - WiSE-FT", bang.tolist(), null=-0.01, smallest=0.0),
        ]
        stats = {
            "ood_A": pre.mean(),
            "ood_B": ft.mean(),
            "ood_mid": mid.mean(),
            "ood_bang_mid": (bang + mid).mean(),
            "gain": gain.mean(),
            "fft": fft.mean(),
        }
        sentence = (
            f"OOD accuracy A {stats['ood_A']:.3f}, B {stats['ood_B']:.3f}, midpoint "
            f"{stats['ood_mid']:.3f}, BANG midpoint {stats['ood_bang_mid']:.3f} on "
            f"{cfg.task} ({len(gain)} seeds): " + "; ".join(iv.text() for iv in ivs) + "."
        )
        return Decision(combine([iv.verdict() for iv in ivs]), stats, sentence, ivs)


register(WiseFTFFT())
