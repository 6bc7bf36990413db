"""The checks every registered component must pass, after scikit-learn's ``check_estimator``.

Each check takes a tiny spec (``genlab.conformance.tiny``) and raises ``AssertionError`` with a
message that names the component and what it did wrong:

- ``check_tiny``: it builds tiny (a task within ``MAX_EXAMPLES``, a model within ``MAX_PARAMETERS``);
- ``check_step``: one optimisation step gives a finite loss and moves the parameters, and the
  second step's loss differs from the first (a step that does nothing, or a constant loss, fails);
- ``check_grad_clip``: a method's step honours ``optimizer.grad_clip``;
- ``check_reproducible``: a second build with the same seeds gives the same steps bit for bit;
- ``check_trains_or_refuses``: any combination either trains and evaluates, or is refused with
  a ``SpecError`` (exit code 2), never a crash;
- ``check_task_data``: a task's splits are what its ``TaskInfo`` says, the same for the same
  ``data_seed``;
- ``check_probe``: a probe measures named floats, the same on a second build, and leaves the model,
  its mode and the global RNG as they were;
- ``check_params_rejected``: every out-of-range value that the params model declares (bounds,
  choices, lengths, validated strings) and an unknown key are a ``SpecError`` naming the field;
- ``check_docstring``: the docstring (of the component or its module) names every paper the
  registration cites by its catalogue number (``#N``).
"""

from __future__ import annotations

import inspect
import math
import re
import sys
import types
import typing
from typing import Any, Literal

import annotated_types as at
import torch
from pydantic import BaseModel

from genlab.conformance.tiny import MAX_EXAMPLES, MAX_PARAMETERS, WHERE, Tiny, registry
from genlab.engine.train import Prepared, evaluate, prepare
from genlab.errors import SpecError
from genlab.losses import IGNORE
from genlab.spec import RunSpec, parse_spec

UNKNOWN_KEY = "not_a_param"


def _state(prep: Prepared) -> dict[str, torch.Tensor]:
    return {k: v.detach().clone() for k, v in prep.model.state_dict().items()}


def _steps(spec: RunSpec, n: int = 2) -> tuple[Prepared, list[dict[str, float]]]:
    prep = prepare(spec)
    logs = [prep.method.step(prep.model, prep.optimizer, prep.sampler.next()) for _ in range(n)]
    return prep, logs


def check_tiny(tiny: Tiny, kind: str, name: str) -> RunSpec:
    """The component's tiny spec, checked to be tiny; returns it."""
    spec = tiny.spec(kind, name)
    prep = prepare(spec)
    if kind == "task":
        n = sum(len(s) for s in prep.data.splits().values())
        assert n <= MAX_EXAMPLES, (
            f"task {name!r} is not tiny: {n} examples > {MAX_EXAMPLES}; declare tiny={{...}} "
            "with fewer examples at its registration"
        )
    if kind == "model":
        n = sum(p.numel() for p in prep.model.parameters())
        assert n <= MAX_PARAMETERS, (
            f"model {name!r} is not tiny: {n} parameters on {spec.task.name} > {MAX_PARAMETERS}; "
            "declare tiny={...} with a smaller size at its registration"
        )
    return spec


def check_step(spec: RunSpec, what: str) -> None:
    """Finite losses, parameters moved by the first step, a loss that changes with them."""
    prep = prepare(spec)
    before = _state(prep)
    batches = prep.sampler.next()
    first = prep.method.step(prep.model, prep.optimizer, batches)
    assert math.isfinite(first["loss"]), f"{what}: the first step's loss is {first['loss']}"
    moved = [k for k, p in prep.model.named_parameters() if not torch.equal(p, before[k])]
    assert moved, f"{what}: one optimisation step changed no parameter"
    second = prep.method.step(prep.model, prep.optimizer, batches)
    assert math.isfinite(second["loss"]), f"{what}: the second step's loss is {second['loss']}"
    assert second["loss"] != first["loss"], (
        f"{what}: the loss did not change after a step ({first['loss']!r} both times, same "
        "batches): it does not depend on the parameters"
    )


