"""Synthetic tasks of the diagnostics claims: where an architecture or a hypothesis class is
measured, not a trained model.

- ``plane_grid`` (Teney et al., "Neural Redshift", #85): the ``grid x grid`` lattice of
  ``[-1, 1]^2`` (row-major), labelled by the side of the diagonal (``u + v > 0``) so that even
  a linear model trains; the complexity claims evaluate untrained networks on it (``function_complexity``,
  ``inputs="grid"``). ``test/uniform``: uniform points of the square.
- ``intrinsic_dim`` (Boopathy et al., #43, #45): binary labels on data of intrinsic dimension
  ``d`` in an ambient space of dimension ``D``
  (``genlab.probes.inductive_bias.intrinsic_dim_task``).
"""

from __future__ import annotations

import torch
from pydantic import Field, model_validator

from genlab.data import Split, TaskData, TaskInfo
from genlab.probes.complexity import grid_2d
from genlab.probes.inductive_bias import intrinsic_dim_task
from genlab.registry import Params
from genlab.tasks import TASKS


class PlaneGridParams(Params):
    """Params of ``plane_grid``."""

    grid: int = Field(32, ge=4, le=256, description="grid points per side")
    n_test: int = Field(1000, ge=1, le=100_000, description="uniform test points")


def _side(x: torch.Tensor) -> torch.Tensor:
    return (x[:, 0] + x[:, 1] > 0).long()


@TASKS.register(
    "plane_grid", PlaneGridParams, papers=(85,), family="diag", tiny={"grid": 4, "n_test": 16}
)
def plane_grid(params: PlaneGridParams, data_seed: int) -> TaskData:
    """The grid of ``[-1, 1]^2`` on which random networks' functions are scored (#85)."""
    x = grid_2d(params.grid).float()
    gen = torch.Generator().manual_seed(data_seed)
    x_te = torch.rand(params.n_test, 2, generator=gen) * 2 - 1
    return TaskData(
        train={"main": Split(x, _side(x), {"grid": params.grid})},
        val={},
        test={"uniform": Split(x_te, _side(x_te))},
        info=TaskInfo(kind="classification", n_outputs=2, input_shape=(2,), chance=0.5),
    )


class IntrinsicDimParams(Params):
    """Params of ``intrinsic_dim``."""

    intrinsic_dim: int = Field(4, ge=1, le=256, description="d: dimension of the data manifold")
    ambient_dim: int = Field(32, ge=1, le=1024, description="D: dimension of the inputs")
    n_train: int = Field(64, ge=2, le=100_000)
    n_test: int = Field(500, ge=1, le=100_000)
    waves: int = Field(3, ge=1, le=64, description="sine waves that make the label")

    @model_validator(mode="after")
    def _dims(self) -> IntrinsicDimParams:
        if self.intrinsic_dim > self.ambient_dim:
            raise ValueError(
                f"intrinsic_dim ({self.intrinsic_dim}) must be <= ambient_dim ({self.ambient_dim})"
            )
        return self


@TASKS.register(
    "intrinsic_dim",
    IntrinsicDimParams,
    papers=(43, 45),
    family="diag",
    tiny={"intrinsic_dim": 2, "ambient_dim": 4, "n_train": 16, "n_test": 16},
)
def intrinsic_dim(params: IntrinsicDimParams, data_seed: int) -> TaskData:
    """Binary labels on a ``d``-dimensional subspace of ``R^D`` (Boopathy et al., #43, #45)."""
    x, y, x_te, y_te = intrinsic_dim_task(
        params.intrinsic_dim,
        params.ambient_dim,
        params.n_train,
        params.n_test,
        data_seed,
        params.waves,
    )
    t = lambda a: torch.as_tensor(a, dtype=torch.float32)  # noqa: E731
    return TaskData(
        train={"main": Split(t(x), torch.as_tensor(y), {"intrinsic_dim": params.intrinsic_dim})},
        val={},
        test={"heldout": Split(t(x_te), torch.as_tensor(y_te))},
        info=TaskInfo(
            kind="classification", n_outputs=2, input_shape=(params.ambient_dim,), chance=0.5
        ),
    )
