"""``comp.gcog`` (Ito et al., ICLR 2024, gCOG, #41): attention helps distractor and systematic
generalization; no architecture generalizes productively.

gCOG-lite (``tasks/gcog.py``): a board of distinct coloured shapes and an instruction tree in
prefix notation (``EXIST``, ``COLOR``, ``SHAPE``, ``IF``); one answer token per row. Three models
read the board and the instruction: a GRU encoder-decoder without attention (the board is
squeezed into one state), a 2-layer decoder-only transformer (one stream: board, then
instruction) and a 1+2-layer encoder-decoder transformer whose instruction cross-attends to the
board. Accuracy on three shifted splits: ``distractor`` (6 objects instead of 1-3), ``systematic``
(the held-out ``IF`` branch pair ``SHAPE``/``COLOR``), ``productive`` (depth-3 trees; training has
depth 1-2).

Differences from Ito et al. (checked against their code, IBM/gcog): a 5 x 5 symbolic board with 6
shapes x 6 colours (theirs: 10 x 10, 26 letters x 10 colours, as symbols or pixels); operators
``EXIST``/``COLOR``/``SHAPE``/``IF`` only (theirs add ``go`` to a location and sum/product parity
operators); trees of depth 1-3 (theirs go deeper). Their GRU (512 units, AdamW 1e-4) sees the whole
flattened board concatenated to every rule token; ours is an encoder-decoder without attention that
reads the board cell by cell into one 128-unit state, then the instruction (the "no attention"
contrast is kept, the input format is not). Their models are larger and trained to convergence;
ours are 110-160k parameters trained from scratch for a CPU budget (Adam, batches of 64, see
``budgets``); no Perceiver, no BERT-style single-stream encoder, no depth sweep. Distractor and
systematic results are judged relative to the GRU (the paper's no-attention baseline); "no
architecture generalizes productively" becomes "every model stays below 0.6" (our depth-3 trees
answer with a colour or a shape, chance 1/6, and reading either branch's answer is a shortcut worth
up to about 0.5).

Budget: 2,000 full steps for every arm (constant Adam 3e-3). At 1,500 the GRU did not fit (val
0.863: 0.904 / 0.852 / 0.832); the warm-up + cosine decay ``comp.depth`` uses made it worse (val
0.732 / 0.798 on seeds 1 / 2), 2,000 constant steps lift it to 0.910 (0.924 / 0.896 / 0.910).
Measured after the ``seq2seq_transformer`` embedding fix (commit 8ca6bcc), which lifted the
cross-attention arm at 1,500 steps from val 0.907 to 0.969.

No positive control (Dec 3 2026, issue #30): it was the claim itself (measured at full:
inconclusive, the decoder's systematic gain -0.013 [-0.126, 0.099]; 8 seeds, exploratory: +0.060
[-0.013, 0.132]), and no configuration is known where by the paper's logic every part must show
(the decoder-only model's systematic gain is the part that does not), so the claim cannot record
"not reproduced": no control licenses it.
"""

from __future__ import annotations

import pandas as pd
from pydantic import Field

from genlab.claims import register
from genlab.claims.base import Case, Claim, Control, Decision, Ref
from genlab.claims.comp._common import TrainConfig, paired, spec
from genlab.claims.guards import Ceiling, Fit, Floor, Guard, Interval, combine
from genlab.claims.measures import Final
from genlab.design import Design
from genlab.report.claim_figures import ArmBars

ARCHS = {
    "gru": ("seq2seq_rnn", {"cell": "gru", "hidden": 128, "embed_dim": 64, "attention": False}),
    "decoder": ("transformer", {"d_model": 64, "n_layers": 2, "n_heads": 4}),
    "cross_attention": (
        "seq2seq_transformer",
        {"d_model": 64, "n_heads": 4, "enc_layers": 1, "dec_layers": 2},
    ),
}
ATTENTION = ("decoder", "cross_attention")


