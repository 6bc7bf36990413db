"""The genlab ``ClientApp``: a client trains the run's model with the run's method on its data.

A Flower ``ClientApp`` (message API): ``train`` loads the global arrays, runs ``fed.local_steps``
steps of the method (``fedavg``/``fedprox``/``fedimpro`` or any genlab method) with a fresh local
optimiser, and replies with its arrays and ``num-examples``; FedImpro clients (Tang et al. 2024,
#1) also reply with their class-conditional feature statistics (noised means) in a ConfigRecord.
``evaluate`` reports the global model's accuracy on the client's local test data (all of its data
for held-out clients). The client's partition is ``node_config["partition-id"]``, so the same app
runs in genlab's in-process simulation and on a Flower deployment.
"""

from __future__ import annotations

import torch
from flwr.app import ArrayRecord, ConfigRecord, Context, Message, MetricRecord, RecordDict
from flwr.clientapp import ClientApp
from torch import nn

from genlab.engine.batches import BatchSampler
from genlab.engine.optim import build_optimizer
from genlab.fed.data import ClientData, fed_data
from genlab.methods import METHODS, Method
from genlab.methods.fed import FedImpro, FedProx, feature_stats
from genlab.models import MODELS
from genlab.spec import RunSpec


def _build(spec: RunSpec, info) -> tuple[nn.Module, Method]:  # noqa: ANN001
    entry, meth = MODELS.get(spec.model.name), METHODS.get(spec.method.name)
    model = entry.obj(entry.params.model_validate(spec.model.params), info)
    method = meth.obj(meth.params.model_validate(spec.method.params), info)
    method.grad_clip = spec.optimizer.grad_clip
    return method.wrap(model).to(getattr(torch, spec.dtype)), method


def _stats_to_tensors(cfg: ConfigRecord, n_classes: int, dtype: torch.dtype):  # noqa: ANN202
    mean = torch.tensor(cfg["stats-mean"], dtype=dtype).view(n_classes, -1)
    var = torch.tensor(cfg["stats-var"], dtype=dtype).view(n_classes, -1)
    return mean, var, torch.tensor(cfg["stats-prior"], dtype=dtype)


def local_train(
    spec: RunSpec, data: ClientData, model: nn.Module, method: Method, cfg: ConfigRecord, cid: int
) -> float:
    """``fed.local_steps`` steps of ``method`` on the client's data; returns the mean loss."""
    rnd = int(cfg["server-round"])
    gen = torch.Generator().manual_seed(spec.seed * 1_000_003 + rnd * 1009 + cid)
    if isinstance(method, FedProx):
        method.anchor = [p.detach().clone() for p in model.parameters()]
        if "proximal-mu" in cfg:
            method.params = method.params.model_copy(update={"mu": float(cfg["proximal-mu"])})
    if isinstance(method, FedImpro) and "stats-mean" in cfg:
        n_classes = len(cfg["stats-prior"])
        method.stats = _stats_to_tensors(cfg, n_classes, next(model.parameters()).dtype)
        method.gen = gen
    optimizer = build_optimizer(model, spec.optimizer)
    sampler = BatchSampler({"main": data.train}, spec.batch_size, gen)
    model.train()
    total = 0.0
    for _ in range(spec.fed.local_steps):
        total += method.step(model, optimizer, sampler.next())["loss"]
    return total / spec.fed.local_steps


def _client_stats(
    model: nn.Module, data: ClientData, n_classes: int, noise: float, cid: int, rnd: int
) -> ConfigRecord:
    """Class counts, and feature sums and sums of squares with N(0, noise²) added to the means."""
    count, s, sq = feature_stats(model, data.train.x, data.train.y, n_classes)
    if noise > 0:
        gen = torch.Generator().manual_seed(cid * 7919 + rnd)
        eps = torch.randn(s.shape, generator=gen, dtype=s.dtype)
        s = s + noise * eps * count[:, None]
    return ConfigRecord(
        {"count": count.tolist(), "sum": s.flatten().tolist(), "sumsq": sq.flatten().tolist()}
    )


def make_client_app(spec_json: str) -> ClientApp:
    """The ``ClientApp`` of the run whose canonical spec is ``spec_json``."""
    app = ClientApp()

    def _setup(msg: Message, context: Context) -> tuple[RunSpec, ClientData, nn.Module, Method]:
        spec = RunSpec.model_validate_json(spec_json)
        fd = fed_data(spec_json)
        cid = int(context.node_config["partition-id"])
        model, method = _build(spec, fd.task.info)
        model.load_state_dict(msg.content["arrays"].to_torch_state_dict())
        return spec, fd.clients[cid], model, method

    @app.train()
    def train(msg: Message, context: Context) -> Message:
        spec, data, model, method = _setup(msg, context)
        cid, cfg = int(context.node_config["partition-id"]), msg.content["config"]
        loss = local_train(spec, data, model, method, cfg, cid)
        content = RecordDict(
            {
                "arrays": ArrayRecord(model.state_dict()),
                "metrics": MetricRecord({"train_loss": loss, "num-examples": len(data.train)}),
            }
        )
        if isinstance(method, FedImpro):
            n_classes = fed_data(spec_json).task.info.n_outputs
            content["feature-stats"] = _client_stats(
                model, data, n_classes, method.params.noise, cid, int(cfg["server-round"])
            )
        return Message(content, reply_to=msg)

    @app.evaluate()
    def evaluate(msg: Message, context: Context) -> Message:
        spec, data, model, _ = _setup(msg, context)
        held_out = int(context.node_config["partition-id"]) >= spec.fed.clients
        x, y = data.test.x, data.test.y
        if held_out:
            x, y = torch.cat([data.train.x, x]), torch.cat([data.train.y, y])
        model.eval()
        with torch.inference_mode():
            acc = float((model(x).argmax(-1) == y).double().mean()) if len(y) else float("nan")
        metrics = MetricRecord({"accuracy": acc, "num-examples": len(y)})
        return Message(RecordDict({"metrics": metrics}), reply_to=msg)

    return app
