"""GenKnowSub + Arrow (#89): the domain family, Arrow's prototypes and routing, the residual
modules, the arrow method's modes on a small library, and lora.knowledge_subtraction's judge."""

from __future__ import annotations

from importlib.util import find_spec

import pandas as pd
import pytest
import torch

from genlab.claims import CLAIMS
from genlab.derived.arrow_library import Layer, arrow_weights, prototype
from genlab.engine import run_spec
from genlab.spec import load_spec_file, parse_spec, set_path
from genlab.tasks.domain_family import DomainFamilyParams, domain_family, family

needs_peft = pytest.mark.skipif(find_spec("peft") is None, reason="needs genlab[lora]")


def test_domain_family_tasks_have_their_own_domains_and_share_g():
    p = {"train_size": 400, "test_size": 400}
    f = family(DomainFamilyParams())
    for t in (0, 3):
        x = domain_family(DomainFamilyParams(task=t, **p), 0).train["main"].x
        own = (x @ f["vs"][t]).norm(dim=1).mean()
        other = (x @ f["vs"][(t + 1) % 8]).norm(dim=1).mean()
        assert own > 3 * other  # each upstream task lives on its own domain
    ys = {
        s: domain_family(DomainFamilyParams(task=0, shared=s, **p), 0).test["heldout"].y
        for s in (0.0, 2.0)
    }
    assert 0.1 < (ys[0.0] == ys[2.0]).float().mean() < 0.9  # G changes the labels
    xg = domain_family(DomainFamilyParams(task=-1, general="disjoint", **p), 0).train["main"].x
    assert (xg @ f["v0"]).abs().max() < 1e-4 and (xg @ f["vs"][0]).abs().max() < 1e-4
    with pytest.raises(ValueError, match="task must be"):
        DomainFamilyParams(task=24)


def test_heldout_shared_moves_the_heldout_tasks_only_and_keeps_old_ids():
    p = {"shared": 0.0, "train_size": 300, "test_size": 300}
    up = [
        domain_family(DomainFamilyParams(task=2, heldout_shared=h, **p), 0).test["heldout"].y
        for h in (None, 2.0)
    ]
    assert torch.equal(up[0], up[1])  # an upstream task keeps its labels
    ho = [
        domain_family(DomainFamilyParams(task=9, heldout_shared=h, **p), 0).test["heldout"].y
        for h in (None, 2.0)
    ]
    assert 0.1 < (ho[0] == ho[1]).float().mean() < 0.9  # the held-out task now needs G
    assert "heldout_shared" not in DomainFamilyParams().model_dump()  # run ids as before
    assert DomainFamilyParams(heldout_shared=1.0).model_dump()["heldout_shared"] == 1.0


def test_prototype_is_the_top_right_singular_vector_and_routing_is_top_k():
    g = torch.Generator().manual_seed(0)
    a, b = torch.randn(3, 10, generator=g), torch.randn(5, 3, generator=g)
    v = prototype(b @ a)
    sv = torch.linalg.svdvals(b @ a)
    assert torch.allclose((b @ a @ v).norm(), sv[0], atol=1e-4)
    protos = torch.eye(4, 10)
    h = torch.tensor([[3.0, -2.0, 0.5, 0.1] + [0.0] * 6])
    w = arrow_weights(h, protos, top_k=2, temperature=1.0)
    assert w[0, 2:].abs().sum() == 0  # only the two best (by |score|) get weight
    assert torch.allclose(w[0, :2], torch.softmax(torch.tensor([3.0, 2.0]), 0))


def test_delta_residual_is_the_exact_difference_of_updates():
    g = torch.Generator().manual_seed(1)
    a, b = torch.randn(3, 2, 6, generator=g), torch.randn(3, 4, 2, generator=g)
    layer = Layer(a, b, 1.0)
    ra, rb = layer.modules("delta")
    for i in range(2):
        assert torch.allclose(rb[i] @ ra[i], b[i + 1] @ a[i + 1] - b[0] @ a[0], atol=1e-5)
    fa, fb = layer.modules("factors")
    assert torch.allclose(fb[0] @ fa[0], (b[1] - b[0]) @ (a[1] - a[0]))


SMALL = {
    "model.base_steps": 50,
    "model.lora_steps": 20,
    "task.n_upstream": 3,
    "task.n_heldout": 2,
    "task.dim": 10,
    "task.train_size": 400,
    "task.test_size": 200,
}


