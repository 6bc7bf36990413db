"""Skill composition: string transformations named by instruction tokens, applied in sequence.

A symbolic stand-in for SKILL-MIX in Zhao et al., "Can Models Learn Skill Composition from
Examples?" (NeurIPS 2024, catalogue #56): each skill is a length-preserving transformation of a
string (reverse, rotate left/right, shift letters up/down, sort, swap the ends, a fixed letter
map); an instruction of ``k`` skill tokens applies them left to right. Training mixes
compositions of ``1..train_k`` skills; ``heldout_skills`` skills occur in training only alone
(``k = 1``). Tests: ``test/k<k>`` for each ``k`` in ``test_k`` (compositions of the other
skills) and ``test/heldout_skill`` (compositions of ``2..max(train_k, 2)`` skills that include a
held-out one). Rows use the source -> target layout: ``skills SEP input`` then the output.
"""

from __future__ import annotations

import numpy as np
from pydantic import Field, model_validator

from genlab.data import TaskData
from genlab.registry import Params
from genlab.tasks import TASKS
from genlab.tasks.seq2seq_common import FIRST, pack_pairs, seq2seq_info

SKILLS = (
    "reverse",
    "rotate_left",
    "rotate_right",
    "shift_up",
    "shift_down",
    "sort",
    "swap_ends",
    "letter_map",
)
SEP = FIRST


def apply(skill: str, z: list[int], alphabet: int, letter_map: list[int]) -> list[int]:
    """One skill on a string of letters ``0..alphabet-1``."""
    if skill == "reverse":
        return z[::-1]
    if skill == "rotate_left":
        return z[1:] + z[:1]
    if skill == "rotate_right":
        return z[-1:] + z[:-1]
    if skill == "shift_up":
        return [(c + 1) % alphabet for c in z]
    if skill == "shift_down":
        return [(c - 1) % alphabet for c in z]
    if skill == "sort":
        return sorted(z)
    if skill == "swap_ends":
        return z[-1:] + z[1:-1] + z[:1] if len(z) > 1 else list(z)
    if skill == "letter_map":
        return [letter_map[c] for c in z]
    raise ValueError(f"unknown skill {skill!r}")


class SkillMixParams(Params):
    """Params of ``skill_mix``."""

    n_skills: int = Field(8, ge=2, le=len(SKILLS))
    alphabet: int = Field(8, ge=2, le=26)
    length: int = Field(6, ge=2, le=32, description="input string length")
    train_k: int = Field(3, ge=1, le=6, description="longest composition in training")
    test_k: list[int] = Field(default_factory=lambda: [4, 5], min_length=1)
    heldout_skills: int = Field(1, ge=0, description="skills trained only alone")
    n_train: int = Field(20_000, ge=1)
    n_val: int = Field(500, ge=0)
    n_test: int = Field(500, ge=1, description="rows per test split")

    @model_validator(mode="after")
    def _check(self) -> SkillMixParams:
        if self.heldout_skills >= self.n_skills - 1:
            raise ValueError(f"heldout_skills must leave >= 2 composable skills of {self.n_skills}")
        if any(k < 1 or k > 8 for k in self.test_k):
            raise ValueError(f"test_k: compositions of 1..8 skills, got {self.test_k}")
        return self


@TASKS.register(
    "skill_mix",
    SkillMixParams,
    papers=(56,),
    family="compositional",
    tiny={"n_train": 500, "n_val": 50, "n_test": 50},
)
def skill_mix(params: SkillMixParams, data_seed: int) -> TaskData:
    """Compositions of k string skills; test larger k and held-out skills (Zhao et al., #56)."""
    rng = np.random.default_rng(data_seed)
    skills = list(SKILLS[: params.n_skills])
    held = skills[len(skills) - params.heldout_skills :] if params.heldout_skills else []
    known = [s for s in skills if s not in held]
    letter_map = rng.permutation(params.alphabet).tolist()
    tok = {s: SEP + 1 + i for i, s in enumerate(skills)}
    letter0 = SEP + 1 + len(skills)
    max_k = max(params.train_k, *params.test_k, 2)

    def row(names: list[str]) -> tuple[list[int], list[int]]:
        z = rng.integers(0, params.alphabet, params.length).tolist()
        out = z
        for s in names:
            out = apply(s, out, params.alphabet, letter_map)
        return [tok[s] for s in names] + [SEP] + [letter0 + c for c in z], [
            letter0 + c for c in out
        ]

    def rows(n: int, draw, meta: dict):  # noqa: ANN001, ANN202
        src, tgt = zip(*(row(draw()) for _ in range(n)), strict=True)
        return pack_pairs(src, tgt, max_k + 1 + params.length, params.length + 1, meta)

    def train_draw() -> list[str]:
        k = int(rng.integers(1, params.train_k + 1))
        if held and rng.random() < len(held) / len(skills) / params.train_k:
            return [held[int(rng.integers(len(held)))]]  # held-out skills, alone
        return [known[i] for i in rng.integers(0, len(known), k)]

    def held_draw() -> list[str]:
        k = int(rng.integers(2, max(params.train_k, 2) + 1))
        names = [known[i] for i in rng.integers(0, len(known), k)]
        names[int(rng.integers(k))] = held[int(rng.integers(len(held)))]
        return names

    train = {"main": rows(params.n_train, train_draw, {})}
    val = {"main": rows(params.n_val, train_draw, {})} if params.n_val else {}
    test = {
        f"k{k}": rows(
            params.n_test,
            lambda k=k: [known[i] for i in rng.integers(0, len(known), k)],
            {"k": k, "shift": f"k{k}"},
        )
        for k in params.test_k
    }
    if held:
        test["heldout_skill"] = rows(params.n_test, held_draw, {"shift": "heldout_skill"})
    info = seq2seq_info(
        letter0 + params.alphabet,
        max_k + 1 + params.length,
        params.length + 1,
        chance=0.0,
        skills=skills,
        heldout=held,
    )
    return TaskData(train, val, test, info)
