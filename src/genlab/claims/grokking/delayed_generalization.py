"""``grokking.delayed_generalization`` (Power et al. 2022, #55): a small transformer fits a modular
arithmetic table long before it generalizes to the held-out part of the table.

Positive control (Dec 3 2026, issue #30): it was the claim's own configuration (``{}``); now the
``grokking`` preset's recipe (70% of the table, lr 2e-3) at the full budget's steps, so that a
full "not reproduced" is licensed by a setting of its own that groks.

Full budget (issue #31): 15,000 steps, was 6,000. At 6,000 steps the full verdict was
inconclusive (Dec 1 2026: 2/3 seeds grokked, median 3,850 steps to 99% test; the third ended at
test 0.816, still rising), so the budget, not the predicate, was what failed to decide. The new
budget is 2.5x the old one and 15% of the paper's 10^5 updates, chosen from that Dec 1 reading of
fit alone (steps to 99% train and test, no new pilot); thresholds, seeds, the 50% fraction and lr
1e-3 are unchanged. Runs stop two evaluations after test accuracy holds 99%, so a seed that
groks at step ~4,000 costs what it did; only a seed that never groks runs the full 15,000 steps.

Protocol read in the paper's code (``openai/grok``, ``grok/training.py``, ``grok/data.py``,
``grok/transformer.py``): AdamW lr 1e-3, betas (0.9, 0.98), eps 1e-8, 10 linear warm-up steps
then constant; weight decay 1 (the paper's figures; the code's default is 0); batch
``min(512, ceil(N / 2))`` (512 here, as at 50% of p = 97); 2 layers, d_model 128, 4 heads, no
dropout; p = 97; budget 10^5 updates. Remaining differences: the leak-free split (a pair and its
transpose on the same side; theirs a random split of ordered pairs, where about half the test
pairs have their transpose in training); 15,000 steps, not 10^5, and a stop two evaluations
after 99% test; genlab's pre-norm GELU decoder with biases and learned positions, read at the
last position (theirs: post-norm, ReLU, bias-free, sinusoidal positions, loss on every token
after ``=``); evaluation every 50 steps (the steps to 99% are read on that grid); three seeds.
"""

from __future__ import annotations

import math

import pandas as pd

from genlab.claims import register
from genlab.claims.base import Case, Claim, Control, Decision, Ref
from genlab.claims.grokking._common import TEST, TRAIN, GrokkingConfig, grokking_base
from genlab.claims.guards import Fit, NotApplicable, count_verdict
from genlab.claims.measures import Final, FirstStep
from genlab.design import Design
from genlab.report.claim_figures import Curves


class DelayedGeneralization(Claim):
    """Test accuracy reaches 99% long after train accuracy does (Power et al., #55)."""

    id = "grokking.delayed_generalization"
    papers = (
        Ref(
            55,
            "Power, Burda, Edwards, Babuschkin & Misra 2022",
            "Grokking: generalization beyond overfitting on small algorithmic datasets",
        ),
    )
    statement = (
        "Over >= 3 seeds, every run reaches 99% test accuracy within the budget, and the steps to "
        "99% test accuracy are >= 3x the steps to 99% train accuracy."
    )
    Config = GrokkingConfig
    scope = "paper"
    # smoke: the grokking preset's recipe (leak-free 70% of p = 97, lr 2e-3), which groks in ~1,000
    # steps; at p = 31 and half the table only 1/3 seeds grok within 3,000 steps (measured)
    # full: the paper's lr 1e-3 at half of p = 97, 15,000 steps (module docstring, issue #31)
    budgets = {
        "smoke": {"train_fraction": 0.7, "lr": 2e-3, "steps": 2000},
        "full": {"steps": 15000},
    }
    MIN_DELAY, LEVEL = 3.0, 0.99  # the abstract: generalizing "well past" fitting
    measures = {
        "t_train": FirstStep(TRAIN, "accuracy", LEVEL),
        "t_test": FirstStep(TEST, "accuracy", LEVEL),
        "train": Final(TRAIN),
        "test": Final(TEST),
    }
    fit = Fit("train", LEVEL)
    floor = NotApplicable(
        "floor",
        "one arm: a test accuracy that stays at chance is the "
        "refutation (no generalization), not arms that cannot be told apart",
    )
    figure = Curves((TRAIN, TEST), hline=LEVEL)
    controls = {
        "negative": Control(
            {
                "p": 31,
                "lr": 3e-3,
                "batch_size": None,
                "train_fraction": 0.2,
                "weight_decay": 0.0,
                "steps": 300,
            },
            "not reproduced",
            "Power et al.: at a small train fraction and no regularisation the "
            "model memorises the table and never generalizes",
            slow=True,
        ),
        "positive": Control(
            {"train_fraction": 0.7, "lr": 2e-3},
            "reproduced",
            "the grokking "
            "preset's recipe (70% of the table, lr 2e-3) over the full budget's "
            "15,000 steps: at 2,000 steps (the smoke budget) it grokked in 3/3 "
            "seeds, median 1,000 vs 181 steps, 140 s",
            budget="full",
            heavy=True,
        ),
    }

    def arms(self, cfg: GrokkingConfig):
        return Design(grokking_base(cfg), seeds=cfg.seeds).expand()

    def synthetic(self, cfg: GrokkingConfig, arm: dict, case: Case) -> dict[str, float]:
        """Effect: train 99% at step 200, test 99% at 1,000 (5x); null: test at 300 (1.5x); unfit:
        train stops at 0.5 and never reaches 99%."""
        if case == "unfit":
            return {"t_train": math.nan, "t_test": math.nan, "train": 0.5, "test": 0.05}
        return {
            "t_train": 200.0,
            "t_test": 1000.0 if case == "effect" else 300.0,
            "train": 1.0,
            "test": 0.995,
        }

    def decide(self, cfg: GrokkingConfig, table: pd.DataFrame) -> Decision:
        delay = table["t_test"] / table["t_train"]
        ok = (table["status"] == "done") & (delay >= self.MIN_DELAY)
        n, k = len(table), int(ok.sum())
        stats = {
            "seeds": n,
            "seeds_passing": k,
            "median_steps_to_train_99": table["t_train"].median(),
            "median_steps_to_test_99": table["t_test"].median(),
            "median_delay_ratio": delay.median(),
            "min_final_test_acc": table["test"].min(),
        }
        sentence = (
            f"{k}/{n} seeds reached 99% test accuracy at >= {self.MIN_DELAY:g}x the steps to 99% "
            f"train accuracy (median {stats['median_steps_to_test_99']:.0f} vs "
            f"{stats['median_steps_to_train_99']:.0f} steps; lowest final test accuracy "
            f"{stats['min_final_test_acc']:.3f}) on p={cfg.p}, train fraction "
            f"{cfg.train_fraction}, weight decay {cfg.weight_decay}, {cfg.steps} steps."
        )
        return Decision(count_verdict(k, n, min_n=3), stats, sentence)


register(DelayedGeneralization())
