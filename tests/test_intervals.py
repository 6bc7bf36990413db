"""Intervals that respect [0, 1]: Wilson for a proportion with a known count, the percentile
bootstrap over seeds for an arm's mean accuracy, in the sweep report's tables and figures and in
the claims' bar figures; paired differences keep their t intervals, and what claims' judges read
(``mean_ci``, ``arm_summary``) is unchanged. The curves figure names the splits it leaves out."""

from __future__ import annotations

import math
import re

import matplotlib.pyplot as plt
import pandas as pd
import pytest
from matplotlib.container import ErrorbarContainer

from genlab.analysis.aggregate import arm_summary, environments, heldout_table, summarize
from genlab.analysis.intervals import bootstrap_ci, interval, is_proportion, proportion_ci, wilson
from genlab.analysis.stats import mean_ci
from genlab.report import claim_figures, sweep_report

SPREAD = [0.0, 0.55]  # two seeds far apart: the t interval runs to about [-3.2, 3.8]


def test_wilson_matches_known_values_and_stays_in_range():
    assert wilson(0, 10) == pytest.approx((0.0, 0.2775), abs=1e-4)
    assert wilson(5, 10) == pytest.approx((0.2366, 0.7634), abs=1e-4)
    assert wilson(10, 10) == pytest.approx((0.7225, 1.0), abs=1e-4)
    assert all(math.isnan(v) for v in wilson(0, 0))
    with pytest.raises(ValueError):
        wilson(11, 10)


def test_bootstrap_stays_inside_the_seeds_where_t_does_not():
    t = mean_ci(SPREAD)
    assert t["ci_lo"] < 0 and t["ci_hi"] > 1  # what the reports showed before
    b = bootstrap_ci(SPREAD)
    assert b["mean"] == pytest.approx(0.275) and (b["ci_lo"], b["ci_hi"]) == (0.0, 0.55)
    vals = [0.91, 0.95, 0.99, 1.0, 0.97]
    b = bootstrap_ci(vals)
    assert 0.91 <= b["ci_lo"] < b["mean"] < b["ci_hi"] <= 1.0
    assert b == bootstrap_ci(vals)  # seeded: the same values, the same interval
    assert math.isnan(bootstrap_ci([0.5])["ci_lo"]) and bootstrap_ci([])["n"] == 0
    assert proportion_ci([0.5], counts=[10])["ci_lo"] == pytest.approx(0.2366, abs=1e-4)
    assert proportion_ci(SPREAD)["ci_hi"] == 0.55
    assert interval(SPREAD, "t") == t
    assert (
        is_proportion("accuracy") and is_proportion("token_accuracy") and not is_proportion("loss")
    )


def test_aggregates_take_the_bootstrap_and_keep_t_by_default():
    frame = pd.DataFrame(
        {
            "group": ["a", "a"],
            "value": SPREAD,
            "seed": [0, 1],
            "split": ["test/x", "test/x"],
            "metric": "accuracy",
        }
    )
    assert summarize(frame, ["group"])["ci_lo"].iloc[0] < 0  # the default: unchanged
    s = summarize(frame, ["group"], how="bootstrap").iloc[0]
    assert 0 <= s["ci_lo"] <= s["ci_hi"] <= 1
    env = environments(frame, ["group"], how="bootstrap").iloc[0]
    assert 0 <= env["ci_lo"] and env["ci_hi"] <= 1 and 0 <= env["worst_ci_lo"]
    sel = pd.DataFrame(
        {"task": "t", "method": "m", "setting": "s", "trial": [0, 1], "test": SPREAD}
    )
    ho = heldout_table(sel, how="bootstrap")
    assert (ho["ci_lo"] >= 0).all() and (ho["ci_hi"] <= 1).all()
    # what claims read stays the t interval
    arm = arm_summary(pd.DataFrame({"arm": ["a", "a"], "acc": SPREAD}), ["arm"], ["acc"])
    assert arm["acc_lo"].iloc[0] == pytest.approx(mean_ci(SPREAD)["ci_lo"])


def test_the_curves_figure_names_what_it_leaves_out():
    assert sweep_report.dropped_note([]) == ""
    note = sweep_report.dropped_note(["val/+90%"])
    assert "not drawn: val/+90%" in note and "4 splits at most" in note


def _arm_bars(values: list[float], tmp_path, monkeypatch) -> plt.Axes:
    seen = {}

    def keep(fig, path, dpi=110):
        seen["ax"] = fig.axes[0]
        return path

    monkeypatch.setattr(claim_figures, "save_figure", keep)
    runs = pd.DataFrame(
        {"method": ["erm"] * len(values), "seed": range(len(values)), "acc": values}
    )
    claim_figures.ArmBars("acc", by="method").draw(runs, pd.DataFrame(), tmp_path / "f.png", "t")
    return seen["ax"]


def test_claim_bars_of_an_accuracy_stay_in_range(tmp_path, monkeypatch):
    ax = _arm_bars(SPREAD, tmp_path, monkeypatch)
    assert "bootstrap" in ax.get_ylabel()
    (bars,) = [c for c in ax.containers if isinstance(c, ErrorbarContainer)]
    lo, hi = bars.lines[2][0].get_segments()[0][:, 1]
    assert (lo, hi) == pytest.approx((0.0, 0.55))
    ax = _arm_bars([-2.0, 3.0], tmp_path, monkeypatch)  # not a proportion: the t interval
    assert "t interval" in ax.get_ylabel()
    plt.close("all")


def test_the_sweep_report_keeps_accuracy_intervals_in_range(tmp_path, tiny_spec):
    """Two seeds at 0.0 and 0.55 held-out accuracy (written to the store by hand): the report's
    cells read 0.275 [0.000, 0.550] where a t interval gave [-3.2, 3.8]."""
    from genlab.store import Store

    st = Store(tmp_path / "s")
    ids = []
    for seed, acc in enumerate(SPREAD):
        spec = tiny_spec.model_copy(update={"seed": seed, "data_seed": seed})
        st.begin(spec.run_id, spec.canonical_json())
        st.log_metrics(
            spec.run_id,
            [(10, "test/heldout", "accuracy", acc), (10, "train/main", "accuracy", 1.0)],
        )
        st.finish(spec.run_id, "done", 10, 0.1)
        ids.append(spec.run_id)
    text = sweep_report.build_report(st, ids, "t").render("md")
    assert "0.275 [0.000, 0.550]" in text and "percentile-bootstrap" in text
    assert not re.search(r"\[-\d", text)  # no interval below 0
