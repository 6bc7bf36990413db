"""Per-iteration supervision of ``looped_transformer`` (method ``per_loop``, Altabaa et al., #58):
the task's depths, the loops read out, the loss, and specs without it keep their run ids."""

from __future__ import annotations

import pytest
import torch

from genlab.errors import SpecError
from genlab.losses import IGNORE, cross_entropy
from genlab.methods import METHODS
from genlab.models import MODELS
from genlab.spec import load_run_spec, parse_spec
from genlab.tasks import TASKS
from genlab.tasks.computation_graph import EQ

SMALL = {"train_length": 3, "test_max": 5, "n_train": 40, "n_val": 8, "n_test": 8}


def depths_by_hand(x: list[int], first_name: int) -> list[int]:
    """Each position's depth read off the definitions one by one (``-1`` but at defined names)."""
    out, depth = [-1] * len(x), {}
    for i in range(2, len(x)):
        if x[i - 1] == EQ and x[i] >= first_name:
            body = x[i - 2 : i - 1] if x[i - 2] < first_name else x[i - 4 : i - 1]
            depth[x[i]] = 0 if len(body) == 1 else 1 + max(depth[body[0]], depth[body[2]])
            out[i] = depth[x[i]]
    return out


def build(**params):  # noqa: ANN201
    entry = TASKS.get("computation_graph")
    return entry.obj(entry.params(**{**SMALL, **params}), 0)


def looped(info, **params):  # noqa: ANN001, ANN201
    entry = MODELS.get("looped_transformer")
    torch.manual_seed(0)
    return entry.obj(entry.params(d_model=16, n_heads=2, **params), info)


def per_loop(info, **params):  # noqa: ANN001, ANN201
    entry = METHODS.get("per_loop")
    return entry.obj(entry.params(**params), info)


@pytest.mark.parametrize("width", [1, 2])
def test_position_depths_are_the_programs_depths_at_the_scored_positions(width) -> None:
    data = build(p=7, width=width, n_leaves=3)
    for split in data.splits().values():
        got = data.info.extra["position_depths"](split.x)
        for x, y, row in zip(split.x.tolist(), split.y.tolist(), got.tolist(), strict=True):
            assert row == depths_by_hand(x, data.info.extra["first_symbol"] + 7)
            assert [i for i, t in enumerate(y) if t != IGNORE] == [
                i for i, d in enumerate(row) if d >= 0
            ]
            assert max(row) == (split.meta.get("length") or max(row))


def test_loops_are_read_out_and_the_last_is_forward() -> None:
    data = build(width=1)
    m = looped(data.info).eval()
    x = data.val["main"].x
    with torch.no_grad():
        outs = m.loop_logits(x)
        assert len(outs) == int(m.n_loops(x).max())
        assert torch.equal(outs[-1], m(x))
    assert [m.loop_of_depth(d) for d in range(3)] == [0, 2, 4]  # 2 per step + 1, from 0
    assert looped(data.info, loops_per_step=1).loop_of_depth(2) == 2  # the paper's loop d


@pytest.mark.parametrize("pending", [True, False])
def test_each_depth_is_supervised_at_its_loop_and_every_value_at_the_end(pending) -> None:
    data = build(width=1)
    m, method = looped(data.info), per_loop(data.info, pending=pending)
    x, y = data.train["main"].x[:16], data.train["main"].y[:16]
    loss, logs = method.loss(method.wrap(m), {"main": (x, y)})
    with torch.no_grad():
        outs = m.loop_logits(x)
    depths = torch.where(y == IGNORE, -1, data.info.extra["position_depths"](x))
    later = data.info.extra["blank"] if pending else IGNORE
    want = cross_entropy(outs[-1], y)
    for d in range(int(depths.max())):
        target = torch.where(depths > d, torch.full_like(y, later), y)
        want = want + cross_entropy(outs[m.loop_of_depth(d)], target)
    assert torch.allclose(loss, want, atol=1e-5)
    assert logs["loss_end"] == pytest.approx(cross_entropy(outs[-1], y).item(), abs=1e-5)
    loss.backward()
    assert all(p.grad is not None for p in m.parameters() if p.requires_grad)


def test_targets_blank_or_ignore_the_values_not_yet_reached() -> None:
    data = build()
    y = torch.tensor([[IGNORE, 10, 11, 12]])
    depths = torch.tensor([[-1, 0, 1, 2]])
    blank = data.info.extra["blank"]
    assert per_loop(data.info).targets(y, depths, 0).tolist() == [[IGNORE, 10, blank, blank]]
    got = per_loop(data.info, pending=False).targets(y, depths, 1).tolist()
    assert got == [[IGNORE, 10, 11, IGNORE]]


def spec(**over):  # noqa: ANN201
    d = {
        "task": {"name": "computation_graph", "params": SMALL},
        "model": {"name": "looped_transformer", "params": {"d_model": 16, "n_heads": 2}},
        "method": {"name": "per_loop"},
        "steps": 2,
        "batch_size": 8,
    }
    return parse_spec({**d, **over})


def test_per_loop_trains_and_refuses_what_it_cannot_read() -> None:
    from genlab.engine.train import prepare

    prep = prepare(spec())
    logs = prep.method.step(prep.model, prep.optimizer, prep.sampler.next())
    assert torch.isfinite(torch.tensor(logs["loss"])) and logs["loss"] > logs["loss_end"]
    with pytest.raises(SpecError, match="per_loop"):
        prepare(spec(model={"name": "transformer", "params": {"d_model": 16, "n_heads": 2}}))
    with pytest.raises(SpecError, match="per_loop"):
        prepare(spec(task={"name": "seq_string", "params": {"train_length": 3, "test_max": 5}}))


def test_specs_without_per_loop_keep_their_run_ids() -> None:
    """The preset (ERM, end-of-loop supervision) hashes as before per_loop existed."""
    assert load_run_spec("length-looped").run_id == "dd837bc95772e32f"
    assert spec().method.name == "per_loop" and spec().method.params == {"pending": True}