def check_grad_clip(spec: RunSpec, what: str, clip: float = 1e-3) -> None:
    """With ``optimizer.grad_clip`` and plain SGD at lr 1, one step moves the weights by at most
    the clip norm (a method that overrides ``step`` must call ``self.clip(model)``)."""
    d = spec.model_dump(mode="json")
    d["optimizer"].update(name="sgd", lr=1.0, momentum=0.0, grad_clip=clip)
    prep = prepare(parse_spec(d))
    before = _state(prep)
    prep.method.step(prep.model, prep.optimizer, prep.sampler.next())
    sq = sum(
        (p.detach() - before[k]).double().pow(2).sum() for k, p in prep.model.named_parameters()
    )
    moved = float(sq) ** 0.5
    assert moved <= clip * (1 + 1e-4), (
        f"{what}: with grad_clip={clip} an SGD step at lr 1 moved the weights by {moved:.3g}: "
        "the step ignores optimizer.grad_clip (call self.clip(model) before optimizer.step())"
    )


def check_reproducible(spec: RunSpec, what: str) -> None:
    """Two builds with the same seeds give the same two steps, bit for bit."""
    (a, logs_a), (b, logs_b) = _steps(spec), _steps(spec)
    assert logs_a == logs_b, f"{what}: same seeds, different step logs: {logs_a} vs {logs_b}"
    sa, sb = _state(a), _state(b)
    differ = [k for k in sa if not torch.equal(sa[k], sb[k])]
    assert not differ, f"{what}: same seeds, different weights after two steps: {differ[:5]}"


def check_trains_or_refuses(spec: RunSpec) -> str | None:
    """One step and one evaluation of ``spec`` give finite numbers, or a component refuses the
    combination with a ``SpecError`` (returned); any other exception fails."""
    what = f"{spec.task.name} + {spec.model.name} + {spec.method.name} + " + ", ".join(
        p.name for p in spec.eval.probes
    )
    try:
        prep = prepare(spec)
        logs = prep.method.step(prep.model, prep.optimizer, prep.sampler.next())
        out = evaluate(prep, 1)
    except SpecError as exc:
        return str(exc)
    except Exception as exc:
        raise AssertionError(
            f"{what}: {type(exc).__name__}: {exc} (a combination that cannot work must be "
            "refused with a SpecError, exit code 2)"
        ) from exc
    assert math.isfinite(logs["loss"]), f"{what}: loss {logs['loss']}"
    bad = {k: v for k, v in out.items() if not isinstance(v, float)}
    assert not bad, f"{what}: measures that are not floats: {bad}"
    return None


def _splits_equal(x: Any, y: Any) -> bool:
    return all(
        torch.equal(s.x, t.x) and torch.equal(s.y, t.y)
        for s, t in zip(x.splits().values(), y.splits().values(), strict=True)
    ) and list(x.splits()) == list(y.splits())


def check_task_data(spec: RunSpec, name: str) -> None:
    """Splits consistent with the task's ``TaskInfo`` and identical for the same ``data_seed``."""
    entry = registry("task").get(name)
    params = entry.params.model_validate(spec.task.params)
    data, again = entry.obj(params, 0), entry.obj(params, 0)
    assert _splits_equal(data, again), f"task {name!r}: data_seed 0 built twice differs"
    info = data.info
    assert data.train and all(len(s) for s in data.train.values()), f"task {name!r}: empty train"
    for label, s in data.splits().items():
        where = f"task {name!r}, split {label}"
        if info.kind == "regression":
            assert s.y.is_floating_point() and torch.isfinite(s.y).all(), f"{where}: bad targets"
        else:
            y = s.y[s.y != IGNORE] if info.kind == "sequence" else s.y
            assert not s.y.is_floating_point(), f"{where}: class targets must be integers"
            assert y.numel() == 0 or 0 <= int(y.min()) and int(y.max()) < info.n_outputs, (
                f"{where}: targets outside [0, {info.n_outputs})"
            )
        if s.x.is_floating_point():
            assert torch.isfinite(s.x).all(), f"{where}: non-finite inputs"
            if info.input_shape:
                assert tuple(s.x.shape[1:]) == tuple(info.input_shape), (
                    f"{where}: inputs {tuple(s.x.shape[1:])}, info says {info.input_shape}"
                )
        elif info.vocab_size is not None and len(s):
            assert 0 <= int(s.x.min()) and int(s.x.max()) < info.vocab_size, (
                f"{where}: token ids outside [0, {info.vocab_size})"
            )


def _measure(spec: RunSpec) -> tuple[Prepared, dict]:
    prep = prepare(spec)
    prep.method.step(prep.model, prep.optimizer, prep.sampler.next())
    return prep, evaluate(prep, 1)


def _same(a: float, b: float) -> bool:
    return a == b or (math.isnan(a) and math.isnan(b))


