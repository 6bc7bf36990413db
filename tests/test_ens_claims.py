"""Judge tests of the ensemble claims on hand-built tables, one per verdict."""

from __future__ import annotations

import pandas as pd
import pytest

from genlab.claims import CLAIMS

WISE = CLAIMS.get("ens.wise_ft_fft").obj


def wise_table(pre, ft, mid, fft, bang_mid, train=0.95, bang_train=None):
    """Per-seed OOD accuracies of A, B and the midpoints; the A rows carry only their own; the
    BANG runs train to ``bang_train`` (default: ``train``)."""
    n, rows = len(pre), []
    for s in range(n):
        rows.append({"arm": "A", "seed": s, "ood": pre[s]})
        b = {"ood_pre": pre[s], "ood_ft": ft[s], "ood": ft[s]}
        rows.append({"arm": "B", "seed": s, **b, "ood_mid": mid[s], "fft": fft[s]})
        rows.append({"arm": "B_bang", "seed": s, **b, "ood_mid": bang_mid[s], "fft": fft[s]})
    t = pd.DataFrame(rows)
    t["data_seed"], t["train"], t["status"] = t["seed"], train, "done"
    t.loc[t["arm"] == "B_bang", "train"] = train if bang_train is None else bang_train
    t["run_id"] = [f"r{i}" for i in range(len(t))]
    return t


PRE, FT = [0.60, 0.62, 0.61], [0.70, 0.71, 0.69]


@pytest.mark.parametrize(
    ("mid", "fft", "bang", "train", "verdict"),
    [
        ([0.75, 0.77, 0.76], [0.05, 0.06, 0.055], [0.77, 0.78, 0.78], 0.95, "reproduced"),
        ([0.66, 0.67, 0.68], [0.002, 0.004, 0.003], [0.66, 0.67, 0.68], 0.95, "not reproduced"),
        ([0.75, 0.69, 0.80], [0.05, 0.0, 0.09], [0.75, 0.69, 0.80], 0.95, "inconclusive"),
        ([0.75, 0.77, 0.76], [0.05, 0.06, 0.055], [0.77, 0.78, 0.78], 0.5, "inconclusive"),
    ],
    ids=["gain", "no-gain", "straddles", "unfit"],
)
def test_wise_ft_fft_judge(mid, fft, bang, train, verdict):
    cfg = WISE.config("smoke")
    r = WISE.evaluate(cfg, wise_table(PRE, FT, mid, fft, bang, train))
    assert r.verdict == verdict, r.evidence
    if verdict == "reproduced":
        assert r.statistic["gain"] == pytest.approx(0.76 - 0.70, abs=1e-9)


def test_wise_ft_fft_refutation_of_the_midpoint_reads_a_and_b_alone():
    """No midpoint gain and no FalseFalseTrue (A and B fit): not reproduced although the BANG
    runs, which that part does not read, did not fit; a gain with BANG unfit stays inconclusive
    (the decision then reads every arm)."""
    cfg = WISE.config("full")
    no_gain = ([0.66, 0.67, 0.68], [0.002, 0.004, 0.003], [0.66, 0.67, 0.68])
    r = WISE.evaluate(cfg, wise_table(PRE, FT, *no_gain, bang_train=0.5))
    assert r.verdict == "not reproduced", r.evidence
    gain = ([0.75, 0.77, 0.76], [0.05, 0.06, 0.055], [0.77, 0.78, 0.78])
    r = WISE.evaluate(cfg, wise_table(PRE, FT, *gain, bang_train=0.5))
    assert r.verdict == "inconclusive" and "B_bang did not fit" in r.evidence


def test_wise_ft_fft_floor_is_twice_chance_of_the_task():
    """The Gaussian model has 5 classes: OOD accuracies near 0.3 are near chance (0.2) there and
    cannot be told apart, while on the 10 digit classes they are above the floor."""
    low = [0.28, 0.29, 0.30]
    table = wise_table(
        low, [0.30, 0.31, 0.32], [0.36, 0.37, 0.38], [0.05, 0.06, 0.055], [0.37, 0.38, 0.39]
    )
    digits = WISE.evaluate(WISE.config("smoke"), table)
    assert digits.verdict == "reproduced", digits.evidence
    gauss = WISE.evaluate(WISE.config("smoke", {"task": "gaussian_spurious"}), table)
    assert gauss.verdict == "inconclusive"
    assert "floor" in gauss.evidence


