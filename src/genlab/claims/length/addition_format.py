"""``length.addition_format`` (Zhou et al. 2024, #42): with reversed digits, index hints and FIRE,
a standard transformer extrapolates addition past its training length; the same digits without
hints do not.

Both arms train the same FIRE transformer on ``seq_addition`` with 1..``train_length`` digits per
operand, scored on longer operands (exact match of the sum under teacher forcing, which is greedy
decoding's). Differences from the paper (no official code released; none found): a 2-layer d=64
model instead of ~25M parameters, train <= 5 digits and test 6..10 instead of <= 40 and 41..100,
no randomised positions (the paper pairs FIRE with them), a fixed training sample, 3 seeds where
the paper stresses variance over many; the baseline is reversed digits without hints (the paper's
ablation: the hints are what make it extrapolate).

Judge change (Dec 3 2026, issue #30): the audit found that a refutation was hidden by the fit guard
on every arm: at full the hints arm fits (val 0.973) and its 0.306 [0.19, 0.42] lies below 0.5,
recorded inconclusive only because the reversed baseline did not fit (val 0.310). A refutation now
reads only the arm of one interval that refutes it, the first whose arm fits (``Decision.reads``,
``LengthClaim.refuting``), so the fit guard judges that arm alone; "reproduced" still needs both
arms to fit. The recorded results were known. No positive control is known (index hints reach 0.306
at full; the reversed baseline does not fit 5-digit addition), so the claim cannot record "not
reproduced": no control licenses it. Its smoke budget (2 seeds, arms that do not fit: hints val
0.83, reversed 0.64) only checks that the code runs.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from genlab.claims import register
from genlab.claims.base import Case, Control, Ref
from genlab.claims.length._common import LengthClaim, LengthConfig, lengths, reaches, stays_below
from genlab.models.positional import PositionalName
from genlab.report.claim_figures import LengthCurves

Format = Literal["plain", "reversed", "index_hints"]


class AdditionConfig(LengthConfig):
    """Formats, model and budget of ``length.addition_format``."""

    method: Format = Field("index_hints", description="the format claimed to extrapolate")
    baseline: Format = Field("reversed", description="the format claimed not to")
    positional: PositionalName = Field("fire", description="Zhou et al.'s best: FIRE")
    train_length: int = Field(5, ge=1, description="most digits per operand in training")
    test_max: int = Field(10, ge=2)
    n_test_lengths: int = Field(3, ge=1)
    n_train: int = Field(5000, ge=10)

    @model_validator(mode="after")
    def _two_formats(self) -> AdditionConfig:
        if self.method == self.baseline:
            raise ValueError(f"method and baseline must differ, got {self.method!r} twice")
        return self


class AdditionFormat(LengthClaim):
    """Reversed digits with index hints extrapolate on addition; without hints they do not (#42)."""

    id = "length.addition_format"
    papers = (
        Ref(
            42,
            "Zhou, Alon, Chen, Wang, Agarwal & Zhou 2024",
            "Transformers can achieve length generalization but not robustly",
        ),
    )
    statement = (
        "Trained on 1..L-digit addition with FIRE, both formats fitting (val exact match >= 0.9), "
        "and scored by exact match averaged over longer operands (per seed): reversed digits with "
        "index hints reach a mean >= 0.5 (95% CI above 0), and reversed digits without hints stay "
        "<= 0.1 (CI below 0.5). Not reproduced when the hints' CI lies below 0.5 or the baseline's "
        "above 0.1."
    )
    Config = AdditionConfig
    scope = "proxy"
    scope_note = (
        "Zhou et al. train ~25M-parameter transformers on 1-40 digits with FIRE plus "
        "randomised positions and test to 100; genlab trains a 2-layer d=64 FIRE model "
        "on 1-5 digits, tests 6-10, without randomised positions."
    )
    smoke_decides = False
    budgets = {
        "smoke": {
            "train_length": 2,
            "test_max": 4,
            "n_test_lengths": 2,
            "n_train": 2000,
            "n_test": 50,
            "d_model": 32,
            "steps": 1000,
            "lr": 3e-3,
            "seeds": 2,
        },
        "full": {"steps": 4000, "lr": 2e-3},
    }
    figure = LengthCurves(line="format", train_length="auto")
    controls = {
        "negative": Control(
            {
                "method": "reversed",
                "baseline": "plain",
                "train_length": 1,
                "test_max": 3,
                "steps": 600,
            },
            "not reproduced",
            "Zhou et al.: without index hints reversed digits do not "
            "extrapolate (here from one digit, which both formats fit, to two and three)",
            slow=True,
        ),
    }

    def arms(self, cfg: AdditionConfig):
        axes = {"format": {f: {"task.params.format": f} for f in (cfg.method, cfg.baseline)}}
        return self.design(cfg, {"name": "seq_addition", "params": lengths(cfg)}, axes)

    def synthetic(self, cfg: AdditionConfig, arm: dict, case: Case) -> dict[str, float]:
        """Effect: the method extrapolates (0.8), the baseline not (0.0); null: neither does;
        unfit: as effect, the baseline not fitting (val 0.5)."""
        method = arm["format"] == cfg.method
        return self.values(0.8 if method and case != "null" else 0.0, case != "unfit" or method)

    def decide(self, cfg: AdditionConfig, table):
        ood = table.groupby("format")["ood"]
        ivs = [
            reaches(f"ood({cfg.method})", ood.get_group(cfg.method), 0.5),
            stays_below(f"ood({cfg.baseline})", ood.get_group(cfg.baseline), 0.1, null=0.5),
        ]
        return self.decision(
            ivs,
            cfg,
            table,
            "format",
            [cfg.method, cfg.baseline],
            " digits",
            reads=[cfg.method, cfg.baseline],
        )


register(AdditionFormat())
