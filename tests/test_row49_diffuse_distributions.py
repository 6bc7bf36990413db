"""Row 49 (forcing diffuse distributions, #49): the biased pick corpus, the distribution-matching
loss, the diffuseness probe and the judge of ``comp.diffuse_distributions`` on hand-built
tables."""

from __future__ import annotations

import math

import pandas as pd
import pytest
import torch
from pydantic import ValidationError

from genlab.claims import CLAIMS
from genlab.errors import SpecError
from genlab.methods.diffuse import Diffuse, DiffuseParams, listed, target_distribution
from genlab.probes.base import EvalContext
from genlab.probes.diffuseness import DiffusenessParams, diffuseness
from genlab.tasks.diffuse_picks import DiffusePicksParams, diffuse_picks

CLAIM = CLAIMS.get("comp.diffuse_distributions").obj
SMALL = {"n_train": 3000, "n_eval": 200}


def test_prompts_list_one_family_and_answer_from_it():
    d = diffuse_picks(DiffusePicksParams(**SMALL), 0)
    c = d.info.n_outputs
    assert c == 36 and d.info.vocab_size == 44 and d.train["main"].x.shape == (3000, 8)
    x, y = d.train["main"].x, d.train["main"].y
    mask = listed(x, c)
    assert mask[torch.arange(len(y)), y].all()  # the answer is listed
    k = mask.sum(1)
    assert 3 <= int(k.min()) and int(k.max()) <= 6
    fam = torch.div(torch.where(mask)[1], 6, rounding_mode="floor")
    rows = torch.where(mask)[0]
    assert all(len(set(fam[rows == i].tolist())) == 1 for i in range(50))  # one family each
    first = x[torch.arange(len(x)), (x < c).int().argmax(1)]
    share = (first == y).float().mean().item()
    assert 0.65 < share < 0.74  # 0.6 + 0.4 * E[1/k] = 0.695


def test_stages_share_their_tests_and_split_families():
    pre = diffuse_picks(DiffusePicksParams(**SMALL), 3)
    ft = diffuse_picks(DiffusePicksParams(stage="finetune", **SMALL), 3)
    for s in ("trained", "heldout"):
        assert torch.equal(pre.test[s].x, ft.test[s].x)
    held = listed(ft.test["heldout"].x, 36).nonzero()[:, 1]
    tuned = listed(ft.train["main"].x, 36).nonzero()[:, 1]
    assert held.min() >= 18 and tuned.max() < 18  # families 3-5 never listed in fine-tuning
    again = diffuse_picks(DiffusePicksParams(**SMALL), 3)
    assert torch.equal(again.train["main"].x, pre.train["main"].x)


def test_bad_params_are_refused():
    with pytest.raises(ValidationError, match="set_min"):
        DiffusePicksParams(set_max=8)
    with pytest.raises(ValidationError, match="held-out family"):
        DiffusePicksParams(ft_families=6)
    with pytest.raises(SpecError, match="budget"):
        CLAIM.config("huge")


def test_target_and_loss_optimum():
    x = torch.tensor([[9, 2, 0, 1, 8]])  # lists classes 2, 0, 1 (first: 2) of 4
    t = target_distribution(x, 4)
    assert torch.allclose(t, torch.tensor([[1 / 3, 1 / 3, 1 / 3, 0.0]]))
    b = target_distribution(x, 4, "first", 0.6)
    assert torch.allclose(b, torch.tensor([[0.4 / 3, 0.4 / 3, 0.6 + 0.4 / 3, 0.0]]))
    d = diffuse_picks(DiffusePicksParams(**SMALL), 0)
    method = Diffuse(DiffuseParams(), d.info)
    xs = d.train["main"].x[:64]
    perfect = torch.log(target_distribution(xs, 36).clamp_min(1e-12))
    loss, _ = method.loss(lambda _x: perfect, {"main": (xs, d.train["main"].y[:64])})
    k = listed(xs, 36).sum(1).double()
    assert loss.item() == pytest.approx(torch.log(k).mean().item(), abs=1e-4)  # = entropy