def _trained_library(store, mode: str):
    """The small lora-arrow preset trained with ``method.mode`` and its library loaded."""
    from genlab.derived.arrow_library import ArrowLibraryParams, arrow_library
    from genlab.store_context import using_store

    d = load_spec_file("lora-arrow")
    for k, v in {**SMALL, "task.task": 3, "method.mode": mode}.items():
        d = set_path(d, k, v)
    s = parse_spec(d)
    assert run_spec(s, store, progress=False).status == "done"
    info = domain_family(DomainFamilyParams(**s.task.params), 0).info
    with using_store(store):
        return arrow_library(ArrowLibraryParams(**s.model.params), info)


@needs_peft
def test_modes_of_the_arrow_library(store):
    """base = the base run; genknowsub with exact subtraction = base + Arrow mix of task LoRAs."""
    lib = _trained_library(store, "genknowsub")
    x = torch.randn(64, 10)
    lib.configure("base")
    y0 = lib(x)
    lib.configure("general")
    assert not torch.allclose(lib(x), y0)
    lib.configure("genknowsub", top_k=3)  # every module: weights from the residual prototypes
    w = arrow_weights(x, lib.stacks["1"][2], 3, 1.0)
    layer = lib.layers["1"]
    mix = torch.einsum("ne,eoi,ni->no", w, layer.b[1:] @ layer.a[1:], x)
    assert torch.allclose(lib(x), y0 + mix, atol=1e-4)
    assert lib.size == 3


@needs_peft
def test_peft_arrow_and_genknowsub_agree_with_the_hooks(store):
    """PEFT's Arrow router (issue #31) on genlab's library: without subtraction it is the hooks'
    ``arrow_base`` (same prototypes, same mix); with GenKnowSub it routes the factor-wise
    residuals ``(A_i - A_g, B_i - B_g)`` and the general LoRA takes no part in the forward."""
    lib = _trained_library(store, "peft_genknowsub")
    x = torch.randn(256, 10, generator=torch.Generator().manual_seed(0))
    lib.configure("arrow_base", top_k=2)
    hooks = lib(x)
    lib.configure("peft_arrow", top_k=2)
    assert torch.allclose(lib(x), hooks, atol=1e-4)
    layer = lib.layers["1"]
    a, b = layer.modules("factors")
    w = arrow_weights(
        x, torch.stack([prototype(bi @ ai) for ai, bi in zip(a, b, strict=True)]), 2, 1.0
    )
    lib.configure("base")
    expect = lib(x) + torch.einsum("ne,eoi,ni->no", w, b @ a, x)  # no general LoRA
    lib.configure("peft_genknowsub", top_k=2)
    got = lib(x)
    assert (got.argmax(1) == expect.argmax(1)).float().mean() > 0.9
    assert torch.allclose(lib.layers["1"].a, layer.a)  # PEFT subtracted in its own copy


# ---- the claim's judge --------------------------------------------------------------------------

GKS = CLAIMS.get("lora.knowledge_subtraction").obj


def gks_table(gks: list[float], fit: float = 0.95) -> pd.DataFrame:
    rows = []
    for t, v in enumerate(gks):
        for mode, acc in (
            ("base", 0.2),
            ("general", 0.45),
            ("arrow", 0.52 + 0.01 * (t % 2)),
            ("genknowsub", v),
        ):
            rows.append(
                {
                    "mode": mode,
                    "task": t,
                    "family": 0,
                    "seed": 0,
                    "data_seed": 0,
                    "run_id": f"{mode}{t}",
                    "status": "done",
                    "test": acc,
                    "train": 0.5,
                }
            )
    for t in (-2, -1, 0, 1):
        rows.append(
            {
                "mode": "library",
                "task": t,
                "family": 0,
                "seed": 0,
                "data_seed": 0,
                "run_id": f"lib{t}",
                "status": "done",
                "test": 0.9,
                "train": fit,
            }
        )
    return pd.DataFrame(rows)


def test_knowledge_subtraction_judge_one_table_per_verdict():
    cfg = GKS.config("full")
    assert GKS.evaluate(cfg, gks_table([0.64, 0.62, 0.66, 0.63, 0.65])).verdict == "reproduced"
    assert GKS.evaluate(cfg, gks_table([0.51, 0.50, 0.52, 0.52, 0.51])).verdict == "not reproduced"
    r = GKS.evaluate(cfg, gks_table([0.64, 0.62, 0.66, 0.63, 0.65], fit=0.6))
    assert r.verdict == "inconclusive" and "did not fit" in r.evidence
    assert GKS.evaluate(cfg, gks_table([0.7, 0.4, 0.7, 0.4, 0.6])).verdict == "inconclusive"