MULTI = CLAIMS.get("ens.multi_teacher").obj
VIEWS = ("class", "parity", "rotation")
# per-seed linear-probe accuracy of each teacher on (class, parity, rotation): own task best
TEACHERS = {
    "class": (0.92, 0.85, 0.60),
    "parity": (0.65, 0.93, 0.70),
    "rotation": (0.46, 0.65, 0.91),
}


def multi_table(student, teacher_train=0.95, jitter=(0.0, 0.004, -0.004), student_train=0.95):
    """Three seeds: the teachers' probes (``TEACHERS``) and the student's (``student``, one
    tuple per seed), each seed shifted by ``jitter``."""
    rows = []
    for s, j in enumerate(jitter):
        for v, accs in TEACHERS.items():
            rows.append(
                {
                    "arm": f"teacher_{v}",
                    "seed": s,
                    "train": teacher_train,
                    **{k: a + j for k, a in zip(VIEWS, accs, strict=True)},
                }
            )
        rows.append(
            {
                "arm": "student",
                "seed": s,
                "train": student_train,
                **dict(zip(VIEWS, student[s], strict=True)),
            }
        )
    t = pd.DataFrame(rows)
    t["data_seed"], t["status"] = t["seed"], "done"
    t["run_id"] = [f"r{i}" for i in range(len(t))]
    return t


RETAINS = [(0.93, 0.935, 0.915), (0.925, 0.94, 0.92), (0.92, 0.93, 0.91)]
LOSES_ROTATION = [(0.92, 0.93, 0.70), (0.925, 0.935, 0.69), (0.92, 0.93, 0.71)]
STRADDLES = [(0.93, 0.935, 0.95), (0.925, 0.94, 0.85), (0.92, 0.93, 0.90)]


@pytest.mark.parametrize(
    ("student", "teacher_train", "verdict"),
    [
        (RETAINS, 0.95, "reproduced"),
        (LOSES_ROTATION, 0.95, "not reproduced"),
        (STRADDLES, 0.95, "inconclusive"),
        (RETAINS, 0.80, "inconclusive"),  # the teachers did not fit their own tasks
    ],
    ids=["retains", "loses-rotation", "straddles", "unfit"],
)
def test_multi_teacher_judge(student, teacher_train, verdict):
    r = MULTI.evaluate(MULTI.config("smoke"), multi_table(student, teacher_train))
    assert r.verdict == verdict, r.evidence
    if verdict == "reproduced":
        assert r.statistic["best_teacher_rotation"] == pytest.approx(0.91, abs=1e-9)
        assert r.statistic["gap_class"] == pytest.approx(0.925 - 0.92, abs=1e-9)
    if teacher_train < 0.9:
        assert "did not fit" in r.evidence


def test_multi_teacher_student_must_fit_too():
    """A student whose features do not separate the training classes (its online class head
    below 0.9) did not learn: inconclusive, not a verdict on distillation."""
    r = MULTI.evaluate(MULTI.config("smoke"), multi_table(LOSES_ROTATION, student_train=0.7))
    assert r.verdict == "inconclusive"
    assert "student did not fit" in r.evidence


def test_multi_teacher_student_distils_the_named_teachers():
    cfg = MULTI.config("smoke", control="negative")
    arms = MULTI.arms(cfg)
    teachers = {a.spec.run_id: a.labels["arm"] for a in arms if a.labels["arm"] != "student"}
    for a in arms:
        if a.labels["arm"] == "student":
            names = [teachers[t] for t in a.spec.method.params["teachers"]]
            assert names == ["teacher_class"]
            assert a.spec.seed == a.spec.data_seed


DEV = CLAIMS.get("ens.dev_interpolation").obj


def dev_table(gains, dev_loss=0.5):
    """Per seed: the partner run (its dev loss only) and the ensemble run with its test gain."""
    rows = []
    for s, g in enumerate(gains):
        rows.append({"arm": "partner", "seed": s, "dev_loss": dev_loss})
        rows.append(
            {
                "arm": "ensemble",
                "seed": s,
                "dev_loss": 0.55,
                "gain": g,
                "ppl_best": 1.66,
                "ppl_mix": 1.66 * (1 - g),
                "ppl_self": 1.75,
                "w_self": 0.05,
                "n_used": 3.0,
            }
        )
    t = pd.DataFrame(rows)
    t["data_seed"], t["status"] = t["seed"], "done"
    t["run_id"] = [f"r{i}" for i in range(len(t))]
    return t


