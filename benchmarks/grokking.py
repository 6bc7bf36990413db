"""Speed of the default grokking run against a plain PyTorch loop, in one process.

    python benchmarks/grokking.py [--skip-baseline]

Ours: `genlab run grokking` (presets/grokking.toml) through the engine, with evaluation, store
writes and stop rule included. Baseline: a plain loop as one would first write it (Power et al.'s
setup, #55): `nn.TransformerEncoder` (2 layers, d=128, 4 heads, pre-norm, causal mask) on
`[a, op, b, =]`, logits at every position with the last one read out, AdamW lr 1e-3, weight decay
1, batch 512, test accuracy checked every 100 steps, on the same train/test pairs as ours (the
preset's leak-free split). Both stop at the first evaluation with >= 99%
test accuracy. Prints wall seconds to 99% test accuracy, steps/s and achieved training GFLOP/s;
the last line holds the headline figures as name=value pairs.
"""

from __future__ import annotations

import argparse
import tempfile
import time

import torch
from torch import nn
from torch.utils.flop_counter import FlopCounterMode

from genlab.engine import prepare, run_spec
from genlab.spec import load_run_spec
from genlab.store import Store
from genlab.tasks.modular import ModularParams, modular_arithmetic


def train_flops(step_fn) -> float:
    """FLOPs of one training step (forward + backward), counted by torch's FlopCounterMode."""
    with FlopCounterMode(display=False) as counter:
        step_fn()
    return float(counter.get_total_flops())


def ours() -> dict[str, float]:
    spec = load_run_spec("grokking")
    prep = prepare(spec)  # a throwaway copy to count one step's FLOPs
    flops = train_flops(lambda: prep.method.step(prep.model, prep.optimizer, prep.sampler.next()))
    hit: dict[str, float] = {}
    t0 = time.perf_counter()

    def on_eval(step: int, m: dict) -> None:
        if "test" not in hit and m[("test/heldout", "accuracy")] >= 0.99:
            hit.update(test=time.perf_counter() - t0, step=step)

    result = run_spec(spec, Store(tempfile.mkdtemp()), progress=False, on_eval=on_eval)
    wall = time.perf_counter() - t0
    return {
        "wall_to_99": hit.get("test", float("nan")),
        "steps_to_99": hit.get("step", float("nan")),
        "wall": wall,
        "steps": result.step,
        "steps_per_s": result.step / wall,
        "gflops": flops * result.step / wall / 1e9,
    }


class PlainModel(nn.Module):
    def __init__(self, p: int, d: int = 128) -> None:
        super().__init__()
        self.embed = nn.Embedding(p + 2, d)
        self.pos = nn.Parameter(torch.randn(4, d) * 0.02)
        layer = nn.TransformerEncoderLayer(
            d, 4, 4 * d, dropout=0.0, batch_first=True, norm_first=True, activation="gelu"
        )
        self.body = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.head = nn.Linear(d, p)
        self.register_buffer("mask", nn.Transformer.generate_square_subsequent_mask(4))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.body(self.embed(x) + self.pos, mask=self.mask, is_causal=True)
        return self.head(h)[:, -1]


def baseline(max_steps: int = 6000) -> dict[str, float]:
    spec = load_run_spec("grokking")  # the same table and train/test pairs as ours
    p = spec.task.params["p"]
    data = modular_arithmetic(ModularParams(**spec.task.params), spec.data_seed)
    pairs = torch.cat([data.train["main"].x, data.test["heldout"].x])[:, :2]
    a, b = pairs[:, 0], pairs[:, 1]
    x = torch.stack([a, torch.full_like(a, p), b, torch.full_like(a, p + 1)], 1)
    y = torch.cat([data.train["main"].y, data.test["heldout"].y])
    n_train = len(data.train["main"].y)
    tr, te = torch.arange(n_train), torch.arange(n_train, len(y))
    g = torch.Generator().manual_seed(0)
    torch.manual_seed(0)
    model = PlainModel(p)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1.0, betas=(0.9, 0.98))

    def step() -> None:
        idx = tr[torch.randint(len(tr), (512,), generator=g)]
        loss = nn.functional.cross_entropy(model(x[idx]), y[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()

    flops = train_flops(step)
    t0 = time.perf_counter()
    for s in range(1, max_steps + 1):
        step()
        if s % 100 == 0:
            with torch.inference_mode():
                acc = (model(x[te]).argmax(-1) == y[te]).float().mean().item()
            if acc >= 0.99:
                break
    wall = time.perf_counter() - t0
    return {
        "wall_to_99": wall if acc >= 0.99 else float("nan"),
        "steps_to_99": s,
        "wall": wall,
        "steps": s,
        "steps_per_s": s / wall,
        "gflops": flops * s / wall / 1e9,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--skip-baseline", action="store_true")
    args = ap.parse_args()
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads")
    rows = {"genlab": ours()}
    if not args.skip_baseline:
        rows["plain"] = baseline()
    for name, r in rows.items():
        print(
            f"{name:7s} 99% test at step {r['steps_to_99']:.0f} after {r['wall_to_99']:.1f}s; "
            f"{r['steps']:.0f} steps in {r['wall']:.1f}s = {r['steps_per_s']:.1f} steps/s, "
            f"{r['gflops']:.1f} GFLOP/s"
        )
    g = rows["genlab"]
    line = (
        f"wall_to_99={g['wall_to_99']:.1f} steps_to_99={g['steps_to_99']:.0f} "
        f"steps_per_s={g['steps_per_s']:.1f} gflops={g['gflops']:.1f}"
    )
    if "plain" in rows:
        line += f" plain_wall_to_99={rows['plain']['wall_to_99']:.1f}"
        line += f" speedup={rows['plain']['wall_to_99'] / g['wall_to_99']:.2f}"
    print(line)


if __name__ == "__main__":
    main()
