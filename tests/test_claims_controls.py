"""Every claim's controls, trained for real: a negative control (a configuration the paper's own
logic says must not show the effect) must come out as expected — ``not reproduced`` — and a positive
control ``reproduced``. Controls marked ``slow`` run with the slow tests (``make test-slow``), those
marked ``heavy`` (minutes each, at a full budget) with ``make test-heavy``. A control with an
``open`` problem (measured not to come out) is a strict expected failure, so that fixing it is
noticed; it runs with the heavy tests, as CI would spend minutes re-measuring a recorded failure.
A control's verdict is recorded in the store as that control's: it is what licenses the claim's."""

from __future__ import annotations

import pytest

from genlab.claims import CLAIMS
from genlab.claims.runner import run_claim

CONTROLS = [
    pytest.param(
        e.obj,
        name,
        id=f"{e.name}:{name}",
        marks=([pytest.mark.heavy] if c.heavy or c.open else [pytest.mark.slow] if c.slow else [])
        + ([pytest.mark.xfail(strict=True, reason=c.open)] if c.open else []),
    )
    for e in CLAIMS.entries()
    for name, c in e.obj.controls.items()
]


@pytest.mark.parametrize(("claim", "control"), CONTROLS)
def test_control_comes_out_as_expected(claim, control, store):
    c = claim.controls[control]
    result = run_claim(claim, store, c.budget, progress=False, control=control)
    assert result.verdict == c.expect, f"{control} control: {result.evidence}"
    assert not store.verdicts().shape[0]  # a control's verdict is not recorded as the claim's
    (row,) = store.control_verdicts(claim.id).itertuples()  # but as the control's, by its design
    assert (row.control, row.verdict) == (control, result.verdict)
