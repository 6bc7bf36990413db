"""``ens.dev_interpolation`` (Herel & Mikolov 2023, #69): a linear interpolation of language
models with weights tuned on a dev set has a lower test perplexity than the best single model.

Per seed, on ``pcfg_lm`` (characters of a toy English-like PCFG; train 40,000, dev and test 8,000
characters each): a small LSTM is trained, then a tiny causal transformer whose ``lm_ensemble``
probe interpolates it with the LSTM and interpolated Kneser-Ney models of orders 3 and 5 fitted on
the training stream: weights by EM on dev (``val/main``), the best single member chosen by its dev
perplexity, and ``mix_gain = 1 - ppl_mix / ppl_best`` on the test stream. In the negative control
the transformer's only partner is its own spec trained from another seed (``members = "seeds"``).

Protocol differences from the paper (no official code was found in the code index; the paper reports
interpolations of published probabilities of large models on Penn Treebank, WikiText-103 and enwik8,
up to 10% better): a generated character corpus of 40,000 characters instead of real benchmarks;
four members (KN 3-gram, KN 5-gram, a 128-unit LSTM, a 2-layer 64-wide transformer) and no cache
model; one global weight per member (no context-dependent weights); models are trained for a fixed
number of steps, not to convergence with early stopping on dev. The thresholds (gain CI above 0,
mean >= 0.5%) were fixed after a one-seed pilot of this design (docs/ensembles.md); the catalogue's
expectation is "ensemble < best single".

Controls (Dec 3 2026, issue #30). The old negative control interpolated the transformer with "a
copy of itself": the same spec with another checkpoint interval, which trains bit-identically
(test perplexity 1.9520 = 1.9520 at smoke, gain 0.000 exactly), so it could not come out
"reproduced" and did not fail for the paper's reason (no complementary patterns) but by
arithmetic. The new one (``members = "seeds"``, at the full budget) trains its own partner, the
transformer from seed s + 100 on the same data, and can gain: a pilot at the smoke configuration
gained 0.018 [0.016, 0.020] (3 seeds), so if the full measurement agrees the design does not
isolate complementarity from the variance that any two seeds average out, and the claim's full
verdict reads inconclusive. No positive control is known (the claim's own design is the cheapest
configuration known to show a gain), so the claim cannot record "not reproduced": no control
licenses it. The smoke budget (3 seeds, 300 steps) is a check that the code runs
(``smoke_decides``); the judge is unchanged.
"""

from __future__ import annotations

import math
from typing import Literal

import pandas as pd
from pydantic import Field

from genlab.claims import register
from genlab.claims.arms import arms, by_seed
from genlab.claims.base import Case, Claim, Control, Decision, Ref
from genlab.claims.ens._common import run
from genlab.claims.guards import Fit, Interval, NotApplicable, combine
from genlab.claims.measures import Final
from genlab.registry import Params
from genlab.report.claim_figures import ArmBars
from genlab.spec import parse_spec

TEST = "test/main"
SEED_STEP = 100  # the negative control's partner: the transformer trained with seed s + 100


class DevInterpolationConfig(Params):
    """Corpus, members, steps and seeds."""

    train_chars: int = Field(40_000, ge=1_000)
    eval_chars: int = Field(8_000, ge=500)
    seq_len: int = Field(64, ge=8)
    lstm_hidden: int = Field(128, ge=1)
    d_model: int = Field(64, ge=8)
    n_layers: int = Field(2, ge=1)
    ngrams: list[int] = Field(default_factory=lambda: [3, 5])
    members: Literal["diverse", "seeds"] = Field(
        "diverse",
        description="the transformer's "
        "partners: the LSTM and the n-grams, or its own "
        "spec trained from another seed, without n-grams "
        "(negative control)",
    )
    steps: int = Field(600, ge=1)
    lr: float = Field(3e-3, gt=0)
    seeds: int = Field(5, ge=3)


