"""A bag-of-words classifier with one read-out head per label group.

For the multi-label documents of Chai et al. (#71): token embeddings averaged over the document
(padding, token 0, ignored), an MLP, then ``(N, n_groups, n_outputs)`` logits, one softmax per
label group (topic, aspect), placed at the last positions of the row as the task's targets are
(``tasks/multilabel_docs.py``), so per-row accuracy is "the exact label set".
"""

from __future__ import annotations

from pydantic import Field
from torch import Tensor, nn

from genlab.data import TaskInfo
from genlab.models import MODELS
from genlab.registry import Params


class BowParams(Params):
    """Params of ``bow_classifier``."""

    embed_dim: int = Field(32, ge=1)
    hidden: int = Field(64, ge=1)


class BowClassifier(nn.Module):
    """``mean(embed(tokens)) -> linear -> ReLU -> heads``."""

    def __init__(self, p: BowParams, info: TaskInfo) -> None:
        super().__init__()
        groups = info.extra.get("attributes")
        if info.vocab_size is None or not groups:
            raise ValueError("bow_classifier needs a token task with info.extra['attributes']")
        self.embed = nn.Embedding(info.vocab_size, p.embed_dim, padding_idx=0)
        self.mlp = nn.Sequential(nn.Linear(p.embed_dim, p.hidden), nn.ReLU())
        self.n_groups, self.n_out = len(groups), info.n_outputs
        self.heads = nn.Linear(p.hidden, self.n_groups * self.n_out)

    def featurize(self, x: Tensor) -> Tensor:
        mask = (x != 0).unsqueeze(-1).float()
        pooled = (self.embed(x) * mask).sum(1) / mask.sum(1).clamp(min=1)
        return self.mlp(pooled)

    def forward(self, x: Tensor) -> Tensor:
        heads = self.heads(self.featurize(x)).view(-1, self.n_groups, self.n_out)
        out = heads.new_zeros(x.shape[0], x.shape[1], self.n_out)
        out[:, -self.n_groups :] = heads
        return out


@MODELS.register(
    "bow_classifier",
    BowParams,
    papers=(71,),
    family="compositional",
    tiny={"embed_dim": 8, "hidden": 16},
)
def bow_classifier(params: BowParams, info: TaskInfo) -> nn.Module:
    """Mean-pooled bag of words, an MLP, one head per label group (Chai et al., #71)."""
    return BowClassifier(params, info)