@pytest.mark.parametrize(
    ("gains", "dev_loss", "verdict"),
    [
        ([0.010, 0.012, 0.009], 0.5, "reproduced"),
        ([0.0, 0.0, 0.0], 0.5, "not reproduced"),  # no gain
        ([0.015, -0.002, 0.006], 0.5, "inconclusive"),
        ([0.010, 0.012, 0.009], 1.5, "inconclusive"),  # the LSTM did not fit
    ],
    ids=["gain", "no-gain", "straddles", "unfit"],
)
def test_dev_interpolation_judge(gains, dev_loss, verdict):
    r = DEV.evaluate(DEV.config("smoke"), dev_table(gains, dev_loss))
    assert r.verdict == verdict, r.evidence
    if verdict == "reproduced":
        assert r.statistic["gain"] == pytest.approx(0.0103333, abs=1e-6)
    if dev_loss > 1:
        assert "did not fit" in r.evidence


def test_dev_interpolation_negative_partner_is_the_transformer_from_another_seed():
    c = DEV.controls["negative"]
    arms = DEV.arms(DEV.config(c.budget, control="negative"))
    own = {s.run_id for s in DEV.specs(DEV.config(c.budget))}
    for partner, ens in zip(arms[::2], arms[1::2], strict=True):
        assert partner.spec.model == ens.spec.model and partner.spec.steps == ens.spec.steps
        assert partner.spec.seed == ens.spec.seed + 100
        assert partner.spec.data_seed == ens.spec.data_seed
        assert partner.spec.run_id not in own  # trained for the control, not the claim's
        (probe,) = [p for p in ens.spec.eval.probes if p.name == "lm_ensemble"]
        assert probe.params["runs"] == [partner.spec.run_id] and probe.params["ngrams"] == []


def test_lm_ensemble_scores_another_token_model(store):
    """The probe feeds token ids (not floats) to the other runs it interpolates."""
    from genlab.engine import run_spec
    from genlab.spec import parse_spec

    def spec(model, probes):
        return parse_spec(
            {
                "task": {
                    "name": "pcfg_lm",
                    "params": {"seq_len": 16, "train_chars": 400, "eval_chars": 200},
                },
                "model": model,
                "steps": 3,
                "batch_size": 8,
                "eval": {"every": 3, "log_points": 0, "probes": probes},
            }
        )

    other = run_spec(
        spec({"name": "lstm", "params": {"hidden": 8}}, [{"name": "loss"}]), store, progress=False
    )
    probe = {"name": "lm_ensemble", "params": {"runs": [other.run_id], "ngrams": [2]}}
    model = {"name": "transformer", "params": {"d_model": 16, "n_layers": 1}}
    r = run_spec(spec(model, [probe]), store, progress=False)
    assert r.status == "done"
    m = store.metrics(r.run_id)
    gain = m[(m["metric"] == "mix_gain") & (m["split"] == "val/main")]["value"]
    assert len(gain) and (gain >= -1e-9).all()  # EM never does worse than the best on dev


RAT = CLAIMS.get("ens.ratatouille").obj


def rat_table(rat, soup, members, train=0.97, aux_train=None):
    """Per seed: three soup members (held-out accuracy, validation accuracy), the two averages
    and one trained run of each other kind; ``members[s]`` are the soup members' test accuracies
    (the first has the best validation accuracy: ERM)."""
    rows = []
    for s in range(len(rat)):
        for i, acc in enumerate(members[s]):
            rows.append(
                {
                    "arm": "soup_member",
                    "seed": s,
                    "test": acc,
                    "val": 0.99 - i / 100,
                    "train": train,
                }
            )
        rows.append(
            {"arm": "rat_member", "seed": s, "test": members[s][0], "val": 0.98, "train": train}
        )
        for arm in ("pretrain", "aux"):
            fit = aux_train if arm == "aux" and aux_train is not None else train
            rows.append({"arm": arm, "seed": s, "test": 0.8, "val": 0.9, "train": fit})
        rows.append(
            {
                "arm": "soup",
                "seed": s,
                "test": soup[s],
                "val": 0.99,
                "train": 1.0,
                "worst": soup[s] - 0.2,
            }
        )
        rows.append(
            {
                "arm": "ratatouille",
                "seed": s,
                "test": rat[s],
                "val": 0.99,
                "train": 1.0,
                "worst": rat[s] - 0.2,
            }
        )
    t = pd.DataFrame(rows)
    t["data_seed"], t["status"] = t["seed"], "done"
    t["run_id"] = [f"r{i}" for i in range(len(t))]
    return t


