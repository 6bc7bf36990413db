"""The length claims (but ``length.chomsky``) judged on hand-built results, one test per verdict;
their controls run for real in ``test_claims_controls.py``. Also the Hard-ALiBi encoding and the
probe's validation numbers they rely on."""

from __future__ import annotations

import math

import pandas as pd
import pytest
import torch

from genlab.claims import CLAIMS
from genlab.errors import SpecError
from genlab.models.positional import HardALiBi


def judge(cid: str, overrides: dict, values):  # noqa: ANN001, ANN201
    """The verdict of claim ``cid`` on its own arms, each run's measures from ``values(labels)``."""
    claim = CLAIMS.get(cid).obj
    cfg = claim.config("smoke", overrides)
    rows = [
        {
            **a.labels,
            "run_id": a.spec.run_id,
            "status": "done",
            "val": 1.0,
            "ood_token": 0.5,
            **values(a.labels),
        }
        for a in claim.arms(cfg)
    ]
    return claim.evaluate(cfg, pd.DataFrame(rows))


def by_seed(pairs: dict):  # noqa: ANN001, ANN201
    """``values`` from ``{arm: (seed0, seed1)}`` of out-of-range exact match, keyed by the first
    label (the arm axis)."""
    return lambda lab: {"ood": pairs[next(iter(lab.values()))][lab["seed"]]}


TWO_ARM = [  # claim, overrides, method arm, baseline arm
    ("length.turing_programs", {}, "turing", "reversed"),
    ("length.task_hinting", {}, "successor", "alone"),
    ("length.looped_depth", {"seeds": 2}, "looped", "transformer"),
]


@pytest.mark.parametrize(("cid", "over", "method", "base"), TWO_ARM)
@pytest.mark.parametrize(
    ("m", "b", "verdict"),
    [
        ((0.80, 0.85), (0.10, 0.20), "reproduced"),
        ((0.00, 0.00), (0.00, 0.00), "not reproduced"),  # fits, never extrapolates
        ((0.60, 0.62), (0.59, 0.61), "not reproduced"),  # extrapolates, no better than baseline
        ((0.20, 0.90), (0.00, 0.10), "inconclusive"),  # two seeds that disagree
    ],
)
def test_method_versus_baseline_claims(cid, over, method, base, m, b, verdict) -> None:
    r = judge(cid, over, by_seed({method: m, base: b}))
    assert r.verdict == verdict, r.evidence


def test_an_unfit_baseline_makes_a_two_arm_claim_inconclusive() -> None:
    claim = CLAIMS.get("length.turing_programs").obj
    cfg = claim.config("smoke")
    rows = [
        {
            **a.labels,
            "run_id": a.spec.run_id,
            "status": "done",
            "ood_token": 0.5,
            "val": 1.0 if a.labels["format"] == "turing" else 0.45,
            "ood": 0.9 if a.labels["format"] == "turing" else 0.0,
        }
        for a in claim.arms(cfg)
    ]
    r = claim.evaluate(cfg, pd.DataFrame(rows))
    assert (
        r.verdict == "inconclusive" and "arm reversed did not fit (val 0.450 < 0.9)" in r.evidence
    )


RASP = {
    "copy_unique": (0.9, 0.95),
    "sort": (0.8, 0.9),
    "copy_repeat": (0.0, 0.05),
    "parity": (0.5, 0.52),
}


def fit_by_arm(values, unfit: str):  # noqa: ANN001, ANN201
    """``values`` with the arm ``unfit`` (first label) at val 0.5: it did not fit."""
    return lambda lab: {**values(lab), "val": 0.5 if next(iter(lab.values())) == unfit else 1.0}


@pytest.mark.parametrize(
    ("cid", "over", "values", "unfit", "verdict"),
    [  # a refutation from arms that fit stands when an arm it does not read did not fit
        (
            "length.addition_format",
            {},
            {"index_hints": (0.30, 0.31), "reversed": (0.0, 0.0)},
            "reversed",
            "not reproduced",
        ),  # the recorded full result: hints 0.306, reversed val 0.31
        (
            "length.addition_format",
            {},
            {"index_hints": (0.30, 0.31), "reversed": (0.0, 0.0)},
            "index_hints",
            "inconclusive",
        ),  # the refuting arm itself did not fit
        (
            "length.rasp",
            {"tasks": list(RASP)},
            {**RASP, "copy_unique": (0.23, 0.24)},
            "parity",
            "not reproduced",
        ),  # the recorded full result: copy_unique 0.238
        (
            "length.turing_programs",
            {},
            {"turing": (0.0, 0.0), "reversed": (0.0, 0.0)},
            "reversed",
            "not reproduced",
        ),  # the Turing arm fits and does not extrapolate
        (
            "length.task_hinting",
            {},
            {"successor": (0.60, 0.62), "alone": (0.59, 0.61)},
            "alone",
            "inconclusive",
        ),  # the gap reads both arms
        (
            "length.scratchpad",
            {},
            {"direct": (0.95, 0.97), "scratchpad": (0.0, 0.0)},
            "scratchpad",
            "not reproduced",
        ),  # the direct answer fits and extrapolates
    ],
)
def test_a_refutation_reads_only_its_arms(cid, over, values, unfit, verdict) -> None:
    r = judge(cid, over, fit_by_arm(by_seed(values), unfit))
    assert r.verdict == verdict, r.evidence


