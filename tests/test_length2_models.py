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


# --- the paper's form (bidirectional attention, CLS read-out, identity multiplier) -------------


def test_paper_form_params_at_default_keep_the_run_ids() -> None:
    """The new params, at their defaults, are left out of the serialised (hashed) params."""
    from genlab.models.symbolic_attention import SymbolicParams

    dumped = SymbolicParams().model_dump(mode="json")
    assert not set(SymbolicParams.quiet_defaults) & set(dumped)
    given = SymbolicParams(causal=False, readout="cls", identity_scale=1.0, identity_vo_scale=2.0)
    dumped = given.model_dump(mode="json")
    assert dumped["causal"] is False and dumped["readout"] == "cls"
    assert dumped["identity_scale"] == 1.0 and dumped["identity_vo_scale"] == 2.0


def test_defaults_unchanged_explicit_equals_default() -> None:
    x = torch.randint(0, 30, (5, 4))
    ref = make("transformer_symbolic", INFO)
    same = make(
        "transformer_symbolic",
        INFO,
        causal=True,
        readout="last",
        identity_scale="sqrt_dhead",
        identity_vo_scale=1.0,
    )
    with torch.no_grad():
        assert torch.equal(same(x), ref(x))


def test_bidirectional_mask_differs_from_causal() -> None:
    """Causal: position 0 ignores later tokens; bidirectional: it sees them."""
    x = torch.randint(0, 30, (3, 6))
    y = x.clone()
    y[:, -1] = (y[:, -1] + 1) % 30
    causal = make("transformer_symbolic", SEQ)
    both = make("transformer_symbolic", SEQ, causal=False)
    with torch.no_grad():
        assert torch.allclose(causal(x)[:, 0], causal(y)[:, 0], atol=1e-6)
        assert not torch.allclose(both(x)[:, 0], both(y)[:, 0], atol=1e-4)
    one = {"n_layers": 1}  # one layer, the same weights: the last position sees every key anyway
    x4 = torch.randint(0, 30, (3, 4))
    c1 = MODELS.get("transformer_symbolic").obj
    from genlab.models.symbolic_attention import SymbolicParams

    torch.manual_seed(0)
    a = c1(SymbolicParams(d_model=16, n_heads=4, **one), INFO)
    torch.manual_seed(0)
    b = c1(SymbolicParams(d_model=16, n_heads=4, causal=False, **one), INFO)
    with torch.no_grad():
        assert torch.allclose(a(x4), b(x4), atol=1e-5)


def test_causal_false_refuses_causal_biases() -> None:
    from genlab.models.symbolic_attention import SymbolicParams

    with pytest.raises(ValueError, match="causal distances"):
        SymbolicParams(causal=False, positional="alibi")


def test_cls_readout_reads_an_appended_token() -> None:
    x = torch.randint(0, 30, (5, 4))
    m = make("transformer_symbolic", INFO, causal=False, readout="cls")
    assert m.max_len == INFO.seq_len + 1 and m.cls.shape == (1, 1, 16)
    out = m(x)
    assert out.shape == (5, 2)
    out.sum().backward()
    assert m.cls.grad.abs().sum() > 0
    with torch.no_grad():  # the read-out depends on the CLS token
        m.cls.mul_(-3.0)  # (a constant shift would vanish in the layer norm)
        assert not torch.allclose(m(x), out, atol=1e-4)
    with pytest.raises(ValueError, match="classification"):
        make("transformer_symbolic", SEQ, readout="cls")


def test_identity_multiplier() -> None:
    """``identity_scale=c`` multiplies x x^T by c: 1/sqrt(d_head) is the default form, and the
    terms started at 0 leave the network as without them."""
    x = torch.randint(0, 30, (5, 4))
    ref = make("transformer_symbolic", INFO)  # d_head = 16 / 4 = 4
    half = make("transformer_symbolic", INFO, identity_scale=0.5)
    other = make("transformer_symbolic", INFO, identity_scale=3.0)
    off = make(
        "transformer_symbolic",
        INFO,
        identity_qk=False,
        identity_vo=False,
        causal=False,
        readout="cls",
    )
    zero = make(
        "transformer_symbolic",
        INFO,
        identity_init=0.0,
        identity_scale=1.0,
        causal=False,
        readout="cls",
    )
    with torch.no_grad():
        assert torch.allclose(half(x), ref(x), atol=1e-5)
        assert not torch.allclose(other(x), ref(x), atol=1e-4)
        assert torch.allclose(zero(x), off(x), atol=1e-5)
    attn = (
        make(
            "transformer_symbolic",
            INFO,
            positional="none",
            identity_scale=2.0,
            identity_vo_scale=3.0,
        )
        .blocks[0]
        .attn
    )
    with torch.no_grad():
        attn.qkv.weight.zero_()
        attn.qkv.bias.zero_()
        attn.out.weight.zero_()
        attn.out.bias.zero_()
        attn.a.fill_(1.0)
        attn.b.fill_(1.0)
        h = torch.randn(1, 3, 16)
        w = (2.0 * h[0, :2] @ h[0, 1]).softmax(0)  # position 1's scores: 2 * x_1 . x_j, causal
        want = 3.0 * 4 * (w[:, None] * h[0, :2]).sum(0)  # 4 heads, each b_h = 1, times 3
        assert torch.allclose(attn(h)[0, 1], want, atol=1e-4)


def test_abstract_symbols_arms_pass_the_network_only_off_the_model_defaults() -> None:
    """The claim's default is the paper's form; its causal form passes none of the new params,
    so its runs keep the ids they were recorded under."""
    from genlab.claims import CLAIMS

    claim = CLAIMS.get("length.abstract_symbols").obj
    causal = {
        "causal": True,
        "readout": "last",
        "identity_scale": "sqrt_dhead",
        "identity_init": 1.0,
    }
    for arm in claim.arms(claim.config("smoke", causal, None)):
        assert not {"causal", "readout", "identity_scale"} & set(arm.spec.model.params)
        assert arm.spec.model.name == (
            "transformer" if arm.labels["arm"] == "vanilla" else "transformer_symbolic"
        )
    for arm in claim.arms(claim.config("smoke", {}, None)):
        p = arm.spec.model.params
        assert arm.spec.model.name == "transformer_symbolic"
        assert p["causal"] is False and p["readout"] == "cls"
        assert p["identity_qk"] is (arm.labels["arm"] == "modified")
        if arm.labels["arm"] == "modified":
            assert p["identity_scale"] == 1.0 and p["identity_init"] == 0.0
