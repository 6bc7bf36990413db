"""Cost of each diagnostic probe as a multiple of one training step of the same model and batch.

Targets (issue #7): gwa < 0.1x (closed form on the forward pass already made), coherence on the
last layer < 0.5x, full per-sample coherence (torch.func vmap(grad)) < 5x. Sharpness and
margins are reported for information, and so are function_complexity (#85, 4 planes of 32x32)
and the exact-GGN self-influence of the head (#13). Prints a table and ends with one line of
name=value pairs.

    .venv/bin/python benchmarks/probes.py [--width 256] [--batch 256] [--repeats 20]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import torch

from genlab.models import MODELS
from genlab.probes import EvalContext
from genlab.probes._grads import head_features
from genlab.probes.coherence import CoherenceParams, coherence, coherence_from_features
from genlab.probes.complexity import ComplexityParams, model_complexity
from genlab.probes.gwa import gwa_from_features, gwa_score
from genlab.probes.influence import ggn_self_influence
from genlab.probes.margins import MarginParams, margins_of, principal_basis
from genlab.probes.sharpness import SharpnessParams, sharpness_measures
from genlab.tasks import TASKS


def ratio(
    fn: Callable[[], object], step: Callable[[], object], repeats: int
) -> tuple[float, float]:
    """Median of ``time(fn) / time(step)`` with the two timed back to back each repeat (the
    machine is shared, so a ratio of neighbours is steadier than two separate medians), and the
    median time of ``fn``."""
    fn()
    step()
    ratios, times = [], []
    for _ in range(repeats):
        t0 = time.perf_counter()
        step()
        t1 = time.perf_counter()
        fn()
        t2 = time.perf_counter()
        ratios.append((t2 - t1) / (t1 - t0))
        times.append(t2 - t1)
    return statistics.median(ratios), statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--width", type=int, default=256)
    ap.add_argument("--depth", type=int, default=2)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--repeats", type=int, default=20)
    args = ap.parse_args()
    torch.set_num_threads(1)

    e = TASKS.get("digits")
    data = e.obj(e.params(train_size=1000, label_noise=0.2), 0)
    x, y = data.train["main"].x[: args.batch], data.train["main"].y[: args.batch]
    m = MODELS.get("mlp")
    torch.manual_seed(0)
    model = m.obj(m.params(width=args.width, depth=args.depth), data.info)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)

    def train_step() -> None:
        opt.zero_grad(set_to_none=True)
        torch.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()

    feats = head_features(model, x)
    sub = e.obj(e.params(train_size=args.batch, label_noise=0.2), 0)  # a context of one batch
    ctx = EvalContext(model, sub, step=0)
    basis = principal_basis(data.train["main"].x, 0.9)
    gen = torch.Generator().manual_seed(0)
    probes: dict[str, Callable[[], object]] = {
        "gwa": lambda: gwa_score(gwa_from_features(*feats, y)),
        "gwa_with_forward": lambda: gwa_score(gwa_from_features(*head_features(model, x), y)),
        "coherence_last_layer": lambda: coherence_from_features(*head_features(model, x), y),
        "coherence_full": lambda: coherence(model, ctx, CoherenceParams(mode="full")),
        "sharpness_sam": lambda: sharpness_measures(
            model, x, y, SharpnessParams(measures=["sam"]), gen
        ),
        "sharpness_default": lambda: sharpness_measures(model, x, y, SharpnessParams(), gen),
        "margins_output_hidden": lambda: margins_of(
            model, x, y, MarginParams(measures=["output", "hidden"]), None
        ),
        "margins_default": lambda: margins_of(model, x, y, MarginParams(max_iter=50), basis),
        "complexity_default": lambda: model_complexity(model, x, ComplexityParams(), gen),
        "influence_ggn_head": lambda: ggn_self_influence(model, x, y, scope="head"),
    }
    step = statistics.median(ratio(train_step, train_step, args.repeats)[1] for _ in range(3))
    targets = {"gwa": 0.1, "coherence_last_layer": 0.5, "coherence_full": 5.0}
    print(
        f"MLP width {args.width} depth {args.depth}, batch {args.batch}; "
        f"one training step = {step * 1e3:.2f} ms"
    )
    print(f"{'probe':24s} {'ms':>9s} {'x step':>9s}  target")
    ratios = {}
    for name, fn in probes.items():
        reps = args.repeats if "default" not in name else max(3, args.repeats // 5)
        ratios[name], t = ratio(fn, train_step, reps)
        tgt = targets.get(name)
        mark = "" if tgt is None else f"< {tgt:g}x {'ok' if ratios[name] < tgt else 'MISSED'}"
        print(f"{name:24s} {t * 1e3:9.2f} {ratios[name]:9.2f}  {mark}")
    print(" ".join(f"{k}_x={v:.3f}" for k, v in ratios.items()) + f" step_ms={step * 1e3:.3f}")


if __name__ == "__main__":
    main()