MEMBERS = [(0.50, 0.52, 0.49), (0.51, 0.50, 0.52), (0.49, 0.50, 0.51)]  # ERM: 0.50, 0.51, 0.49


@pytest.mark.parametrize(
    ("rat", "soup", "train", "verdict"),
    [
        ([0.56, 0.565, 0.55], [0.51, 0.515, 0.50], 0.97, "reproduced"),
        ([0.48, 0.485, 0.48], [0.51, 0.515, 0.50], 0.97, "not reproduced"),
        ([0.56, 0.57, 0.555], [0.45, 0.46, 0.44], 0.97, "not reproduced"),  # soup < ERM
        ([0.60, 0.48, 0.55], [0.51, 0.515, 0.50], 0.97, "inconclusive"),
        ([0.56, 0.57, 0.555], [0.51, 0.515, 0.50], 0.6, "inconclusive"),
    ],
    ids=["gain", "no-gain", "soup-below-erm", "straddles", "unfit"],
)
def test_ratatouille_judge(rat, soup, train, verdict):
    r = RAT.evaluate(RAT.config("smoke"), rat_table(rat, soup, MEMBERS, train))
    assert r.verdict == verdict, r.evidence
    assert r.statistic["erm"] == pytest.approx(0.50, abs=1e-9)
    if verdict == "reproduced":
        assert r.statistic["rat_minus_soup"] == pytest.approx(0.05, abs=1e-9)
    if train < 0.9:
        assert "did not fit" in r.evidence


def test_ratatouille_soup_below_erm_reads_the_soup_arms_alone():
    """The soup below ERM refutes the claim from the foundation's side of the plan: an unfit
    auxiliary fine-tuning, which that part does not read, leaves it standing; a ratatouille gain
    with the auxiliary runs unfit stays inconclusive."""
    below = RAT.evaluate(
        RAT.config("full"),
        rat_table([0.56, 0.57, 0.555], [0.45, 0.46, 0.44], MEMBERS, aux_train=0.6),
    )
    assert below.verdict == "not reproduced", below.evidence
    gain = RAT.evaluate(
        RAT.config("full"),
        rat_table([0.56, 0.565, 0.55], [0.51, 0.515, 0.50], MEMBERS, aux_train=0.6),
    )
    assert gain.verdict == "inconclusive" and "did not fit" in gain.evidence


def test_ratatouille_arms_follow_the_plan():
    arms = RAT.arms(RAT.config("smoke"))
    by_id = {a.spec.run_id: a for a in arms}
    seed0 = [a for a in arms if a.labels["seed"] == 0]
    roles = [a.labels["arm"] for a in seed0]
    assert roles.count("aux") == 3 and roles.count("soup_member") == 3
    (pre,) = [a for a in seed0 if a.labels["arm"] == "pretrain"]
    for name, start in (("soup", "pretrain"), ("ratatouille", "aux")):
        (avg,) = [a for a in seed0 if a.labels["arm"] == name]
        assert avg.spec.steps == 0 and avg.spec.model.name == "soup"
        parents = [by_id[r].spec.model.params["run"] for r in avg.spec.model.params["runs"]]
        assert {by_id[p].labels["arm"] for p in parents} == {start}
        assert len(set(parents)) == (1 if start == "pretrain" else 3)
    # one-task control: one auxiliary run, shared by every ratatouille member
    one = RAT.arms(RAT.config("smoke", control="negative_one_task"))
    one = [a for a in one if a.labels["seed"] == 0]
    assert [a.labels["arm"] for a in one].count("aux") == 1
    assert len({a.spec.run_id for a in one}) == len(one)
    # basin control: only the auxiliary learning rate changes
    neg = {a.spec.run_id: a for a in RAT.arms(RAT.config("smoke", control="negative"))}
    moved = [a for a in neg.values() if a.labels["arm"] == "aux"]
    assert moved and all(a.spec.optimizer.lr == 0.03 for a in moved)
    assert pre.spec.run_id in neg  # the foundation is shared with the claim


ZOO = CLAIMS.get("ens.zoo_dg").obj


