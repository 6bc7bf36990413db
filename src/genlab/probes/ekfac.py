"""EK-FAC influence functions (Grosse et al., "Studying large language model generalization with
influence functions", 2023, catalogue #13) checked against the exact damped Gauss-Newton inverse.

For each ``nn.Linear`` layer (weights and bias as one matrix on the input augmented with a 1),
the GGN block is approximated as ``S ⊗ A``: ``A = E[a aᵀ]`` over training inputs, ``S = E[J_nᵀ
(diag p - p pᵀ) J_n]`` over the pre-activation gradients (the expectation over the model's own
label distribution, i.e. the true Fisher, taken exactly over the classes); in the eigenbasis
``Q_S ⊗ Q_A`` the diagonal is re-estimated from per-sample gradients (George et al.'s eigenvalue
correction), ``Λ_ij = E[(Q_Sᵀ g)_i² (Q_Aᵀ a)_j²]``. The inverse-Hessian-vector product of a query
gradient ``G_q`` is ``Q_S [(Q_Sᵀ G_q Q_A) / (Λ + λ)] Q_Aᵀ`` per layer (cross-layer blocks
dropped), and ``I(q, j) = -⟨IHVP(G_q), G_j⟩``. The same damping ``λ`` (a multiple of the exact
GGN's mean eigenvalue; kronfluence, the paper's public re-implementation, uses 0.1 x the mean of
Λ per layer) serves the exact inverse (``influence.ggn_influence``) and EK-FAC, so the two are
comparable. No TF-IDF filtering or query batching: a small MLP needs neither.

LiSSA (``lissa_ihvp``; Agarwal, Bullins & Hazan 2017, as Koh & Liang 2017 and Grosse et al. use it
for influence functions, the "traditional estimator" the paper compares EK-FAC with) solves the
same damped system by a stochastic Neumann series: ``r_0 = v``, ``r_j = v + (I - (G_b + λ I) / s)
r_{j-1}`` with ``G_b`` the GGN of a fresh minibatch of the curvature inputs at each step, and
IHVP ``≈ r_J / s``; ``s`` (the scale) keeps ``(G_b + λ I) / s`` below the identity.

The ``influence_estimators`` probe records how EK-FAC, LiSSA and the curvature-free gradient dot
product agree with the exact inverse: Pearson and Spearman correlations over every (query,
training sample) pair, queries from the first held-out split. Pearson weighs the large
influences an analysis looks at; Spearman weighs the mass of near-zero ones equally. Influence
functions assume a trained model: the claims read the value at the end of training.
"""

from __future__ import annotations

import torch
from pydantic import Field
from scipy.stats import pearsonr, spearmanr
from torch import Tensor, nn

from genlab.errors import SpecError
from genlab.probes import PROBES
from genlab.probes._grads import require_classification, subsample
from genlab.probes.base import EvalContext, ProbeResult
from genlab.probes.influence import damped_inverse, grads_and_factor, param_names
from genlab.registry import Params


def linear_layers(model: nn.Module) -> list[nn.Linear]:
    """The model's linear layers; ``SpecError`` when other parameters train (EK-FAC here covers
    linear layers only, the exact inverse every parameter: they must be the same set)."""
    layers = [
        m
        for m in model.modules()
        if isinstance(m, nn.Linear)
        if all(p.requires_grad for p in m.parameters())
    ]
    ids = {id(p) for m in layers for p in m.parameters()}
    other = [k for k, p in model.named_parameters() if p.requires_grad and id(p) not in ids]
    if other or not layers:
        raise SpecError(
            f"EK-FAC covers linear layers only; {type(model).__name__} also trains "
            f"{', '.join(other[:3]) or 'no linear layer'}"
        )
    return layers


