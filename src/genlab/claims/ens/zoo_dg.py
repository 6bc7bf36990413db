"""``ens.zoo_dg`` (Chen et al., ICML 2023, #48): a zoo of diverse encoders, combined with weights
fitted on the source domains, beats the zoo's best single member on held-out domains.

Per seed, the zoo is made of small encoders trained on other tasks than the target one, each with
its own inductive bias or knowledge: CNNs (16/32 channels) trained on ``digits_views`` for the
upright digit class, for the class of digits rotated by 0/90/180/270 degrees, for that rotation,
for parity and for >= 5; a CNN with instance norm on the upright class; an MLP on the upright
class; and an untrained CNN (random features). The target is ``rotated_digits`` (DomainBed's
RotatedMNIST on 8x8 digits; sources 0-45 degrees, held out 60 and 75). A post-hoc run on the
target (``steps = 0``: the untrained CNN itself, the random-feature member) carries the ``zoo_dg``
probe, which loads the trained members from the store, fits each member's linear probe on the
pooled source domains, estimates each member's diversity and correlation shift across the source
domains (``genlab.ensembles.zoo``), and mixes the members' probabilities with weights fitted by
EM on the source validation splits; it reports, per held-out domain, the combination's accuracy
and the accuracy of the member with the best source validation accuracy (never chosen on the
target), as any run's metrics.

Protocol differences from the paper: the zoo is 8 tiny encoders trained here on 1,000 8x8 digits,
not 35 public ImageNet-scale models (ResNets, ViTs, CLIP, ...); members are used through linear
probes on frozen features, not fine-tuned; the paper's integration algorithm (which selects and
weights helper models by their diversity- and correlation-shift profile) is replaced by the
catalogue's design, a mixture of the members' probe probabilities with weights fitted by EM on
the source validation splits (``em``; a uniform mixture and one probe on the concatenated
features are reported beside it); the shift estimates are simplified OoD-Bench estimators and are
reported, not used for the combination; one pair of held-out domains (60 and 75 degrees) instead
of DomainBed's leave-one-domain-out on PACS, VLCS, OfficeHome, TerraIncognita and DomainNet; no
autoencoder member. The thresholds (combination - best member CI above 0, mean >= 0.01) and the
primary combination (EM) were fixed before any run. The full budget trains every member 1,000
steps (600 left the parity CNN unfit: docs/ensembles.md). The negative control, added after the
first full run, is three seeds of one encoder; it is ``open`` (it gains too, see ``controls``),
so the claim's recorded verdict is ``inconclusive`` even though its predicate holds. No positive control: the claim's own design is the cheapest
configuration known to show the gain, so the claim cannot record "not reproduced": no control
licenses it (issue #30, Dec 3 2026: the audit found it can never record "not reproduced" at full;
no valid positive design is known, and the judge is unchanged). Under issue #30's rules the
identical-members control was no valid negative: it trained no run of its own (its members were the
claim's own class CNN, its host a ``steps = 0`` evaluation) and gained exactly 0 by arithmetic, so
it could not come out "reproduced"; it is withdrawn (Dec 3 2026, the lead's review), and the
seed-copies control, formerly ``negative_seeds``, is the claim's ``negative``.
"""

from __future__ import annotations

import math

import pandas as pd
from pydantic import Field, field_validator

from genlab.claims import register
from genlab.claims.arms import arms, by_seed
from genlab.claims.base import Case, Claim, Control, Decision, Ref
from genlab.claims.ens._common import run
from genlab.claims.guards import Fit, Floor, Interval, combine
from genlab.claims.measures import Derived, Final
from genlab.registry import Params
from genlab.report.claim_figures import ArmBars
from genlab.spec import parse_spec

ROT = [0.0, 90.0, 180.0, 270.0]
# name -> (model params, digits_views labelling, angles)
ZOO = {
    "class": ("cnn", {}, "class", [0.0]),
    "class_rot": ("cnn", {}, "class", ROT),
    "rotation": ("cnn", {}, "rotation", ROT),
    "parity": ("cnn", {}, "parity", ROT),
    "large": ("cnn", {}, "large", ROT),
    "class_in": ("cnn", {"norm": "in"}, "class", [0.0]),
    "class_mlp": ("mlp", {"width": 128, "depth": 2}, "class", [0.0]),
}
RANDOM = "random"
SEED_STEP = 100  # "class@k": the class member trained with seed s + 100 k (same data)


