"""A looped (weight-tied) decoder-only transformer with input-adaptive depth (Altabaa et al.,
"Recursive latent-space reasoning for OOD algorithmic generalization", catalogue #58).

Token embedding (plus the positional encoding's input term), then ONE group of ``n_blocks``
pre-norm causal blocks (``transformer.Block``, shared weights) applied ``K`` times, a final norm
and the unembedding. With ``input_injection`` the embedded input is added to the state before
every loop, so later loops still see the tokens.

``K`` is input-adaptive, per row: ``loops_per_step * (number of step tokens in the row) +
extra_loops``; a task whose deepest input would need more than ``max_loops`` is an error
(nothing is silently cut). Step tokens are what the task names in
``info.extra["step_tokens"]``: for ``computation_graph`` the operation tokens, one per operation
definition, so ``K`` grows with the program and bounds its depth from above; it is read from the
tokens alone, never from labels. A row whose loops are done keeps its state while longer rows in
the batch go on, so a row's output does not depend on its batch. Tasks without step tokens (or
``adaptive = false``) get a fixed ``loops``. Parameters do not depend on ``K``.

With the default method the loops are supervised at the end only (of every intermediate value:
the task scores every variable). ``loop_logits`` reads the logits out after every loop and
``loop_of_depth`` names the loop that ends a given graph depth, for the paper's per-iteration
supervision (method ``per_loop``). The paper's discrete bottleneck and error correction are not
implemented.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator

import torch
from pydantic import Field
from torch import Tensor, nn

from genlab.data import TaskInfo
from genlab.models import MODELS
from genlab.models.positional import POSITIONAL, PositionalName
from genlab.models.transformer import Block, TransformerParams
from genlab.registry import Params


class LoopedParams(Params):
    """Params of ``looped_transformer``."""

    d_model: int = Field(64, ge=1)
    n_heads: int = Field(4, ge=1)
    n_blocks: int = Field(1, ge=1, le=16, description="blocks in the weight-tied group")
    d_mlp: int | None = Field(None, ge=1, description="MLP width; default 4 * d_model")
    positional: PositionalName = Field("t5", description="positional encoding (see positional.py)")
    max_len: int | None = Field(None, ge=1, description="longest input; default the task's")
    adaptive: bool = Field(True, description="loops from the task's step tokens in each input")
    loops_per_step: int = Field(2, ge=1, le=16, description="loops per step token (adaptive)")
    extra_loops: int = Field(1, ge=0, le=64, description="loops added to the adaptive count")
    loops: int = Field(4, ge=1, le=256, description="fixed loops (not adaptive)")
    max_loops: int = Field(64, ge=1, le=1024, description="cap on the adaptive loop count")
    input_injection: bool = Field(True, description="add the embedded input before each loop")


class LoopedTransformer(nn.Module):
    """Embedding, one weight-tied group of blocks looped ``K`` times per row, norm, unembedding."""

    def __init__(self, p: LoopedParams, info: TaskInfo) -> None:
        super().__init__()
        if info.vocab_size is None or info.kind != "sequence":
            raise ValueError("looped_transformer needs a token sequence task (kind 'sequence')")
        longest = info.extra.get("max_length")
        self.max_len = p.max_len or longest or info.seq_len or 512
        if longest is not None and self.max_len < longest:
            raise ValueError(
                f"model.params.max_len ({self.max_len}) is below the task's longest input "
                f"({longest}); raise max_len or shorten the test lengths"
            )
        steps = info.extra.get("step_tokens")
        self.adaptive = p.adaptive and bool(steps)
        most = p.loops_per_step * info.extra.get("max_steps", 0) + p.extra_loops
        if self.adaptive and most > p.max_loops:
            raise ValueError(
                f"model.params.max_loops ({p.max_loops}) is below the loops the task's deepest "
                f"input needs ({most}); raise max_loops or shorten the test depths"
            )
        self.register_buffer("step_tokens", torch.tensor(steps or [], dtype=torch.long), False)
        self.p = p
        block_params = TransformerParams(
            d_model=p.d_model, n_heads=p.n_heads, d_mlp=p.d_mlp, positional=p.positional
        )
        self.embed = nn.Embedding(info.vocab_size, p.d_model)
        self.pos = POSITIONAL[p.positional](p.d_model, p.n_heads, self.max_len)
        self.blocks = nn.ModuleList(Block(block_params, self.pos) for _ in range(p.n_blocks))
        self.ln_f = nn.LayerNorm(p.d_model)
        self.unembed = nn.Linear(p.d_model, info.n_outputs)

    def n_loops(self, x: Tensor) -> Tensor:
        """Loops per row: from the step tokens in it (adaptive), else the fixed ``loops``."""
        if not self.adaptive:
            return torch.full((x.shape[0],), self.p.loops, dtype=torch.long, device=x.device)
        n_steps = torch.isin(x, self.step_tokens).sum(dim=1)
        k = self.p.loops_per_step * n_steps + self.p.extra_loops
        return k.clamp(1, self.p.max_loops)

    def states(self, x: Tensor) -> Iterator[Tensor]:
        """The state after each loop, up to the batch's most loops (a row whose loops are done
        keeps its last state)."""
        if x.shape[1] > self.max_len:
            raise ValueError(
                f"input length {x.shape[1]} exceeds the model's max_len {self.max_len}"
            )
        e = self.pos.add_to_input(self.embed(x))
        k = self.n_loops(x)
        h = e
        for loop in range(int(k.max())):
            new = h + e if self.p.input_injection and loop > 0 else h
            for block in self.blocks:
                new = block(new)
            h = torch.where((loop < k)[:, None, None], new, h)
            yield h

    def forward(self, x: Tensor) -> Tensor:
        (last,) = deque(self.states(x), maxlen=1)  # the last state, not keeping the others
        return self.unembed(self.ln_f(last))

    def loop_logits(self, x: Tensor) -> list[Tensor]:
        """Logits read out (final norm, unembedding) after every loop; the last are ``forward``'s.
        For per-iteration supervision (``methods/per_loop.py``)."""
        return [self.unembed(self.ln_f(h)) for h in self.states(x)]

    def loop_of_depth(self, depth: int) -> int:
        """The loop (from 0) after which a value of graph ``depth`` is supervised: the one that
        ends ``depth`` steps, ``loops_per_step * depth + extra_loops - 1`` (Altabaa et al.'s
        code: depth ``d`` at iteration ``d``, one loop per step and one for the leaves); with
        fixed loops, the same index capped at the last loop."""
        loop = self.p.loops_per_step * depth + self.p.extra_loops - 1
        return max(0, loop if self.adaptive else min(loop, self.p.loops - 1))


@MODELS.register(
    "looped_transformer", LoopedParams, papers=(58,), tiny={"d_model": 16, "n_heads": 2}
)
def looped_transformer(params: LoopedParams, info: TaskInfo) -> nn.Module:
    """Weight-tied causal transformer block looped per reasoning step of the input (#58)."""
    return LoopedTransformer(params, info)
