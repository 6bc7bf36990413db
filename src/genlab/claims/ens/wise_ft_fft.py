"""``ens.wise_ft_fft`` (Lin et al., ICLR 2024, #16): the midpoint of a pre-trained and a fine-tuned
model beats both out of distribution, by getting right examples that both ends get wrong.

A is trained on data whose spurious features ``pre_features`` follow the class (p = 0.9); B is
fine-tuned from A on data where the *other* features ``ft_features`` do; B_bang is B fine-tuned
with label smoothing and Mixup (BANG). The ``wise`` probe of each fine-tuned run interpolates it
with A (lambda = 0.5, fixed before running) on the OOD split, where every spurious feature is
random. The method is the paper's (WiSE-FT's linear weight path; BANG = fine-tuning with Mixup
and label smoothing), not a reconstruction; BANG's values (smoothing 0.1, Mixup alpha 0.2) are
the usual ones, the paper's are not available offline.

Differences from the paper (no official code was found: ``search`` over code, issues and pages
finds the paper, its reviews and unrelated MultiColorMNIST code only):
- design: the paper shows the FalseFalseTrue cases and BANG on CLIP (zero-shot model -> ImageNet
  fine-tune, OOD on ImageNet variants), and the value of diverse spurious features on
  MultiColorMNIST with ensembles of two models each trained on its own spurious features; here
  both are asked of one pair on one small task, where A is not pre-trained at scale but trained
  on coloured data (the catalogue's reading trains A on grayscale, ``pre_features = []``);
- data: MultiColorMNIST becomes 12x12 scikit-learn digits with 8 2x2 colour patches read by a
  one-hidden-layer MLP (or the paper's Gaussian model, ``task = "gaussian_spurious"``, with its
  task defaults: 5 classes, one 16-d invariant feature of norm 1, noise 1);
- metric and aggregation: one lambda (0.5) instead of the paper's sweep, the mean over 5 paired
  seeds (full budget) instead of single runs (a lambda sweep, in docs/ensembles.md, shows that
  the fixed lambda is not what hides an interior maximum);
- the premise: fine-tuning B on data where A's spurious features are random unlearns them, so B
  is A with less spurious reliance and more training on the digit; the paper's premise (two ends
  of comparable OOD accuracy relying on different spurious features) is not put in place by this
  design.

No positive control: no setting reached ``reproduced`` (twelve tried), so the claim cannot record
"not reproduced": no control licenses it, and ``Claim.recorded`` records the decision's "not
reproduced" as inconclusive. Measured history (the settings tried, the reverse regime closest to
WiSE-FT): docs/ensembles.md (ens.wise_ft_fft).

Judge change (Dec 3 2026, issue #30; the recorded results were known): the audit found that the
claim can never record "not reproduced" at full, which no judge change can fix without a positive
control; what the judge did wrong was to let any unfit arm void a refutation. A refutation of the
midpoint or FalseFalseTrue part now reads A and B alone (``Decision.reads``), so a BANG run that
did not fit no longer turns it inconclusive; thresholds, arms and seeds are unchanged.
"""

from __future__ import annotations

from typing import Literal

import pandas as pd
from pydantic import Field

from genlab.claims import register
from genlab.claims.arms import arms, by_seed
from genlab.claims.base import Case, Claim, Control, Decision, Ref
from genlab.claims.ens._common import from_run, run
from genlab.claims.guards import Fit, Floor, Interval, combine
from genlab.claims.measures import Final
from genlab.registry import Params
from genlab.report.claim_figures import ArmBars
from genlab.spec import parse_spec

