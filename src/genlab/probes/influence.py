"""Influence of training samples: exact damped-GGN influence functions and TracIn (catalogue #13).

- ``ggn_influence``: the influence-function estimate of Koh & Liang as used by Grosse et al.
  (Anthropic 2023, #13) with the Gauss-Newton matrix in place of the Hessian,
  ``I(z_test, z_j) = -g_testᵀ (G + λ I)⁻¹ g_j`` with ``G = (1/n) Σ_i J_iᵀ (diag p_i - p_i p_iᵀ) J_i``
  (``J_i``: Jacobian of sample ``i``'s logits w.r.t. the parameters; ``p_i`` its softmax), built
  exactly (no K-FAC / EK-FAC factorisation: #13's approximation exists to scale to LLMs; a small
  MLP's ``P x P`` matrix fits, and the exact matrix is what an approximation would be checked
  against). Upweighting ``z_j`` by ``ε`` changes the test loss by about ``ε I(z_test, z_j)``; a
  sample's self-influence ``g_jᵀ (G + λ I)⁻¹ g_j`` is large for samples the rest of the data does
  not explain, e.g. mislabelled ones.
- ``tracin``: TracIn (Pruthi et al., NeurIPS 2020): ``Σ_c η_c g_test(w_c) · g_j(w_c)`` over saved
  checkpoints ``w_c`` with learning rates ``η_c``; ``tracin_self`` gives ``Σ_c η_c ‖g_j(w_c)‖²``.
  Checkpoints are ``state_dict``s (e.g. ``torch.load`` of the engine's ``model.pt`` / ``last.pt``,
  or states saved every epoch by your own loop).

Why not a library: ``kronfluence`` 1.0.1 and ``nngeometry`` 0.4 are on the package index, but
``pip install --dry-run`` of either would replace the venv's torch 2.13 (CPU) with torch 2.14.1
and the CUDA 13 wheels, so neither installs cleanly here.

``scope``: ``"all"`` trainable parameters or ``"head"``, the last ``nn.Linear`` only (a
last-layer influence; the probe's default, so it runs on any model that ends in one); ``P`` in
scope must be <= ``max_params``. The damped inverse is applied by Cholesky on the ``P x P`` GGN,
or through Woodbury's identity on the ``NC x NC`` side when ``N*C < P`` (same result, exact).
The ``influence`` probe records, per ``train/*`` split, ``self_influence_mean`` and, when the task
marks corrupted labels (``meta["noisy"]``), ``self_influence_noise_auroc``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import torch
from pydantic import Field
from torch import Tensor, nn
from torch.func import functional_call, jacrev, vmap

from genlab.errors import SpecError
from genlab.probes import PROBES
from genlab.probes._grads import last_linear, require_classification, subsample
from genlab.probes.base import EvalContext, ProbeResult
from genlab.registry import Params

Scope = Literal["all", "head"]


def param_names(model: nn.Module, scope: Scope) -> list[str]:
    """Names of the trainable parameters in ``scope``."""
    names = [k for k, v in model.named_parameters() if v.requires_grad]
    if scope == "head":
        head = last_linear(model)
        ids = {id(p) for p in head.parameters()}
        names = [k for k, v in model.named_parameters() if id(v) in ids and v.requires_grad]
    return names


def logit_jacobians(model: nn.Module, x: Tensor, names: list[str]) -> tuple[Tensor, Tensor]:
    """``(J, logits)``: per-sample Jacobians ``(N, C, P)`` of the logits w.r.t. the flattened
    parameters ``names`` (in order), and the logits ``(N, C)``; in eval mode."""
    params = dict(model.named_parameters())
    chosen = {k: params[k].detach() for k in names}
    fixed = {k: v.detach() for k, v in params.items() if k not in chosen}
    fixed.update({k: v.detach() for k, v in model.named_buffers()})

    def logits_one(p: dict[str, Tensor], xi: Tensor) -> Tensor:
        return functional_call(model, ({**fixed, **p}), (xi.unsqueeze(0),)).squeeze(0)

    was_training = model.training
    model.eval()
    try:
        jac = vmap(jacrev(logits_one), in_dims=(None, 0))(chosen, x)
        with torch.no_grad():
            logits = model(x)
    except (RuntimeError, NotImplementedError) as exc:
        raise SpecError(
            f"{type(model).__name__} cannot give Jacobians through torch.func: "
            f"{str(exc).splitlines()[0]}"
        ) from None
    finally:
        model.train(was_training)
    n, c = logits.shape
    return torch.cat([jac[k].reshape(n, c, -1) for k in names], dim=2), logits


def grads_and_factor(
    model: nn.Module, x: Tensor, y: Tensor, names: list[str]
) -> tuple[Tensor, Tensor]:
    """Per-sample cross-entropy gradients ``(N, P)`` and a factor ``U`` ``(N*C, P)`` of the
    Gauss-Newton matrix of the mean cross-entropy, ``G = Uᵀ U / N`` (``U_i = S_i^{1/2} J_i``,
    ``S_i = diag p_i - p_i p_iᵀ``), for the parameters ``names``."""
    jac, logits = logit_jacobians(model, x, names)
    p = torch.softmax(logits.double(), dim=1)
    jac = jac.double()
    err = p - nn.functional.one_hot(y, p.shape[1]).double()
    g = torch.einsum("nc,ncp->np", err, jac)
    evals, evecs = torch.linalg.eigh(torch.diag_embed(p) - p[:, :, None] * p[:, None, :])
    root = evecs @ torch.diag_embed(evals.clamp_min(0).sqrt()) @ evecs.transpose(1, 2)
    u = torch.einsum("ncd,ndp->ncp", root, jac).reshape(-1, jac.shape[2])
    return g, u


def grads_and_ggn(
    model: nn.Module, x: Tensor, y: Tensor, names: list[str]
) -> tuple[Tensor, Tensor]:
    """Per-sample gradients ``(N, P)`` and the Gauss-Newton matrix ``(P, P)`` (see above)."""
    g, u = grads_and_factor(model, x, y, names)
    return g, u.T @ u / len(x)


def damped_inverse(u: Tensor, n: int, damping: float, rhs: Tensor) -> Tensor:
    """``(Uᵀ U / n + λ I)⁻¹ rhs`` (``rhs``: ``(P, K)``) by Cholesky on the smaller side: the
    ``P x P`` matrix, or, when ``U`` has fewer rows than columns, Woodbury's identity
    ``(1/λ) [rhs - Uᵀ (n λ I + U Uᵀ)⁻¹ U rhs]``."""
    rows, p = u.shape
    if p <= rows:
        a = u.T @ u / n + damping * torch.eye(p, dtype=u.dtype)
        return torch.cholesky_solve(rhs, torch.linalg.cholesky(a))
    small = u @ u.T + n * damping * torch.eye(rows, dtype=u.dtype)
    inner = torch.cholesky_solve(u @ rhs, torch.linalg.cholesky(small))
    return (rhs - u.T @ inner) / damping


def _check_size(names: list[str], model: nn.Module, max_params: int) -> None:
    params = dict(model.named_parameters())
    n = sum(params[k].numel() for k in names)
    if n > max_params:
        raise SpecError(
            f"influence.max_params: {n} parameters in scope exceed max_params={max_params}; use "
            f"scope='head' or raise max_params"
        )


def ggn_influence(
    model: nn.Module,
    x_train: Tensor,
    y_train: Tensor,
    x_test: Tensor,
    y_test: Tensor,
    damping: float = 1e-3,
    scope: Scope = "all",
    max_params: int = 20000,
) -> Tensor:
    """``(N_test, N_train)`` influences ``-g_testᵀ (G + λ I)⁻¹ g_j``, ``G`` the GGN of the mean
    training loss; positive: upweighting ``z_j`` raises the test loss (a harmful sample)."""
    names = param_names(model, scope)
    _check_size(names, model, max_params)
    g_train, u = grads_and_factor(model, x_train, y_train, names)
    g_test, _ = grads_and_factor(model, x_test, y_test, names)
    return -(g_test @ damped_inverse(u, len(x_train), damping, g_train.T))


def ggn_self_influence(
    model: nn.Module,
    x: Tensor,
    y: Tensor,
    damping: float = 1e-3,
    scope: Scope = "all",
    max_params: int = 20000,
) -> Tensor:
    """``(N,)`` self-influences ``g_jᵀ (G + λ I)⁻¹ g_j`` with ``G`` the GGN on ``(x, y)``."""
    names = param_names(model, scope)
    _check_size(names, model, max_params)
    g, u = grads_and_factor(model, x, y, names)
    return (g * damped_inverse(u, len(x), damping, g.T).T).sum(1)


def _grads_at(model: nn.Module, state: dict[str, Tensor], x: Tensor, y: Tensor) -> Tensor:
    from genlab.probes._grads import per_sample_grads

    saved = {k: v.detach().clone() for k, v in model.state_dict().items()}
    model.load_state_dict(state)
    try:
        return per_sample_grads(model, x, y).double()
    finally:
        model.load_state_dict(saved)


def tracin(
    model: nn.Module,
    states: Sequence[dict[str, Tensor]],
    lrs: Sequence[float] | float,
    x_train: Tensor,
    y_train: Tensor,
    x_test: Tensor,
    y_test: Tensor,
) -> Tensor:
    """``(N_test, N_train)`` TracIn scores ``Σ_c η_c g_test(w_c) · g_j(w_c)`` over checkpoints."""
    etas = [lrs] * len(states) if isinstance(lrs, int | float) else list(lrs)
    if len(etas) != len(states) or not states:
        raise ValueError("tracin: need >= 1 checkpoint and one learning rate per checkpoint")
    out = torch.zeros(len(x_test), len(x_train), dtype=torch.float64)
    for eta, state in zip(etas, states, strict=True):
        out += (
            eta
            * _grads_at(model, state, x_test, y_test)
            @ _grads_at(model, state, x_train, y_train).T
        )
    return out


def tracin_self(
    model: nn.Module,
    states: Sequence[dict[str, Tensor]],
    lrs: Sequence[float] | float,
    x: Tensor,
    y: Tensor,
) -> Tensor:
    """``(N,)`` TracIn self-influences ``Σ_c η_c ‖g_j(w_c)‖²``."""
    etas = [lrs] * len(states) if isinstance(lrs, int | float) else list(lrs)
    if len(etas) != len(states) or not states:
        raise ValueError("tracin_self: need >= 1 checkpoint and one learning rate per checkpoint")
    out = torch.zeros(len(x), dtype=torch.float64)
    for eta, state in zip(etas, states, strict=True):
        out += eta * _grads_at(model, state, x, y).pow(2).sum(1)
    return out


def auroc(score: Tensor, positive: Tensor) -> float:
    """AUROC of ``score`` for flagging ``positive`` samples (NaN when one class is absent)."""
    from sklearn.metrics import roc_auc_score  # lazy: importing it costs seconds

    positive = positive.bool()
    if positive.all() or not positive.any():
        return float("nan")
    return float(roc_auc_score(positive.numpy(), score.double().numpy()))


class InfluenceParams(Params):
    """Params of ``influence``."""

    scope: Scope = Field("head", description="'all' trainable parameters or the 'head' only")
    damping: float = Field(1e-3, gt=0, description="λ added to the GGN")
    max_samples: int = Field(128, ge=0, description="training samples per split (0: all)")
    max_params: int = Field(
        20000, ge=1, description="largest P in scope (memory: N*C*P Jacobian entries)"
    )


@PROBES.register(
    "influence", InfluenceParams, papers=(13,), family="diag", tiny={"max_samples": 16}
)
def influence(model: nn.Module, ctx: EvalContext, params: InfluenceParams) -> ProbeResult:
    """Damped-GGN self-influence of training samples (influence functions, #13). Metrics per
    ``train/*`` split: ``self_influence_mean`` and ``self_influence_noise_auroc`` (when the task
    marks corrupted labels). Params: ``scope``, ``damping``, ``max_samples``, ``max_params``."""
    require_classification(ctx, "influence")
    out: ProbeResult = {}
    for name, split in ctx.splits.items():
        if not name.startswith("train/"):
            continue
        idx = subsample(len(split), params.max_samples, ctx, salt=13)
        s = ggn_self_influence(
            model, split.x[idx], split.y[idx], params.damping, params.scope, params.max_params
        )
        out[(name, "self_influence_mean")] = float(s.mean())
        noisy = split.meta.get("noisy")
        if noisy is not None:
            out[(name, "self_influence_noise_auroc")] = auroc(s, torch.as_tensor(noisy)[idx])
    return out