def base(name: str) -> tuple[str, int]:
    """``"class@2"`` -> ``("class", 2)``; ``"class"`` -> ``("class", 0)``."""
    head, _, k = name.partition("@")
    return head, int(k) if k.isdigit() else (-1 if k else 0)


def worst(metric: str):
    def fn(m: pd.DataFrame) -> float:
        rows = m[(m["metric"] == metric) & m["split"].str.startswith("test/")]
        if rows.empty:
            return math.nan
        return float(rows[rows["step"] == rows["step"].max()]["value"].min())

    return Derived(fn, f"the lowest held-out-domain {metric} at the end")


class ZooConfig(Params):
    """Zoo members, target domains, steps and seeds."""

    members: list[str] = Field(
        default_factory=lambda: [*ZOO, RANDOM],
        min_length=2,
        description=f"zoo members: {', '.join([*ZOO, RANDOM])}; NAME@K "
        "is NAME trained with another seed; a name given twice is the "
        "same model twice",
    )
    channels: list[int] = Field(default_factory=lambda: [16, 32], min_length=1)
    test_envs: list[int] = Field(
        default_factory=lambda: [4, 5],
        min_length=1,
        description="held-out rotated_digits domains (60, 75 deg)",
    )
    steps: int = Field(600, ge=1)
    lr: float = Field(3e-3, gt=0)
    seeds: int = Field(5, ge=3)

    @field_validator("members")
    @classmethod
    def _members(cls, v: list[str]) -> list[str]:
        bad = sorted(m for m in v if m != RANDOM and (base(m)[0] not in ZOO or base(m)[1] < 0))
        if bad:
            raise ValueError(
                f"unknown members {bad}; allowed: {', '.join([*ZOO, RANDOM])}, "
                "each optionally with @K (K >= 0: another seed)"
            )
        return v