def check_probe(spec: RunSpec, name: str) -> None:
    """Named floats; the same on a second build; model, mode and global RNG left untouched."""
    prep = prepare(spec)
    prep.method.step(prep.model, prep.optimizer, prep.sampler.next())
    state, mode, rng = _state(prep), prep.model.training, torch.get_rng_state()
    out = evaluate(prep, 1)
    assert out, f"probe {name!r} measured nothing on {spec.task.name}/{spec.model.name}"
    for key, value in out.items():
        assert isinstance(key, tuple) and len(key) == 2 and all(isinstance(k, str) for k in key), (
            f"probe {name!r}: key {key!r} is not (split, metric)"
        )
        assert isinstance(value, float), f"probe {name!r}: {key} is {type(value).__name__}"
    changed = [k for k, v in _state(prep).items() if not torch.equal(v, state[k])]
    assert not changed, f"probe {name!r} changed the model: {changed[:5]}"
    assert prep.model.training == mode, f"probe {name!r} left the model in another mode"
    assert torch.equal(torch.get_rng_state(), rng), (
        f"probe {name!r} moved the global RNG (seed its own torch.Generator from ctx.step)"
    )
    _, again = _measure(spec)
    differ = [k for k in out if k not in again or not _same(out[k], again[k])]
    assert not differ and set(again) == set(out), (
        f"probe {name!r}: same seeds, different values: {[(k, out[k], again.get(k)) for k in differ[:5]]}"
    )


# ---- params validation ----------------------------------------------------------------------


def _literal_args(ann: Any) -> tuple | None:
    if typing.get_origin(ann) is Literal:
        return typing.get_args(ann)
    if typing.get_origin(ann) in (typing.Union, types.UnionType):
        for arg in typing.get_args(ann):
            if (got := _literal_args(arg)) is not None:
                return got
    return None


def _is_int(ann: Any) -> bool:
    return ann is int or int in typing.get_args(ann) and float not in typing.get_args(ann)


def invalid_values(params: type[BaseModel]) -> list[tuple[str, Any]]:
    """``(field, value)`` pairs that the params model itself declares out of range."""
    out: list[tuple[str, Any]] = []
    for field, info in params.model_fields.items():
        step = 1 if _is_int(info.annotation) else 0.5
        for meta in info.metadata:
            if isinstance(meta, at.Ge):
                out.append((field, meta.ge - step))
            elif isinstance(meta, at.Gt):
                out.append((field, meta.gt))
            elif isinstance(meta, at.Le):
                out.append((field, meta.le + step))
            elif isinstance(meta, at.Lt):
                out.append((field, meta.lt))
            elif isinstance(meta, at.MinLen) and meta.min_length > 0:
                out.append((field, []))
            elif type(meta).__name__ in ("AfterValidator", "BeforeValidator"):
                out.append((field, "__not_an_allowed_value__"))
        if _literal_args(info.annotation) is not None:
            out.append((field, "__not_a_choice__"))
    return out


def check_params_rejected(spec: RunSpec, kind: str, name: str) -> list[str]:
    """Each declared out-of-range value, and an unknown key, is a SpecError naming the field.
    Returns the fields checked."""
    where = WHERE[kind]
    valid = {"task": spec.task, "model": spec.model, "method": spec.method}.get(kind)
    base = dict(valid.params) if valid is not None else dict(spec.eval.probes[0].params)
    tried = []
    for field, value in [*invalid_values(registry(kind).get(name).params), (UNKNOWN_KEY, 1)]:
        d = spec.model_dump(mode="json")
        bad = {**base, field: value}
        if kind == "probe":
            d["eval"]["probes"] = [{"name": name, "params": bad}]
        else:
            d[kind]["params"] = bad
        try:
            parse_spec(d)
        except SpecError as exc:
            assert f"{where}.{field}" in str(exc), (
                f"{kind} {name!r}: {field}={value!r} is rejected, but the message does not name "
                f"{where}.{field}: {exc}"
            )
        else:
            raise AssertionError(f"{kind} {name!r}: {field}={value!r} is out of range but accepted")
        tried.append(field)
    return tried


def check_docstring(kind: str, name: str) -> None:
    """The component's docstring, or its module's, cites every paper of its registration as #N."""
    entry = registry(kind).get(name)
    doc = (inspect.getdoc(entry.obj) or "") + (
        inspect.getdoc(sys.modules[entry.obj.__module__]) or ""
    )
    missing = [n for n in entry.papers if not re.search(rf"#{n}\b", doc)]
    assert not missing, (
        f"{kind} {name!r} cites papers {entry.papers} but its docstring (or its module's) does "
        f"not name {', '.join(f'#{n}' for n in missing)}"
    )
