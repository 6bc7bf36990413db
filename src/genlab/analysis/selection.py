"""Model selection as in DomainBed (Gulrajani & Lopez-Paz, "In Search of Lost Domain
Generalization"): per method and trial, pick one hyperparameter configuration by a validation score
and report its test score. Three rules:

* training-domain validation: the mean accuracy on the ``val/<env>`` splits of the training domains;
  given one row per run *and checkpoint*, the argmax runs over configurations and checkpoints
  jointly (DomainBed's ``IIDAccuracySelectionMethod``, which stops early);
* leave-one-domain-out: per configuration, the mean accuracy of runs that each held one training
  domain out, scored on the domain they held out; the full run of the chosen configuration reports;
* test-domain oracle: a score on the test domain at each run's last checkpoint (``last_checkpoint``;
  DomainBed's ``OracleSelectionMethod``, no early stopping): an optimistic upper bound, not a fair
  selection. DomainBed selects on the held-out environment's 20% ``out`` split and reports its 80%
  ``in`` split (give both: ``oracle(..., val=...)``); without ``val`` it selects on the reported
  score itself.

Inputs are one row per run (or per run and checkpoint) with the columns named by the arguments;
outputs one row per ``(group..., trial)`` with the chosen ``config`` and its ``val`` and ``test``
scores.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from genlab.analysis.aggregate import summarize


def _choose(frame: pd.DataFrame, score: str, by: list[str]) -> pd.DataFrame:
    """The first row of highest ``score`` per group (ties: the first in ``frame`` order)."""
    idx = frame.reset_index(drop=True)
    best = idx.loc[idx.groupby(by, sort=True)[score].idxmax()]
    return best.reset_index(drop=True)


def select(
    records: pd.DataFrame,
    val: str,
    test: str,
    group: Sequence[str] = ("method",),
    trial: str = "seed",
    config: str = "config",
) -> pd.DataFrame:
    """Per ``group`` and ``trial``: the ``config`` with the highest ``val``, with its ``test``."""
    by = [*group, trial]
    best = _choose(records.dropna(subset=[val]), val, by)
    return best[[*by, config, val, test]].rename(columns={val: "val", test: "test"})


def training_domain_validation(
    records: pd.DataFrame, val_columns: Sequence[str], test: str, **kw: object
) -> pd.DataFrame:
    """Select on the mean of the training domains' validation columns (``val/<env>`` scores)."""
    frame = records.assign(_val=records[list(val_columns)].mean(axis=1))
    return select(frame, "_val", test, **kw)  # type: ignore[arg-type]


def last_checkpoint(records: pd.DataFrame, run: Sequence[str], step: str = "step") -> pd.DataFrame:
    """The rows of each run's last checkpoint (a run: one value of the ``run`` columns)."""
    last = records.groupby(list(run), sort=False, dropna=False)[step].transform("max")
    return records[records[step] == last]


def oracle(records: pd.DataFrame, test: str, val: str | None = None, **kw: object) -> pd.DataFrame:
    """Select on the test domain (DomainBed's test-domain validation; give it the rows of
    ``last_checkpoint``, as DomainBed scores the last checkpoint): on ``val``, the held-out
    environment's own validation split (DomainBed: its 20% ``out`` part, while ``test`` is the
    other 80%), or without ``val`` on the ``test`` score itself."""
    frame = records.assign(_oracle=records[test if val is None else val])
    return select(frame, "_oracle", test, **kw)  # type: ignore[arg-type]


def leave_one_domain_out(
    records: pd.DataFrame,
    held_out: str,
    held_out_score: str,
    test: str,
    group: Sequence[str] = ("method",),
    trial: str = "seed",
    config: str = "config",
) -> pd.DataFrame:
    """Rows with ``held_out`` set trained without that domain and score it in ``held_out_score``;
    rows with ``held_out`` empty are the full runs. Per group and trial, the config with the best
    mean held-out score is chosen and its full run's ``test`` reported."""
    by = [*group, trial]
    lodo = records[records[held_out].notna() & (records[held_out] != "")]
    full = records[records[held_out].isna() | (records[held_out] == "")]
    scores = lodo.groupby([*by, config], sort=False)[held_out_score].mean().rename("val")
    scores = scores.reset_index()
    best = _choose(scores, "val", by)
    out = best.merge(full[[*by, config, test]], on=[*by, config], how="left")
    return out[[*by, config, "val", test]].rename(columns={test: "test"})


def selection_table(selected: pd.DataFrame, group: Sequence[str] = ("method",)) -> pd.DataFrame:
    """Mean, std and 95% CI over trials of the selected ``test`` scores, per group."""
    return summarize(selected, list(group), value="test")
