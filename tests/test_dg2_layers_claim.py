"""``ood.intermediate_layers`` (Uselis & Oh, #103): the verdict rule on hand-made probe results,
bad config, and a real-run configuration that must come out not reproduced."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from genlab.claims import CLAIMS
from genlab.claims.ood_layers import layer_table, shift_gains
from genlab.claims.runner import run_claim
from genlab.errors import SpecError
from genlab.store import Store

CLAIM = CLAIMS.get("ood.intermediate_layers").obj


def _frames(acc: dict[str, list[list[float]]]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``acc[shift][seed] = [layer0, layer1, ...]`` -> store-like ``runs`` and ``metrics``."""
    runs, rows = [], []
    for shift, per_seed in acc.items():
        task, env = shift.split(":")
        for seed, layers in enumerate(per_seed):
            rid = f"{task}-{env}-{seed}"
            runs.append({"run_id": rid, "spec": json.dumps({"task": {"name": task}, "seed": seed})})
            for j, a in enumerate(layers):
                rows.append((rid, 0, f"test/{env}", f"layer{j}_probe_acc", 0.1))
                rows.append((rid, 100, f"test/{env}", f"layer{j}_probe_acc", a))
    metrics = pd.DataFrame(rows, columns=["run_id", "step", "split", "metric", "value"])
    return pd.DataFrame(runs), metrics


def test_verdict_rule_on_hand_made_results():
    cfg = CLAIM.config("smoke")
    win = [[0.80, 0.70], [0.82, 0.71], [0.79, 0.69]]  # layer 0 beats the penultimate by ~0.1
    lose = [[0.60, 0.70], [0.61, 0.71], [0.59, 0.69]]
    noisy = [[0.90, 0.70], [0.50, 0.71], [0.70, 0.69]]  # CI straddles 0
    res = CLAIM.judge(cfg, *_frames({"r:a": win, "r:b": win, "c:c": lose}))
    assert res.verdict == "reproduced" and res.statistic["won"] == 2
    res = CLAIM.judge(cfg, *_frames({"r:a": win, "r:b": lose, "c:c": lose}))
    assert res.verdict == "not reproduced" and res.statistic["possible"] == 1
    res = CLAIM.judge(cfg, *_frames({"r:a": win, "r:b": noisy, "c:c": lose}))
    assert res.verdict == "inconclusive"
    table = layer_table(*_frames({"r:a": [[0.5, 0.9, 0.7], [0.5, 0.92, 0.7]]}), "test")
    assert len(table) == 6 and set(table["shift"]) == {"r:a"}  # last step only
    gains = shift_gains(table)
    assert gains.loc[0, "best_layer"] == 1 and gains.loc[0, "gain"] == pytest.approx(0.21)
    assert layer_table(*_frames({"r:a": win}), "val").empty


def test_bad_config_names_the_field():
    with pytest.raises(SpecError, match="shifts"):
        CLAIM.config("smoke", {"shifts": ["rotated_digits:9"]})
    with pytest.raises(SpecError, match="shifts"):
        CLAIM.config("smoke", {"shifts": ["cifar:1"]})
    with pytest.raises(SpecError, match="heldout"):
        CLAIM.config("smoke", {"heldout": "train"})


@pytest.mark.slow
def test_globally_pooled_shallow_blocks_are_not_reproduced(tmp_path):
    """``grid=1``: each block's map is averaged over all positions, so the shallow blocks keep
    channel statistics but lose the digit's layout; their probes cannot match the trained
    penultimate layer on the appearance shifts, and the claim must come out not reproduced
    (measured: 0/4 won, 2 possible; ~25 s on a loaded 2-core machine)."""
    cfg = {"shifts": ["style_digits:1,2,3,4"], "steps": 101, "seeds": 3, "grid": 1}
    res = run_claim(CLAIM, Store(tmp_path), "smoke", cfg, progress=False)
    assert res.verdict == "not reproduced", res.evidence
    assert res.statistic["won"] == 0