@pytest.mark.parametrize(
    ("hints", "base", "verdict"),
    [
        ((0.70, 0.80), (0.00, 0.02), "reproduced"),
        ((0.05, 0.10), (0.00, 0.00), "not reproduced"),  # hints do not extrapolate
        ((0.70, 0.80), (0.60, 0.62), "not reproduced"),  # the format without hints does too
        ((0.30, 0.80), (0.00, 0.00), "inconclusive"),
    ],
)
def test_addition_format(hints, base, verdict) -> None:
    r = judge("length.addition_format", {}, by_seed({"index_hints": hints, "reversed": base}))
    assert r.verdict == verdict, r.evidence


@pytest.mark.parametrize(
    ("change", "verdict"),
    [
        ({}, "reproduced"),  # parity at its chance level counts as 0 above it
        ({"copy_unique": (0.1, 0.05)}, "not reproduced"),  # a RASP-L task fails
        ({"parity": (0.95, 0.97)}, "not reproduced"),  # a task without one extrapolates
        ({"sort": (0.2, 0.95)}, "inconclusive"),
    ],
)
def test_rasp(change, verdict) -> None:
    over = {"tasks": list(RASP)}
    r = judge("length.rasp", over, by_seed({**RASP, **change}))
    assert r.verdict == verdict, r.evidence


@pytest.mark.parametrize(
    ("direct", "pad", "verdict"),
    [
        ((0.50, 0.51), (0.00, 0.01), "reproduced"),  # at chance: no extrapolation
        ((0.30, 0.40), (0.00, 0.00), "reproduced"),  # below chance counts as 0, not as -1
        ((0.95, 0.97), (0.00, 0.00), "not reproduced"),  # the direct answer extrapolates
        ((0.50, 0.90), (0.00, 0.00), "inconclusive"),
    ],
)
def test_scratchpad_absence(direct, pad, verdict) -> None:
    r = judge("length.scratchpad", {}, by_seed({"direct": direct, "scratchpad": pad}))
    assert r.verdict == verdict, r.evidence


def nope_values(acc: dict, unfit: str = ""):  # noqa: ANN001, ANN201
    """Per-length exact match by encoding (the same on both tasks, seeds jittered); the encoding
    ``unfit`` at val 0.5."""

    def values(lab: dict) -> dict:
        a = [v + 0.01 * lab["seed"] for v in acc[lab["positional"]]]
        return {
            "val": 0.5 if lab["positional"] == unfit else 1.0,
            "ood": sum(a) / len(a),
            "len_0": a[0],
            "len_1": a[1],
            "len_2": math.nan,
            "len_3": math.nan,
        }

    return values


NOPE = {"ops": ["copy", "reverse"], "seeds": 2}


@pytest.mark.parametrize(
    ("acc", "verdict"),
    [
        (
            {"none": (0.9, 0.6), "t5": (0.8, 0.5), "sinusoidal": (0.2, 0.0), "rope": (0.3, 0.1)},
            "reproduced",
        ),
        (
            {"none": (0.2, 0.0), "t5": (0.8, 0.5), "sinusoidal": (0.9, 0.6), "rope": (0.3, 0.1)},
            "not reproduced",
        ),  # APE ranks ahead of NoPE
        (
            {"none": (0.9, 0.1), "t5": (0.8, 0.5), "sinusoidal": (0.2, 0.6), "rope": (0.3, 0.0)},
            "inconclusive",
        ),  # NoPE ahead of APE at one length, behind at the other
        (
            {"none": (0.0, 0.0), "t5": (0.01, 0.0), "sinusoidal": (0.0, 0.0), "rope": (0.0, 0.0)},
            "inconclusive",
        ),  # every encoding at the floor: nothing to rank
    ],
)
def test_nope_mean_reciprocal_rank(acc, verdict) -> None:
    r = judge("length.nope", NOPE, nope_values(acc))
    assert r.verdict == verdict, r.evidence
    if verdict == "reproduced":
        assert r.statistic["mrr_none"] == 1.0 and r.statistic["mrr_sinusoidal"] == 0.25


