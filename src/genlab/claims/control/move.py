"""``control.move`` (Wang et al. 2025, "MOVE: a simple motion-based data collection paradigm for
spatial generalization in robotic manipulation", #4): demonstrations whose targets move during
each episode teach a behaviour-cloned policy to reach held-out target positions better than
demonstrations with static targets, at the same budget of environment steps.

On ``point_reach`` (a 2D point mass on gymnasium's ``Env`` API, ``genlab.datasets.point_reach``;
a scripted expert steps straight at the target), each seed draws ``n`` demonstration episodes of 30
steps (agent start uniform in ``[-1, 1]²``, target start uniform in ``[-0.8, 0.8]²``; data seed =
seed). The ``static`` arm keeps each target still; the ``moving`` arm starts from the same agent
and target positions and moves the target at ``Beta(2, 5) * 0.1`` per step in a direction drawn
from ``U[-1, 1]²``, reflecting off the walls (the official wrapper's speed law; the agent's top
speed is 0.1). Both arms hold ``30 n`` observation-action pairs, for ``n`` in 4, 8 and 16. A
``policy_mlp`` (4 -> 64 -> 64 -> 2, tanh, 4,546 parameters) is fitted by squared error (Adam, lr
3e-3, batch 128, 1,500 steps) and rolled out on 256 held-out episodes per seed (fresh starts,
static targets drawn uniformly in ``[-0.8, 0.8]²``, so none is a demonstration's target): success
is reaching within 0.05 of the target in 30 steps (the expert succeeds on all of them).

Protocol differences from the paper (official code lucywang720/MOVE read: its Meta-World wrapper
``metaworld_wrapper_move.py`` for the speed law and the direction): a 2D point mass and a reaching
task instead of Meta-World / real-robot manipulation (pick-place, assembly, ...) with point-cloud
or image observations; the target's position is observed directly, so camera motion and object
motion other than the target's have no analogue; a ~5k-parameter MLP cloned by squared error
instead of a (3D) diffusion policy; the target moves for the whole episode (the official code
moves it only for its first steps and stops collecting 10 steps after success); fixed 30-step
demonstrations in both arms, so the step budget is equal by construction; budgets of 120 to 480
steps instead of 20k to 100k; success over 256 episodes per seed. The paper's "2-5x data
efficiency" is reported (the smallest ``n`` at which moving matches static at ``n = 16``), not
judged. The pilot (before the freeze) read only the static arm's fit and time at ``n = 16``, seed
0: training NMSE 0.0035 after 1,500 steps, about 1.5 s of training with one thread.

Measured Dec 3 2026 at full (store ``genlab-runs/h-4``, 10 seeds after the seed rule's second
look): inconclusive. The judge alone says not reproduced: held-out success static / moving 0.80 /
0.80 at n = 4, 0.99 / 0.98 at 8, 1.00 / 1.00 at 16, mean difference -0.004 [-0.089, 0.081]. A
cloned MLP already generalises across target positions from eight static demonstrations here
(the expert depends on ``g - p`` alone), so motion has no coverage gap to fill. The negative
control (one target site) came out not reproduced (-0.005 [-0.020, 0.009]); the positive control
(held-out region x >= 0.2) came out inconclusive, 0.078 [-0.067, 0.223]: a gain at n = 4 (static
0.59, moving 0.83) and none from n = 8, where both reach the ceiling. Not tuned after the result;
a proxy whose static demonstrations cannot cover the target space at small budgets (fewer
demonstrations, or targets the policy must extrapolate to) would decide it.
"""

from __future__ import annotations

import pandas as pd
from pydantic import Field

from genlab.claims import register
from genlab.claims.arms import arms
from genlab.claims.base import Case, Claim, Control, Decision, Ref
from genlab.claims.guards import Fit, Floor, Interval
from genlab.claims.measures import Final
from genlab.registry import Params
from genlab.report.claim_figures import ArmBars

TARGETS = ("static", "moving")


class MoveConfig(Params):
    """Demonstrations, environment, policy, training and seeds."""

    n_demos: tuple[int, ...] = Field((4, 8, 16), min_length=1)
    horizon: int = Field(30, ge=1)
    target_speed: float = Field(0.1, gt=0)
    radius: float = Field(0.05, gt=0)
    demo_x_max: float = 0.8
    test_x_min: float = -0.8
    sites: int = Field(0, ge=0)
    n_test: int = Field(256, ge=1)
    width: int = Field(64, ge=1)
    steps: int = Field(1500, ge=1)
    batch: int = Field(128, ge=1)
    lr: float = Field(3e-3, gt=0)
    seeds: int = Field(5, ge=2)


