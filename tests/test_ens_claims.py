"""Judge tests of the ensemble claims on hand-built tables, one per verdict."""

from __future__ import annotations

import pandas as pd
import pytest

from genlab.claims import CLAIMS

WISE = CLAIMS.get("ens.wise_ft_fft").obj


def wise_table(pre, ft, mid, fft, bang_mid, train=0.95):
    """Per-seed OOD accuracies of A, B and the midpoints; the A rows carry only their own."""
    n, rows = len(pre), []
    for s in range(n):
        rows.append({"arm": "A", "seed": s, "ood": pre[s]})
        b = {"ood_pre": pre[s], "ood_ft": ft[s], "ood": ft[s]}
        rows.append({"arm": "B", "seed": s, **b, "ood_mid": mid[s], "fft": fft[s]})
        rows.append({"arm": "B_bang", "seed": s, **b, "ood_mid": bang_mid[s], "fft": fft[s]})
    t = pd.DataFrame(rows)
    t["data_seed"], t["train"], t["status"] = t["seed"], train, "done"
    t["run_id"] = [f"r{i}" for i in range(len(t))]
    return t


PRE, FT = [0.60, 0.62, 0.61], [0.70, 0.71, 0.69]


@pytest.mark.parametrize(
    ("mid", "fft", "bang", "train", "verdict"),
    [
        ([0.75, 0.77, 0.76], [0.05, 0.06, 0.055], [0.77, 0.78, 0.78], 0.95, "reproduced"),
        ([0.66, 0.67, 0.68], [0.002, 0.004, 0.003], [0.66, 0.67, 0.68], 0.95, "not reproduced"),
        ([0.75, 0.69, 0.80], [0.05, 0.0, 0.09], [0.75, 0.69, 0.80], 0.95, "inconclusive"),
        ([0.75, 0.77, 0.76], [0.05, 0.06, 0.055], [0.77, 0.78, 0.78], 0.5, "inconclusive"),
    ],
    ids=["gain", "no-gain", "straddles", "unfit"],
)
def test_wise_ft_fft_judge(mid, fft, bang, train, verdict):
    cfg = WISE.config("smoke")
    r = WISE.evaluate(cfg, wise_table(PRE, FT, mid, fft, bang, train))
    assert r.verdict == verdict, r.evidence
    if verdict == "reproduced":
        assert r.statistic["gain"] == pytest.approx(0.76 - 0.70, abs=1e-9)
