"""``torch.compile`` for the stacked step, where it wins: the run's own steps are timed eager, then
compiled (CPU seconds of this process), and the faster is kept; a compile error falls back to eager with a message.

Off unless ``GENLAB_VMAP_COMPILE=1``, because on the CPUs measured it does not win (issue #18; 16
grokking MLPs, p = 23, one thread, CPU time per step, 2 shared cores): backend ``aot_eager``
(AOTAutograd's graphs on PyTorch's own kernels) gave 5.6-6.2 ms against 5.8-6.4 ms eager, within
noise, with the flat parameters 6.2-8.0 against 5.8-6.1, after ~2-3 s of compiling; ``inductor``
was 2x slower (12.6 against 7.6 ms: its C++ kernels over the strided per-replica parameters)
after ~25 s; both refuse the transformer under vmap (``Cannot access storage of
BatchedTensorImpl``). The trial runs only for groups with ``MIN_STEPS`` steps left.
"""

from __future__ import annotations

import statistics
import sys

MIN_STEPS = 2000  # steps left for a trial to be worth its compile time
WARM, TRIAL = 5, 20  # steps before timing; steps timed per mode
GAIN = 0.95  # compiled must take at most this share of the eager time


class Autocompile:
    """The trial's state: which mode the next step uses, and the decision once both are timed."""

    def __init__(self) -> None:
        self.n = 0
        self.times: dict[bool, list[float]] = {False: [], True: []}
        self.decided: bool | None = None  # None while the trial runs
        self.note = ""

    @property
    def compiled(self) -> bool:
        """Whether the next step should run compiled."""
        if self.decided is not None:
            return self.decided
        return self.n >= WARM + TRIAL

    def observe(self, seconds: float) -> None:
        """Record one step's time (the first compiled step, which compiles, is not timed)."""
        self.n += 1
        if self.decided is not None or self.n <= WARM or self.n == WARM + TRIAL + 1:
            return
        mode = self.n > WARM + TRIAL
        self.times[mode].append(seconds)
        if len(self.times[True]) == TRIAL:
            eager, comp = (statistics.median(self.times[m]) * 1e3 for m in (False, True))
            self.decided = comp <= GAIN * eager
            self.note = (
                f"vmap: torch.compile step {comp:.2f} ms vs eager {eager:.2f} ms: "
                f"{'compiled' if self.decided else 'eager'} kept"
            )
            print(self.note, file=sys.stderr, flush=True)

    def fail(self, exc: BaseException) -> None:
        """The compiled step raised: eager from now on."""
        self.decided = False
        self.note = f"vmap: torch.compile failed ({type(exc).__name__}: {exc}); eager kept"
        print(self.note.splitlines()[0], file=sys.stderr, flush=True)
