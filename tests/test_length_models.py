"""Recurrent and memory-augmented models, positional encodings, length checks, length probe."""

from __future__ import annotations

import pytest
import torch

from genlab.data import Split, TaskData, TaskInfo
from genlab.errors import SpecError
from genlab.losses import IGNORE
from genlab.models import MODELS
from genlab.models.positional import ALiBi, Rotary, T5Relative
from genlab.models.tape_rnn import _shift
from genlab.probes import PROBES
from genlab.probes.base import EvalContext
from genlab.probes.length import OUT_OF_RANGE
from genlab.spec import parse_spec

INFO = TaskInfo(
    kind="sequence",
    n_outputs=3,
    vocab_size=6,
    seq_len=8,
    extra={"max_length": 12, "train_length": 4, "first_symbol": 2},
)
ARCHS = ["rnn", "lstm", "stack_rnn", "tape_rnn"]


def build(name: str, info: TaskInfo = INFO, **params) -> torch.nn.Module:
    entry = MODELS.get(name)
    torch.manual_seed(0)
    return entry.obj(entry.params.model_validate(params), info)


@pytest.mark.parametrize("name", ARCHS)
def test_recurrent_shapes_and_causality(name: str) -> None:
    model = build(name, hidden=16).eval()
    x = torch.randint(2, 6, (5, 12))
    out = model(x)
    assert out.shape == (5, 12, 3)
    pad = x.clone()
    pad[:, 9:] = 0  # right padding changes nothing before it
    blank = x.clone()
    blank[:, 9:] = 1
    assert torch.allclose(model(pad)[:, :9], model(blank)[:, :9], atol=1e-6)
    if name != "tape_rnn":  # the tape's jumps see the input length, so it is not causal in inputs
        x4 = x.clone()
        x4[:, 10] = 2 + (x4[:, 10] - 1) % 4
        assert torch.allclose(model(x)[:, :10], model(x4)[:, :10], atol=1e-6)


@pytest.mark.parametrize("name", ARCHS)
def test_batch_rows_are_independent(name: str) -> None:
    model = build(name, hidden=16).eval()
    x = torch.randint(2, 6, (4, 10))
    full = model(x)
    for i in range(4):
        assert torch.allclose(full[i], model(x[i : i + 1])[0], atol=1e-5)


@pytest.mark.parametrize("name", ARCHS)
def test_recurrent_classification_reads_last_position(name: str) -> None:
    info = TaskInfo(kind="classification", n_outputs=2, vocab_size=6, seq_len=8)
    model = build(name, info, hidden=8).eval()
    assert model(torch.randint(2, 6, (3, 7))).shape == (3, 2)


def test_models_learn_a_little() -> None:
    """The stack RNN fits reverse of length 3 within 60 steps (gradients flow through memory)."""
    torch.manual_seed(0)
    info = TaskInfo(kind="sequence", n_outputs=2, vocab_size=4, seq_len=6)
    model = build("stack_rnn", info, hidden=32)
    x = torch.randint(2, 4, (64, 3))
    xx = torch.cat([x, torch.ones(64, 3, dtype=torch.long)], 1)
    y = torch.cat([torch.full((64, 3), IGNORE), (x - 2).flip(1)], 1)
    opt = torch.optim.Adam(model.parameters(), 2e-2)
    for _ in range(60):
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(xx).reshape(-1, 2), y.reshape(-1))
        loss.backward()
        opt.step()
    assert loss.item() < 0.1


def test_tape_shift_moves_the_head_per_sample() -> None:
    tape = torch.arange(10.0).view(2, 5, 1)
    out = _shift(tape, torch.tensor([1, -2]))
    assert out[0, :, 0].tolist() == [1, 2, 3, 4, 0]
    assert out[1, :, 0].tolist() == [8, 9, 5, 6, 7]


def test_max_len_below_longest_input_is_refused() -> None:
    with pytest.raises(ValueError, match="max_len"):
        build("transformer", d_model=16, n_heads=2, max_len=10)
    with pytest.raises(ValueError, match="max_len"):
        build("lstm", hidden=8, max_len=10)
    model = build("lstm", hidden=8, max_len=12)
    with pytest.raises(ValueError, match="exceeds"):
        model(torch.zeros(1, 13, dtype=torch.long))


