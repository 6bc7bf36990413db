"""LoRA through PEFT (genlab[lora]): the skill family, an adapter's round trip through the store,
LoraHub's merge and baselines, the exit-2 message without the extra, and lora.hub's judge."""

from __future__ import annotations

import sys
from importlib.util import find_spec

import pandas as pd
import pytest
import torch
from typer.testing import CliRunner

from genlab.claims import CLAIMS
from genlab.cli import app
from genlab.engine import run_spec
from genlab.spec import load_spec_file, parse_spec, set_path
from genlab.tasks.skill_family import SkillFamilyParams, skill_family

needs_extra = pytest.mark.skipif(
    find_spec("peft") is None or find_spec("nevergrad") is None, reason="needs genlab[lora]"
)

SMALL = {
    "model.base_steps": 300,
    "model.lora_steps": 150,
    "task.n_upstream": 3,
    "task.n_unseen": 2,
    "task.train_size": 600,
    "task.test_size": 300,
}


def hub_spec(**over) -> dict:
    d = load_spec_file("lora-hub")
    for k, v in {**SMALL, "task.task": 3, **over}.items():
        d = set_path(d, k, v)
    return d


def test_skill_family_tasks_are_related_but_distinct():
    p = {"train_size": 500, "test_size": 500}
    ys = {t: skill_family(SkillFamilyParams(task=t, **p), 0).test["heldout"].y for t in (-1, 0, 8)}
    agree = {t: (ys[t] == ys[-1]).float().mean().item() for t in (0, 8)}
    assert all(0.15 < a < 0.9 for a in agree.values()), agree
    few = skill_family(SkillFamilyParams(task=8, shots=3, **p), 0)
    assert torch.bincount(few.train["main"].y).max() <= 3
    with pytest.raises(ValueError, match="task must be"):
        SkillFamilyParams(task=16)


@needs_extra
def test_lora_round_trip_and_merge_weights(store):
    """The hub's library, merged with w = e_i, is LoRA run i; w = 0 is the base."""
    from genlab.derived.lora_hub import LoraHubParams, lora_hub, upstream_specs
    from genlab.store_context import using_store
    from genlab.weights.load import load_model

    d = parse_spec(hub_spec(**{"method.mode": "base"}))
    res = run_spec(d, store, progress=False)
    assert res.status == "done"
    info = skill_family(SkillFamilyParams(**d.task.params), 0).info
    hub_p = LoraHubParams(**d.model.params)
    base_d, lora_ds = upstream_specs(hub_p, info.extra["family"])
    base_id = parse_spec(base_d).run_id
    lora_ds[1]["model"] = {"name": "from_run", "params": {"run": base_id}}
    lora_id = parse_spec(lora_ds[1]).run_id
    assert (store.run_dir(lora_id) / "lora.safetensors").is_file()
    assert "lora" in store.artifacts(lora_id)
    x = torch.randn(50, 16)
    with using_store(store):
        hub = lora_hub(hub_p, info)
        hub.compose(torch.eye(3)[1])
        lora_run = load_model(store, lora_id)
        assert torch.allclose(hub(x), lora_run(x), atol=1e-5)
        hub.compose(torch.zeros(3))
        assert torch.allclose(hub(x), load_model(store, base_id)(x), atol=1e-5)
    # w = 0 is a fresh LoRA that gradient descent can move: A back at the shared init, B = 0
    own = dict(hub.peft.named_parameters())
    for i, name in enumerate(hub.names):
        want = getattr(hub, f"init{i}") if "lora_A" in name else torch.zeros_like(own[name])
        assert torch.equal(own[name], want), name
    assert any("lora_A" in n and own[n].abs().sum() > 0 for n in hub.names)


@needs_extra
@pytest.mark.parametrize("mode", ["uniform", "best_single", "lorahub", "finetune"])
def test_every_composition_mode_sets_its_weights(mode, store):
    s = parse_spec(hub_spec(**{"method.mode": mode, "method.budget": 10, "steps": 20}))
    assert run_spec(s, store, progress=False).status == "done"
    m = store.metrics(s.run_id)
    l1 = m[(m["metric"] == "l1") & (m["step"] == 1)]["value"].item()
    expect = {"uniform": 1 / 3, "best_single": 1 / 3, "finetune": 0.0}
    assert l1 == pytest.approx(expect[mode]) if mode in expect else l1 > 0
    if mode == "finetune":  # one gradient step of the fresh LoRA per run step
        loss = m[m["metric"] == "loss"].sort_values("step")["value"]
        assert loss.iloc[-1] < loss.iloc[0]


def test_lora_commands_exit_2_naming_the_extra_without_it(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "peft", None)
    for preset, over in (("lora-hub", []), ("cl-split-digits", ["method.name=lora"])):
        res = CliRunner().invoke(app, ["run", preset, *over, "--store", str(tmp_path), "-q"])
        assert res.exit_code == 2 and "genlab[lora]" in res.output, res.output
    assert not list(tmp_path.glob("runs/*"))


# ---- the claim's judge --------------------------------------------------------------------------

HUB = CLAIMS.get("lora.hub").obj


def hub_table(lorahub: list[float], ft_fit: float = 1.0) -> pd.DataFrame:
    rows = []
    for t, v in enumerate(lorahub):
        for mode, acc in (
            ("base", 0.32),
            ("uniform", 0.33 + 0.01 * (t % 2)),
            ("lorahub", v),
            ("best_single", 0.5),
            ("finetune", 0.53),
        ):
            rows.append(
                {
                    "mode": mode,
                    "task": t,
                    "seed": 0,
                    "data_seed": 0,
                    "run_id": f"{mode}{t}",
                    "status": "done",
                    "test": acc,
                    "shots": ft_fit if mode == "finetune" else 0.5,
                }
            )
    return pd.DataFrame(rows)


def test_lora_hub_judge_one_table_per_verdict():
    cfg = HUB.config("full")
    assert HUB.evaluate(cfg, hub_table([0.45, 0.42, 0.47, 0.44, 0.46])).verdict == "reproduced"
    assert HUB.evaluate(cfg, hub_table([0.31, 0.30, 0.33, 0.32, 0.31])).verdict == "not reproduced"
    r = HUB.evaluate(cfg, hub_table([0.45, 0.42, 0.47, 0.44, 0.46], ft_fit=0.5))
    assert r.verdict == "inconclusive" and "did not fit" in r.evidence
    assert HUB.evaluate(cfg, hub_table([0.5, 0.2, 0.5, 0.2, 0.4])).verdict == "inconclusive"
