"""``arrow_library``: a pretrained base with a general-knowledge LoRA and a library of task LoRAs,
combined per input by Arrow routing, optionally after general knowledge subtraction (GenKnowSub,
Bagherifard et al. 2025, #89; Arrow: Ostapenko et al. 2024).

Built for a ``domain_family`` task, it first makes sure the store holds (training them once, as
ordinary runs) the base (a ``linear_student`` or an ``mlp`` on the family's base data, task -2), a
rank-r LoRA on the general data (task -1) and one per upstream task (``from_run`` of the base +
method ``lora``, every linear layer, a shared ``A`` init). It returns the base with a forward hook
on each adapted linear layer that adds, for the ``mode`` set by ``configure``:

- ``base``: nothing; ``general``: the general LoRA's update ``s B_g A_g h``;
- ``arrow_base``: Arrow over the task LoRAs; ``arrow``: the general LoRA plus Arrow over the task
  LoRAs; ``genknowsub``: the general LoRA plus Arrow over the residual modules ``task - general``.

Arrow, per layer and per input ``h`` (no training): each module's prototype ``v_i`` is the top
right-singular vector of its update ``s B_i A_i``; the scores ``|<h, v_i>|`` (sign-agnostic) of the
``top_k`` best modules are turned into weights by a softmax at ``temperature`` (the others get 0),
and the layer adds ``sum_i w_i s B_i A_i h``. The residual of GenKnowSub is ``s B_i A_i - s B_g A_g``
(``subtract="delta"``: exact, held as a rank-2r module) or, as the paper's code and PEFT's
``ArrowConfig(use_gks=True)`` do it, ``s (B_i - B_g)(A_i - A_g)`` (``subtract="factors"``).
Here the backbone that "holds the general knowledge" (the paper's pretrained LLM) is the base plus
the general LoRA: both ``arrow`` and ``genknowsub`` run on it. Needs ``genlab[lora]``.

PEFT's own routing (``peft_router``; PEFT >= 0.17, ``peft.tuners.lora.arrow``): modes
``peft_arrow`` and ``peft_genknowsub`` run the base through a PEFT model holding the task LoRAs
(``task_i``) and, for GenKnowSub, the general LoRA (``gks_0``) with an ``arrow_router`` adapter
(``LoraConfig(arrow_config=ArrowConfig(...))``), as ``peft.create_arrow_model`` builds it from
adapter folders: GenKnowSub subtracts the general LoRA's ``A`` and ``B`` from each task LoRA's
factors (the paper's code, ``saharsamr/Modular-LLM``,
``merging_lora_modules/cross_lingual_expert_organiser.py``) and the general LoRA then takes no part
in the forward (the code deletes it); prototypes by 15 power iterations of ``ΔWᵀΔW`` from a
seeded random start (``rng_seed``), not an exact SVD as the hooks do.
"""

from __future__ import annotations

from typing import Any, Literal

import torch
from pydantic import Field
from torch import Tensor, nn

from genlab.data import TaskInfo
from genlab.models import MODELS
from genlab.registry import Params

MODES = ("base", "general", "arrow_base", "arrow", "genknowsub", "peft_arrow", "peft_genknowsub")
PEFT_MODES = ("peft_arrow", "peft_genknowsub")


class ArrowLibraryParams(Params):
    """Params of ``arrow_library``: how the base and the LoRAs are trained."""

    base: Literal["linear_student", "mlp"] = "linear_student"
    width: int = Field(64, ge=1, description="mlp base only")
    base_steps: int = Field(3000, ge=1)
    lora_steps: int = Field(1000, ge=1)
    rank: int = Field(4, ge=1)
    lr: float = Field(3e-3, gt=0)
    weight_decay: float = Field(0.1, ge=0)
    init_seed: int = Field(0, ge=0)


