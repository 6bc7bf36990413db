"""``length.scratchpad`` (Anil et al. 2022, #46), the half testable from scratch: transformers
*trained* on parity do not length-generalize, with or without a scratchpad.

Anil et al. find that fine-tuning fails to length-generalize whatever the scale, scratchpad
fine-tuning included, and that the dramatic gain comes from in-context learning with a
scratchpad in large pretrained models (out of reach here). So the claim is the absence: a small
decoder-only transformer trained from scratch (the fine-tuning regime) on ``seq_parity`` fits the
training lengths in both formats, direct answer and a scratchpad of (bit, running parity) steps,
and neither extrapolates. Differences from the paper (no official code released): training from
scratch rather than fine-tuning a pretrained LaMDA, 2 layers d=64, bit strings <= 8 tested to
16 (the paper: <= 20 to 40 and more), our scratchpad layout, exact match of the whole target under
teacher forcing (a lower bound on the final answer's greedy accuracy).

Judge change (Dec 3 2026, issue #30): a refutation (a format's CI wholly above 0.2) now reads only
one format that refutes it, the first that fits (``Decision.reads``, ``LengthClaim.refuting``), so
a format that did not fit no longer hides one that fits and extrapolates; "reproduced" still needs
both formats to fit. The recorded results were known (full: both fit; direct exact match 0.719, its
CI above chance over 3 seeds straddling 0.2: inconclusive either way). The smoke budget (2 seeds: a
t multiplier of 12.7) only checks that the code runs.
"""

from __future__ import annotations

from pydantic import Field

from genlab.claims import register
from genlab.claims.base import Case, Control, Ref
from genlab.claims.guards import Interval, NotApplicable
from genlab.claims.length._common import LengthClaim, LengthConfig, lengths
from genlab.report.claim_figures import LengthCurves

FORMATS = ("direct", "scratchpad")
CHANCE = {"direct": 0.5, "scratchpad": 0.0}  # one binary answer; a whole chain of steps


class ScratchpadConfig(LengthConfig):
    """Model and budget of ``length.scratchpad``; both formats always run."""

    n_layers: int = Field(3, ge=1)


class Scratchpad(LengthClaim):
    """Trained transformers do not length-generalize parity, scratchpad or not (#46)."""

    id = "length.scratchpad"
    papers = (
        Ref(
            46,
            "Anil, Wu, Andreassen, Lewkowycz, Misra, Ramasesh, Slone, Gur-Ari, Dyer & "
            "Neyshabur 2022",
            "Exploring length generalization in large language models",
        ),
    )
    statement = (
        "A decoder-only transformer trained from scratch on parity of <= L bits, both formats "
        "fitting (val exact match >= 0.9), scored by exact match of the whole target above chance, "
        "max(0, (acc - chance) / (1 - chance)) with chance 0.5 for the direct answer and 0 for a "
        "scratchpad chain, averaged over lengths up to 2L (per seed): neither the direct answer "
        "nor the scratchpad extrapolates, each format's 95% CI lying within 0.2. Not reproduced "
        "when a format's CI lies wholly above 0.2."
    )
    Config = ScratchpadConfig
    scope = "proxy"
    scope_note = (
        "Anil et al. fine-tune pretrained LaMDA models on parity of <= 20 bits; genlab "
        "trains a 3-layer d=64 transformer from scratch on <= 8 bits, tests to 16, with "
        "its own scratchpad layout."
    )
    smoke_decides = False
    budgets = {
        "smoke": {
            "train_length": 3,
            "test_max": 6,
            "n_test_lengths": 2,
            "n_train": 500,
            "n_test": 50,
            "d_model": 32,
            "n_layers": 2,
            "steps": 400,
            "lr": 3e-3,
            "seeds": 2,
        },
        "full": {"lr": 2e-3, "steps": 3000},
    }
    floor = NotApplicable(
        "floor",
        "the claim is the absence of extrapolation: both formats at "
        "chance beyond the training lengths is what it states, once they fit",
    )
    figure = LengthCurves(line="format", train_length="auto")
    controls = {
        "negative": Control(
            {"train_length": 4, "test_max": 5, "n_test_lengths": 1, "steps": 1600, "seeds": 3},
            "not reproduced",
            "one bit beyond training the direct "
            "answer still holds (Anil et al.'s accuracy decays with the distance from "
            "the training lengths), so 'no extrapolation' must be refuted",
            slow=True,
        ),
        "positive": Control(
            {"positional": "learned", "seeds": 8, "n_test": 200},
            "reproduced",
            "learned absolute positions are untrained beyond L: both formats fit and fail there",
            slow=True,
        ),
    }

    def arms(self, cfg: ScratchpadConfig):
        axes = {"format": {f: {"task.params.format": f} for f in FORMATS}}
        return self.design(cfg, {"name": "seq_parity", "params": lengths(cfg)}, axes)

    def synthetic(self, cfg: ScratchpadConfig, arm: dict, case: Case) -> dict[str, float]:
        """Effect (no extrapolation): both formats at chance beyond training; null: both
        extrapolate (0.95); unfit: as effect, the scratchpad not fitting."""
        chance = CHANCE[arm["format"]]
        return self.values(
            0.95 if case == "null" else chance, case != "unfit" or arm["format"] == "direct"
        )

    def decide(self, cfg: ScratchpadConfig, table):
        chance = table["format"].map(CHANCE)
        score = ((table["ood"] - chance) / (1 - chance)).clip(lower=0).groupby(table["format"])
        ivs = [
            Interval.of(f"{f} above chance", score.get_group(f), smallest=0.2, absence=True)
            for f in FORMATS
        ]
        return self.decision(ivs, cfg, table, "format", FORMATS, " bits", reads=list(FORMATS))


register(Scratchpad())
