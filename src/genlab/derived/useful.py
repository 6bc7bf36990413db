"""``useful``: a task's training set with its slow-learnable examples upsampled (USEFUL, #80).

Nguyen et al., "Changing the Training Data Distribution to Reduce Simplicity Bias Improves
In-distribution Generalization" (NeurIPS 2024, catalogue #80), UpSample Early For Uniform Learning:
train briefly (the run ``run``, on the same task and ``data_seed``), cluster each class's training
examples by that network's output with k-means (k = 2), call the cluster with the higher mean loss
*slow-learnable*, repeat its examples ``factor - 1`` more times (once: ``factor = 2``), and retrain
from scratch on the result. ``mode = "random"`` upsamples as many examples drawn at random per
class instead: the paper's control. Validation and test splits are unchanged.

The early run is read from the store the new run is trained into (``genlab.store_context``).
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
import torch
from pydantic import Field, field_validator
from torch import Tensor

from genlab.data import Split, TaskData
from genlab.errors import SpecError
from genlab.losses import cross_entropy
from genlab.registry import Params
from genlab.tasks import TASKS

RUN_ID = r"^[0-9a-f]{16}$"


class UsefulParams(Params):
    """Params of ``useful``."""

    task: dict[str, Any] = Field(description='the task to re-weight, e.g. {name = "digits"}')
    run: str = Field(pattern=RUN_ID, description="the briefly trained run that clusters examples")
    factor: int = Field(2, ge=2, le=10, description="copies of each slow example in the result")
    mode: Literal["useful", "random"] = Field("useful", description="slow cluster, or at random")

    @field_validator("task")
    @classmethod
    def _inner(cls, v: dict[str, Any]) -> dict[str, Any]:
        if set(v) - {"name", "params"} or "name" not in v:
            raise ValueError("task must be a table {name = ..., params = {...}}")
        if v["name"] == "useful":
            raise ValueError("useful cannot wrap itself")
        params = TASKS.params(v["name"], v.get("params", {}), "task.params.task.params")
        return {"name": v["name"], "params": params.model_dump(mode="json")}


def slow_cluster(logits: Tensor, y: Tensor, seed: int) -> Tensor:
    """Boolean mask of the slow-learnable examples: per class, k-means (k = 2) on the outputs,
    the cluster with the higher mean loss."""
    from sklearn.cluster import KMeans

    losses = cross_entropy(logits, y, reduction="none")
    slow = torch.zeros(len(y), dtype=torch.bool)
    for c in y.unique().tolist():
        idx = (y == c).nonzero().flatten()
        if len(idx) < 2:
            continue
        km = KMeans(n_clusters=2, n_init=10, random_state=seed)
        labels = torch.as_tensor(km.fit_predict(logits[idx].double().numpy()))
        means = [
            losses[idx][labels == k].mean().item() if (labels == k).any() else -np.inf
            for k in (0, 1)
        ]
        slow[idx[labels == int(np.argmax(means))]] = True
    return slow


def upsample(split: Split, chosen: Tensor, factor: int) -> Split:
    """The split with every chosen example repeated ``factor - 1`` more times."""
    extra = chosen.nonzero().flatten().repeat(factor - 1)
    idx = torch.cat([torch.arange(len(split)), extra])
    meta = {**split.meta, "upsampled": int(chosen.sum())}
    return Split(split.x[idx], split.y[idx], meta)


def _tiny(root: object) -> dict[str, Any]:
    """A two-step MLP run on the tiny ``easy_hard_features`` as the early run (``derived.runs``)."""
    from genlab.derived.runs import tiny_parent
    from genlab.tasks.easy_hard import TINY

    return {
        "task": {"name": "easy_hard_features", "params": TINY},
        "run": tiny_parent("easy_hard_features", "mlp"),
    }


@TASKS.register("useful", UsefulParams, papers=(80,), family="training-regime", tiny=_tiny)
def useful(params: UsefulParams, data_seed: int) -> TaskData:
    """A task whose slow-learnable training examples are upsampled once (Nguyen et al., #80)."""
    from genlab.store_context import active_store
    from genlab.weights.load import finished_spec, load_model

    store = active_store()
    spec = finished_spec(store, params.run)
    if spec.task.model_dump(mode="json") != params.task or spec.data_seed != data_seed:
        raise SpecError(
            f"task.params.run: run {params.run} was trained on another task or "
            "data_seed; USEFUL clusters with a run on the same data"
        )
    entry = TASKS.get(params.task["name"])
    data = entry.obj(entry.params.model_validate(params.task["params"]), data_seed)
    model = load_model(store, params.run, data.info)
    gen = torch.Generator().manual_seed(data_seed + 104729)
    train = {}
    for name, split in data.train.items():
        x = split.x.to(next(model.parameters()).dtype)
        with torch.inference_mode():
            logits = torch.cat([model(x[i : i + 4096]) for i in range(0, len(x), 4096)])
        chosen = slow_cluster(logits, split.y, data_seed)
        if params.mode == "random":
            rand = torch.zeros_like(chosen)
            for c in split.y.unique().tolist():
                idx = (split.y == c).nonzero().flatten()
                k = int(chosen[idx].sum())
                rand[idx[torch.randperm(len(idx), generator=gen)[:k]]] = True
            chosen = rand
        train[name] = upsample(split, chosen, params.factor)
    return TaskData(train, data.val, data.test, data.info)