def test_max_len_error_is_a_spec_error_before_writing(tmp_path) -> None:
    from genlab.engine import run_spec
    from genlab.store import Store

    spec = parse_spec(
        {
            "task": {
                "name": "formal_language",
                "params": {
                    "task": "parity_check",
                    "train_length": 4,
                    "test_max": 12,
                    "n_train": 10,
                    "n_test": 2,
                },
            },
            "model": {"name": "transformer", "params": {"d_model": 16, "n_heads": 2, "max_len": 8}},
            "steps": 1,
        }
    )
    store = Store(tmp_path / "s")
    with pytest.raises(SpecError, match="max_len"):
        run_spec(spec, store, progress=False)
    assert store.runs().empty


@pytest.mark.parametrize(
    "pe", ["none", "learned", "sinusoidal", "t5", "alibi", "rope", "hard_alibi"]
)
def test_transformer_encodings_are_causal_and_last_only_agrees(pe: str) -> None:
    model = build("transformer", d_model=16, n_heads=2, n_layers=2, positional=pe).eval()
    x = torch.randint(2, 6, (3, 12))
    out = model(x)
    x2 = x.clone()
    x2[:, 8:] = 1
    assert torch.allclose(out[:, :8], model(x2)[:, :8], atol=1e-5)
    info = TaskInfo(kind="classification", n_outputs=3, vocab_size=6, seq_len=12)
    clf = build("transformer", info, d_model=16, n_heads=2, n_layers=2, positional=pe).eval()
    clf.load_state_dict(model.state_dict())
    assert torch.allclose(clf(x), out[:, -1], atol=1e-5)


def test_alibi_and_t5_biases() -> None:
    bias = ALiBi(16, 4, 10).attention_bias(5)
    assert bias.shape == (4, 5, 5)
    assert bias[0, 4, 0].item() == pytest.approx(-4 * 2**-2)
    assert bias[3, 4, 0].item() == pytest.approx(-4 * 2**-8)
    t5 = T5Relative(16, 2, 10, n_buckets=8, max_distance=16)
    b = t5.buckets(40)
    assert b[5, 2].item() == 3 and b[39, 0].item() == 7 and b[0, 5].item() == 0
    assert bool((b[:, 0].diff() >= 0).all())
    assert t5.attention_bias(6).shape == (2, 6, 6)


def test_rope_scores_depend_on_relative_position_only() -> None:
    rope = Rotary(8, 1, 0)
    q = torch.randn(1, 1, 1, 8).expand(1, 1, 20, 8)
    k = torch.randn(1, 1, 1, 8).expand(1, 1, 20, 8)
    qr, kr = rope.rotate(q, k)
    s = (qr @ kr.transpose(-1, -2))[0, 0]
    assert torch.allclose(s[5, 2], s[15, 12], atol=1e-4)
    assert torch.allclose(s[3, 3], s[17, 17], atol=1e-4)


class Oracle(torch.nn.Module):
    """Right on lengths <= 4, wrong on the first scored token of longer inputs."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.logits


def test_length_probe_per_sequence_per_token_and_out_of_range() -> None:
    y_short = torch.tensor([[IGNORE, 0, 1]] * 2)
    y_long = torch.tensor([[IGNORE, 0, 1, 1]] * 2)
    data = TaskData(
        train={"main": Split(torch.zeros(2, 3, dtype=torch.long), y_short)},
        val={"main": Split(torch.zeros(2, 4, dtype=torch.long), y_long)},
        test={
            "len_003": Split(torch.zeros(2, 3, dtype=torch.long), y_short, {"length": 3}),
            "len_006": Split(torch.zeros(2, 4, dtype=torch.long), y_long, {"length": 6}),
        },
        info=TaskInfo("sequence", 2, vocab_size=2, extra={"train_length": 4}),
    )
    model = Oracle()
    ctx = EvalContext(model, data, 0)
    right = torch.nn.functional.one_hot(y_short.clamp(min=0), 2).float()
    wrong_first = torch.nn.functional.one_hot(y_long.clamp(min=0), 2).float()
    wrong_first[0, 1] = wrong_first[0, 1].flip(0)  # one wrong token in one sequence
    ctx._cache = {
        "train/main": right,
        "val/main": wrong_first,
        "test/len_003": right,
        "test/len_006": wrong_first,
    }
    out = PROBES.get("length_accuracy").obj(model, ctx, None)
    assert out[("test/len_003", "accuracy")] == 1.0
    assert out[("test/len_006", "accuracy")] == 0.5
    assert out[("test/len_006", "token_accuracy")] == pytest.approx(5 / 6)
    assert out[(OUT_OF_RANGE, "accuracy")] == 0.5  # only length 6 is beyond training
    assert out[(OUT_OF_RANGE, "accuracy_min")] == 0.5
    assert out[("val/main", "accuracy")] == 0.5  # the fit check's number, without train/main
    assert out[("val/main", "token_accuracy")] == pytest.approx(5 / 6)
    assert ("train/main", "accuracy") not in out


def test_stack_has_a_bounded_depth() -> None:
    """Delétang et al.'s stack: a fixed number of cells; a push onto a full stack drops the bottom."""
    from genlab.models.stack_rnn import stack_update

    push, pop = torch.tensor([[1.0, 0, 0]]), torch.tensor([[0, 1.0, 0]])
    stack = torch.zeros(1, 3, 1)
    for v in range(1, 6):
        stack = stack_update(stack, push, torch.tensor([[float(v)]]))
    assert stack[0, :, 0].tolist() == [5, 4, 3]
    assert stack_update(stack, pop, torch.zeros(1, 1))[0, :, 0].tolist() == [4, 3, 0]
    model = build("stack_rnn", hidden=8, memory_size=4)
    assert model.depth == 4 and model(torch.randint(2, 6, (2, 12))).shape == (2, 12, 3)
    assert build("stack_rnn", hidden=8).depth == INFO.extra["max_length"] + 1


