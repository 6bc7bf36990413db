"""``model_zoo``: Model Zoo (Ramesh & Chaudhari, ICLR 2022, "Model Zoo: a growing brain that
learns continually", #120).

The run's model becomes a zoo of ``experiences`` copies of it, each re-initialised. In episode
``k`` only member ``k`` trains, on the current experience plus ``past_tasks`` earlier ones drawn
boosting-style: without replacement, with probability proportional to the zoo's current loss on
each (its stored examples), so that badly served tasks come first. Past data come from a bounded
experience-balanced memory (``buffer_size``, the same memory ``replay`` gets: matched memory). The
zoo predicts a class by averaging the probabilities of the members that trained on it (each
member's softmax taken per task in the task-incremental scenario, over its classes otherwise).
Differences from the paper's code (grasp-lyrl/modelzoo_continual): one member per episode, a
bounded memory instead of all past data, and tasks sampled by loss without its sample re-weighting.
"""

from __future__ import annotations

import copy
from typing import Any

import torch
from pydantic import Field
from torch import Tensor, nn

from genlab.data import TaskInfo
from genlab.losses import cross_entropy
from genlab.methods import METHODS
from genlab.methods.base import Batch
from genlab.methods.cl_base import Continual
from genlab.methods.cl_buffer import ExperienceBuffer
from genlab.registry import Params


class ZooParams(Params):
    """Params of ``model_zoo``."""

    past_tasks: int = Field(2, ge=0, description="earlier experiences each new member trains on")
    buffer_size: int = Field(200, ge=1, description="examples kept over all past experiences")


def _reset(module: nn.Module) -> nn.Module:
    for sub in module.modules():
        if hasattr(sub, "reset_parameters"):
            sub.reset_parameters()
    return module


class Zoo(nn.Module):
    """Members and which experiences each has trained on (``seen``, saved with the weights)."""

    def __init__(self, members: list[nn.Module], task_mask: Tensor, per_task: bool) -> None:
        super().__init__()
        self.members = nn.ModuleList(members)
        self.per_task = per_task
        self.register_buffer("task_mask", task_mask)
        self.register_buffer("seen", torch.zeros(len(members), len(task_mask), dtype=torch.bool))

    def classes_of(self, m: int) -> Tensor:
        return self.task_mask[self.seen[m]].any(0)

    def member_probs(self, m: int, x: Tensor) -> Tensor:
        """Member ``m``'s probabilities, zero outside the classes it trained on."""
        logits = self.members[m](x)
        if not self.per_task:
            keep = self.classes_of(m)
            return torch.softmax(logits.masked_fill(~keep, float("-inf")), -1)
        p = torch.zeros_like(logits)
        for t in torch.nonzero(self.seen[m]).flatten().tolist():
            keep = self.task_mask[t]
            p = p + torch.softmax(logits.masked_fill(~keep, float("-inf")), -1)
        return p

    def task_logits(self, x: Tensor, task: int) -> Tensor:
        """Log of the mean probability over the members that trained on ``task`` (the paper's
        prediction when the task is known: task-incremental scenarios)."""
        who = torch.nonzero(self.seen[:, task]).flatten().tolist()
        if not who:
            return self.forward(x)
        keep = self.task_mask[task]
        probs = [
            torch.softmax(self.members[m](x).masked_fill(~keep, float("-inf")), -1) for m in who
        ]
        return torch.log((sum(probs) / len(who)).clamp_min(1e-12))

    def forward(self, x: Tensor) -> Tensor:
        active = torch.nonzero(self.seen.any(1)).flatten().tolist()
        if not active:
            return self.members[0](x)
        total = sum(self.member_probs(m, x) for m in active)
        count = sum(
            self.classes_of(m).to(x.dtype if x.is_floating_point() else torch.float32)
            for m in active
        )
        return torch.log((total / count.clamp(min=1)).clamp_min(1e-12))


@METHODS.register("model_zoo", ZooParams, papers=(120,), family="continual")
class ModelZoo(Continual):
    """A growing ensemble: one new member per experience, trained on it and on boosted past ones."""

    def __init__(self, params: ZooParams, info: TaskInfo) -> None:
        super().__init__(params, info)
        self.buffer = ExperienceBuffer(params.buffer_size)
        self.chosen: list[int] = []
        task_mask = torch.zeros(self.n, info.n_outputs, dtype=torch.bool)
        for k, cls in enumerate(self.classes):
            task_mask[k, cls] = True
        self.task_mask = task_mask

    def wrap(self, model: nn.Module) -> nn.Module:
        members = [model] + [_reset(copy.deepcopy(model)) for _ in range(self.n - 1)]
        return Zoo(members, self.task_mask, per_task=self.mask is not None)

    @torch.no_grad()
    def task_losses(self, zoo: Zoo, k: int) -> Tensor:
        """The zoo's loss on each earlier experience's stored examples."""
        out = []
        for t in range(k):
            x, y = self.buffer.x[t], self.buffer.y[t]
            logits = zoo.task_logits(x, t) if self.mask is not None else zoo(x)
            out.append(cross_entropy(logits, y) if len(y) else torch.tensor(1.0))
        return torch.stack(out).float()

    def before_experience(self, model: nn.Module, k: int) -> None:
        self.buffer.start(k)
        self.chosen = []
        if k > 0 and self.params.past_tasks:
            w = self.task_losses(model, k).clamp_min(1e-6)
            picks = torch.multinomial(w, min(self.params.past_tasks, k), replacement=False)
            self.chosen = sorted(picks.tolist())
        model.seen[k, [k, *self.chosen]] = True

    def loss(self, model: nn.Module, batches: dict[str, Batch]) -> tuple[Tensor, dict[str, Any]]:
        x, y = self.current(batches)
        e = torch.full((len(y),), self.exp)
        if self.chosen:
            xb, yb, eb = self.buffer.sample(len(y), self.chosen)
            x, y, e = torch.cat([x, xb]), torch.cat([y, yb]), torch.cat([e, eb])
        self.buffer.add(*self.current(batches), self.exp)
        logits = model.members[self.exp](x)
        if self.mask is None:
            logits = logits.masked_fill(~model.classes_of(self.exp), torch.finfo(logits.dtype).min)
        loss = cross_entropy(self.masked(logits, e), y)
        return loss, {"members": float(self.exp + 1)}

    def state_dict(self) -> dict[str, Any]:
        return {**super().state_dict(), "buffer": self.buffer.state_dict(), "chosen": self.chosen}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        super().load_state_dict(state)
        if "buffer" in state:
            self.buffer.load_state_dict(state["buffer"])
            self.chosen = list(state["chosen"])