def library_specs(p: ArrowLibraryParams, family: dict[str, Any]) -> tuple[dict, list[dict]]:
    """The base run's spec, then the general LoRA's and each upstream LoRA's (parent filled later)."""
    task = {"name": "domain_family", "params": {**family}}
    common = {
        "batch_size": 64,
        "optimizer": {"name": "adamw", "lr": p.lr, "weight_decay": p.weight_decay},
        "eval": {"every": 100000, "log_points": 0},
    }
    model = (
        {"name": "mlp", "params": {"width": p.width, "depth": 1}}
        if p.base == "mlp"
        else {"name": "linear_student", "params": {}}
    )
    base = {
        **common,
        "task": {**task, "params": {**family, "task": -2}},
        "steps": p.base_steps,
        "model": model,
    }
    loras = [
        {
            **common,
            "task": {**task, "params": {**family, "task": t}},
            "steps": p.lora_steps,
            "method": {
                "name": "lora",
                "params": {
                    "rank": p.rank,
                    "alpha": float(p.rank),
                    "init_seed": p.init_seed,
                    "targets": "all",
                },
            },
        }
        for t in [-1, *range(family["n_upstream"])]
    ]
    return base, loras


def prototype(delta: Tensor) -> Tensor:
    """Arrow's prototype of a module: the top right-singular vector of its update (sign-free)."""
    return torch.linalg.svd(delta.double(), full_matrices=False).Vh[0].to(delta.dtype)


def arrow_weights(h: Tensor, protos: Tensor, top_k: int, temperature: float) -> Tensor:
    """Per input, softmax over the ``top_k`` scores ``|<h, v_i>|`` (0 for the other modules)."""
    score = (h @ protos.T).abs()
    top, idx = score.topk(min(top_k, protos.shape[0]), dim=-1)
    full = torch.full_like(score, float("-inf")).scatter(-1, idx, top)
    return torch.softmax(full / temperature, dim=-1)


class Layer:
    """One adapted layer: the general module's update and each task module's ``(A, B)``."""

    def __init__(self, a: Tensor, b: Tensor, scale: float) -> None:
        self.a, self.b, self.scale = a, b, scale  # (1 + n, r, in), (1 + n, out, r): general first

    def modules(self, residual: str | None) -> tuple[Tensor, Tensor]:
        """The task modules' ``(A, B)`` stacks, after the subtraction ``residual`` (or none)."""
        a, b = self.a[1:], self.b[1:]
        if residual == "factors":
            return a - self.a[:1], b - self.b[:1]
        if residual == "delta":
            n = a.shape[0]
            return (
                torch.cat([a, self.a[:1].expand(n, -1, -1)], 1),
                torch.cat([b, -self.b[:1].expand(n, -1, -1)], 2),
            )
        return a, b


def peft_router(
    base: nn.Module,
    layers: dict[str, Layer],
    top_k: int,
    temperature: float,
    use_gks: bool,
    rng_seed: int = 0,
) -> nn.Module:
    """PEFT's Arrow (``use_gks``: with GenKnowSub) over a copy of ``base`` holding the library's
    LoRAs (module docstring); the copy carries none of the library's hooks."""
    import copy

    import peft
    from peft.tuners.lora.config import ArrowConfig

    model = copy.deepcopy(base)
    for m in model.modules():
        m._forward_hooks.clear()
    first = next(iter(layers.values()))
    rank, n = first.a.shape[1], first.a.shape[0] - 1
    targets = list(layers)
    names = [f"task_{i}" for i in range(n)] + (["gks_0"] if use_gks else [])
    cfg = peft.LoraConfig(r=rank, lora_alpha=rank, target_modules=targets, lora_dropout=0.0)
    model = peft.get_peft_model(model, cfg, adapter_name=names[0])
    for name in names[1:]:
        model.add_adapter(name, cfg)
    with torch.no_grad():
        for target, layer in layers.items():
            mod = model.base_model.model.get_submodule(target)
            for j, name in enumerate(names):
                src = 1 + j if name.startswith("task_") else 0  # the general LoRA is first
                mod.lora_A[name].weight.copy_(layer.a[src])
                mod.lora_B[name].weight.copy_(layer.b[src])
    arrow = ArrowConfig(
        top_k=top_k, router_temperature=temperature, use_gks=use_gks, rng_seed=rng_seed
    )
    arrow.task_adapter_names = names[:n]
    arrow.gks_adapter_names = names[n:]
    model.add_adapter(
        "arrow_router", peft.LoraConfig(r=rank, target_modules=targets, arrow_config=arrow)
    )
    model.set_adapter("arrow_router")
    model.eval()
    return model


