"""AdamW, Adam and SGD over K stacked models held as one flat ``(K, P)`` tensor, with a learning
rate and weight decay per replica: the update rules of ``torch.optim`` (single-tensor path) written
as a handful of whole-tensor operations, so one update costs the same few kernels whatever the
number of parameters. State converts to and from each replica's ``torch.optim`` state dict, so a
checkpoint written here resumes under ``genlab.engine.run_spec`` and the other way round.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor

from genlab.spec import OptimizerSpec


@dataclass(frozen=True)
class Slot:
    """Where one trainable parameter lives in a flat row: ``row[offset : offset + numel]``."""

    name: str
    offset: int
    shape: tuple[int, ...]

    @property
    def numel(self) -> int:
        return math.prod(self.shape)


class VecOptimizer:
    """One update of the flat parameters ``(K, P)``; ``lr`` and ``weight_decay`` are ``(K, 1)``.

    ``trainable`` lists the names ``torch.optim`` holds, in its order; ``slots`` the ones the loss
    uses (the others never get a gradient, so ``torch.optim`` never touches them either).
    """

    def __init__(self, spec: OptimizerSpec, trainable: list[str], slots: list[Slot]) -> None:
        self.spec = spec
        self.trainable = trainable
        self.slots = {s.name: s for s in slots}
        self.step_count = 0
        self.state: dict[str, Tensor] = {}
        self._wd: Tensor | None = None
        self._decay = False

    def update(self, p: Tensor, g: Tensor, lr: Tensor, wd: Tensor) -> None:
        """Apply one step to ``p`` in place (``lr``, ``wd``: float64 ``(K, 1)``)."""
        self.step_count += 1
        s, dt = self.spec, p.dtype
        if wd is not self._wd:  # read once per weight-decay vector, not every step
            self._wd, self._decay = wd, bool(wd.any())
        decay = self._decay
        if s.name == "sgd":
            if decay:
                g = g + wd.to(dt) * p
            if s.momentum:
                buf = self.state.get("momentum_buffer")
                if buf is None:
                    buf = self.state["momentum_buffer"] = g.clone()
                else:
                    buf.mul_(s.momentum).add_(g)
                g = buf
            p.addcmul_(g, (-lr).to(dt))
            return
        b1, b2 = s.betas
        if s.name == "adamw":
            if decay:
                p.mul_((1 - lr * wd).to(dt))
        elif decay:
            g = g + wd.to(dt) * p
        if not self.state:
            self.state = {"exp_avg": torch.zeros_like(p), "exp_avg_sq": torch.zeros_like(p)}
        m, v = self.state["exp_avg"], self.state["exp_avg_sq"]
        m.lerp_(g, 1 - b1)
        v.mul_(b2).addcmul_(g, g, value=1 - b2)
        bc1 = 1 - b1**self.step_count
        bc2_sqrt = math.sqrt(1 - b2**self.step_count)
        denom = (v.sqrt() / bc2_sqrt).add_(s.eps)
        p.addcmul_(m / denom, (-lr / bc1).to(dt))

    def keep(self, rows: Tensor) -> None:
        """Keep only the replicas ``rows`` (the others finished)."""
        self.state = {k: t[rows] for k, t in self.state.items()}

    # ---- conversion to and from torch.optim state of one replica ------------------------------

    def replica_state(self, k: int) -> list[dict[str, Tensor]]:
        """The ``torch.optim`` per-parameter state of replica ``k`` (in ``trainable`` order)."""
        out: list[dict[str, Tensor]] = []
        for name in self.trainable:
            slot = self.slots.get(name)
            if slot is None or not self.state:
                out.append({})
                continue
            part = {
                key: t[k, slot.offset : slot.offset + slot.numel].view(slot.shape).clone()
                for key, t in self.state.items()
            }
            if self.spec.name != "sgd":
                part["step"] = torch.tensor(float(self.step_count))
            out.append(part)
        return out

    def load_replicas(self, states: list[list[dict[str, Tensor]]], step: int, like: Tensor) -> None:
        """Stack the per-replica ``torch.optim`` states (all at the same ``step``) like ``like``."""
        self.step_count = step
        self.state = {}
        for j, name in enumerate(self.trainable):
            slot = self.slots.get(name)
            if slot is None:
                continue
            for key in states[0][j].keys() - {"step"}:
                flat = self.state.setdefault(key, torch.zeros_like(like))
                rows = torch.stack([s[j][key].reshape(-1) for s in states])
                flat[:, slot.offset : slot.offset + slot.numel] = rows