def zoo_table(em, best, train=0.97):
    rows = []
    for s in range(len(em)):
        for m in ("class", "rotation", "class_mlp"):
            rows.append({"arm": m, "seed": s, "train": train})
        rows.append(
            {
                "arm": "zoo",
                "seed": s,
                "em": em[s],
                "best": best[s],
                "gain": em[s] - best[s],
                "uniform": 0.5,
                "concat": 0.5,
                "oracle": 0.6,
                "worst_em": em[s] - 0.2,
                "worst_best": best[s] - 0.2,
                "n_used": 3.0,
            }
        )
    t = pd.DataFrame(rows)
    t["data_seed"], t["status"] = t["seed"], "done"
    t["run_id"] = [f"r{i}" for i in range(len(t))]
    return t


@pytest.mark.parametrize(
    ("em", "best", "train", "verdict"),
    [
        ([0.55, 0.56, 0.565], [0.50, 0.51, 0.515], 0.97, "reproduced"),
        ([0.50, 0.51, 0.515], [0.50, 0.51, 0.515], 0.97, "not reproduced"),  # identical members
        ([0.60, 0.50, 0.52], [0.50, 0.51, 0.515], 0.97, "inconclusive"),
        ([0.55, 0.56, 0.57], [0.50, 0.51, 0.515], 0.5, "inconclusive"),
    ],
    ids=["gain", "copies", "straddles", "unfit"],
)
def test_zoo_dg_judge(em, best, train, verdict):
    r = ZOO.evaluate(ZOO.config("smoke"), zoo_table(em, best, train))
    assert r.verdict == verdict, r.evidence
    if verdict == "reproduced":
        assert r.statistic["gain"] == pytest.approx(0.05, abs=1e-9)


def test_zoo_dg_arms_name_their_members():
    arms = ZOO.arms(ZOO.config("smoke"))
    ids = {a.spec.run_id: a.labels["arm"] for a in arms}
    host = [a for a in arms if a.labels["arm"] == "zoo" and a.labels["seed"] == 0][0]
    (probe,) = [p for p in host.spec.eval.probes if p.name == "zoo_dg"]
    assert host.spec.steps == 0 and probe.params["include_self"] is True
    assert [ids[r] for r in probe.params["runs"]] == [
        m for m in ZOO.config().members if m != "random"
    ]
    seeds = ZOO.arms(ZOO.config("smoke", control="negative"))
    members = [a.spec for a in seeds if a.labels["arm"] == "class" and a.spec.data_seed == 0]
    assert sorted(m.seed for m in members) == [0, 100, 200]
    assert len({m.model_dump_json(exclude={"seed"}) for m in members}) == 1
    with pytest.raises(Exception, match="unknown members"):
        ZOO.config("smoke", {"members": ["class", "class@x"]})


def test_zoo_dg_probe_on_a_post_hoc_run(store):
    """Members trained on another task with the same inputs, scored per held-out domain by a
    post-hoc run; a zoo of one member named twice gains exactly nothing."""
    from genlab.engine import run_spec
    from genlab.spec import parse_spec

    ev = {"every": 1, "log_points": 0}
    cnn = {"name": "cnn", "params": {"channels": [4, 8]}}
    views = {
        "name": "digits_views",
        "params": {"label": "parity", "train_size": 200, "val_size": 50},
    }
    member = run_spec(
        parse_spec({"task": views, "model": cnn, "steps": 5, "batch_size": 32, "eval": ev}),
        store,
        progress=False,
    )
    target = {"name": "rotated_digits", "params": {"test_envs": [4, 5]}}

    def host(runs, include_self):
        probe = {
            "name": "zoo_dg",
            "params": {"runs": runs, "include_self": include_self, "shifts": include_self},
        }
        r = run_spec(
            parse_spec(
                {
                    "task": target,
                    "model": cnn,
                    "steps": 0,
                    "eval": {**ev, "probes": [{"name": "accuracy"}, probe]},
                }
            ),
            store,
            progress=False,
        )
        assert r.status == "done"
        m = store.metrics(r.run_id)
        return m.set_index(["split", "metric"])["value"]

    v = host([member.run_id], True)
    for env in ("60deg", "75deg"):
        assert 0 <= v[(f"test/{env}", "zoo_em")] <= 1
        assert v[(f"test/{env}", "zoo_oracle")] >= v[(f"test/{env}", "zoo_best")]
    assert v[("model", "weight_0")] + v[("model", "weight_1")] == pytest.approx(1.0)
    same = host([member.run_id, member.run_id], False)
    assert same[("test/60deg", "zoo_gain")] == pytest.approx(0.0, abs=1e-12)
