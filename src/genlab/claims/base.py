"""The ``Claim`` type: a configuration, the run specs it implies, and a verdict over their results.

A claim states its predicate and thresholds before anything runs (in ``statement`` and ``judge``),
cites the catalogue rows it tests, and has a ``Config`` whose values at some setting make it come
out *not reproduced*, which its tests exercise. Budgets: ``smoke`` (seconds, for CI) and ``full``.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal

import pandas as pd
from pydantic import ValidationError

from genlab.errors import SpecError
from genlab.registry import Params, format_validation_error
from genlab.spec import RunSpec

Verdict = Literal["reproduced", "not reproduced", "inconclusive"]
Budget = Literal["smoke", "full"]


@dataclass
class ClaimResult:
    """A verdict with its evidence: the statistic, one sentence, a per-run table and a figure."""

    claim_id: str
    verdict: Verdict
    statistic: dict[str, float]
    evidence: str
    table: pd.DataFrame = field(default_factory=pd.DataFrame)
    figure: Path | None = None
    config: dict[str, Any] = field(default_factory=dict)
    run_ids: list[str] = field(default_factory=list)


class Claim:
    """Base class. Subclasses set the class attributes and implement ``specs`` and ``judge``."""

    id: ClassVar[str]
    family: ClassVar[str]
    papers: ClassVar[tuple[int, ...]]
    statement: ClassVar[str]
    Config: ClassVar[type[Params]]
    budgets: ClassVar[dict[str, dict[str, Any]]] = {"smoke": {}, "full": {}}

    def config(self, budget: Budget = "smoke", overrides: dict[str, Any] | None = None) -> Params:
        """The budget's defaults, then ``overrides``, validated."""
        if budget not in self.budgets:
            raise SpecError(f"budget must be one of {', '.join(self.budgets)}, got {budget!r}")
        try:
            return self.Config.model_validate({**self.budgets[budget], **(overrides or {})})
        except ValidationError as exc:
            raise SpecError(format_validation_error(exc, self.Config, prefix="claim.")) from None

    def specs(self, cfg: Params) -> list[RunSpec]:
        raise NotImplementedError

    def judge(self, cfg: Params, runs: pd.DataFrame, metrics: pd.DataFrame) -> ClaimResult:
        """Verdict from the store's ``runs`` rows and long-format ``metrics`` of ``specs(cfg)``."""
        raise NotImplementedError

    def figure(self, cfg: Params, metrics: pd.DataFrame, path: Path) -> Path | None:
        """Optionally draw the evidence figure at ``path``."""
        return None

    @staticmethod
    def config_id(cfg: Params) -> str:
        text = json.dumps(cfg.model_dump(mode="json"), sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:12]
