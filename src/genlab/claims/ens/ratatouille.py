"""``ens.ratatouille`` (Rame et al., ICML 2023, #102): averaging target fine-tunings that start
from fine-tunings on diverse auxiliary tasks (model ratatouille) beats averaging fine-tunings that
all start from the foundation model (a model soup), which beats a single fine-tuning (ERM), on
held-out domains.

Per seed, ``genlab.weights.ratatouille.ratatouille_plan`` gives the staged runs, with ids known
before anything trains: a 16/32-channel CNN (the "foundation") pre-trained on upright digit
classes (``digits_views``); linear probes on its frozen features for the target and each
auxiliary task; one fine-tuning per auxiliary task of ``digits_views`` on images rotated by
0/90/180/270 degrees (``rotation``, ``parity``, ``large``), each from the foundation with its own
probe's head; then target fine-tunings on ``rotated_digits`` (DomainBed's RotatedMNIST on 8x8
digits, domains 0-45 degrees for training, 60 and 75 held out), all with the target probe's head:
the *soup* members start from the foundation, one per learning rate; the *ratatouille* members
start from each auxiliary fine-tuning (the i-th with the i-th learning rate). Two post-hoc runs
(``model.name = "soup"``, ``steps = 0``: the engine loads the members' checkpoints from the store,
checks that their lineages meet, averages the weights uniformly, BatchNorm statistics included,
and evaluates the average on every domain like any run) give the soup and the ratatouille. ERM is
the soup member with the best in-distribution (training-domain) validation accuracy.

Protocol differences from the paper and its code (``facebookresearch/ModelRatatouille``, DiWA's
codebase on DomainBed): the foundation is a small CNN pre-trained on 1,000 upright 8x8 digits,
not an ImageNet ResNet-50; the auxiliary tasks are other labellings of digit images (rotation,
parity, >= 5), not the other DomainBed datasets, and they share the foundation's image source
(the pre-training and target images are drawn from the same 1,797 scikit-learn digits, so the
foundation has seen the target's held-out digits upright, unrotated); three auxiliary and three
soup members instead of about twenty; the members' hyper-parameters differ by learning rate only
(the paper samples DomainBed's random search: learning rate, dropout, weight decay, batch size);
BatchNorm statistics are averaged (DomainBed's ResNet keeps them frozen); one pair of held-out
domains (60 and 75 degrees) instead of every leave-one-domain-out split; uniform averages only
(no greedy selection); ERM is one fine-tuning chosen on training-domain validation, not
DomainBed's averaged ERM. The thresholds (ratatouille - soup CI above 0 with mean >= 0.005; soup -
ERM CI above -0.01 with mean >= 0) were fixed before any run. The one-task control is ``open``
(see ``controls``; measured inconclusive, not "not reproduced"): it does not isolate the diversity
of the auxiliary tasks, and while it stands the claim cannot record "reproduced" at either budget.
No positive control: no setting is known at this scale where ``reproduced`` is reached, so the
claim cannot record "not reproduced" either (no control licenses it).

Judge change (Dec 3 2026, issue #30; the recorded results were known): the audit found that the
claim can never record "not reproduced" at full, which only a positive control could fix; the
judge now lets a refutation by "soup - ERM" alone read the arms that part rests on (foundation,
its probe, soup members, soup: ``Decision.reads``), so an unfit auxiliary fine-tuning no longer
voids it. The smoke budget is a check that the code runs (``smoke_decides``): at 3 seeds a null
"ratatouille - soup" reaches past 0.005 and the auxiliary fine-tunings do not fit in 150 steps.
Thresholds, arms and seeds are unchanged.
"""

from __future__ import annotations

import math

import pandas as pd
from pydantic import Field, field_validator

from genlab.claims import register
from genlab.claims.arms import by_seed
from genlab.claims.base import Case, Claim, Control, Decision, Ref
from genlab.claims.guards import Fit, Floor, Interval, combine
from genlab.claims.measures import Derived, Final
from genlab.design import Arm
from genlab.registry import Params
from genlab.report.claim_figures import ArmBars
from genlab.spec import parse_spec
from genlab.weights.ratatouille import ratatouille_plan

