"""``industrial_load``: synthetic industrial load traces of two sites, seq2point windows, and the
augmentations compared by SIDED + AMDA (Interno et al., "Industrial energy disaggregation with
digital twin-generated dataset and efficient data augmentation", #36).

Five appliance models on a 5-minute grid (288 points a day), the kinds SIDED's digital twins
simulate: ``background`` (continuous, a working-hours plateau with autocorrelated noise),
``cooling`` (periodic: a compressor cycling with a duty cycle that follows the day's temperature),
``ev`` (on/off: Poisson charging sessions at a fixed power), ``pv`` (generation, negative: a
daylight arch times each day's cloudiness) and ``chp`` (combined heat and power, generation,
negative: continuous, on through the heating hours at a slowly modulated level). The aggregate is
their sum. A site scales each appliance by its own factor: site A by 1, site B (the test site) by
factors drawn log-uniformly in ``[1/site_shift, site_shift]`` from ``data_seed`` (``site_shift``
1: the same site). The series of the two sites are independent draws of the same models.

Examples are seq2point windows (Zhang et al. 2018): ``window`` points of aggregate power in, the
``target`` appliance's power at the window's midpoint out; inputs are standardised by site A's
training aggregate, targets divided by the training target's standard deviation. ``train/main``:
``n_windows`` windows of site A's training days, plus, with ``augment``, one augmented copy of
each, whose appliances are rescaled before they are summed again:

- ``random``: each appliance by its own factor drawn uniformly in ``[lo, hi]`` (random scaling,
  the usual NILM augmentation);
- ``amda``: each appliance ``i`` by ``S_i = s (1 - p_i) / mean_j(1 - p_j)`` (AMDA), ``p_i`` the
  appliance's share of the training site's total absolute power and ``s`` drawn uniformly in
  ``[lo, hi]`` per window: appliances that weigh little in the aggregate are scaled up most. The
  form ``s (1 - p_i)`` is the paper's (a public re-implementation uses s = 2.5); dividing by the
  mean of ``1 - p_j`` (0.8 for five appliances) and drawing ``s`` per window, so that AMDA and
  ``random`` draw the same overall magnitudes (s = 2 gives 2.5 (1 - p_i)), is genlab's reading.

``test/site_a``: windows of site A's held-out days; ``test/site_b``: windows of site B.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Literal

import numpy as np
import torch
from pydantic import Field

from genlab.data import Split, TaskData, TaskInfo
from genlab.registry import Params
from genlab.tasks import TASKS

APPLIANCES = ("background", "cooling", "ev", "pv", "chp")
DAY = 288  # 5-minute steps


class IndustrialLoadParams(Params):
    """Params of ``industrial_load``."""

    target: Literal["background", "cooling", "ev", "pv", "chp"] = "chp"
    augment: Literal["none", "random", "amda"] = Field("none", description="training copies")
    lo: float = Field(0.5, gt=0, description="least scale factor of an augmentation")
    hi: float = Field(2.0, gt=0, description="largest scale factor of an augmentation")
    site_shift: float = Field(2.0, ge=1, description="site B's factors lie in [1/shift, shift]")
    days: int = Field(20, ge=2, le=365, description="days of site A's training series")
    test_days: int = Field(8, ge=1, le=365, description="days of each test series")
    window: int = Field(99, ge=9, le=1001, description="points per window (odd: a midpoint)")
    n_windows: int = Field(2000, ge=1, le=100_000, description="training windows (before copies)")
    n_test: int = Field(1000, ge=1, le=100_000, description="windows per test site")


def appliances(days: int, rng: np.random.Generator) -> np.ndarray:
    """``(5, days * DAY)`` appliance power (kW) of one site at scale 1 (module docstring)."""
    n = days * DAY
    tau = (np.arange(n) % DAY) / DAY  # time of day in [0, 1)
    day = np.arange(n) // DAY
    hours = 1 / (1 + np.exp(-(tau - 7 / 24) * 60)) / (1 + np.exp((tau - 19 / 24) * 60))
    noise = np.zeros(n)
    for t in range(1, n):  # AR(1) noise
        noise[t] = 0.95 * noise[t - 1] + rng.normal(0, 1.0)
    background = 50 + 30 * hours + noise
    temp = rng.normal(0, 1, days)[day] + np.sin(2 * np.pi * (tau - 9 / 24))  # peak mid-afternoon
    duty = np.clip(0.35 + 0.25 * temp, 0.05, 0.95)
    phase = (np.arange(n) % 6) / 6  # a 30-minute compressor cycle
    cooling = 40.0 * (phase < duty)
    ev = np.zeros(n)
    for d in range(days):
        for _ in range(rng.poisson(4)):
            start = d * DAY + int(rng.uniform(6, 20) / 24 * DAY)
            ev[start : start + int(rng.integers(6, 25))] = 22.0
    clouds = rng.uniform(0.3, 1.0, days)[day]
    pv = -35 * np.clip(np.sin(np.pi * (tau - 0.25) / 0.5), 0, None) * clouds
    level = np.cumsum(rng.normal(0, 0.3, n))
    level = 28 + 6 * np.tanh((level - level.mean()) / (level.std() + 1e-9))
    heating = 1 / (1 + np.exp(-(tau - 5 / 24) * 60)) / (1 + np.exp((tau - 21 / 24) * 60))
    chp = -level * (heating > 0.5)
    return np.stack([background, cooling, ev, pv, chp])


def windows(series: np.ndarray, starts: np.ndarray, width: int) -> np.ndarray:
    """``(len(starts), ..., width)`` windows of ``series`` (appliances on axis 0)."""
    idx = starts[:, None] + np.arange(width)[None]
    return np.moveaxis(series[:, idx], 0, 1)  # (windows, appliances, width)


@lru_cache(maxsize=4)
def _sites(days: int, test_days: int, data_seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(data_seed)
    return appliances(days, rng), appliances(test_days, rng), appliances(test_days, rng)


@TASKS.register(
    "industrial_load",
    IndustrialLoadParams,
    papers=(36,),
    family="nilm",
    tiny={"days": 2, "test_days": 2, "window": 15, "n_windows": 40, "n_test": 20},
)
def industrial_load(params: IndustrialLoadParams, data_seed: int) -> TaskData:
    """Seq2point windows of two synthetic industrial sites, with augmented copies (#36)."""
    if params.lo > params.hi or params.window % 2 == 0:
        raise ValueError("industrial_load needs lo <= hi and an odd window")
    train, held_out, site_b = _sites(params.days, params.test_days, data_seed)
    shift = np.exp(
        np.random.default_rng([data_seed, 36]).uniform(-1, 1, len(APPLIANCES))
        * np.log(params.site_shift)
    )
    site_b = site_b * shift[:, None]
    k, w = APPLIANCES.index(params.target), params.window
    rng, aug = np.random.default_rng([data_seed, 37]), np.random.default_rng([data_seed, 38])

    def draw(series: np.ndarray, n: int) -> np.ndarray:
        return windows(series, rng.integers(0, series.shape[1] - w, n), w)

    # the same windows in every arm: the training windows, then the tests, then the copies
    parts = [draw(train, params.n_windows)]
    test_a, test_b = draw(held_out, params.n_test), draw(site_b, params.n_test)
    if params.augment != "none":
        factors = aug.uniform(params.lo, params.hi, (params.n_windows, len(APPLIANCES)))
        if params.augment == "amda":
            share = np.abs(train).sum(1) / np.abs(train).sum()
            factors = factors[:, :1] * (1 - share)[None] / (1 - share).mean()
        parts.append(parts[0] * factors[:, :, None])
    agg_mean, agg_sd = train.sum(0).mean(), train.sum(0).std()
    y_sd = train[k].std()

    def split(win: np.ndarray) -> Split:
        x = (win.sum(1) - agg_mean) / agg_sd
        y = win[:, k, w // 2] / y_sd
        return Split(
            torch.tensor(x, dtype=torch.float32).unsqueeze(1),
            torch.tensor(y, dtype=torch.float32).unsqueeze(1),
        )

    info = TaskInfo(
        kind="regression",
        n_outputs=1,
        input_shape=(1, w),
        extra={"seq2point": w, "site_b_factors": shift.round(3).tolist()},
    )
    tests = {"site_a": split(test_a), "site_b": split(test_b)}
    return TaskData({"main": split(np.concatenate(parts))}, {}, tests, info)