class ArrowLibrary(nn.Module):
    """The base with hooks adding the routed update of ``mode`` (see the module docstring)."""

    def __init__(self, base: nn.Module, layers: dict[str, Layer]) -> None:
        super().__init__()
        self.base, self.layers = base, layers
        self.mode, self.top_k, self.temperature, self.subtract = "base", 2, 1.0, "delta"
        self.route_weights: dict[str, Tensor] = {}  # last routing weights per layer
        mods = dict(base.named_modules())
        for name in layers:
            mods[name].register_forward_hook(self._hook(name))
        self.configure("base")

    @property
    def size(self) -> int:
        return next(iter(self.layers.values())).a.shape[0] - 1

    @torch.no_grad()
    def configure(
        self, mode: str, top_k: int = 2, temperature: float = 1.0, subtract: str = "delta"
    ) -> None:
        """Set the mode and Arrow's knobs; recomputes the modules and their prototypes."""
        if mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
        self.mode, self.top_k, self.temperature, self.subtract = mode, top_k, temperature, subtract
        # PEFT's router, a separate copy of the base (kept out of this module's parameters)
        self.__dict__["peft"] = (
            peft_router(self.base, self.layers, top_k, temperature, mode == "peft_genknowsub")
            if mode in PEFT_MODES
            else None
        )
        residual = subtract if mode == "genknowsub" else None
        self.stacks = {}
        for name, layer in self.layers.items():
            a, b = layer.modules(residual)
            protos = torch.stack(
                [prototype(layer.scale * bi @ ai) for ai, bi in zip(a, b, strict=True)]
            )
            self.stacks[name] = (a, b, protos)

    def _hook(self, name: str):
        def hook(module: nn.Module, inputs: tuple[Tensor, ...], out: Tensor) -> Tensor:
            if self.mode in ("base", *PEFT_MODES):
                return out
            h, layer = inputs[0], self.layers[name]
            if self.mode != "arrow_base":
                out = out + layer.scale * (h @ layer.a[0].T) @ layer.b[0].T
            if self.mode == "general":
                return out
            a, b, protos = self.stacks[name]
            w = arrow_weights(h, protos, self.top_k, self.temperature)  # (n, E)
            self.route_weights[name] = w.detach()
            each = torch.einsum("nf,erf->ner", h, a)
            each = torch.einsum("ner,eor->neo", each, b)
            return out + layer.scale * torch.einsum("ne,neo->no", w, each)

        return hook

    def forward(self, x: Tensor) -> Tensor:
        return self.peft(x) if self.mode in PEFT_MODES else self.base(x)


def _tiny(root: object) -> dict[str, int]:
    return {"base_steps": 2, "lora_steps": 2}


@MODELS.register("arrow_library", ArrowLibraryParams, papers=(89,), family="modular", tiny=_tiny)
def arrow_library(params: ArrowLibraryParams, info: TaskInfo) -> nn.Module:
    """The base with its general and task LoRAs (trained into the store when missing)."""
    from genlab.derived.lora_library import train_library
    from genlab.lora import require_peft
    from genlab.methods.lora import PREFIX
    from genlab.store_context import active_store

    require_peft()  # before anything is trained or written
    fam = info.extra.get("family")
    if fam is None or "general" not in fam:
        raise ValueError("model arrow_library needs a domain_family task (task.name=domain_family)")
    base_d, lora_ds = library_specs(params, fam)
    model, adapters = train_library(active_store(), base_d, lora_ds, info)
    layers = {}
    for key in sorted(k for k in adapters[0] if ".lora_A." in k):
        name = key.removeprefix(PREFIX).split(".lora_A.")[0]
        a = torch.stack([ad[key] for ad in adapters])
        b = torch.stack([ad[key.replace(".lora_A.", ".lora_B.")] for ad in adapters])
        layers[name] = Layer(a, b, 1.0)  # alpha = rank: PEFT's scale alpha / r = 1
    return ArrowLibrary(model, layers)