AUX = ("rotation", "parity", "large")
ANGLES = [0.0, 90.0, 180.0, 270.0]
TRAINED = ("pretrain", "aux", "soup_member", "rat_member")


def worst_test(m: pd.DataFrame) -> float:
    """The lowest held-out-domain accuracy at the last evaluation."""
    rows = m[(m["metric"] == "accuracy") & m["split"].str.startswith("test/")]
    if rows.empty:
        return math.nan
    last = rows[rows["step"] == rows["step"].max()]
    return float(last["value"].min())


class RatatouilleConfig(Params):
    """Foundation, auxiliary tasks, target domains, steps, learning rates and seeds."""

    channels: list[int] = Field(default_factory=lambda: [16, 32], min_length=1)
    aux: list[str] = Field(
        default_factory=lambda: list(AUX),
        min_length=2,
        description="auxiliary labellings of digits_views, one fine-tuning "
        "each (negative control: one task repeated)",
    )
    lrs: list[float] = Field(
        default_factory=lambda: [1e-3, 2e-3, 3e-3],
        min_length=2,
        description="target learning rates: one soup member each; the "
        "i-th ratatouille member uses the (i mod n)-th",
    )
    test_envs: list[int] = Field(
        default_factory=lambda: [4, 5],
        min_length=1,
        description="held-out rotated_digits domains (60, 75 deg)",
    )
    pre_steps: int = Field(600, ge=1)
    probe_steps: int = Field(200, ge=1)
    aux_steps: int = Field(300, ge=1)
    ft_steps: int = Field(300, ge=1)
    lr: float = Field(3e-3, gt=0, description="pre-training and auxiliary learning rate")
    aux_lr: float | None = Field(None, gt=0, description="auxiliary learning rate (default: lr)")
    probe_lr: float = Field(1e-2, gt=0)
    seeds: int = Field(5, ge=3)

    @field_validator("aux")
    @classmethod
    def _aux(cls, v: list[str]) -> list[str]:
        if bad := sorted(set(v) - {"class", *AUX}):
            raise ValueError(f"unknown auxiliary tasks {bad}; allowed: class, {', '.join(AUX)}")
        return v


def _template(steps: int, lr: float, seed: int, batch: int = 64) -> dict:
    return {
        "steps": steps,
        "batch_size": batch,
        "seed": seed,
        "data_seed": seed,
        "optimizer": {"name": "adamw", "lr": lr, "weight_decay": 0.0},
        "checkpoint_every": max(steps, 1),
        "eval": {"every": max(steps, 1), "log_points": 0},
    }


