"""``lm_ensemble``: a language model's worth in a dev-tuned linear interpolation of models.

Herel & Mikolov ("Advancing State of the Art in Language Modeling", 2023, catalogue #69) propose
publishing every model's per-token probabilities on dev and test, so that a new model is judged by
what it adds to an ensemble: ``p(w) = sum_m lambda_m p_m(w)`` with weights tuned on dev. The
members are this run (the new model), the finished ``runs`` on the same data and interpolated
Kneser-Ney models of the orders ``ngrams`` fitted on the training stream (``meta["stream"]``).
The weights maximise the dev likelihood (EM, ``genlab.ensembles.predictions.em_weights``) on the
first ``val`` split; on every evaluation split the probe reports the perplexity of this run
(``ppl_self``), of the member with the lowest *dev* perplexity (``ppl_best``, chosen on dev, never
on test), of the interpolation (``ppl_mix``), ``mix_gain = 1 - ppl_mix / ppl_best``, this run's
weight ``w_self`` and the number of members with weight >= 0.05 (``n_used``).
"""

from __future__ import annotations

from typing import Annotated

import torch
from pydantic import Field
from torch import Tensor, nn

from genlab.errors import SpecError
from genlab.probes import PROBES
from genlab.probes.base import EvalContext, ProbeResult
from genlab.registry import Params

RunId = Annotated[str, Field(pattern=r"^[0-9a-f]{16}$")]
USED = 0.05


class LMEnsembleParams(Params):
    """Params of ``lm_ensemble``."""

    runs: list[RunId] = Field(default_factory=list, description="other finished language models")
    ngrams: list[Annotated[int, Field(ge=1, le=10)]] = Field(
        default_factory=lambda: [3], description="orders of Kneser-Ney members"
    )


def _member_probs(model: nn.Module, ctx: EvalContext, split: str, own: bool) -> Tensor:
    from genlab.ensembles.predictions import target_probs

    s = ctx.splits[split]
    if own:  # the run itself: reuse the cached logits
        logp = torch.log_softmax(ctx.logits(split).double(), dim=-1)
        keep = s.y != -100
        return logp.gather(-1, s.y.clamp_min(0).unsqueeze(-1)).squeeze(-1)[keep].exp()
    x = s.x.to(next(model.parameters()).dtype) if s.x.is_floating_point() else s.x  # tokens stay
    return target_probs(model, x, s.y)


@PROBES.register("lm_ensemble", LMEnsembleParams, papers=(69,), family="ensembles")
def lm_ensemble(model: nn.Module, ctx: EvalContext, params: LMEnsembleParams) -> ProbeResult:
    """Perplexity of this run, the best single member and their dev-tuned interpolation (#69)."""
    from genlab.ensembles.kneser_ney import KneserNey
    from genlab.ensembles.predictions import em_weights, mixture, perplexity
    from genlab.store_context import active_store
    from genlab.weights.load import load_model

    info = ctx.data.info
    if info.kind != "sequence" or info.vocab_size is None or not ctx.data.val:
        raise SpecError("probe 'lm_ensemble' needs a language-modelling task with a val split")
    streams = {k: s.meta.get("stream") for k, s in ctx.data.splits().items()}
    if params.ngrams and any(v is None for v in streams.values()):
        raise SpecError(
            "probe 'lm_ensemble': n-gram members need meta['stream'] on every split "
            "(e.g. task pcfg_lm)"
        )
    store = active_store()
    others = [load_model(store, r) for r in params.runs]
    train = (
        torch.cat([s.meta["stream"] for s in ctx.data.train.values()]) if params.ngrams else None
    )
    grams = [KneserNey(n, info.vocab_size).fit(train.tolist()) for n in params.ngrams]
    splits = [k for k in ctx.splits if not k.startswith("train/")]
    probs: dict[str, Tensor] = {}
    for split in splits:
        rows = [_member_probs(model, ctx, split, True)]
        rows += [_member_probs(m, ctx, split, False) for m in others]
        n = len(rows[0])
        rows += [g.stream_probs(streams[split].tolist())[:n] for g in grams]
        if any(len(r) != n for r in rows):
            raise SpecError(
                f"probe 'lm_ensemble': the members score different tokens on {split} "
                "(train them on the same task and data_seed)"
            )
        probs[split] = torch.stack(rows)
    dev = f"val/{next(iter(ctx.data.val))}"
    w = em_weights(probs[dev])
    best = int(torch.tensor([perplexity(p) for p in probs[dev]]).argmin())
    out: ProbeResult = {}
    for split, p in probs.items():
        mix, single = perplexity(mixture(p, w)), perplexity(p[best])
        out.update(
            {
                (split, "ppl_self"): perplexity(p[0]),
                (split, "ppl_best"): single,
                (split, "ppl_mix"): mix,
                (split, "mix_gain"): 1 - mix / single,
                (split, "w_self"): float(w[0]),
                (split, "n_used"): float((w >= USED).sum()),
            }
        )
    return out
