"""Your components in a claim (``genlab claims run ID --set methods=[erm,my_penalty]``): a plugin
method runs inside a dg claim through the CLI, its verdict is labelled as not the recorded design
and stored under a configuration of its own; unknown names, claims without such an axis and lists
the judge cannot read exit 2 with one line; the registered claim and its design stay as they are."""

from __future__ import annotations

import json
import textwrap

import pytest
from typer.testing import CliRunner

from genlab.claims import CLAIMS
from genlab.claims.freeze import design_hash
from genlab.cli import app
from genlab.cli.user_components import claim_axes, component_axes, with_components
from genlab.errors import SpecError
from genlab.store import Store

from .test_user_errors import one_line_error

runner = CliRunner()
pytestmark = pytest.mark.usefixtures("unload_plugins")

PENALTY = '''
import torch
from pydantic import Field
from genlab.losses import cross_entropy
from genlab.methods import METHODS, Method
from genlab.registry import Params


class PenaltyParams(Params):
    lam: float = Field(0.01, ge=0)


@METHODS.register("uc_penalty", PenaltyParams)
class Penalty(Method):
    """Cross-entropy plus lam times the mean squared logit."""

    def loss(self, model, batches):
        x, y = (torch.cat(t) for t in zip(*batches.values()))
        z = model(x)
        pen = z.pow(2).mean()
        return cross_entropy(z, y) + self.params.lam * pen, {"penalty": float(pen.detach())}
'''
# the smallest dg claim design: one held-out setting, two seeds, 20 steps
TINY = ["steps=20", "seeds=2", "eval_every=10", 'suite=["colored_digits:2"]']


def _sets(*items: str) -> list[str]:
    return [a for item in items for a in ("--set", item)]


def claim(cid: str):
    return CLAIMS.get(cid).obj


def test_plugin_method_runs_inside_a_dg_claim_through_the_cli(tmp_path):
    plugin = tmp_path / "p.py"
    plugin.write_text(textwrap.dedent(PENALTY))
    store = tmp_path / "store"
    res = runner.invoke(
        app,
        [
            "--import",
            str(plugin),
            "claims",
            "run",
            "dg.rationale_invariance",
            *_sets("methods=[erm,uc_penalty]", *TINY),
            "--no-controls",
            "--store",
            str(store),
            "-q",
        ],
    )
    assert res.exit_code == 0, res.output
    assert "user design" in res.stdout and "not the recorded design" in res.stdout
    assert "uc_penalty in place of ridg" in res.stdout  # the judge reads its arms by name
    st = Store(store)
    runs = st.runs()
    methods = {json.loads(s)["method"]["name"] for s in runs["spec"]}
    assert methods == {"erm", "uc_penalty"} and set(runs["status"]) == {"done"}
    (v,) = st.verdicts().itertuples()
    assert v.config["methods"] == ["erm", "uc_penalty"]
    ri = claim("dg.rationale_invariance")
    over = {k.split("=")[0]: json.loads(k.split("=", 1)[1]) for k in TINY if "[" in k}
    assert v.config_id != ri.config_id(
        ri.config("smoke", {"steps": 20, "seeds": 2, "eval_every": 10, **over})
    )
    extras = st.verdict_extras(v.claim_id, v.config_id)
    assert extras["design_hash"] is None and extras["frozen"] is False
    report = runner.invoke(app, ["claims", "report", "--family", "dg", "--store", str(store)])
    assert report.exit_code == 0, report.output
    assert "| dg.rationale_invariance | inconclusive (user design) |" in report.stdout
    assert "User design: this verdict was measured with overrides" in report.stdout


def test_unknown_method_exits_2_with_did_you_mean_and_writes_nothing(tmp_path):
    store = tmp_path / "store"
    res = runner.invoke(
        app, ["claims", "run", "dg.rebias", *_sets("methods=[erm,mixpu]"), "--store", str(store)]
    )
    line = one_line_error(res, 2)
    assert "claim.methods[1]: unknown method 'mixpu' (did you mean 'mixup'?)" in line
    assert not store.exists()


def test_claim_without_a_method_axis_and_a_list_the_judge_cannot_read_exit_2(tmp_path):
    res = runner.invoke(
        app,
        [
            "claims",
            "run",
            "grokking.delayed_generalization",
            *_sets("methods=[erm,mixup]"),
            "--store",
            str(tmp_path / "s"),
        ],
    )
    assert "compares no methods" in one_line_error(res, 2)
    res = runner.invoke(
        app,
        [
            "claims",
            "run",
            "dg.rebias",
            *_sets("methods=[erm,mixup,irm]"),
            "--store",
            str(tmp_path / "s"),
        ],
    )
    line = one_line_error(res, 2)
    assert "judges its 'method' arms by name (erm, rebias): give 2 methods" in line
    res = runner.invoke(
        app,
        [
            "claims",
            "run",
            "--family",
            "dg",
            *_sets("methods=[erm,mixup]"),
            "--store",
            str(tmp_path / "s"),
        ],
    )
    assert "name its id" in one_line_error(res, 2)
    assert not (tmp_path / "s").exists()


def test_a_judge_that_reads_any_labels_takes_the_users_names():
    """dg.context_shift judges the spread over its algorithms: two names of the user's, own labels."""
    c = claim("dg.context_shift")
    user = with_components(c, {"methods": "[erm,mixup]"}, "smoke")
    cfg = user.config("smoke")
    arms = user.arms(cfg)
    assert {(a.labels["algorithm"], a.spec.method.name) for a in arms} == {
        ("erm", "erm"),
        ("mixup", "mixup"),
    }
    ours = {a.spec.run_id for a in c.arms(c.config("smoke")) if a.labels["algorithm"] == "erm"}
    assert ours <= {a.spec.run_id for a in arms}  # a name the claim has keeps its arm as declared
    assert user.config_id(cfg) != c.config_id(c.config("smoke"))
    assert user.components == {"methods": ["erm", "mixup"]}


def test_models_take_the_place_of_an_arch_and_the_registered_claim_is_untouched():
    c = claim("length.chomsky")
    before = (design_hash(c, "smoke"), [a.spec.run_id for a in c.arms(c.config("smoke"))])
    (axis,) = claim_axes(c, "smoke")
    assert (axis.key, axis.label) == ("models", "arch")
    user = with_components(c, {"models": ["lstm", "rnn"]}, "smoke")
    names = {a.spec.model.name for a in user.arms(user.config("smoke"))}
    assert "rnn" in names and "stack_rnn" not in names
    assert CLAIMS.get("length.chomsky").obj is c and type(c).__name__ == "Chomsky"
    assert (design_hash(c, "smoke"), [a.spec.run_id for a in c.arms(c.config("smoke"))]) == before


def test_component_axes_need_a_comparing_label():
    ens = claim("ens.multi_teacher")  # its 'arm' axis is a pipeline, not a comparison
    assert component_axes(ens.arms(ens.config("smoke"))) == {}
    with pytest.raises(SpecError, match="each method once"):
        with_components(claim("dg.rebias"), {"methods": ["erm", "erm"]})


def test_claims_show_names_the_axis():
    res = runner.invoke(app, ["claims", "show", "dg.context_shift"])
    assert res.exit_code == 0, res.output
    assert "your components: --set methods=[...] on its 'algorithm' axis" in res.stdout
