"""AdamW, Adam and SGD over stacked parameters ``(K, ...)`` with a learning rate and weight decay
per replica: the update rules of ``torch.optim`` (single-tensor path), written out so that K models
can differ in those scalars. State converts to and from each replica's ``torch.optim`` state dict,
so a checkpoint written here resumes under ``genlab.engine.run_spec`` and the other way round.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from genlab.spec import OptimizerSpec


def _per_replica(v: Tensor, like: Tensor) -> Tensor:
    return v.view(-1, *([1] * (like.dim() - 1)))


class VecOptimizer:
    """One update of ``K`` stacked models. ``lr`` and ``weight_decay`` are ``(K,)`` float64."""

    def __init__(self, spec: OptimizerSpec, names: list[str], params: dict[str, Tensor]) -> None:
        self.spec = spec
        self.names = names
        self.step_count = 0
        self.state: dict[str, dict[str, Tensor]] = {}
        self._shapes = {n: params[n] for n in names}

    def update(
        self, params: dict[str, Tensor], grads: dict[str, Tensor], lr: Tensor, wd: Tensor,
        active: Tensor | None = None,
    ) -> None:  # fmt: skip
        """Apply one step in place; replicas where ``active`` is False keep their parameters."""
        self.step_count += 1
        s = self.spec
        for n in self.names:
            if n not in grads:  # unused by the loss: torch.optim skips it (no decay, no state)
                continue
            p, g = params[n], grads[n]
            lr_b, wd_b = _per_replica(lr, p), _per_replica(wd, p)
            old = p.clone() if active is not None else None
            st = self.state.setdefault(n, {})
            if s.name == "sgd":
                if wd.any():
                    g = g + wd_b.to(p.dtype) * p
                if s.momentum:
                    buf = st.get("momentum_buffer")
                    st["momentum_buffer"] = (
                        g.clone() if buf is None else buf.mul_(s.momentum).add_(g)
                    )
                    g = st["momentum_buffer"]
                p.sub_(lr_b.to(p.dtype) * g)
            else:
                b1, b2 = s.betas
                if s.name == "adamw":
                    p.mul_((1 - lr_b * wd_b).to(p.dtype))
                elif wd.any():
                    g = g + wd_b.to(p.dtype) * p
                m = st.setdefault("exp_avg", torch.zeros_like(p))
                v = st.setdefault("exp_avg_sq", torch.zeros_like(p))
                m.lerp_(g, 1 - b1)
                v.mul_(b2).addcmul_(g, g, value=1 - b2)
                bc1 = 1 - b1**self.step_count
                bc2_sqrt = math.sqrt(1 - b2**self.step_count)
                denom = (v.sqrt() / bc2_sqrt).add_(s.eps)
                p.sub_((lr_b / bc1).to(p.dtype) * (m / denom))
            if old is not None:
                p.copy_(torch.where(_per_replica(active, p), p, old))

    # ---- conversion to and from torch.optim state of one replica ------------------------------

    def replica_state(self, k: int) -> list[dict[str, Tensor]]:
        """The ``torch.optim`` per-parameter state of replica ``k`` (in ``names`` order)."""
        out = []
        for n in self.names:
            st = self.state.get(n, {})
            if self.spec.name == "sgd":
                out.append({"momentum_buffer": st["momentum_buffer"][k].clone()}
                           if "momentum_buffer" in st else {})  # fmt: skip
            elif st:
                out.append({"step": torch.tensor(float(self.step_count)),
                            "exp_avg": st["exp_avg"][k].clone(),
                            "exp_avg_sq": st["exp_avg_sq"][k].clone()})  # fmt: skip
            else:
                out.append({})
        return out

    def load_replicas(self, states: list[list[dict[str, Tensor]]], step: int) -> None:
        """Stack the per-replica ``torch.optim`` states (all at the same ``step``)."""
        self.step_count = step
        self.state = {}
        for j, n in enumerate(self.names):
            keys = states[0][j].keys() - {"step"}
            self.state[n] = {key: torch.stack([s[j][key] for s in states]) for key in keys}
