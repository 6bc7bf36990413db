"""transformer_symbolic (Boix-Adsera et al., #96): identity terms per head."""

from __future__ import annotations

import pytest
import torch

from genlab.data import TaskInfo
from genlab.models import MODELS

INFO = TaskInfo(kind="classification", n_outputs=2, vocab_size=30, seq_len=4)
SEQ = TaskInfo(kind="sequence", n_outputs=30, vocab_size=30, seq_len=6, extra={"max_length": 6})


def make(name: str, info: TaskInfo, **params) -> torch.nn.Module:  # noqa: ANN003
    from genlab.models.symbolic_attention import SymbolicParams
    from genlab.models.transformer import TransformerParams

    cls = SymbolicParams if name == "transformer_symbolic" else TransformerParams
    torch.manual_seed(0)
    return MODELS.get(name).obj(cls(d_model=16, n_heads=4, n_layers=2, **params), info)


@pytest.mark.parametrize("info", [INFO, SEQ])
@pytest.mark.parametrize("pe", ["learned", "alibi", "rope"])
def test_terms_off_or_zero_equal_the_vanilla_transformer(info: TaskInfo, pe: str) -> None:
    x = torch.randint(0, 30, (5, info.seq_len))
    van = make("transformer", info, positional=pe)
    off = make("transformer_symbolic", info, positional=pe, identity_qk=False, identity_vo=False)
    zero = make("transformer_symbolic", info, positional=pe, identity_init=0.0)
    with torch.no_grad():
        ref = van(x)
        assert torch.allclose(off(x), ref, atol=1e-5)
        assert torch.allclose(zero(x), ref, atol=1e-5)


def test_terms_change_the_output_and_get_gradients() -> None:
    x = torch.randint(0, 30, (5, 4))
    van = make("transformer", INFO, positional="learned")
    sym = make("transformer_symbolic", INFO, positional="learned")
    out = sym(x)
    assert not torch.allclose(out, van(x), atol=1e-4)
    out.sum().backward()
    for block in sym.blocks:
        assert block.attn.a.shape == (4,) and block.attn.b.shape == (4,)
        assert block.attn.a.grad.abs().sum() > 0 and block.attn.b.grad.abs().sum() > 0


def test_identity_qk_attends_to_equal_tokens() -> None:
    """With a large a_h, a query attends to the earlier copy of its own token."""
    m = make("transformer_symbolic", INFO, positional="none", identity_init=0.0)
    attn = m.blocks[0].attn
    with torch.no_grad():
        attn.qkv.weight.zero_()
        attn.qkv.bias.zero_()
        attn.a.fill_(50.0)
        attn.out.weight.zero_()
        attn.out.bias.zero_()
        attn.b.fill_(1.0)
        h = torch.randn(1, 4, 16)
        h[0, 3] = h[0, 1]
        y = attn(h)
    # last position: equal keys 1 and 3 share the weight, so each head adds (h1 + h3) / 2 = h1
    assert torch.allclose(y[0, 3], 4 * h[0, 1], atol=1e-3)


def test_unknown_param_is_rejected() -> None:
    from genlab.errors import SpecError
    from genlab.spec import load_run_spec

    with pytest.raises(SpecError, match="identity_init"):
        load_run_spec("length-same-different", ["model.params.identity_init=abc"])
