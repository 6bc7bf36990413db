"""Procedurally rendered shape x colour (x size) images with held-out combinations.

The data of Uselis, Dittadi & Oh, "Does data scaling lead to visual compositional generalization?"
(2025, catalogue #59): 16x16 RGB images of one shape (up to 8) in one colour (up to 8), optionally
at one of up to 3 sizes, with position, scale and colour jitter. A model predicts every attribute
(targets ``(N, n_attributes)``, a sequence task whose per-row accuracy is "all attributes right").
``coverage`` (the share of combinations seen in training) and ``per_combo`` (images per trained
combination) are the knobs the paper sweeps: at a fixed total, more coverage means fewer images
per combination. ``val/main`` has fresh images of the trained combinations, ``test/heldout`` of the
held-out ones (``tasks/combos.py``).

``entangled=True`` is a negative control: each shape paints colour value ``c`` with its own
palette entry (a random permutation of the palette per shape, drawn from ``data_seed``), so the
pixels of "colour c" differ from shape to shape and the attributes no longer compose in the input:
the colour of an unseen combination cannot be read off its pixels, and coverage should not buy
generalization. (A fixed shift ``(c + shape) mod n`` would make every held-out combination
systematically wrong, an accuracy of exactly 0 that the floor guard cannot tell from failure; a
random permutation leaves the colour right by chance, about 1 in ``n_colors``, above the floor.)
"""

from __future__ import annotations

import numpy as np
import torch
from pydantic import Field

from genlab.data import Split, TaskData, TaskInfo
from genlab.tasks import TASKS
from genlab.tasks.combos import ComboParams, combination_split

SIZE = 16
PALETTE = np.array(
    [
        [1.0, 0.1, 0.1],
        [0.1, 0.9, 0.1],
        [0.15, 0.3, 1.0],
        [1.0, 1.0, 0.1],
        [1.0, 0.1, 1.0],
        [0.1, 1.0, 1.0],
        [1.0, 0.55, 0.0],
        [0.9, 0.9, 0.9],
    ]
)
SCALES = (3.5, 5.0, 6.5)  # half-extent in pixels of the small, medium and large sizes


def _masks(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """The 8 shapes on normalised coordinates ``u, v`` (shape ``(N, H, W)``) -> ``(8, N, H, W)``:
    square, disc, triangle, diamond, plus, cross, ring, horizontal bar."""
    r2, m = u**2 + v**2, np.maximum(abs(u), abs(v))
    return np.stack(
        [
            m <= 0.8,
            r2 <= 0.8,
            (v >= -0.8) & (v <= 0.8) & (abs(u) <= (v + 0.8) / 2),
            abs(u) + abs(v) <= 0.95,
            ((abs(u) <= 0.3) | (abs(v) <= 0.3)) & (m <= 0.95),
            ((abs(u - v) <= 0.4) | (abs(u + v) <= 0.4)) & (m <= 0.95),
            (r2 >= 0.3) & (r2 <= 0.95),
            (abs(v) <= 0.35) & (abs(u) <= 0.95),
        ]
    )


def render(
    combos: np.ndarray,
    rng: np.random.Generator,
    paint: np.ndarray | None = None,
    jitter: float = 1.5,
    noise: float = 0.05,
) -> torch.Tensor:
    """Images ``(N, 3, 16, 16)`` for rows ``(shape, colour[, size])`` of ``combos``; ``paint``
    ``(n_shapes, n_colors)`` maps a shape's colour value to its palette entry (default: itself)."""
    n = len(combos)
    shape, colour = combos[:, 0], combos[:, 1]
    scale = np.array(SCALES)[combos[:, 2]] if combos.shape[1] > 2 else np.full(n, SCALES[1])
    scale = scale * rng.uniform(0.9, 1.1, n)
    cx, cy = (SIZE - 1) / 2 + rng.uniform(-jitter, jitter, (2, n))
    yy, xx = np.mgrid[0:SIZE, 0:SIZE]
    u = (xx[None] - cx[:, None, None]) / scale[:, None, None]
    v = (cy[:, None, None] - yy[None]) / scale[:, None, None]
    mask = _masks(u, v)[shape, np.arange(n)]
    entry = paint[shape, colour] if paint is not None else colour
    rgb = PALETTE[entry] + rng.normal(0, noise, (n, 3))
    img = mask[:, None] * rgb[:, :, None, None] + rng.normal(0, noise, (n, 3, SIZE, SIZE))
    return torch.tensor(img, dtype=torch.float32)


class ShapesParams(ComboParams):
    """Params of ``comp_shapes``."""

    n_shapes: int = Field(8, ge=2, le=8)
    n_colors: int = Field(8, ge=2, le=8)
    n_sizes: int = Field(1, ge=1, le=3, description="1: no size attribute; 2-3: a third one")
    entangled: bool = Field(False, description="negative control: palette per shape")
    jitter: float = Field(1.5, ge=0, le=4, description="position jitter in pixels")

    def split_sizes(self) -> tuple[int, ...]:
        sizes = (self.n_shapes, self.n_colors)
        return sizes + ((self.n_sizes,) if self.n_sizes > 1 else ())


@TASKS.register("comp_shapes", ShapesParams, papers=(59,), family="compositional")
def comp_shapes(params: ShapesParams, data_seed: int) -> TaskData:
    """Shape x colour images, held-out combinations by coverage (Uselis et al., #59)."""
    rng = np.random.default_rng(data_seed)
    sizes = params.split_sizes()
    trained, held = combination_split(sizes, params.coverage, rng)
    paint = (
        np.stack([rng.permutation(params.n_colors) for _ in range(params.n_shapes)])
        if params.entangled
        else None
    )

    def split(combos: np.ndarray, k: int, meta: dict) -> Split:
        rows = np.repeat(combos, k, axis=0)
        x = render(rows, rng, paint, params.jitter)
        return Split(x, torch.tensor(rows, dtype=torch.long), meta)

    train = {"main": split(trained, params.per_combo, {"combos": len(trained)})}
    val = {"main": split(trained, params.n_val, {})} if params.n_val else {}
    test = {"heldout": split(held, params.n_test, {"combos": len(held), "shift": "heldout"})}
    info = TaskInfo(
        kind="sequence",
        n_outputs=max(sizes),
        input_shape=(3, SIZE, SIZE),
        chance=float(np.prod([1 / s for s in sizes])),
        extra={"attributes": list(sizes), "coverage": len(trained) / int(np.prod(sizes))},
    )
    return TaskData(train, val, test, info)