class ZooDG(Claim):
    """A source-fitted combination of a diverse zoo beats its best single member (#48)."""

    id = "ens.zoo_dg"
    papers = (
        Ref(
            48,
            "Chen, Hu, Zhou, Li & Ma 2023",
            "Explore and exploit the diverse knowledge in model zoo for domain generalization",
        ),
    )
    statement = (
        "Paired over >= 3 seeds on rotated_digits (source domains 0-45 degrees, held-out 60 and "
        "75): the mixture of a zoo of 8 diverse small encoders (linear probes on frozen "
        "features, mixture weights fitted by EM on source validation) has a higher mean "
        "held-out-domain accuracy than the member with the best source validation accuracy: CI "
        "of the difference above 0 and mean >= 0.01. Not reproduced when the CI lies wholly "
        "below 0.01."
    )
    Config = ZooConfig
    scope = "proxy"
    scope_note = (
        "The paper exploits 35 public ImageNet-scale models on DomainBed (PACS, VLCS, "
        "OfficeHome, TerraIncognita, DomainNet) with its own integration algorithm; here "
        "8 tiny encoders trained on 8x8 digits, combined by an EM mixture of their linear "
        "probes on RotatedMNIST built from 8x8 digits."
    )
    budgets = {"smoke": {"seeds": 3, "steps": 300}, "full": {"steps": 1000}}
    measures = {
        "train": Final("train/main"),
        "em": Final("test/*", "zoo_em"),
        "best": Final("test/*", "zoo_best"),
        "uniform": Final("test/*", "zoo_uniform"),
        "concat": Final("test/*", "zoo_concat"),
        "oracle": Final("test/*", "zoo_oracle"),
        "gain": Final("test/*", "zoo_gain"),
        "worst_em": worst("zoo_em"),
        "worst_best": worst("zoo_best"),
        "n_used": Final("model", "n_used"),
    }
    fit = Fit("train", 0.9, where={"arm": tuple(ZOO)})
    floor = Floor("best", 0.2)  # 10 classes: chance 0.1
    figure = ArmBars("gain", by="arm")
    controls = {
        "negative": Control(
            {"members": ["class", "class@1", "class@2"]},
            "not reproduced",
            "three seeds of one encoder (same architecture, "
            "task and data): one kind of knowledge, only initialisation "
            "noise; the paper credits the diversity of the zoo's knowledge "
            "and inductive biases",
            slow=True,
            open="measured reproduced at full, not 'not reproduced': three "
            "seeds of the upright-class CNN (5 seeds, 101 s with the "
            "claim's class members reused) gain 0.040 [0.013, 0.066] over "
            "their member best on source validation (mixture 0.385 vs "
            "0.345; the zoo of 8: 0.068 [0.007, 0.128]); smoke 0.016 "
            "[-0.005, 0.037], inconclusive. Mixing copies of one encoder "
            "already beats the member chosen on the sources, so the design "
            "does not isolate the diversity of the zoo's knowledge",
        ),
    }
    MIN_GAIN = 0.01  # fixed before running

    def arms(self, cfg: ZooConfig):
        target = {"test_envs": cfg.test_envs}
        cnn = {"name": "cnn", "params": {"channels": cfg.channels}}
        rows = []
        for s in range(cfg.seeds):
            ids = {}
            for name in dict.fromkeys(m for m in cfg.members if m != RANDOM):
                arch, extra, label, angles = ZOO[base(name)[0]]
                model = (
                    {"name": "cnn", "params": {"channels": cfg.channels, **extra}}
                    if arch == "cnn"
                    else {"name": arch, "params": extra}
                )
                d = run(
                    "digits_views",
                    {"label": label, "angles": angles},
                    model,
                    cfg.steps,
                    cfg.lr,
                    seed=s + SEED_STEP * base(name)[1],
                    data_seed=s,
                )
                ids[name] = parse_spec(d).run_id
                rows.append(({"arm": base(name)[0], "copy": base(name)[1]}, d))
            probe = {
                "name": "zoo_dg",
                "params": {
                    "runs": [ids[m] for m in cfg.members if m != RANDOM],
                    "include_self": RANDOM in cfg.members,
                },
            }
            host = run(
                "rotated_digits",
                target,
                cnn,
                0,
                cfg.lr,
                32,
                ["accuracy", probe],
                seed=s,
                data_seed=s,
            )
            rows.append(({"arm": "zoo", "copy": 0}, host))
        return arms(rows)

    def synthetic(self, cfg: ZooConfig, arm: dict, case: Case) -> dict[str, float]:
        """Effect: the mixture 0.55 against its best member on source validation 0.50; null: the
        mixture at 0.50; unfit: the zoo's first member trains to 0.5."""
        out = dict.fromkeys(self.measures, float("nan"))
        if arm["arm"] != "zoo":
            unfit = case == "unfit" and arm["arm"] == base(cfg.members[0])[0]
            return out | {"train": 0.5 if unfit else 0.97}
        em = 0.50 if case == "null" else 0.55
        return out | {
            "em": em,
            "best": 0.50,
            "gain": em - 0.50,
            "uniform": 0.5,
            "concat": 0.5,
            "oracle": 0.6,
            "worst_em": em - 0.2,
            "worst_best": 0.3,
            "n_used": 3.0,
        }

    def decide(self, cfg: ZooConfig, table: pd.DataFrame) -> Decision:
        gain = by_seed(table, "zoo", "gain")
        iv = Interval.of("combination - best member", gain.tolist(), null=0, smallest=self.MIN_GAIN)
        keys = ("em", "best", "uniform", "concat", "oracle", "worst_em", "worst_best", "n_used")
        stats = {k: by_seed(table, "zoo", k).mean() for k in keys} | {"gain": gain.mean()}
        sentence = (
            f"Held-out-domain accuracy (mean of {len(cfg.test_envs)} domains; worst in brackets) "
            f"on rotated_digits, zoo of {len(cfg.members)} ({', '.join(cfg.members)}): EM "
            f"mixture {stats['em']:.3f} ({stats['worst_em']:.3f}), best member on source "
            f"validation {stats['best']:.3f} ({stats['worst_best']:.3f}), uniform mixture "
            f"{stats['uniform']:.3f}, concatenated features {stats['concat']:.3f}, best member "
            f"on the target (oracle) {stats['oracle']:.3f}; {stats['n_used']:.1f} members with "
            f"weight >= 0.05 ({len(gain)} seeds): {iv.text()}."
        )
        return Decision(combine([iv.verdict()]), stats, sentence, [iv])


register(ZooDG())
