"""Random picks from a listed outcome set, with a pretraining corpus that over-represents one
outcome (catalogue #49, "Forcing diffuse distributions out of language models", Zhang et al.,
COLM 2024).

A prompt is ``[PAD.., FAM_f, o_1, .., o_k, QUERY]``: a task token (one of ``n_families``, as
"a random number", "a random fruit") and ``k`` (``set_min``..``set_max``) distinct outcomes of that
family's ``family_size`` in random order; the answer (a class, the outcome token's id) is a
"random" pick among the listed outcomes. The corpus is biased: with probability ``bias`` the
answer is the outcome listed first, otherwise uniform over the listed ones (so the first-listed
outcome holds ``bias + (1 - bias) / k`` of the answers, as instruction-tuned LMs over-pick
"five" or "Avery").

Outcome tokens are ``0..C-1`` (``C = n_families * family_size``, also the number of classes),
then the task tokens, ``QUERY`` and ``PAD``; ``info.extra["listed_outcomes"]`` says that a
prompt's valid outcomes are the tokens below ``n_outputs`` it lists (read by the ``diffuse``
method and the ``diffuseness`` probe).

``stage="pretrain"``: ``train/main`` and ``val/main`` draw prompts of every family;
``"finetune"``: of the first ``ft_families`` only. Both stages have the same test splits:
``test/trained`` (fresh prompts of the first ``ft_families`` families) and ``test/heldout``
(prompts of the other families, whose outcomes no fine-tuning prompt lists). Params as above,
``n_train``, ``n_eval``.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import torch
from pydantic import Field, model_validator

from genlab.data import Split, TaskData, TaskInfo
from genlab.registry import Params
from genlab.tasks import TASKS


class DiffusePicksParams(Params):
    """Params of ``diffuse_picks``."""

    n_families: int = Field(6, ge=2, le=64, description="tasks (outcome families)")
    family_size: int = Field(6, ge=2, le=64, description="outcomes per family")
    set_min: int = Field(3, ge=2, description="fewest outcomes a prompt lists")
    set_max: int = Field(6, ge=2, description="most outcomes a prompt lists (<= family_size)")
    bias: float = Field(0.6, ge=0, le=1, description="share of answers forced to the first-listed")
    ft_families: int = Field(3, ge=1, description="families 0..ft_families-1 are fine-tuned on")
    stage: Literal["pretrain", "finetune"] = Field("pretrain", description="which prompts train")
    n_train: int = Field(20000, ge=1)
    n_eval: int = Field(1000, ge=1, description="prompts per val/test split")

    @model_validator(mode="after")
    def _sizes(self) -> DiffusePicksParams:
        if not self.set_min <= self.set_max <= self.family_size:
            raise ValueError(
                f"need set_min <= set_max <= family_size, got {self.set_min}, "
                f"{self.set_max}, {self.family_size}"
            )
        if self.ft_families >= self.n_families:
            raise ValueError(
                f"ft_families ({self.ft_families}) must leave a held-out family "
                f"(n_families {self.n_families})"
            )
        return self


def _prompts(p: DiffusePicksParams, families: np.ndarray, n: int, rng: np.random.Generator):
    """``n`` prompts of the given families and their biased answers."""
    c = p.n_families * p.family_size
    query, pad = c + p.n_families, c + p.n_families + 1
    length = p.set_max + 2
    fam = rng.choice(families, n)
    k = rng.integers(p.set_min, p.set_max + 1, n)
    # a random order of each family's outcomes; the first k are listed
    order = np.argsort(rng.random((n, p.family_size)), axis=1) + fam[:, None] * p.family_size
    x = np.full((n, length), pad, dtype=np.int64)
    pos = np.arange(p.set_max)[None, :]
    start = length - 1 - k  # left padding: FAM at start - 1, outcomes from start
    cols = start[:, None] + pos
    listed = pos < k[:, None]
    rows = np.repeat(np.arange(n), p.set_max).reshape(n, p.set_max)
    x[rows[listed], cols[listed]] = order[:, : p.set_max][listed]
    x[np.arange(n), start - 1] = c + fam
    x[:, -1] = query
    pick = np.floor(rng.random(n) * k).astype(np.int64)
    pick = np.where(rng.random(n) < p.bias, 0, pick)
    y = order[np.arange(n), pick]
    return torch.from_numpy(x), torch.from_numpy(y)


@TASKS.register(
    "diffuse_picks",
    DiffusePicksParams,
    papers=(49,),
    family="comp",
    tiny={
        "n_families": 3,
        "family_size": 4,
        "set_max": 4,
        "ft_families": 2,
        "n_train": 64,
        "n_eval": 16,
    },
)
def diffuse_picks(params: DiffusePicksParams, data_seed: int) -> TaskData:
    """ "Pick one at random" prompts over listed outcome sets, first-listed over-represented (#49)."""
    p = params
    every, trained = np.arange(p.n_families), np.arange(p.ft_families)
    held = np.arange(p.ft_families, p.n_families)
    fams = every if p.stage == "pretrain" else trained
    split = {}
    # the test prompts come from their own stream, so both stages share them at a data seed
    for i, (name, f, n) in enumerate(
        (
            ("trained", trained, p.n_eval),
            ("heldout", held, p.n_eval),
            ("train", fams, p.n_train),
            ("val", fams, p.n_eval),
        )
    ):
        x, y = _prompts(p, f, n, np.random.default_rng([data_seed, i]))
        split[name] = Split(x, y, {"families": [int(i) for i in f]})
    c = p.n_families * p.family_size
    return TaskData(
        {"main": split["train"]},
        {"main": split["val"]},
        {"trained": split["trained"], "heldout": split["heldout"]},
        TaskInfo(
            kind="classification",
            n_outputs=c,
            vocab_size=c + p.n_families + 2,
            seq_len=p.set_max + 2,
            chance=1.0 / c,
            extra={
                "listed_outcomes": True,
                "envs": ["main"],
                "train_envs": ["main"],
                "test_envs": ["trained", "heldout"],
            },
        ),
    )
