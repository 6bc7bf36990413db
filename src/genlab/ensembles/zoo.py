"""A model zoo for domain generalization: per-member shift estimates and a source-fitted combination.

Chen et al., "Explore and Exploit the Diverse Knowledge in Model Zoo for Domain Generalization"
(ICML 2023, catalogue #48), characterise each pretrained model by the *diversity shift* and the
*correlation shift* its features show across the training domains (the two axes of OoD-Bench, Ye
et al. 2022) and combine diverse models, not only the strongest. Here, for every member (a finished
run; its penultimate features, frozen):

- a linear probe on the pooled source-domain training features gives class probabilities;
- *diversity shift* between two source domains: a logistic domain classifier on the features
  (fitted on training, scored on validation features) estimates the density ratio; the share of
  examples whose ratio leaves ``[eps, 1/eps]`` (support one domain hardly has) estimates
  ``1/2 int_S |p - q|``; averaged over domain pairs;
- *correlation shift*: on the other examples, ``1/2 sum_y |p_1(y|z) - p_2(y|z)|`` with one label
  probe per domain, averaged; both simplified estimators after OoD-Bench, not its exact code.

The combination mixes the members' probabilities with weights fitted by EM on the source-domain
validation splits (``genlab.ensembles.predictions.em_weights``, the dev-set interpolation of #69);
``concat`` is one probe on all members' features. The best single member is chosen by source
validation accuracy (training-domain validation, DomainBed's rule), never by the target.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import torch
from torch import Tensor, nn

from genlab.data import TaskData
from genlab.ensembles.predictions import em_weights
from genlab.ensembles.probe import SoftmaxProbe, features


@dataclass
class ZooResult:
    """``members``: one row per member (``source_val``, ``target``, ``div_shift``, ``cor_shift``,
    ``weight``); ``combined``: target accuracy of ``em``, ``uniform`` and ``concat``; ``best``: the
    member with the best source validation accuracy; ``per_split``: for each test split, the
    accuracy of ``em``, ``uniform``, ``concat``, ``best`` (that member) and ``oracle`` (the member
    best on that split, for reference only)."""

    members: pd.DataFrame
    combined: dict[str, float]
    best: str
    per_split: dict[str, dict[str, float]] = field(default_factory=dict)


Feats = dict[str, tuple[Tensor, Tensor, Tensor]]


def shift_estimates(feats: Feats, n_classes: int, eps: float = 1e-2) -> tuple[float, float]:
    """Diversity and correlation shift of one member, averaged over pairs of source domains.
    ``feats[env] = (x_train, y_train, x_val)``."""
    divs, cors = [], []
    for a, b in itertools.combinations(sorted(feats), 2):
        (xa, ya, va), (xb, yb, vb) = feats[a], feats[b]
        dom_y = torch.cat([torch.zeros(len(xa)), torch.ones(len(xb))]).long()
        dom = SoftmaxProbe(2, iters=50).fit(torch.cat([xa, xb]), dom_y)
        v = torch.cat([va, vb])
        pb = dom.proba(v)[:, 1].clamp(1e-12, 1 - 1e-12)
        ratio = pb / (1 - pb) * (len(xa) / len(xb))  # q(z) / p(z), priors removed
        outside = (ratio < eps) | (ratio > 1 / eps)
        divs.append(0.5 * (outside[: len(va)].double().mean() + outside[len(va) :].double().mean()))
        inside = v[~outside]
        if len(inside):
            fa = SoftmaxProbe(n_classes, iters=50).fit(xa, ya)
            fb = SoftmaxProbe(n_classes, iters=50).fit(xb, yb)
            cors.append(0.5 * (fa.proba(inside) - fb.proba(inside)).abs().sum(1).mean())
        else:
            cors.append(torch.tensor(0.0))
    return float(torch.stack(divs).mean()), float(torch.stack(cors).mean())


def zoo_dg(members: dict[str, nn.Module], data: TaskData, shifts: bool = True) -> ZooResult:
    """Probe, characterise and combine the zoo ``members`` (name -> frozen model) on a
    multi-domain task: sources are ``data.train`` / ``data.val``, targets ``data.test``."""
    envs = sorted(data.train)
    k = data.info.n_outputs
    ytr = torch.cat([data.train[e].y for e in envs])
    yva = torch.cat([data.val[e].y for e in envs])
    yte = torch.cat([s.y for s in data.test.values()])
    rows, pva, pte, ftr, fte = [], [], [], [], []
    for name, model in members.items():
        per_env = {
            e: (features(model, data.train[e].x), data.train[e].y, features(model, data.val[e].x))
            for e in envs
        }
        xtr = torch.cat([per_env[e][0] for e in envs])
        xva = torch.cat([per_env[e][2] for e in envs])
        xte = torch.cat([features(model, s.x) for s in data.test.values()])
        probe = SoftmaxProbe(k).fit(xtr, ytr)
        p_va, p_te = probe.proba(xva), probe.proba(xte)
        div, cor = shift_estimates(per_env, k) if shifts and len(envs) > 1 else (np.nan, np.nan)
        rows.append(
            {
                "member": name,
                "source_val": (p_va.argmax(1) == yva).double().mean().item(),
                "target": (p_te.argmax(1) == yte).double().mean().item(),
                "div_shift": div,
                "cor_shift": cor,
            }
        )
        pva.append(p_va[torch.arange(len(yva)), yva])
        pte.append(p_te)
        ftr.append(xtr), fte.append(xte)
    w = em_weights(torch.stack(pva))
    table = pd.DataFrame(rows)
    table["weight"] = w.numpy()
    stacked = torch.stack(pte)  # (M, N, K)
    cat = SoftmaxProbe(k).fit(torch.cat(ftr, dim=1), ytr)

    def acc(pred: Tensor) -> float:
        return (pred == yte).double().mean().item()

    preds = {
        "em": torch.einsum("m,mnk->nk", w, stacked).argmax(1),
        "uniform": stacked.mean(0).argmax(1),
        "concat": cat.predict(torch.cat(fte, dim=1)),
    }
    combined = {k: acc(p) for k, p in preds.items()}
    i_best = int(table["source_val"].to_numpy().argmax())
    best = table.loc[i_best, "member"]
    per_split, start = {}, 0
    for name, s in data.test.items():
        sl = slice(start, start + len(s.y))
        start = sl.stop
        ok = {k: (p[sl] == yte[sl]).double().mean().item() for k, p in preds.items()}
        single = (stacked[:, sl].argmax(2) == yte[sl]).double().mean(1)
        per_split[name] = {**ok, "best": single[i_best].item(), "oracle": single.max().item()}
    return ZooResult(table, combined, str(best), per_split)