class Ratatouille(Claim):
    """The ratatouille beats the soup, which is not worse than ERM, on held-out domains (#102)."""

    id = "ens.ratatouille"
    papers = (
        Ref(
            102,
            "Rame, Ahuja, Zhang, Cord, Bottou & Lopez-Paz 2023",
            "Model ratatouille: recycling diverse models for out-of-distribution generalization",
        ),
    )
    statement = (
        "Paired over >= 3 seeds on rotated_digits (training domains 0-45 degrees, held-out 60 "
        "and 75): the uniform weight average of target fine-tunings started from fine-tunings on "
        "diverse auxiliary tasks (ratatouille) has a higher mean held-out-domain accuracy than "
        "the uniform average of target fine-tunings started from the foundation (soup): CI of "
        "the difference above 0 and mean >= 0.005; and the soup is not worse than ERM (the soup "
        "member chosen on training-domain validation): CI above -0.01, mean >= 0. Not "
        "reproduced when either CI lies wholly below its smallest effect (0.005; 0)."
    )
    Config = RatatouilleConfig
    scope = "proxy"
    scope_note = (
        "The paper recycles ImageNet ResNet-50 fine-tunings on other DomainBed datasets "
        "(about 20 members); here a small CNN pre-trained on upright 8x8 digits, three "
        "auxiliary relabellings of those digits, three members per group, on "
        "RotatedMNIST built from 8x8 digits."
    )
    # 3 seeds cannot refute "ratatouille - soup >= 0.005" (a null's CI reaches past it) and 150
    # auxiliary steps leave the fine-tunings unfit (measured train 0.863-0.880): a check that the
    # code runs
    smoke_decides = False
    budgets = {
        "smoke": {
            "seeds": 3,
            "pre_steps": 300,
            "aux_steps": 150,
            "ft_steps": 150,
            "probe_steps": 100,
        },
        "full": {},
    }
    measures = {
        "train": Final("train/*"),
        "val": Final("val/*"),
        "test": Final("test/*"),
        "worst": Derived(worst_test, "the lowest held-out-domain accuracy at the end"),
    }
    fit = Fit("train", 0.9, where={"arm": TRAINED})
    floor = Floor("test", 0.2)  # 10 classes: chance 0.1
    figure = ArmBars("test", by="arm")
    controls = {
        "negative": Control(
            {"aux_lr": 0.03},
            "not reproduced",
            "the auxiliary fine-tunings "
            "run at 10x the learning rate, so they leave the foundation's basin "
            "and the ratatouille members, each fitting the target, are no longer "
            "linearly connected: weight averaging, the paper's mechanism, fails",
            budget="full",
            heavy=True,
        ),
        "negative_one_task": Control(
            {"aux": ["parity", "parity", "parity"]},
            "not reproduced",
            "every ratatouille member starts from the same auxiliary "
            "fine-tuning (one task): no diversity across the averaged "
            "members' initialisations, the paper's source of gain over "
            "the soup",
            heavy=True,
            open="measured inconclusive, not 'not reproduced': at smoke "
            "(3 seeds) the parity fine-tuning does not fit in 150 steps "
            "(train 0.880) and ratatouille - soup is 0.004 [-0.071, "
            "0.080]; at full (5 seeds, 62 s with the claim's runs "
            "reused) ratatouille - soup is 0.008 [-0.008, 0.024]: one "
            "auxiliary task repeated does as well as three diverse ones "
            "(claim: -0.022 [-0.090, 0.046]), so this design does not "
            "isolate the diversity the paper credits",
        ),
    }
    MIN_GAIN = 0.005  # fixed before running

    def plan(self, cfg: RatatouilleConfig, s: int):
        cnn = {"name": "cnn", "params": {"channels": cfg.channels}}
        upright = {"name": "digits_views", "params": {"label": "class", "angles": [0.0]}}
        target = {"name": "rotated_digits", "params": {"test_envs": cfg.test_envs}}
        pre = {**_template(cfg.pre_steps, cfg.lr, s), "task": upright, "model": cnn}
        aux_tasks = [
            {"name": "digits_views", "params": {"label": a, "angles": ANGLES}} for a in cfg.aux
        ]
        tgt = {**_template(cfg.ft_steps, cfg.lrs[0], s, 32), "task": target}
        probe = {**_template(cfg.probe_steps, cfg.probe_lr, s, 32), "task": target}
        return ratatouille_plan(
            pre,
            aux_tasks,
            _template(cfg.aux_steps, cfg.aux_lr or cfg.lr, s),
            tgt,
            [{"optimizer": {"lr": lr}} for lr in cfg.lrs],
            probe,
        )

    def arms(self, cfg: RatatouilleConfig) -> list[Arm]:
        out: list[Arm] = []
        for s in range(cfg.seeds):
            plan = self.plan(cfg, s)
            (pre,), (lp, *lp_aux), aux, last = plan.stages
            groups = {"soup": plan.groups["soup"], "ratatouille": plan.groups["ratatouille"]}
            role = {pre.run_id: "pretrain", lp.run_id: "probe"}
            role |= {r.run_id: "aux_probe" for r in lp_aux} | {r.run_id: "aux" for r in aux}
            role |= {r: "soup_member" for r in groups["soup"]}
            role |= {r: "rat_member" for r in groups["ratatouille"]}
            seen: set[str] = set()
            for spec in plan.specs():
                if spec.run_id not in seen:  # identical auxiliary runs (negative control)
                    seen.add(spec.run_id)
                    out.append(Arm({"arm": role[spec.run_id], "seed": s, "data_seed": s}, spec))
            for name, ids in groups.items():
                target = last[0].task.model_dump(mode="json")
                spec = parse_spec(
                    {
                        **_template(0, cfg.lrs[0], s, 32),
                        "task": target,
                        "model": {"name": "soup", "params": {"runs": ids}},
                    }
                )
                out.append(Arm({"arm": name, "seed": s, "data_seed": s}, spec))
        return out

    def synthetic(self, cfg: RatatouilleConfig, arm: dict, case: Case) -> dict[str, float]:
        """Members 0.50 on the held-out domains, the soup 0.51; effect: the ratatouille 0.56;
        null: the ratatouille at the soup's 0.51; unfit: the auxiliary fine-tunings train to 0.6."""
        test = {"soup": 0.51, "ratatouille": 0.51 if case == "null" else 0.56}.get(arm["arm"], 0.50)
        train = 0.6 if case == "unfit" and arm["arm"] == "aux" else 0.97
        return {"train": train, "val": 0.98, "test": test, "worst": test - 0.2}

    def synthetic_table(
        self, cfg: RatatouilleConfig, case: Case, jitter: float = 0.001
    ) -> pd.DataFrame:
        """Half the base's jitter: the smallest gain that matters (0.005) is within two of the
        base's per-run jitter (0.002), so a null would straddle it at the seed rule's 97.5% looks."""
        return super().synthetic_table(cfg, case, jitter)

    def decide(self, cfg: RatatouilleConfig, table: pd.DataFrame) -> Decision:
        rat, soup = by_seed(table, "ratatouille", "test"), by_seed(table, "soup", "test")
        members = table[table["arm"] == "soup_member"]
        valid = members[members["val"].notna()]
        erm_rows = valid.loc[valid.groupby("seed")["val"].idxmax()]  # ERM: chosen on validation
        erm = pd.Series(
            erm_rows["test"].to_numpy(dtype=float), index=erm_rows["seed"].to_numpy()
        ).reindex(soup.index)
        rat_soup, soup_erm = rat - soup, soup - erm
        ivs = [
            Interval.of("ratatouille - soup", rat_soup.tolist(), null=0, smallest=self.MIN_GAIN),
            Interval.of("soup - ERM", soup_erm.tolist(), null=-0.01, smallest=0.0),
        ]
        mean = {a: by_seed(table, a, "test").mean() for a in ("soup_member", "rat_member", "aux")}
        worst = {a: by_seed(table, a, "worst").mean() for a in ("ratatouille", "soup")}
        stats = {
            "ratatouille": rat.mean(),
            "soup": soup.mean(),
            "erm": erm.mean(),
            "rat_minus_soup": rat_soup.mean(),
            "soup_minus_erm": soup_erm.mean(),
            "soup_member": mean["soup_member"],
            "rat_member": mean["rat_member"],
            "worst_ratatouille": worst["ratatouille"],
            "worst_soup": worst["soup"],
        }
        sentence = (
            f"Held-out-domain accuracy (mean of {len(cfg.test_envs)} domains; worst in "
            f"brackets) on rotated_digits: ratatouille {stats['ratatouille']:.3f} "
            f"({stats['worst_ratatouille']:.3f}), soup {stats['soup']:.3f} "
            f"({stats['worst_soup']:.3f}), ERM {stats['erm']:.3f}; members: from the foundation "
            f"{stats['soup_member']:.3f}, from the auxiliary models {stats['rat_member']:.3f} "
            f"(auxiliary tasks {', '.join(cfg.aux)}; {len(rat)} seeds): "
            + "; ".join(iv.text() for iv in ivs)
            + "."
        )
        verdicts = [iv.verdict() for iv in ivs]
        verdict = combine(verdicts)
        # refuted by soup - ERM alone: that part reads the foundation, its probe, the soup members
        # and the soup, so an unfit auxiliary fine-tuning does not make it inconclusive
        reads = (
            [{"arm": ["pretrain", "probe", "soup_member", "soup"]}]
            if verdict == "not reproduced" and verdicts[0] != "not reproduced"
            else None
        )
        return Decision(verdict, stats, sentence, ivs, reads)


register(Ratatouille())
