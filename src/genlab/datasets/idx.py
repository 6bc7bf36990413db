"""MNIST's IDX files read from disk (no download): ``train-images-idx3-ubyte`` and friends.

Accepts the files plain or gzipped, directly under ``root`` or under ``root/MNIST/raw`` (the layout
torchvision leaves behind). A missing file is a ``ValueError`` that says where to put it.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import torch

FILES = {
    "train": ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
    "test": ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"),
}
DTYPES = {0x08: np.uint8, 0x09: np.int8, 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}


def read_idx(path: str | Path) -> np.ndarray:
    """One IDX file (``.gz`` or plain) as a NumPy array of its declared type and shape."""
    path = Path(path)
    raw = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0 or raw[2] not in DTYPES:
        raise ValueError(f"{path}: not an IDX file (bad magic number)")
    ndim = raw[3]
    dims = tuple(int.from_bytes(raw[4 + 4 * i : 8 + 4 * i], "big") for i in range(ndim))
    dtype = np.dtype(DTYPES[raw[2]])
    data = np.frombuffer(raw, dtype=dtype, offset=4 + 4 * ndim)
    if data.size != int(np.prod(dims)):
        raise ValueError(f"{path}: header says shape {dims} but holds {data.size} values")
    return data.reshape(dims)


def _find(root: Path, name: str) -> Path:
    for folder in (root, root / "MNIST" / "raw", root / "raw"):
        for candidate in (folder / name, folder / f"{name}.gz"):
            if candidate.is_file():
                return candidate
    raise ValueError(
        f"data_root {str(root)!r}: no {name} (or {name}.gz); put MNIST's four IDX files "
        f"({', '.join(n for pair in FILES.values() for n in pair)}) in that folder or in "
        f"{root / 'MNIST' / 'raw'}"
    )


def load_mnist(root: str | Path) -> tuple[torch.Tensor, torch.Tensor]:
    """Train and test sets concatenated (as DomainBed does): images ``(N, 28, 28)`` uint8 and
    labels ``(N,)``."""
    root = Path(root).expanduser()
    if not root.is_dir():
        raise ValueError(f"data_root {str(root)!r} does not exist; put MNIST's IDX files there")
    xs, ys = [], []
    for images, labels in FILES.values():
        x, y = read_idx(_find(root, images)), read_idx(_find(root, labels))
        if x.ndim != 3 or y.ndim != 1 or len(x) != len(y):
            raise ValueError(f"data_root {str(root)!r}: {images} and {labels} do not match")
        xs.append(torch.from_numpy(x.copy()))
        ys.append(torch.from_numpy(y.astype(np.int64)))
    return torch.cat(xs), torch.cat(ys)


def write_idx(path: str | Path, array: np.ndarray) -> None:
    """Write ``array`` (uint8) as an IDX file, gzipped when ``path`` ends in ``.gz``."""
    path = Path(path)
    head = bytes([0, 0, 0x08, array.ndim]) + b"".join(d.to_bytes(4, "big") for d in array.shape)
    data = head + np.ascontiguousarray(array, dtype=np.uint8).tobytes()
    path.write_bytes(gzip.compress(data) if path.suffix == ".gz" else data)


def write_fake_mnist(root: str | Path, n_train: int = 60, n_test: int = 24, seed: int = 0) -> Path:
    """MNIST's four IDX files with random images and cycling labels under ``root/MNIST/raw`` (the
    train pair gzipped, the test pair plain): a tiny stand-in in the real layout, for tests."""
    raw = Path(root) / "MNIST" / "raw"
    raw.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    for (images, labels), n, ext in zip(
        FILES.values(), (n_train, n_test), (".gz", ""), strict=True
    ):
        write_idx(raw / f"{images}{ext}", rng.integers(0, 256, (n, 28, 28), dtype=np.uint8))
        write_idx(raw / f"{labels}{ext}", (np.arange(n) % 10).astype(np.uint8))
    return Path(root)
