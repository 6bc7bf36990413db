"""Images from ``root/<domain>/<class>/<image>`` trees (PACS, VLCS, OfficeHome, TerraIncognita,
DomainNet, NICO++ are distributed this way), read from disk without torchvision.

PNG is read with matplotlib; binary PPM/PGM (P6/P5) with a few lines here; JPEG needs Pillow
(via matplotlib) and says so when it is missing. Classes are the sorted union of the class folders
of all domains; images come back as float ``(C, H, W)`` in [0, 1] with three channels.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

EXTENSIONS = {".png", ".ppm", ".pgm", ".jpg", ".jpeg"}


def read_pnm(path: Path) -> np.ndarray:
    """A binary PPM (P6) or PGM (P5) file as an ``(H, W, C)`` float array in [0, 1]."""
    raw = path.read_bytes()
    fields: list[bytes] = []
    pos = 0
    while len(fields) < 4:
        while raw[pos : pos + 1].isspace():
            pos += 1
        if raw[pos : pos + 1] == b"#":
            pos = raw.index(b"\n", pos) + 1
            continue
        start = pos
        while not raw[pos : pos + 1].isspace():
            pos += 1
        fields.append(raw[start:pos])
    magic, w, h, maxval = fields[0], int(fields[1]), int(fields[2]), int(fields[3])
    if magic not in (b"P5", b"P6"):
        raise ValueError(f"{path}: only binary PPM (P6) and PGM (P5) are supported, got {magic!r}")
    channels = 3 if magic == b"P6" else 1
    dtype = np.uint8 if maxval < 256 else np.dtype(">u2")
    data = np.frombuffer(raw, dtype=dtype, offset=pos + 1, count=w * h * channels)
    return data.reshape(h, w, channels).astype(np.float32) / maxval


def write_ppm(path: Path, img: np.ndarray) -> None:
    """Write an ``(H, W, 3)`` array of 0..255 values as a binary PPM (P6) file."""
    h, w, _ = img.shape
    path.write_bytes(f"P6\n# genlab\n{w} {h}\n255\n".encode() + img.astype(np.uint8).tobytes())


def write_fake_folders(
    root: str | Path,
    domains: tuple[str, ...] = ("art", "photo", "sketch"),
    classes: tuple[str, ...] = ("dog", "horse"),
    n: int = 5,
    size: int = 6,
    seed: int = 0,
) -> Path:
    """A ``root/<domain>/<class>/<i>.ppm`` tree of random images: a tiny stand-in in the real
    layout, for tests."""
    rng = np.random.default_rng(seed)
    for d in domains:
        for c in classes:
            (Path(root) / d / c).mkdir(parents=True, exist_ok=True)
            for i in range(n):
                write_ppm(Path(root) / d / c / f"{i}.ppm", rng.integers(0, 256, (size, size, 3)))
    return Path(root)


def read_image(path: Path) -> torch.Tensor:
    """One image as a float ``(3, H, W)`` tensor in [0, 1] (gray is repeated, alpha dropped)."""
    if path.suffix.lower() in (".ppm", ".pgm"):
        arr = read_pnm(path)
    else:
        import matplotlib.image as mpimg

        try:
            arr = np.asarray(mpimg.imread(path), dtype=np.float32)
        except (ImportError, ValueError, OSError) as exc:
            raise ValueError(f"{path}: cannot read ({exc}); JPEG needs Pillow installed") from None
        if arr.max() > 1.0:
            arr = arr / 255.0
    if arr.ndim == 2:
        arr = arr[:, :, None]
    arr = arr[:, :, :3]
    if arr.shape[2] == 1:
        arr = np.repeat(arr, 3, axis=2)
    return torch.from_numpy(np.ascontiguousarray(arr.transpose(2, 0, 1)))


def scan(root: str | Path) -> tuple[list[str], list[str], dict[str, list[tuple[Path, int]]]]:
    """Domains, classes, and per domain the ``(file, class index)`` pairs, sorted by path."""
    root = Path(root).expanduser()
    layout = "root/<domain>/<class>/<image> (e.g. PACS/art_painting/dog/pic_001.jpg)"
    if not root.is_dir():
        raise ValueError(f"data_root {str(root)!r} does not exist; expected {layout}")
    domains = sorted(d.name for d in root.iterdir() if d.is_dir())
    if not domains:
        raise ValueError(f"data_root {str(root)!r} has no domain folders; expected {layout}")
    classes = sorted({c.name for d in domains for c in (root / d).iterdir() if c.is_dir()})
    if not classes:
        raise ValueError(f"data_root {str(root)!r} has no class folders; expected {layout}")
    index = {c: i for i, c in enumerate(classes)}
    files: dict[str, list[tuple[Path, int]]] = {}
    for d in domains:
        found = [
            (f, index[c.name])
            for c in sorted((root / d).iterdir())
            if c.is_dir()
            for f in sorted(c.iterdir())
            if f.suffix.lower() in EXTENSIONS
        ]
        if not found:
            raise ValueError(f"domain {d!r} under {str(root)!r} has no images; expected {layout}")
        files[d] = found
    return domains, classes, files


def load_domain(
    files: list[tuple[Path, int]], size: int | None
) -> tuple[torch.Tensor, torch.Tensor]:
    """Stack a domain's images; with ``size`` each is resized (bilinear) to ``size x size``, else
    they must all have the same size."""
    images = []
    for path, _ in files:
        img = read_image(path)
        if size is not None and img.shape[1:] != (size, size):
            img = F.interpolate(img[None], size=(size, size), mode="bilinear", align_corners=False)[
                0
            ]
        images.append(img)
    shapes = {tuple(i.shape[1:]) for i in images}
    if len(shapes) > 1:
        first = {tuple(i.shape[1:]): p for i, (p, _) in zip(images, files, strict=True)}
        raise ValueError(
            "images of mixed sizes: "
            + ", ".join(f"{h}x{w} ({first[(h, w)]})" for h, w in sorted(shapes))
            + "; set task.size to resize them all"
        )
    return torch.stack(images), torch.tensor([c for _, c in files], dtype=torch.long)