class GCogConfig(TrainConfig):
    lr: float = Field(3e-3, gt=0)
    n_train: int = Field(20_000, ge=1)
    n_test: int = Field(500, ge=1, description="rows per test split")
    train_objects: int = Field(3, ge=1, description="training boards hold 1..this many objects")
    distractor_objects: int = Field(6, ge=1, description="objects on the distractor split's boards")
    # 3: the productive split is in distribution (a negative-control design, measured: no fit)
    train_depth: int = Field(2, ge=2, le=3, description="training trees of depth 1..this")
    gru_attention: bool = Field(False, description="give the GRU baseline Luong attention")
    min_gain: float = Field(0.05, gt=0, description="attention - GRU the claim states")
    productive_ceiling: float = Field(0.6, gt=0, le=1, description="every model stays below")


class GCog(Claim):
    """Attention beats a GRU on distractor and systematic splits; nothing is productive (#41)."""

    id = "comp.gcog"
    papers = (
        Ref(
            41,
            "Ito et al. 2024 (ICLR)",
            "On the generalization capacity of neural "
            "networks during generic multimodal reasoning (gCOG)",
        ),
    )
    statement = (
        "On gCOG-lite, a decoder-only transformer and a cross-attention encoder-decoder each beat "
        "a GRU without attention by >= 0.05 in accuracy on the distractor and the systematic "
        "splits (paired-seed 95% CI above 0), and every model stays below 0.6 on the productive "
        "split (95% CI below 0.6)."
    )
    Config = GCogConfig
    scope = "proxy"
    scope_note = (
        "gCOG-lite: a 5 x 5 symbolic board of 6 shapes x 6 colours and four operators (theirs: "
        "10 x 10, 26 letters x 10 colours, more operators), models of 110-160k parameters "
        "trained 2,000 CPU steps (theirs larger, to convergence), a GRU that reads the board "
        "cell by cell (theirs sees it flattened with every rule token)"
    )
    smoke_decides = False  # 2 seeds, and 150 steps fit no model
    budgets = {
        "smoke": {"steps": 150, "n_train": 3000, "n_test": 200, "seeds": 2},
        "full": {"steps": 2000, "seeds": 3},
    }
    measures = {
        "val": Final("val/main"),
        "distractor": Final("test/distractor"),
        "systematic": Final("test/systematic"),
        "productive": Final("test/productive"),
    }
    fit = Fit("val", 0.9)
    floor = Floor("systematic", 0.2)  # answers are a colour or a shape: chance 1/6
    figure = ArmBars("distractor", by="arch", lines=(("chance", 1 / 6),))
    controls = {
        "negative": Control(
            {"distractor_objects": 3},
            "not reproduced",
            "the 'distractor' boards hold as many objects as training boards "
            "(no shift): the models that fit their training boards are not told "
            "apart there, so attention's >= 0.05 advantage on distractors fails",
            budget="full",
            heavy=True,
            open="measured at full (2,000 steps, 3 seeds; the claim's training "
            "boards, every arm fits): inconclusive, and on no-shift boards "
            "attention still leads: decoder - GRU +0.099 [0.030, 0.167], "
            "cross-attention - GRU +0.180 [0.089, 0.271] (GRU 0.796, decoder "
            "0.895, cross-attention 0.976 on 3-object boards), so part of the "
            "distractor gap (+0.362, +0.483 on 6 objects) is an in-distribution "
            "gap; the decoder's systematic gain straddles 0 (+0.005 [-0.181, "
            "0.190]). Also measured: depth-3 trees in training (--set "
            "train_depth=3, the productive split in distribution): no arm fits "
            "in 2,000 steps (val 0.818 / 0.748 / 0.827), inconclusive. At 4,000 "
            "steps (--set steps=4000, 1,024 s at load 4) the GRU fits better "
            "(val 0.941) but still trails on no-shift boards: 0.866 vs decoder "
            "0.942, cross-attention 0.988 (+0.076 [-0.027, 0.179], +0.122 [0.062, "
            "0.182]): inconclusive. A GRU baseline with attention (--set "
            "gru_attention=true, full): val 0.875 < 0.9, distractor 0.713 (0.426 "
            "without attention), still trailing by +0.075 [0.025, 0.126] and "
            "+0.197 [-0.142, 0.536]: inconclusive. Depth-3 trees in training at "
            "4,000 steps (--set train_depth=3 --set steps=4000): the GRU answers "
            "depth-3 trees (productive 0.824 [0.791, 0.857]) but no arm fits (val "
            "0.898 / 0.788 / 0.887): inconclusive",
        ),
    }

    def guards(self, cfg: GCogConfig) -> list[Guard]:
        # every model within min_gain of 1 on distractors leaves no room for the gain the claim
        # states (one-object boards: 0.997 / 0.987 / 0.998, measured Dec 1)
        return [self.fit, self.floor, Ceiling("distractor", 1 - cfg.min_gain)]

    def arms(self, cfg: GCogConfig):
        task = {
            "n_train": cfg.n_train,
            "n_val": 500,
            "n_test": cfg.n_test,
            "train_objects": cfg.train_objects,
            "distractor_objects": cfg.distractor_objects,
            "train_depth": cfg.train_depth,
        }
        model, params = ARCHS["gru"]
        archs = {**ARCHS, "gru": (model, {**params, "attention": cfg.gru_attention})}
        base = spec(cfg, "gcog", task, *archs["gru"])
        arch = {a: {"model.name": m, "model.params": p} for a, (m, p) in archs.items()}
        return Design(base, axes={"arch": arch}, seeds=cfg.seeds).expand()

    def synthetic(self, cfg: GCogConfig, arm: dict, case: Case) -> dict[str, float]:
        """Effect: attention adds 0.2 on distractors and 0.15 on the systematic split, every
        model 0.45 on productive trees; null: attention adds nothing; unfit: the GRU at val 0.7."""
        att = (arm["arch"] != "gru") * (case != "null")
        return {
            "val": 0.7 if case == "unfit" and arm["arch"] == "gru" else 0.95,
            "distractor": 0.5 + 0.2 * att,
            "systematic": 0.4 + 0.15 * att,
            "productive": 0.45,
        }

    def decide(self, cfg: GCogConfig, table: pd.DataFrame) -> Decision:
        ivs, stats = [], {}
        for split in ("distractor", "systematic"):
            for a in ATTENTION:
                gain = paired(table, split, {"arch": a}, {"arch": "gru"})
                ivs.append(Interval.of(f"{split}: {a} - gru", gain, smallest=cfg.min_gain))
                stats[f"{split}_{a}_minus_gru"] = ivs[-1].estimate
        for a in ARCHS:
            v = table.loc[table["arch"] == a, "productive"].tolist()
            ivs.append(
                Interval.of(
                    f"productive: {a}",
                    v,
                    null=cfg.productive_ceiling,
                    smallest=cfg.productive_ceiling,
                    above=False,
                )
            )
        means = table.groupby("arch")[list(self.measures)].mean()
        for a in ARCHS:
            for m in self.measures:
                stats[f"{m}_{a}"] = means.loc[a, m] if a in means.index else float("nan")
        accs = "; ".join(
            f"{a} val {stats[f'val_{a}']:.3f}, distractor "
            f"{stats[f'distractor_{a}']:.3f}, systematic "
            f"{stats[f'systematic_{a}']:.3f}, productive "
            f"{stats[f'productive_{a}']:.3f}"
            for a in ARCHS
        )
        sentence = (
            f"Accuracy over {cfg.seeds} seeds: {accs}. " + "; ".join(iv.text() for iv in ivs) + "."
        )
        return Decision(combine([iv.verdict() for iv in ivs]), stats, sentence, ivs)


register(GCog())
