"""On-disk data: MNIST IDX files and root/domain/class/image trees, from fixtures written here."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from typer.testing import CliRunner

from genlab.cli import app
from genlab.datasets.idx import read_idx, write_fake_mnist, write_idx
from genlab.datasets.image_folder import read_pnm, write_ppm
from genlab.tasks import TASKS


@pytest.fixture
def mnist_root(tmp_path):
    return write_fake_mnist(tmp_path, n_train=60, n_test=24)


def build(name: str, **params):
    entry = TASKS.get(name)
    return entry.obj(entry.params.model_validate(params), 0)


def test_idx_roundtrip(tmp_path):
    a = np.arange(24, dtype=np.uint8).reshape(2, 3, 4)
    write_idx(tmp_path / "x.gz", a)
    assert np.array_equal(read_idx(tmp_path / "x.gz"), a)
    (tmp_path / "bad").write_bytes(b"\x01\x02\x03")
    with pytest.raises(ValueError, match="not an IDX file"):
        read_idx(tmp_path / "bad")


def test_colored_and_rotated_mnist_from_idx(mnist_root):
    c = build("colored_mnist", data_root=str(mnist_root), test_envs=[2])
    assert c.info.input_shape == (2, 28, 28) and set(c.test) == {"-90%"}  # DomainBed's code
    assert c.test["-90%"].x.shape[1:] == (2, 28, 28)
    assert sum(len(s) for s in [*c.train.values(), *c.val.values(), *c.test.values()]) == 84
    small = build("colored_mnist", data_root=str(mnist_root), test_envs=[2], resolution=14)
    assert small.test["-90%"].x.shape[1:] == (2, 14, 14)  # Arjovsky et al.'s IRM code
    assert torch.equal(small.test["-90%"].x, c.test["-90%"].x[:, :, ::2, ::2])
    r = build("rotated_mnist", data_root=str(mnist_root), test_envs=[5])
    assert r.info.input_shape == (1, 28, 28) and set(r.test) == {"75deg"}


def test_missing_mnist_root_exit_2(tmp_path):
    store = tmp_path / "store"
    res = CliRunner().invoke(
        app,
        [
            "run",
            "dg-colored",
            "task.name=colored_mnist",
            f'task.params={{data_root="{tmp_path / "nowhere"}"}}',
            "--store",
            str(store),
            "-q",
        ],
    )
    assert res.exit_code == 2, res.output
    assert "IDX" in res.output and not store.exists()


@pytest.fixture
def folder_root(tmp_path):
    import matplotlib.image as mpimg

    rng = np.random.default_rng(0)
    root = tmp_path / "PACS"
    for d in ("art", "photo", "sketch"):
        for c in ("dog", "horse"):
            (root / d / c).mkdir(parents=True)
            for i in range(5):
                img = rng.integers(0, 256, (6, 6, 3))
                if d == "photo":
                    mpimg.imsave(root / d / c / f"{i}.png", img.astype(np.uint8))
                else:
                    write_ppm(root / d / c / f"{i}.ppm", img)
    return root


def test_read_pnm_exact(tmp_path):
    img = np.arange(2 * 3 * 3).reshape(2, 3, 3)
    write_ppm(tmp_path / "a.ppm", img)
    assert np.allclose(read_pnm(tmp_path / "a.ppm") * 255, img)


def test_image_folder_domains(folder_root):
    d = build("image_folder_domains", data_root=str(folder_root), test_envs=[2])
    assert d.info.extra["envs"] == ["art", "photo", "sketch"]
    assert d.info.extra["classes"] == ["dog", "horse"] and d.info.input_shape == (3, 6, 6)
    assert len(d.test["sketch"]) == 10 and len(d.train["art"]) + len(d.val["art"]) == 10
    assert torch.equal(d.test["sketch"].y.sort().values, torch.tensor([0] * 5 + [1] * 5))


def test_image_folder_mixed_sizes_and_bad_layout(folder_root, tmp_path):
    write_ppm(folder_root / "art" / "dog" / "big.ppm", np.zeros((9, 9, 3)))
    with pytest.raises(ValueError, match="mixed sizes"):
        build("image_folder_domains", data_root=str(folder_root))
    d = build("image_folder_domains", data_root=str(folder_root), size=8)
    assert d.info.input_shape == (3, 8, 8)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ValueError, match="no domain folders"):
        build("image_folder_domains", data_root=str(empty))
    store = tmp_path / "store"
    res = CliRunner().invoke(
        app,
        [
            "run",
            "dg-colored",
            "task.name=image_folder_domains",
            f'task.params={{data_root="{folder_root}", test_envs=[7], size=8}}',
            "--store",
            str(store),
            "-q",
        ],
    )
    assert res.exit_code == 2 and "out of range" in res.output and not store.exists()