def layer_jacobians(model: nn.Module, x: Tensor) -> tuple[list[Tensor], list[Tensor], Tensor]:
    """Per linear layer: inputs ``a`` (``(N, in+1)``, a 1 appended) and the Jacobians of the
    logits w.r.t. its outputs ``J`` (``(N, C, out)``); and the softmax ``p`` (``(N, C)``)."""
    layers = linear_layers(model)
    acts: list[Tensor] = []
    outs: list[Tensor] = []

    def hook(mod: nn.Module, inp: tuple[Tensor, ...], out: Tensor) -> None:
        if inp[0].dim() != 2:
            raise SpecError("EK-FAC here handles one input vector per example (MLPs)")
        acts.append(torch.cat([inp[0].detach(), torch.ones(len(out), 1)], 1).double())
        outs.append(out)

    handles = [m.register_forward_hook(hook) for m in layers]
    was_training = model.training
    model.eval()
    try:
        z = model(x)
    finally:
        model.train(was_training)
        for h in handles:
            h.remove()
    jac = [torch.empty(len(x), z.shape[1], o.shape[1], dtype=torch.float64) for o in outs]
    for k in range(z.shape[1]):
        for j, g in zip(
            jac, torch.autograd.grad(z[:, k].sum(), outs, retain_graph=True), strict=True
        ):
            j[:, k] = g.double()  # samples are independent: the batch sum splits per sample
    return acts, jac, torch.softmax(z.detach().double(), 1)


def _out_grads(jac: Tensor, p: Tensor, y: Tensor) -> Tensor:
    """Per-sample loss gradients w.r.t. a layer's outputs, ``J_nᵀ (p_n - e_y)``."""
    err = p - nn.functional.one_hot(y, p.shape[1]).double()
    return torch.einsum("nc,nco->no", err, jac)


def ekfac_influence(
    model: nn.Module,
    x_fit: Tensor,
    x_train: Tensor,
    y_train: Tensor,
    x_query: Tensor,
    y_query: Tensor,
    damping: float,
) -> Tensor:
    """``(N_query, N_train)`` EK-FAC influences (module docstring); the factors come from the
    inputs ``x_fit`` (the whole training set: the GGN needs no labels), damping ``λ`` is added
    to the corrected eigenvalues."""
    a_f, j_f, p_f = layer_jacobians(model, x_fit)
    a_tr, j_tr, p_tr = layer_jacobians(model, x_train)
    a_q, j_q, p_q = layer_jacobians(model, x_query)
    n, out = len(x_fit), torch.zeros(len(x_query), len(x_train), dtype=torch.float64)
    eye = torch.eye(p_f.shape[1], dtype=torch.float64)
    for a, jac, at, jt, aq, jq in zip(a_f, j_f, a_tr, j_tr, a_q, j_q, strict=True):
        jp = torch.einsum("nko,nk->no", jac, p_f)
        s = torch.einsum("nko,nk,nkp->op", jac, p_f, jac) - jp.T @ jp  # Σ_n J(diag p - ppᵀ)J
        qa, qs = torch.linalg.eigh(a.T @ a / n)[1], torch.linalg.eigh(s / n)[1]
        g_all = torch.einsum("nck,nko->nco", p_f[:, None, :] - eye[None], jac) @ qs
        lam = torch.einsum("nc,nci,nj->ij", p_f, g_all**2, (a @ qa) ** 2) / n
        u, v = _out_grads(jt, p_tr, y_train) @ qs, at @ qa
        r = torch.einsum("qi,qj->qij", _out_grads(jq, p_q, y_query) @ qs, aq @ qa) / (lam + damping)
        out -= torch.einsum("qij,ni,nj->qn", r, u, v)
    return out


def top_eigenvalue(u: Tensor, n: int, iters: int = 100) -> float:
    """The top eigenvalue of ``Uᵀ U / n`` by power iteration (from the all-ones vector)."""
    v = torch.ones(u.shape[1], dtype=u.dtype) / u.shape[1] ** 0.5
    ev = 0.0
    for _ in range(iters):
        w = u.T @ (u @ v) / n
        ev = float(w.norm())
        v = w / ev
    return ev


def lissa_ihvp(
    u: Tensor,
    classes: int,
    damping: float,
    rhs: Tensor,
    depth: int,
    batch: int,
    scale: float,
    gen: torch.Generator,
) -> Tensor:
    """LiSSA's ``(G + λ I)⁻¹ rhs`` (module docstring): ``u`` is the GGN factor ``(N*C, P)`` (rows
    of sample ``i`` at ``i*C .. i*C + C - 1``, ``G = Uᵀ U / N``), ``rhs`` ``(P, K)``; ``depth``
    recursion steps, each on ``batch`` samples drawn without replacement by ``gen``; ``scale`` s."""
    n = u.shape[0] // classes
    r = rhs.clone()
    for _ in range(depth):
        idx = torch.randperm(n, generator=gen)[: min(batch, n)]
        rows = (idx[:, None] * classes + torch.arange(classes)).ravel()
        ub = u[rows]
        hv = ub.T @ (ub @ r) / len(idx) + damping * r
        r = rhs + r - hv / scale
    return r / scale