OOD, LAM = "test/ood", 0.5
MLP = {"name": "mlp", "params": {"width": 256, "depth": 1}}
TASKS = {
    "multicolor_digits": ("n_patches", {"train_size": 1000}, MLP),
    "gaussian_spurious": (
        "n_spurious",
        {"n_train": 2000, "n_test": 2000},
        {"name": "mlp", "params": {"width": 128, "depth": 1}},
    ),
}
FLOORS = {"multicolor_digits": 0.2, "gaussian_spurious": 0.4}  # twice chance (10 and 5 classes)


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
    papers = (
        Ref(
            16,
            "Lin, Tan, Hao, Wong, Dong, Zhang, Yang & Zhang 2024",
            "Spurious feature diversification improves out-of-distribution generalization",
        ),
    )
    statement = (
        "Over >= 3 seeds, at lambda = 0.5 the interpolation of A and B has a higher OOD accuracy "
        "than the better end (paired CI above 0, mean >= 0.01); the share of OOD examples both "
        "ends get wrong and the midpoint gets right has its CI above 1%; and BANG's midpoint is "
        "not worse than WiSE-FT's (CI of the difference above -0.01, mean >= 0)."
    )
    Config = WiseConfig
    scope = "proxy"
    scope_note = (
        "The paper interpolates CLIP with its ImageNet fine-tuning and ensembles models "
        "on MultiColorMNIST; here a one-hidden-layer MLP on 12x12 digits with 8 colour "
        "patches, A trained on patches 0-3 and B fine-tuned from it on patches 4-7."
    )
    budgets = {"smoke": {"pre_steps": 300, "ft_steps": 150, "seeds": 3}, "full": {}}
    measures = {
        "train": Final("train/main"),
        "ood": Final(OOD),
        "ood_pre": Final(OOD, "wise_acc@0"),
        "ood_ft": Final(OOD, "wise_acc@1"),
        "ood_mid": Final(OOD, f"wise_acc@{LAM:g}"),
        "fft": Final(OOD, f"fft@{LAM:g}"),
    }
    fit = Fit("train", 0.9)
    floor = Floor("ood", FLOORS["multicolor_digits"])  # the default task (the rest: guards)
    figure = ArmBars("ood_mid", by="arm")
    controls = {
        "negative": Control(
            {"ft_features": [0, 1, 2, 3]},
            "not reproduced",
            "B fine-tuned on "
            "the same spurious features as A: no diversity to average, so no "
            "FalseFalseTrue examples and no midpoint gain (the paper's mechanism)",
            slow=True,
        ),
    }

    def guards(self, cfg: WiseConfig):
        """The floor is twice chance: 0.2 for the 10 digit classes, 0.4 for the Gaussian model's 5
        (0.2 would be chance itself there)."""
        level = FLOORS[cfg.task]
        return [self.fit, Floor("ood", level), *self.extra_guards]

    def arms(self, cfg: WiseConfig):
        size_key, sizes, model = TASKS[cfg.task]

        def task(feats: list[int]) -> dict:
            return {size_key: cfg.n_features, "p_train": cfg.p_train, "correlated": feats, **sizes}

        pre = [
            run(cfg.task, task(cfg.pre_features), model, cfg.pre_steps, cfg.lr, seed=s, data_seed=s)
            for s in range(cfg.seeds)
        ]
        probes = ["accuracy", {"name": "wise", "params": {"lambdas": [LAM]}}]
        fts = {
            f"{m}:{s}": run(
                cfg.task,
                task(cfg.ft_features),
                from_run(parse_spec(pre[s]).run_id),
                cfg.ft_steps,
                cfg.ft_lr,
                probes=probes,
                method=m,
                seed=s,
                data_seed=s,
            )
            for m in ("erm", "bang")
            for s in range(cfg.seeds)
        }
        rows = [({"arm": "A"}, p) for p in pre]
        rows += [({"arm": "B" if k.startswith("erm") else "B_bang"}, v) for k, v in fts.items()]
        return arms(rows)

    def synthetic(self, cfg: WiseConfig, arm: dict, case: Case) -> dict[str, float]:
        """OOD accuracy A 0.60, B 0.70; effect: midpoint 0.76 (BANG's 0.775), FalseFalseTrue share
        0.055; null: both midpoints at the better end, no FalseFalseTrue; unfit: B trains to 0.5."""
        nan = float("nan")
        if arm["arm"] == "A":
            return {
                "train": 0.95,
                "ood": 0.60,
                "ood_pre": nan,
                "ood_ft": nan,
                "ood_mid": nan,
                "fft": nan,
            }
        null = case == "null"
        mid = 0.70 if null else (0.775 if arm["arm"] == "B_bang" else 0.76)
        return {
            "train": 0.5 if case == "unfit" else 0.95,
            "ood": 0.70,
            "ood_pre": 0.60,
            "ood_ft": 0.70,
            "ood_mid": mid,
            "fft": 0.0 if null else 0.055,
        }

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
        verdicts = [iv.verdict() for iv in ivs]
        verdict = combine(verdicts)
        # a refutation of the midpoint or FalseFalseTrue part reads A and B alone (B's wise probe
        # holds both ends and the midpoint): an unfit BANG run does not make it inconclusive
        reads = (
            [{"arm": ["A", "B"]}]
            if verdict == "not reproduced" and "not reproduced" in verdicts[:2]
            else None
        )
        return Decision(verdict, stats, sentence, ivs, reads)


register(WiseFTFFT())
