"""Per-sample gradients of every trainable parameter with ``torch.func`` (``vmap(grad(...))``):
what a method weighing samples by their gradients needs (``methods.robust_mean``). The diagnostic
probes' own paths (last layer in closed form, chunked sums) are ``genlab.probes._grads``.

Floor: the bottom (imports ``errors`` and ``losses`` only).
"""

from __future__ import annotations

from torch import Tensor, nn

from genlab.errors import SpecError
from genlab.losses import cross_entropy


def per_sample_grads_dict(
    model: nn.Module, x: Tensor, y: Tensor
) -> tuple[dict[str, Tensor], Tensor]:
    """Per-sample gradients ``{name: (N, *shape)}`` of every trainable parameter and the mean
    loss. Dropout with ``p > 0`` stays on in training mode (drawn per sample); other layers run
    in eval mode (so batch norm uses its running statistics)."""
    from torch.func import functional_call, grad_and_value, vmap

    params = {k: v.detach() for k, v in model.named_parameters() if v.requires_grad}
    buffers = {k: v.detach() for k, v in model.named_buffers()}

    def loss_one(p: dict[str, Tensor], xi: Tensor, yi: Tensor) -> Tensor:
        return cross_entropy(
            functional_call(model, (p, buffers), (xi.unsqueeze(0),)), yi.unsqueeze(0)
        )

    # random layers under vmap are slow: switch them off when they do nothing (dropout p = 0)
    random_on = model.training and any(
        isinstance(m, nn.modules.dropout._DropoutNd) and m.p > 0 for m in model.modules()
    )
    was_training = model.training
    model.train(random_on)
    fn = vmap(grad_and_value(loss_one), in_dims=(None, 0, 0), randomness="different")
    try:
        g, losses = fn(params, x, y)
    except (RuntimeError, NotImplementedError) as exc:
        raise SpecError(
            f"{type(model).__name__} cannot give per-sample gradients through torch.func "
            f"(vmap(grad)): {str(exc).splitlines()[0]}"
        ) from None
    finally:
        model.train(was_training)
    return g, losses.mean()