@pytest.mark.parametrize("name", ["stack_rnn", "tape_rnn"])
def test_memory_per_input_is_the_fixed_memory_of_the_input_length_plus_one(name: str) -> None:
    """``memory_per_input``: an input of ``t`` steps gets ``t + 1`` cells, exactly as a model built
    with ``memory_size = t + 1`` (same weights), whatever the task's longest input. A stack that
    never overflows reads only its top, so its outputs equal the default's; a tape is a ring, so
    its size changes where a move past either end lands."""
    x = torch.randint(2, 6, (3, 7))
    per_input = build(name, hidden=8, memory_per_input=True).eval()
    fixed = build(name, hidden=8, memory_size=8).eval()
    default = build(name, hidden=8).eval()  # the task's longest input + 1 = 13 cells
    with torch.no_grad():
        assert torch.allclose(per_input(x), fixed(x), atol=1e-6)
        same = torch.allclose(per_input(x), default(x), atol=1e-6)
    assert same == (name == "stack_rnn")


@pytest.mark.parametrize(("action", "moved"), [(0, 0), (1, -1), (2, 1), (3, -2), (4, 2)])
def test_tape_writes_on_every_action_including_jumps(action: int, moved: int) -> None:
    """Each of the five actions writes under the head, then moves it (jumps by L = 2 here)."""
    from genlab.models.tape_rnn import tape_update

    tape = torch.arange(1.0, 7.0).view(1, 6, 1)
    a = torch.nn.functional.one_hot(torch.tensor([action]), 5).float()
    out = tape_update(tape, a, torch.tensor([[-1.0]]), torch.tensor([2]))[0, :, 0]
    assert out.tolist().count(-1.0) == 1  # the write happened, whatever the move
    assert out[(-moved) % 6] == -1.0  # the written cell sits `moved` cells behind the head
    assert out[0] == ([-1.0, 2, 3, 4, 5, 6] * 2)[moved % 6]


def test_transformer_encoder_is_bidirectional_and_ignores_padding() -> None:
    info = TaskInfo(
        kind="sequence",
        n_outputs=3,
        vocab_size=6,
        seq_len=8,
        extra={"max_length": 12, "first_symbol": 2, "pad": 0},
    )
    model = build("transformer_encoder", info, d_model=16, n_heads=2, positional="sinusoidal")
    model.eval()
    x = torch.randint(2, 6, (3, 8))
    later = x.clone()
    later[:, 7] = 2 + (x[:, 7] - 1) % 4  # a later token changes earlier outputs
    assert not torch.allclose(model(x)[:, :7], model(later)[:, :7], atol=1e-4)
    padded = torch.cat([x, torch.zeros(3, 4, dtype=torch.long)], 1)
    assert torch.allclose(model(padded)[:, :8], model(x), atol=1e-5)
    with pytest.raises(ValueError, match="positional"):
        build("transformer_encoder", info, d_model=16, n_heads=2, positional="t5")
