"""Simulate the sequential seed rule (``genlab.analysis.sequential.SeedRule``) against the claims'
interval decision (``genlab.claims.guards.Interval``: reproduced when the CI lies above 0 and the
estimate reaches the stated effect ``s``; not reproduced when the CI lies below ``s``).

Errors are judged at the two boundaries where a decision becomes wrong: with the true effect at 0,
"reproduced" is false; with it at ``s``, "not reproduced" is. ``false_decision_rate`` is the larger
of the two, over per-seed values drawn normal and heavy-tailed (Student t, 3 degrees of freedom,
scaled to the same standard deviation), for the seed schedules the claims use. Power is the rate of
the right decision at a declared effect (2s, the stated effect doubled: "reproduced") and at none
("not reproduced"). Beside it, the naive rule (a 95% interval at every look) shows what peeking
costs without the spending.

    .venv/bin/python benchmarks/sequential_seeds.py [--trials 20000]
"""

from __future__ import annotations

import argparse

import numpy as np
from scipy import stats

from genlab.analysis.sequential import SeedRule
from genlab.claims.base import uniform_rule

# genlab's uniform rule (``genlab.claims.base.uniform_rule``: n, then 2n) at the claims' full seed
# counts, and a finer schedule a claim may declare
SCHEDULES = {f"{n}, {2 * n}": uniform_rule("full", n) for n in (2, 3, 5, 10)}
SCHEDULES["3..10 by 2"] = SeedRule(3, 10, 2)
S, SD = 0.1, 0.1  # stated effect and per-seed standard deviation (effect size 1 per seed)


def draws(rng: np.random.Generator, dist: str, shape: tuple[int, int]) -> np.ndarray:
    if dist == "normal":
        return rng.standard_normal(shape)
    return rng.standard_t(3, shape) / np.sqrt(3.0)  # unit variance


def run(rule: SeedRule, truth: float, dist: str, trials: int, rng, naive: bool = False):
    """Decision rates (reproduced, not reproduced) of ``rule`` at true effect ``truth``."""
    x = truth + SD * draws(rng, dist, (trials, rule.max_seeds))
    decided = np.zeros(trials, dtype="U2")
    for n in rule.looks():
        v = x[:, :n]
        mean, se = v.mean(1), v.std(1, ddof=1) / np.sqrt(n)
        level = 0.95 if naive else rule.confidence(n)
        half = stats.t.ppf(0.5 + level / 2, n - 1) * se
        lo, hi = mean - half, mean + half
        open_ = decided == ""
        decided[open_ & (lo > 0) & (mean >= S)] = "R"
        decided[(decided == "") & open_ & (hi < S)] = "NR"
    return float((decided == "R").mean()), float((decided == "NR").mean())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=20000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    worst, worst_naive, powers_r, powers_nr = 0.0, 0.0, [], []
    print(f"stated effect s={S}, per-seed sd={SD}, {args.trials} trials per cell")
    print(
        f"{'schedule':12s} {'dist':7s} {'false R@0':>10s} {'false NR@s':>11s} "
        f"{'naive R@0':>10s} {'naive NR@s':>11s} {'power R@2s':>11s} {'power NR@0':>11s}"
    )
    for name, rule in SCHEDULES.items():
        for dist in ("normal", "t3"):
            fr, _ = run(rule, 0.0, dist, args.trials, rng)
            _, fnr = run(rule, S, dist, args.trials, rng)
            nfr, _ = run(rule, 0.0, dist, args.trials, rng, naive=True)
            _, nfnr = run(rule, S, dist, args.trials, rng, naive=True)
            pr, _ = run(rule, 2 * S, dist, args.trials, rng)
            _, pnr = run(rule, 0.0, dist, args.trials, rng)
            worst, worst_naive = max(worst, fr, fnr), max(worst_naive, nfr, nfnr)
            powers_r.append(pr)
            powers_nr.append(pnr)
            print(
                f"{name:12s} {dist:7s} {fr:10.4f} {fnr:11.4f} {nfr:10.4f} {nfnr:11.4f} "
                f"{pr:11.3f} {pnr:11.3f}"
            )
    mc = 1.96 * np.sqrt(0.05 * 0.95 / args.trials)
    print(
        f"false_decision_rate={worst:.4f} naive_false_decision_rate={worst_naive:.4f} "
        f"power={min(powers_r):.3f} power_not_reproduced={min(powers_nr):.3f} "
        f"effect=2s s={S} sd={SD} trials={args.trials} monte_carlo_error={mc:.4f}"
    )


if __name__ == "__main__":
    main()