class DevInterpolation(Claim):
    """The dev-tuned interpolation of KN n-grams, an LSTM and a transformer beats the best single
    model's test perplexity (#69)."""

    id = "ens.dev_interpolation"
    papers = (Ref(69, "Herel & Mikolov 2023", "Advancing state of the art in language modeling"),)
    statement = (
        "Paired over >= 3 seeds on pcfg_lm (characters of a toy PCFG): the linear interpolation of "
        "KN 3- and 5-gram models, an LSTM and a transformer, with weights fitted by EM on the dev "
        "split, has a lower test perplexity than the member with the lowest dev perplexity: the "
        "relative gain 1 - ppl_mix / ppl_best has its CI above 0 and its mean reaches 0.005. Not "
        "reproduced when the CI lies wholly below 0.005."
    )
    Config = DevInterpolationConfig
    scope = "proxy"
    scope_note = (
        "The paper interpolates published probabilities of large models on Penn Treebank, "
        "WikiText-103 and enwik8; here four small members (KN 3/5-grams, an LSTM, a tiny "
        "transformer) trained on 40,000 characters of a toy PCFG."
    )
    # 3 seeds cannot refute a gain >= 0.005 (a null's CI reaches past it) and at 300 steps the
    # transformer gets no weight (measured 0.000): a check that the code runs
    smoke_decides = False
    budgets = {"smoke": {"seeds": 3, "steps": 300}, "full": {}}
    measures = {
        "dev_loss": Final("val/main", "loss"),
        "gain": Final(TEST, "mix_gain"),
        "ppl_mix": Final(TEST, "ppl_mix"),
        "ppl_best": Final(TEST, "ppl_best"),
        "ppl_self": Final(TEST, "ppl_self"),
        "w_self": Final(TEST, "w_self"),
        "n_used": Final(TEST, "n_used"),
    }
    # every network reaches a dev cross-entropy of 1 nat per character (perplexity e; a unigram
    # model of this text is near 2.9 nats, the uniform one ln 27)
    fit = Fit("dev_loss", 1.0, below=True)
    floor = NotApplicable(
        "floor", "the fit guard already requires every network's dev loss far below chance (ln |V|)"
    )
    figure = ArmBars("gain", by="arm")
    controls = {
        "negative": Control(
            {"members": "seeds"},
            "not reproduced",
            "the transformer is "
            "interpolated with its own spec trained from another seed (same "
            "architecture, data and steps; another init and batch order) and no "
            "n-gram model: by the paper a model adds to the ensemble by learning "
            "patterns the others do not, and a retrained copy of the same model "
            "learns the same ones. Not yet measured at its budget; a pilot at the "
            "smoke configuration (300 steps, 3 seeds, 91 s of CPU) gained 0.018 "
            "[0.016, 0.020] (the copy's weight 0.36-0.62): seed copies of an "
            "undertrained transformer do complement each other there",
            budget="full",
            heavy=True,
        ),
    }
    MIN_GAIN = 0.005  # fixed before running the claim (after a one-seed pilot, see docstring)

    def arms(self, cfg: DevInterpolationConfig):
        task = {
            "seq_len": cfg.seq_len,
            "train_chars": cfg.train_chars,
            "eval_chars": cfg.eval_chars,
        }
        lstm = {"name": "lstm", "params": {"hidden": cfg.lstm_hidden}}
        tr = {"name": "transformer", "params": {"d_model": cfg.d_model, "n_layers": cfg.n_layers}}
        base = ["loss"]
        rows = []
        for s in range(cfg.seeds):
            if cfg.members == "diverse":
                partner = run(
                    "pcfg_lm", task, lstm, cfg.steps, cfg.lr, 32, base, seed=s, data_seed=s
                )
                ngrams = cfg.ngrams
            else:  # the transformer's own spec from another init and batch order, same data
                partner = run(
                    "pcfg_lm",
                    task,
                    tr,
                    cfg.steps,
                    cfg.lr,
                    32,
                    base,
                    seed=s + SEED_STEP,
                    data_seed=s,
                )
                ngrams = []
            probe = {
                "name": "lm_ensemble",
                "params": {"runs": [parse_spec(partner).run_id], "ngrams": ngrams},
            }
            rows.append(({"arm": "partner"}, partner))
            rows.append(
                (
                    {"arm": "ensemble"},
                    run(
                        "pcfg_lm",
                        task,
                        tr,
                        cfg.steps,
                        cfg.lr,
                        32,
                        [*base, probe],
                        seed=s,
                        data_seed=s,
                    ),
                )
            )
        return arms(rows)

    def synthetic(self, cfg: DevInterpolationConfig, arm: dict, case: Case) -> dict[str, float]:
        """Effect: the interpolation 1% below the best member's test perplexity (1.66); null: no
        gain; unfit: the partner's dev loss 1.5 nats (above the fit level, 1)."""
        nan = float("nan")
        if arm["arm"] == "partner":
            return {
                "dev_loss": 1.5 if case == "unfit" else 0.5,
                "gain": nan,
                "ppl_mix": nan,
                "ppl_best": nan,
                "ppl_self": nan,
                "w_self": nan,
                "n_used": nan,
            }
        g = 0.0 if case == "null" else 0.01
        return {
            "dev_loss": 0.55,
            "gain": g,
            "ppl_best": 1.66,
            "ppl_mix": 1.66 * (1 - g),
            "ppl_self": 1.75,
            "w_self": 0.05,
            "n_used": 3.0,
        }

    def decide(self, cfg: DevInterpolationConfig, table: pd.DataFrame) -> Decision:
        gain = by_seed(table, "ensemble", "gain")
        iv = Interval.of(
            "1 - ppl_mix / ppl_best (test)", gain.tolist(), null=0, smallest=self.MIN_GAIN
        )
        stat = {
            k: by_seed(table, "ensemble", k).mean()
            for k in ("ppl_mix", "ppl_best", "ppl_self", "w_self", "n_used")
        }
        stats = {"gain": gain.mean(), **stat}
        sentence = (
            f"Test perplexity: best single member (chosen on dev) {stat['ppl_best']:.4f}, "
            f"transformer {stat['ppl_self']:.4f}, dev-tuned interpolation {stat['ppl_mix']:.4f} "
            f"(members: {'LSTM, KN ' + '/'.join(map(str, cfg.ngrams)) + '-grams' if cfg.members == 'diverse' else 'a seed copy'}"
            f" and the transformer, whose weight is {stat['w_self']:.3f}; "
            f"{stat['n_used']:.1f} members with weight >= 0.05; {len(gain)} seeds): {iv.text()}."
        )
        if math.isnan(stats["gain"]):
            sentence += " Some ensemble run logged no interpolation."
        return Decision(combine([iv.verdict()]), stats, sentence, [iv])


register(DevInterpolation())
