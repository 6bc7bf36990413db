"""The short version of ``benchmarks/chaos.py``: a run killed during a checkpoint write, between
its renames and inside a store commit resumes to an uninterrupted run's rows; a full disk and a
damaged store give clear errors and lose nothing."""

from __future__ import annotations

import random
import sys

import pytest

from tests.conftest import benchmark

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_FSIZE, /proc")
chaos = benchmark("chaos")


@pytest.mark.slow  # ~25 s on 2 loaded cores
def test_killed_runs_resume_to_the_reference(tmp_path):
    tally = chaos.Tally()
    runs = chaos.run_faults(3, tally, random.Random(1), tmp_path, kinds=chaos.IN_PROCESS)
    assert tally.faults == 3 and tally.survived == 3, tally.log
    lost, dup, equal, n = chaos.compare(runs, None, None)
    assert (lost, dup, equal) == (0, 0, True) and n == len(runs) >= 1


@pytest.mark.slow  # ~11 s on a quiet 2-core machine
def test_disk_full_and_a_damaged_store_are_reported(tmp_path):
    tally = chaos.Tally()
    chaos.disk_full(tally, tmp_path, 8 * 1024)
    chaos.corrupt_store(tally, tmp_path, tmp_path / "full-8192", "header")
    assert tally.survived == tally.faults == 2, tally.log
    assert "disk full" in tally.log[0] and "not a genlab store" in tally.log[1]