class EstimatorParams(Params):
    """Params of ``influence_estimators``."""

    damping_factor: float = Field(
        0.1, gt=0, description="λ as a multiple of the mean GGN eigenvalue (trace / P)"
    )
    max_train: int = Field(256, ge=2, description="training samples scored")
    max_fit: int = Field(0, ge=0, description="training inputs for the curvature (0: all)")
    max_queries: int = Field(32, ge=1, description="held-out queries")
    max_params: int = Field(20000, ge=1, description="largest parameter count (exact GGN)")
    lissa_depth: int = Field(1000, ge=0, description="LiSSA recursion steps (0: no LiSSA)")
    lissa_batch: int = Field(100, ge=1, description="curvature samples per LiSSA step")
    lissa_scale: float = Field(
        2.0, gt=0, description="LiSSA's scale s as a multiple of the damped GGN's top eigenvalue"
    )


@PROBES.register(
    "influence_estimators",
    EstimatorParams,
    papers=(13,),
    family="diag",
    tiny={"max_train": 8, "max_queries": 4},
)
def influence_estimators(
    model: nn.Module, ctx: EvalContext, params: EstimatorParams
) -> ProbeResult:
    """How EK-FAC, LiSSA and the gradient dot product rank influences against the exact
    damped-GGN inverse (Grosse et al., #13). Metrics on ``train/*``: ``ekfac_spearman``,
    ``lissa_spearman``, ``dot_spearman`` (Spearman over query x training pairs; ``*_pearson``
    beside) and ``damping``. Params: ``damping_factor``, ``max_train``, ``max_fit``,
    ``max_queries``, ``max_params``, ``lissa_depth``, ``lissa_batch``, ``lissa_scale``."""
    require_classification(ctx, "influence_estimators")
    linear_layers(model)
    held = [s for k, s in ctx.splits.items() if not k.startswith("train/")]
    if not held:
        raise SpecError("influence_estimators needs a held-out split for its queries")
    names = param_names(model, "all")
    if sum(p.numel() for k, p in model.named_parameters() if k in names) > params.max_params:
        raise SpecError(
            f"influence_estimators.max_params: the model has more than "
            f"{params.max_params} parameters"
        )
    q = held[0]
    qi = subsample(len(q), params.max_queries, ctx, salt=131)
    out: ProbeResult = {}
    for name, split in ctx.splits.items():
        if not name.startswith("train/"):
            continue
        i = subsample(len(split), params.max_train, ctx, salt=13)
        x_fit = split.x[subsample(len(split), params.max_fit, ctx, salt=14)]
        x, y = split.x[i], split.y[i]
        g_tr, _ = grads_and_factor(model, x, y, names)
        g_q, _ = grads_and_factor(model, q.x[qi], q.y[qi], names)
        _, u = grads_and_factor(model, x_fit, torch.zeros(len(x_fit), dtype=torch.long), names)
        lam = params.damping_factor * float(u.pow(2).sum()) / len(x_fit) / u.shape[1]
        exact = -(g_q @ damped_inverse(u, len(x_fit), lam, g_tr.T))
        ekfac = ekfac_influence(model, x_fit, x, y, q.x[qi], q.y[qi], lam)
        estimators = {"ekfac": ekfac, "dot": -(g_q @ g_tr.T)}
        if params.lissa_depth:
            c = len(u) // len(x_fit)
            top = top_eigenvalue(u, len(x_fit)) + lam
            gen = torch.Generator().manual_seed(1_000_003 * ctx.step + 15)
            ihvp = lissa_ihvp(
                u,
                c,
                lam,
                g_q.T,
                params.lissa_depth,
                params.lissa_batch,
                params.lissa_scale * top,
                gen,
            )
            estimators["lissa"] = -(ihvp.T @ g_tr.T)
        for key, est in estimators.items():
            a, b = est.ravel().numpy(), exact.ravel().numpy()
            out[(name, f"{key}_pearson")] = float(pearsonr(a, b).statistic)
            out[(name, f"{key}_spearman")] = float(spearmanr(a, b).statistic)
        out[(name, "damping")] = lam
    return out
