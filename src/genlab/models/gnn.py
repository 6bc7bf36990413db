"""Node-level graph networks on PyTorch Geometric: ``gcn``, ``gin`` and ``sir_gcn`` (SIR-GCN,
Lim et al., "Contextualized messages boost graph representations", #35).

The three share everything but the convolution (``genlab.models._pyg.NodeGNN``): a linear
embedding of the node features, ``layers`` convolutions of ``width`` channels, a linear readout per
node. ``gcn`` is Kipf & Welling's ``GCNConv`` (self-loops, symmetric degree normalisation); ``gin``
is Xu et al.'s ``GINConv`` with a learnable epsilon and an MLP of ``gin_mlp_layers`` layers (the
SIR-GCN authors' GraphHeterophily runs used one, a linear map; Xu et al. two); ``sir_gcn`` is
SIR-GCN's ``SIRConv`` written as a PyG ``MessagePassing`` layer. They read dense graph inputs
(``graph_node_targets``) and refuse any other task. PyTorch Geometric is the ``graphs`` extra
(``pip install 'genlab[graphs]'``), imported when a model is built.
"""

from __future__ import annotations

from pydantic import Field
from torch import nn

from genlab.data import TaskInfo
from genlab.errors import SpecError
from genlab.models import MODELS
from genlab.registry import Params


class GNNParams(Params):
    """Params of ``gcn``, ``gin`` and ``sir_gcn``."""

    width: int = Field(40, ge=1, le=1024, description="channels (the paper: 10 per class)")
    layers: int = Field(1, ge=1, le=8, description="message-passing layers (the paper: 1)")
    gin_mlp_layers: int = Field(2, ge=1, le=4, description="layers of GIN's MLP (gin only)")


def build(conv: str, params: GNNParams, info: TaskInfo) -> nn.Module:
    n = info.extra.get("graph_nodes")
    if info.kind != "regression" or not n:
        raise ValueError(
            f"{conv} reads dense graphs with a real target per node "
            "(a task like graph_node_targets)"
        )
    try:
        from genlab.models._pyg import NodeGNN
    except ImportError as exc:
        raise SpecError(
            f"model {conv!r} needs PyTorch Geometric: pip install 'genlab[graphs]' ({exc})"
        ) from None
    return NodeGNN(
        conv, n, info.extra["node_features"], params.width, params.layers, params.gin_mlp_layers
    )


TINY = {"width": 8}


@MODELS.register("pyg_gcn", GNNParams, papers=(35,), family="graphs", tiny=TINY)
def gcn(params: GNNParams, info: TaskInfo) -> nn.Module:
    """Graph convolutional network (Kipf & Welling) on PyG, the SIR-GCN paper's baseline (#35).

    Named ``pyg_gcn``: ``gcn`` is federated graph learning's dense-adjacency GCN (``genlab.fed``)."""
    return build("gcn", params, info)


@MODELS.register("gin", GNNParams, papers=(35,), family="graphs", tiny=TINY)
def gin(params: GNNParams, info: TaskInfo) -> nn.Module:
    """Graph isomorphism network (Xu et al.), sum aggregation, on PyG (#35's baseline)."""
    return build("gin", params, info)


@MODELS.register("sir_gcn", GNNParams, papers=(35,), family="graphs", tiny=TINY)
def sir_gcn(params: GNNParams, info: TaskInfo) -> nn.Module:
    """SIR-GCN: soft-injective anisotropic messages ``W_R Σ σ(W_Q h_u + W_K h_v)`` (#35)."""
    return build("sir_gcn", params, info)
