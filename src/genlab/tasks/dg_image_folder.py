"""``image_folder_domains``: domain generalization on any ``root/<domain>/<class>/<image>`` tree.

The on-disk layout of PACS (Li et al., #17), VLCS, OfficeHome, TerraIncognita, DomainNet and NICO++
as DomainBed reads them: each domain is an environment, classes are shared by name. Read from
``data_root``; nothing is downloaded. ``size`` resizes every image (needed when sizes differ).
"""

from __future__ import annotations

import torch
from pydantic import Field

from genlab.data import TaskData, TaskInfo
from genlab.datasets.domains import domain_task
from genlab.datasets.image_folder import load_domain, scan, write_fake_folders
from genlab.registry import Params
from genlab.tasks import TASKS


class ImageFolderParams(Params):
    """Params of ``image_folder_domains``."""

    data_root: str = Field(description="folder holding one sub-folder per domain")
    test_envs: list[int] = Field(default_factory=lambda: [0], description="held-out domain indices")
    size: int | None = Field(None, ge=4, le=512, description="resize images to size x size")
    holdout_fraction: float = Field(0.2, gt=0, lt=1)


@TASKS.register(
    "image_folder_domains",
    ImageFolderParams,
    papers=(17,),
    family="domain-shift",
    tiny=lambda root: {"data_root": str(write_fake_folders(root))},
)
def image_folder_domains(params: ImageFolderParams, data_seed: int) -> TaskData:
    """One environment per domain folder, classes from the class folders (DomainBed's layout)."""
    domains, classes, files = scan(params.data_root)
    envs = {d: load_domain(files[d], params.size) for d in domains}
    shapes = {tuple(x.shape[1:]) for x, _ in envs.values()}
    if len(shapes) > 1:
        raise ValueError(f"domains hold images of different sizes {sorted(shapes)}; set task.size")
    gen = torch.Generator().manual_seed(data_seed)
    info = TaskInfo(
        kind="classification",
        n_outputs=len(classes),
        input_shape=shapes.pop(),
        chance=1 / len(classes),
        extra={"classes": classes},
    )
    return domain_task(envs, params.test_envs, info, gen, params.holdout_fraction)
