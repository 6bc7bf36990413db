"""Where EK-FAC's influences part from the exact damped-GGN ones (#13; docs/diagnostics.md).

Trains the ``diag.ekfac_influence`` architecture (an MLP on 1,000 digits, SGD lr 0.1, batch 100)
with a plain loop, then scores 32 held-out queries x 256 training samples with: the exact damped
GGN inverse, the exact block-diagonal one (cross-layer blocks dropped, as EK-FAC does), EK-FAC,
K-FAC without the eigenvalue correction, and the gradient dot product; prints Spearman and Pearson
correlations (all pairs) for each damping factor (x the mean GGN eigenvalue).

    PYTHONPATH=src .venv/bin/python benchmarks/ekfac_diagnosis.py [--width 16 --depth 2 --seed 0]
"""

from __future__ import annotations

import argparse

import numpy as np
import torch
from scipy.stats import pearsonr, spearmanr
from torch import Tensor, nn

from genlab.models import MODELS
from genlab.probes.ekfac import _out_grads, ekfac_influence, layer_jacobians
from genlab.probes.influence import grads_and_factor, param_names
from genlab.tasks import TASKS


def train(width: int, depth: int, steps: int, seed: int):
    e = TASKS.get("digits")
    data = e.obj(e.params(train_size=1000), 0)
    m = MODELS.get("mlp")
    torch.manual_seed(seed)
    model = m.obj(m.params(width=width, depth=depth), data.info)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    gen = torch.Generator().manual_seed(seed)
    x, y = data.train["main"].x, data.train["main"].y
    for step in range(steps):
        if step % 10 == 0:
            perm = torch.randperm(len(x), generator=gen)
        b = perm[(step % 10) * 100 : (step % 10 + 1) * 100]
        opt.zero_grad()
        nn.functional.cross_entropy(model(x[b]), y[b]).backward()
        opt.step()
    return model, data


def kfac_influence(model, x_fit, xt, yt, xq, yq, damping: float) -> Tensor:
    """K-FAC (eigenvalues ``s_i a_j`` of the factors, no correction), else as EK-FAC."""
    a_f, j_f, p_f = layer_jacobians(model, x_fit)
    a_t, j_t, p_t = layer_jacobians(model, xt)
    a_q, j_q, p_q = layer_jacobians(model, xq)
    n, out = len(x_fit), torch.zeros(len(xq), len(xt), dtype=torch.float64)
    for a, jac, at, jt, aq, jq in zip(a_f, j_f, a_t, j_t, a_q, j_q, strict=True):
        jp = torch.einsum("nko,nk->no", jac, p_f)
        s = torch.einsum("nko,nk,nkp->op", jac, p_f, jac) - jp.T @ jp
        ea, qa = torch.linalg.eigh(a.T @ a / n)
        es, qs = torch.linalg.eigh(s / n)
        u, v = _out_grads(jt, p_t, yt) @ qs, at @ qa
        r = torch.einsum("qi,qj->qij", _out_grads(jq, p_q, yq) @ qs, aq @ qa)
        out -= torch.einsum("qij,ni,nj->qn", r / (es[:, None] * ea[None] + damping), u, v)
    return out


def corr(est: Tensor, exact: Tensor) -> str:
    a, b = est.ravel().numpy(), exact.ravel().numpy()
    return f"{spearmanr(a, b).statistic:.3f} ({pearsonr(a, b).statistic:.3f})"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--width", type=int, default=16)
    ap.add_argument("--depth", type=int, default=2)
    ap.add_argument("--steps", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--damping", type=float, nargs="+", default=[0.01, 0.1, 1.0, 10.0])
    args = ap.parse_args()
    model, data = train(args.width, args.depth, args.steps, args.seed)
    x, y = data.train["main"].x, data.train["main"].y
    q = data.test["heldout"]
    xt, yt, xq, yq = x[:256], y[:256], q.x[:32], q.y[:32]
    names = param_names(model, "all")
    g_tr, _ = grads_and_factor(model, xt, yt, names)
    g_q, _ = grads_and_factor(model, xq, yq, names)
    _, u = grads_and_factor(model, x, torch.zeros(len(x), dtype=torch.long), names)
    ggn = u.T @ u / len(x)
    p = len(ggn)
    sizes = [t.numel() for t in model.parameters()]  # weight, bias per linear layer
    layer = torch.repeat_interleave(torch.arange(len(sizes)) // 2, torch.tensor(sizes))
    block = ggn * (layer[:, None] == layer[None, :])
    ev = torch.linalg.eigvalsh(ggn)
    mean = float(ev.mean())
    acc = (model(x).argmax(1) == y).double().mean().item()
    print(
        f"P={p} train acc {acc:.3f}; GGN eigenvalues: max {ev[-1]:.3g}, mean {mean:.3g}, "
        f"median {ev[p // 2]:.3g}, share below 0.1 x mean {(ev < 0.1 * mean).double().mean():.2f}"
    )
    print("Spearman (Pearson) against the exact damped-GGN influence, unless stated")
    eye = torch.eye(p, dtype=torch.float64)
    for f in args.damping:
        lam = f * mean
        exact = -(g_q @ torch.linalg.solve(ggn + lam * eye, g_tr.T))
        bd = -(g_q @ torch.linalg.solve(block + lam * eye, g_tr.T))
        ek = ekfac_influence(model, x, xt, yt, xq, yq, lam)
        kf = kfac_influence(model, x, xt, yt, xq, yq, lam)
        print(
            f"damping {f:g} x mean: block-diagonal {corr(bd, exact)}; EK-FAC vs block-diagonal "
            f"{corr(ek, bd)}; EK-FAC {corr(ek, exact)}; K-FAC {corr(kf, exact)}; "
            f"dot product {corr(-(g_q @ g_tr.T), exact)}",
            flush=True,
        )


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
