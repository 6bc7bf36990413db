"""Pick the function a query asks for from a list of candidates, where names can be a shortcut
(catalogue #26, Hammer: "Robust function-calling for on-device language models via function
masking", Lin et al., 2024).

There are ``n_functions`` functions; function ``i`` has a canonical name token ``N_i`` and a
description of ``desc_len`` tokens drawn from ``desc_vocab`` description words. A prompt lists
``n_candidates`` distinct functions, each as ``[name, d_1..d_desc_len]``, then the query
``[QUERY, K, w_1..w_query_words, END]``: ``query_words`` of the target's description words in
random order and, with ``keyword`` (default), the keyword ``K = N_i``, the function's own name
echoed by the user ("weather" and ``get_weather``): the naming shortcut. The label is the
target's slot (``0..n_candidates-1``).

Training prompts keep the canonical names, except that with probability ``mask`` a prompt's
names are all replaced by random name tokens (of ``random_names``, never canonical): Hammer's
function masking (its ratio is 0.67). ``val/main`` draws like training; the test splits hold
the same prompts three ways: ``original`` (canonical names), ``renamed`` (every candidate
renamed with a random token, so the name says nothing) and ``swapped`` (names permuted among
the candidates, none keeping its own, so the query's keyword points at a wrong function).
Params as above, ``n_train``, ``n_eval``.
"""

from __future__ import annotations

import numpy as np
import torch
from pydantic import Field, model_validator

from genlab.data import Split, TaskData, TaskInfo
from genlab.registry import Params
from genlab.tasks import TASKS


class FunctionCallParams(Params):
    """Params of ``function_calls``."""

    n_functions: int = Field(40, ge=2, description="functions (each a name and a description)")
    n_candidates: int = Field(3, ge=2, description="functions listed per prompt (classes)")
    desc_vocab: int = Field(48, ge=2, description="description words")
    desc_len: int = Field(2, ge=1, description="words per description")
    query_words: int = Field(1, ge=1, description="description words the query repeats")
    random_names: int = Field(100, ge=2, description="random name tokens for masking/renaming")
    keyword: bool = Field(True, description="the query echoes the target's name")
    mask: float = Field(0.0, ge=0, le=1, description="share of training prompts names masked")
    n_train: int = Field(20000, ge=1)
    n_eval: int = Field(1000, ge=1, description="prompts per val/test split")

    @model_validator(mode="after")
    def _sizes(self) -> FunctionCallParams:
        if self.n_candidates > self.n_functions:
            raise ValueError(
                f"n_candidates ({self.n_candidates}) exceeds n_functions ({self.n_functions})"
            )
        if self.query_words > self.desc_len or self.desc_len > self.desc_vocab:
            raise ValueError(
                f"need query_words <= desc_len <= desc_vocab, got "
                f"{self.query_words}, {self.desc_len}, {self.desc_vocab}"
            )
        return self


def _vocab(p: FunctionCallParams) -> dict[str, int]:
    """Token offsets: names, random names, description words, then QUERY, END."""
    rand = p.n_functions
    desc = rand + p.random_names
    special = desc + p.desc_vocab
    return {"rand": rand, "desc": desc, "query": special, "end": special + 1, "size": special + 2}


def _prompts(p, descs, n, rng, names: str) -> tuple[torch.Tensor, torch.Tensor]:
    """``n`` prompts; ``names``: ``canonical``, ``renamed``, ``swapped`` or ``train`` (masked
    with probability ``p.mask``)."""
    v, m, dl = _vocab(p), p.n_candidates, p.desc_len
    fns = np.argsort(rng.random((n, p.n_functions)), axis=1)[:, :m]  # distinct candidates
    y = rng.integers(0, m, n)
    target = fns[np.arange(n), y]
    pick = np.argsort(rng.random((n, dl)), axis=1)[:, : p.query_words]
    name = fns.copy()  # names are drawn last, so the three test splits share their prompts
    if names == "renamed" or names == "train":
        fresh = v["rand"] + np.argsort(rng.random((n, p.random_names)), axis=1)[:, :m]
        masked = np.ones(n, bool) if names == "renamed" else rng.random(n) < p.mask
        name[masked] = fresh[masked]
    elif names == "swapped":  # a cyclic shift by 1..m-1: no candidate keeps its own name
        shift = rng.integers(1, m, n)
        idx = (np.arange(m)[None, :] + shift[:, None]) % m
        name = np.take_along_axis(fns, idx, axis=1)
    cand = np.concatenate([name[:, :, None], v["desc"] + descs[fns]], axis=2).reshape(n, -1)
    words = v["desc"] + np.take_along_axis(descs[target], pick, axis=1)
    head = [np.full((n, 1), v["query"])]
    if p.keyword:
        head.append(target[:, None])
    x = np.concatenate([cand, *head, words, np.full((n, 1), v["end"])], axis=1)
    return torch.from_numpy(x.astype(np.int64)), torch.from_numpy(y.astype(np.int64))


@TASKS.register(
    "function_calls",
    FunctionCallParams,
    papers=(26,),
    family="comp",
    tiny={
        "n_functions": 6,
        "n_candidates": 3,
        "desc_vocab": 8,
        "random_names": 6,
        "mask": 0.5,
        "n_train": 64,
        "n_eval": 16,
    },
)
def function_calls(params: FunctionCallParams, data_seed: int) -> TaskData:
    """Pick the queried function among candidates; names masked in training with ``mask``;
    tests with canonical, random and swapped names (#26)."""
    p = params
    rng = np.random.default_rng([data_seed, 0])
    descs = np.stack(
        [rng.choice(p.desc_vocab, p.desc_len, replace=False) for _ in range(p.n_functions)]
    )
    x_tr, y_tr = _prompts(p, descs, p.n_train, np.random.default_rng([data_seed, 1]), "train")
    x_va, y_va = _prompts(p, descs, p.n_eval, np.random.default_rng([data_seed, 2]), "train")
    test = {}
    for names in ("original", "renamed", "swapped"):
        rule = "canonical" if names == "original" else names
        x, y = _prompts(p, descs, p.n_eval, np.random.default_rng([data_seed, 3]), rule)
        test[names] = Split(x, y, {"names": names})
    v = _vocab(p)
    return TaskData(
        {"main": Split(x_tr, y_tr, {"name_mask": p.mask})},
        {"main": Split(x_va, y_va, {"name_mask": p.mask})},
        test,
        TaskInfo(
            kind="classification",
            n_outputs=p.n_candidates,
            vocab_size=v["size"],
            seq_len=x_tr.shape[1],
            chance=1.0 / p.n_candidates,
            extra={
                "envs": ["main"],
                "train_envs": ["main"],
                "test_envs": ["original", "renamed", "swapped"],
            },
        ),
    )