@pytest.mark.parametrize(
    ("unfit", "verdict"),
    [
        ("rope", "not reproduced"),  # ranked below the refuted pair everywhere: not read
        ("t5", "inconclusive"),  # ranked above it: its rank is in the pair's
        ("sinusoidal", "inconclusive"),
    ],  # one of the pair
)
def test_nope_refutation_reads_the_encodings_its_ranks_rest_on(unfit, verdict) -> None:
    acc = {"none": (0.3, 0.2), "t5": (0.9, 0.8), "sinusoidal": (0.5, 0.4), "rope": (0.0, 0.0)}
    r = judge("length.nope", NOPE, nope_values(acc, unfit))  # APE ranks ahead of NoPE
    assert r.verdict == verdict, r.evidence


def symbols(van: tuple, mod: tuple, spread: float = 0.01):  # noqa: ANN001, ANN201
    """Unseen accuracy per arm at sizes 32 and 128, seeds 0-2 at -spread, 0, +spread."""
    return lambda lab: {
        "train": 1.0,
        "unseen": (van if lab["arm"] == "vanilla" else mod)[[32, 128].index(lab["n_train"])]
        + spread * (lab["seed"] - 1),
    }


@pytest.mark.parametrize(
    ("van", "mod", "verdict"),
    [
        ((0.55, 0.70), (0.95, 0.97), "reproduced"),  # modified at 32, vanilla never
        ((0.55, 0.95), (0.60, 0.97), "not reproduced"),  # both need 128
        ((0.60, 0.98), (0.58, 0.80), "not reproduced"),  # the modified one never reaches 0.9
        ((0.50, 0.52), (0.51, 0.53), "inconclusive"),  # every arm at chance
        ((0.89, 0.95), (0.95, 0.97), "inconclusive"),  # vanilla's CI at 32 straddles 0.9
    ],
)
def test_abstract_symbols(van, mod, verdict) -> None:
    r = judge("length.abstract_symbols", {"sizes": [32, 128], "seeds": 3}, symbols(van, mod))
    assert r.verdict == verdict, r.evidence
    if verdict == "reproduced":
        assert (
            math.isinf(r.statistic["n_needed_vanilla"]) and r.statistic["n_needed_modified"] == 32
        )


@pytest.mark.parametrize(
    ("cid", "overrides", "field"),
    [
        ("length.nope", {"train_length": 8, "test_max": 8}, "test_max"),
        ("length.nope", {"ahead": ["none"], "behind": ["none", "rope"]}, "ahead"),
        ("length.addition_format", {"method": "plain", "baseline": "plain"}, "baseline"),
        ("length.rasp", {"tasks": ["sort", "copy_unique"]}, "tasks"),
        ("length.task_hinting", {"alphabet_size": 10, "test_max": 20}, "alphabet_size"),
        ("length.turing_programs", {"positional": "nope"}, "positional"),
        ("length.abstract_symbols", {"sizes": [64, 32]}, "sizes"),
        ("length.abstract_symbols", {"modified_qk": False, "modified_vo": False}, "modified"),
    ],
)
def test_bad_config_names_the_field(cid, overrides, field) -> None:
    with pytest.raises(SpecError, match=field):
        CLAIMS.get(cid).obj.config("smoke", overrides)


def test_rasp_positive_control_trains_a_design_of_its_own() -> None:
    """Issue #30: a positive control (it licenses a measured "not reproduced") is a valid config
    that differs from the claim's, with runs of its own, not the claim's runs re-judged."""
    claim = CLAIMS.get("length.rasp").obj
    c = claim.controls["positive"]
    assert c.overrides and (c.expect, c.budget) == ("reproduced", "full")
    own, pos = claim.config("full"), claim.config("full", control="positive")
    assert pos != own and all(getattr(pos, k) == v for k, v in c.overrides.items())
    ids = {a.spec.run_id for a in claim.arms(pos)}
    assert ids and not ids & {a.spec.run_id for a in claim.arms(own)}


def test_hard_alibi_windows_half_the_heads_and_leaves_the_rest_nope() -> None:
    bias = HardALiBi(16, 4, 8).attention_bias(5)  # heads 0, 1: windows of 1 and 2 tokens
    i, j = torch.arange(5)[:, None], torch.arange(5)[None, :]
    assert torch.equal(bias[0].isfinite(), j >= i)  # itself (later keys: the causal mask's job)
    assert torch.equal(bias[1].isfinite(), j >= i - 1)  # itself and the token before
    assert (bias[bias.isfinite()] == 0).all() and (bias[2:] == 0).all()  # heads 2, 3: NoPE