class Move(Claim):
    """Moving-target demonstrations reach held-out targets more often than static ones (#4)."""

    id = "control.move"
    papers = (
        Ref(
            4,
            "Wang et al. 2025",
            "MOVE: a simple motion-based data collection paradigm "
            "for spatial generalization in robotic manipulation",
        ),
    )
    statement = (
        "Paired over seeds on point_reach (30-step expert demonstrations, n in 4, 8, 16, the "
        "same starts and step budget in both arms), a behaviour-cloned MLP's success on held-out "
        "static targets, averaged over n, is higher with moving-target demonstrations than with "
        "static-target ones by at least 0.10: the CI of the per-seed mean difference lies above "
        "0 and its mean reaches 0.10. Not reproduced when that CI lies wholly below 0.10."
    )
    Config = MoveConfig
    scope = "proxy"
    scope_note = (
        "a 2D point mass reaching an observed target stands in for Meta-World and "
        "real-robot manipulation from point clouds; a ~5k-parameter MLP cloned by "
        "squared error for a diffusion policy; budgets of 120-480 environment steps"
    )
    budgets = {"smoke": {"seeds": 2, "steps": 300, "n_demos": (4, 8), "n_test": 64}, "full": {}}
    smoke_decides = False
    measures = {
        "heldout": Final("test/heldout", "success"),
        "seen": Final("test/seen", "success"),
        "train": Final("train/main", "nmse"),
    }
    fit = Fit("train", 0.1, below=True)
    floor = Floor("heldout", 0.05)
    figure = ArmBars("heldout", by=("targets", "n_demos"))
    controls = {
        "negative": Control(
            {"sites": 1},
            "not reproduced",
            "one fixed target site for every demonstration and every test "
            "episode: by the paper's account motion helps by covering spatial "
            "configurations that static demonstrations miss; with a single "
            "target the static demonstrations already cover the test targets "
            "and moving ones only spread the same budget away from them, so "
            "the gain must vanish",
            budget="full",
            heavy=True,
        ),
        "positive": Control(
            {"demo_x_max": 0.0, "test_x_min": 0.2},
            "reproduced",
            "demonstration targets start in the left half (x <= 0) and held-out "
            "targets lie at x >= 0.2, a region no static demonstration covers "
            "but moving targets drift into: the setting where the paper's "
            "mechanism must show most",
            budget="full",
            heavy=True,
        ),
    }
    MARGIN = 0.10  # fixed before running

    def arms(self, cfg: MoveConfig):
        rows = []
        for targets in TARGETS:
            for n in cfg.n_demos:
                task = {
                    "name": "point_reach",
                    "params": {
                        "targets": targets,
                        "n_demos": n,
                        "horizon": cfg.horizon,
                        "target_speed": cfg.target_speed,
                        "radius": cfg.radius,
                        "demo_x_max": cfg.demo_x_max,
                        "test_x_min": cfg.test_x_min,
                        "sites": cfg.sites,
                        "n_test": cfg.n_test,
                    },
                }
                for s in range(cfg.seeds):
                    rows.append(
                        (
                            {"targets": targets, "n_demos": n},
                            {
                                "task": task,
                                "model": {"name": "policy_mlp", "params": {"width": cfg.width}},
                                "method": {"name": "mse"},
                                "optimizer": {"name": "adam", "lr": cfg.lr},
                                "steps": cfg.steps,
                                "batch_size": cfg.batch,
                                "checkpoint_every": cfg.steps,
                                "eval": {
                                    "every": cfg.steps,
                                    "log_points": 0,
                                    "probes": [
                                        {"name": "reach_success"},
                                        {"name": "regression_error"},
                                    ],
                                },
                                "seed": s,
                                "data_seed": s,
                            },
                        )
                    )
        return arms(rows)

    def synthetic(self, cfg: MoveConfig, arm: dict, case: Case) -> dict[str, float]:
        """Effect: held-out success 0.3 static, 0.6 moving; null: 0.5 both; unfit: as effect,
        the moving arm's training NMSE at 0.5."""
        moving = arm["targets"] == "moving"
        heldout = 0.5 if case == "null" else (0.6 if moving else 0.3)
        train = 0.5 if case == "unfit" and moving else 0.01
        return {"heldout": heldout, "seen": 0.8, "train": train}

    @staticmethod
    def _pivot(table: pd.DataFrame, value: str) -> pd.DataFrame:
        """``value`` per seed (rows) and (targets, n_demos) (columns)."""
        return table.pivot_table(index="seed", columns=["targets", "n_demos"], values=value)

    def decide(self, cfg: MoveConfig, table: pd.DataFrame) -> Decision:
        held = self._pivot(table, "heldout")
        gaps = (held["moving"] - held["static"]).mean(axis=1).dropna()
        iv = Interval.of(
            "held-out success, moving - static, mean over n",
            gaps.tolist(),
            null=0,
            smallest=self.MARGIN,
        )
        mean = held.mean()
        seen = self._pivot(table, "seen").mean()
        stats = {f"{t}_{n}": float(mean[(t, n)]) for t in TARGETS for n in cfg.n_demos}
        stats |= {f"seen_{t}_{n}": float(seen[(t, n)]) for t in TARGETS for n in cfg.n_demos}
        top = float(mean[("static", max(cfg.n_demos))])
        match = [n for n in sorted(cfg.n_demos) if mean[("moving", n)] >= top]
        stats["moving_matches_static_top_at"] = float(match[0]) if match else float("nan")
        curve = "; ".join(
            f"n={n}: static {mean[('static', n)]:.2f}, moving {mean[('moving', n)]:.2f}"
            for n in cfg.n_demos
        )
        eff = (
            f"moving matches static's n={max(cfg.n_demos)} success ({top:.2f}) from n={match[0]}"
            if match
            else f"moving never matches static's n={max(cfg.n_demos)} success ({top:.2f})"
        )
        sentence = (
            f"Held-out success ({curve}); {eff}; on the demonstrations' own targets: "
            + ", ".join(f"{t} {seen[t].mean():.2f}" for t in TARGETS)
            + f". {iv.text()}."
        )
        return Decision(iv.verdict(), stats, sentence, [iv])


register(Move())