def test_probe_reads_uniform_and_peaked_models():
    d = diffuse_picks(DiffusePicksParams(**SMALL), 0)

    class Fixed(torch.nn.Module):
        def __init__(self, peaked: bool):
            super().__init__()
            self.peaked = peaked

        def forward(self, x):
            t = target_distribution(x, 36, "first", 0.9 if self.peaked else 0.0)
            return torch.log(t.clamp_min(1e-9))

    uni = diffuseness(Fixed(False), EvalContext(Fixed(False), d, 0), DiffusenessParams())
    peak = diffuseness(Fixed(True), EvalContext(Fixed(True), d, 0), DiffusenessParams())
    assert uni[("test/heldout", "kl")] == pytest.approx(0.0, abs=1e-6)
    assert uni[("test/heldout", "norm_entropy")] == pytest.approx(1.0, abs=1e-6)
    assert uni[("test/heldout", "valid")] == pytest.approx(1.0, abs=1e-6)
    assert peak[("test/heldout", "kl")] > 0.3
    assert peak[("test/heldout", "coverage")] < uni[("test/heldout", "coverage")]
    assert math.isfinite(peak[("val/main", "entropy")])


def test_method_refuses_other_tasks():
    from genlab.data import TaskInfo

    with pytest.raises(ValueError, match="listed_outcomes"):
        Diffuse(DiffuseParams(), TaskInfo(kind="classification", n_outputs=3))


def table(diffuse_kl: list[float], untuned=0.40, sft=0.38, valid=0.99, own=0.01) -> pd.DataFrame:
    rows = []
    for s, dk in enumerate(diffuse_kl):
        for arm, kl in (("untuned", untuned), ("sft", sft), ("diffuse", dk)):
            trained = own if arm == "diffuse" else kl
            rows.append(
                {
                    "arm": arm,
                    "seed": s,
                    "data_seed": s,
                    "kl_heldout": kl,
                    "kl_trained": trained,
                    "entropy_heldout": 1.4 - kl,
                    "entropy_trained": 1.4 - trained,
                    "coverage_heldout": 0.9 - kl,
                    "coverage_trained": 0.9 - trained,
                    "valid_heldout": valid,
                    "valid_trained": valid,
                }
            )
    t = pd.DataFrame(rows)
    t["status"], t["run_id"] = "done", [f"r{i}" for i in range(len(t))]
    return t


def test_judge_reaches_both_decisions():
    cfg = CLAIM.config("full")
    assert CLAIM.evaluate(cfg, table([0.10, 0.12, 0.09, 0.11])).verdict == "reproduced"
    assert CLAIM.evaluate(cfg, table([0.39, 0.38, 0.40, 0.385])).verdict == "not reproduced"
    assert CLAIM.evaluate(cfg, table([0.10, 0.12, 0.09, 0.11], valid=0.5)).verdict == "inconclusive"
    unfit = CLAIM.evaluate(cfg, table([0.10, 0.12, 0.09, 0.11], own=0.3))
    assert unfit.verdict == "inconclusive"  # the fine-tune did not fit its own target
    neg = CLAIM.config("full", control="negative")
    assert (
        CLAIM.evaluate(neg, table([0.39, 0.38, 0.40, 0.385], own=0.4)).verdict == "not reproduced"
    )


def test_arms_pair_pretraining_and_fine_tunes():
    cfg = CLAIM.config("smoke")
    arms = CLAIM.arms(cfg)
    assert [a.labels["arm"] for a in arms[:3]] == ["untuned", "diffuse", "sft"]
    pre, diffuse, sft = (a.spec for a in arms[:3])
    assert diffuse.model.params["run"] == sft.model.params["run"] == pre.run_id
    assert diffuse.method.name == "diffuse" and sft.method.name == "erm"
    neg = CLAIM.arms(CLAIM.config("smoke", control="negative"))
    assert neg[0].spec.run_id == pre.run_id and neg[2].spec.run_id == sft.run_id
    assert neg[1].spec.run_id != diffuse.run_id
