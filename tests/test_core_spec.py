"""RunSpec validation, canonical hashing and overrides."""

from __future__ import annotations

import pytest

from genlab.errors import SpecError
from genlab.spec import apply_overrides, load_run_spec, parse_spec

from .conftest import TINY


def test_run_id_is_stable_and_fills_defaults(tiny_spec):
    again = load_run_spec("grokking", TINY)
    assert again.run_id == tiny_spec.run_id
    explicit = load_run_spec(
        "grokking",
        [*TINY, 'task.operation="add"', "optimizer.momentum=0.0", 'optimizer.decay="constant"'],
    )
    assert explicit.run_id == tiny_spec.run_id  # writing a default out changes nothing
    assert (
        tiny_spec.task.params["train_fraction"] == 0.7
    )  # the preset's, filled in: defaults are part of the spec


@pytest.mark.parametrize(
    "override",
    ["seed=1", "data_seed=1", "task.p=13", "optimizer.lr=0.005", 'optimizer.decay="cosine"'],
)
def test_any_change_changes_the_run_id(tiny_spec, override):
    assert load_run_spec("grokking", [*TINY, override]).run_id != tiny_spec.run_id


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ('task.name="nope"', "unknown task 'nope'; allowed: "),
        ('model.name="nope"', "unknown model 'nope'"),
        ('method.name="nope"', "unknown method 'nope'"),
        ("task.q=3", "task.params.q: unknown field; allowed: p, operation, train_fraction"),
        ("bogus=3", "bogus: unknown field; allowed: task, model"),
        ("optimizer.bogus=1", "optimizer.bogus: unknown field"),
        ('steps="many"', "steps: Input should be a valid integer"),
        ("task.p=22", ""),  # add works for any p
        ('task.operation="div"', ""),
        ('task.p=22 task.operation="div"', "p must be prime for operation 'div', got 22"),
        ("task.train_fraction=0", "task.params.train_fraction: Input should be greater than 0"),
        (
            "task.train_fraction=1.5",
            "task.params.train_fraction: Input should be less than or equal to 1",
        ),
        ("optimizer.lr=0", "optimizer.lr: Input should be greater than 0"),
        ("optimizer.lr=-1", "optimizer.lr: Input should be greater than 0"),
        ("steps=-1", "steps: Input should be greater than or equal to 0"),
        ('task.operation="pow"', "task.params.operation: Input should be 'add', 'sub'"),
        ('eval.probes=[{name="nope"}]', "unknown probe 'nope'"),
    ],
)
def test_bad_input_names_the_field(override, message):
    overrides = [*TINY, *override.split(" ")]
    if not message:
        load_run_spec("grokking", overrides)
        return
    with pytest.raises(SpecError) as exc:
        load_run_spec("grokking", overrides)
    assert message in str(exc.value)


def test_unknown_preset_lists_presets():
    with pytest.raises(SpecError, match="no preset or file 'nope'; presets: .*grokking"):
        load_run_spec("nope")


def test_spec_files(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("steps = [")
    with pytest.raises(SpecError, match="not valid toml"):
        load_run_spec(str(bad))
    good = tmp_path / "good.json"
    good.write_text(
        '{"task": {"name": "modular_arithmetic"}, "model": {"name": "mlp"}, "steps": 5}'
    )
    spec = load_run_spec(str(good))
    assert spec.steps == 5 and spec.method.name == "erm"


def test_overrides_parse_toml_values_and_expand_params():
    out = apply_overrides(
        {"task": {"name": "x"}},
        ["task.p=7", "optimizer.betas=[0.8, 0.9]", 'model.name="mlp"', "x.y=word"],
    )
    assert out["task"]["params"]["p"] == 7
    assert out["optimizer"]["betas"] == [0.8, 0.9]
    assert out["model"]["name"] == "mlp"
    assert out["x"]["y"] == "word"
    assert apply_overrides({}, ["batch_size=null"]) == {"batch_size": None}
    assert load_run_spec("grokking", ["batch_size=null"]).batch_size is None  # full batch
    with pytest.raises(SpecError, match="must look like key.path=value"):
        apply_overrides({}, ["novalue"])


def test_parse_spec_reports_missing_fields():
    with pytest.raises(SpecError, match="steps: Field required"):
        parse_spec({"task": {"name": "modular_arithmetic"}, "model": {"name": "mlp"}})


def test_cosine_decay_after_warm_up():
    """Warm-up, then the full rate falling along half a cosine to 0 at the last step; without
    ``decay`` the rate stays constant after the warm-up (as before the field existed)."""
    import torch

    from genlab.engine.optim import build_scheduler
    from genlab.spec import OptimizerSpec

    def rates(decay: str) -> list[float]:
        opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1.0)
        sched = build_scheduler(opt, OptimizerSpec(warmup_steps=4, decay=decay), steps=14)
        out = []
        for _ in range(14):
            out.append(opt.param_groups[0]["lr"])
            opt.step()
            sched.step()
        return out

    warm = [0.25, 0.5, 0.75]
    assert rates("constant") == pytest.approx([*warm, *[1.0] * 11])
    cos = rates("cosine")
    assert cos[:5] == pytest.approx([*warm, 1.0, 1.0])  # the warm-up ends at the full rate
    assert cos[9] == pytest.approx(0.5)  # half-way through the 10 decay steps
    assert all(a > b for a, b in zip(cos[4:], cos[5:], strict=False)) and 0 < cos[-1] < 0.03


@pytest.mark.parametrize(
    ("spec", "old_id"),
    [
        (
            {
                "task": {"name": "colored_digits"},
                "model": {"name": "mlp"},
                "method": {"name": "dmg"},
            },
            "29944cc6c9572aa1",
        ),  # dmg before ``masks``
        (
            {"task": {"name": "gcog", "params": {"n_train": 50}}, "model": {"name": "transformer"}},
            "708e8bbd374ceb9f",
        ),  # gcog before ``train_depth``
        (
            {"task": {"name": "seq_templates"}, "model": {"name": "transformer_symbolic"}},
            "6db8c46cf9a4b748",
        ),  # transformer_symbolic before its paper-form params
    ],
)
def test_params_added_later_keep_old_run_ids_at_their_quiet_defaults(spec, old_id):
    """Ids computed on main before each field existed (commit b804253): ``Params.quiet_defaults``
    leaves those fields out at their old implicit value."""
    assert parse_spec({**spec, "steps": 5}).run_id == old_id
