"""Every preset shipped with genlab is a valid spec whose task, model, method and probes build."""

from __future__ import annotations

import pytest

from genlab.engine.train import prepare
from genlab.spec import load_run_spec, preset_description, preset_names

SLOW = {"length-looped"}  # builds 100,000 training programs: 7.7 s on a quiet machine


@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=pytest.mark.slow) if n in SLOW else n for n in preset_names()]
)
def test_preset_builds(name):
    assert preset_description(name), f"preset {name} needs a first comment line saying what it is"
    prepared = prepare(load_run_spec(name))
    assert sum(p.numel() for p in prepared.model.parameters()) > 0
    assert prepared.data.train and all(len(s) for s in prepared.data.train.values())
