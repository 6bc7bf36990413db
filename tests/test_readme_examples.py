"""The README's own examples run. Every command of README.md's ```bash blocks runs, as the README
writes it, from a temporary folder (with the repository's ``examples/`` and ``benchmarks/`` linked
in) against a temporary store, and must exit 0; so does its ```python block. The commands too long
for a test (a preset trained at full size, a claim at full budget, the test suite itself) or that
need what a test cannot give (a cluster, the user's own files, a network) are listed in ``SKIP``
with the reason, and every entry there must still be a README command.

``3fa2``, the README's example run id, stands for a tiny run the test trains first. Slow: a few
minutes in all, most of it starting ``genlab`` once per command."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from genlab.engine import run_spec
from genlab.spec import load_run_spec
from genlab.store import Store
from tests.conftest import TINY

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
RUN_ID = "3fa2"  # the README's example run id prefix

LONG = "trains for a minute or more: too long for a test"
SKIP = {
    "make run": "sets up .venv and trains `genlab run grokking` (CI runs `make test`)",
    "make test": "the test suite itself",
    "make test-slow": "the slow tests, this one among them",
    "make test-heavy": "the heavy tests (tens of minutes)",
    "source .venv/bin/activate": "the test puts the environment's bin first on PATH instead",
    "genlab run grokking": LONG,
    "genlab claims run grokking.delayed_generalization --budget smoke": LONG,
    "genlab run grokking task.p=113 batch_size=null": LONG,
    "genlab run my_experiment.toml seed=3": "the user's own spec file",
    'genlab claims freeze ID --reason "..." --after-result': "writes the checkout's claims.lock",
    "genlab run grokking --wait": LONG,
    "genlab run grokking --restart": LONG,
    "genlab run grokking-collapse": LONG,
    "genlab run grokking-perpgrad": LONG,
    "genlab run grokking-linear": LONG,
    "genlab run grokking-ungrokking": LONG,
    "genlab run grokking-moe": LONG,
    "genlab run grokking-implicit": LONG,
    "genlab claims run grokking.implicit_reasoning --budget full -e pool": LONG,
    "python benchmarks/grokking_suite.py --budget smoke": "every grokking claim (minutes)",
    "genlab sweep examples/sweeps/grokking_seeds.toml -e vmap": LONG,
    "genlab sweep examples/sweeps/methods.toml -e pool --workers 2": LONG,
    "genlab sweep FILE -e ray [--address HEAD:6379]": "a template (FILE, a Ray cluster)",
    "genlab report grokking-mlp-lr --format html": "reports the vmap sweep above, not run here",
    "genlab run dg-rotated method.name=coral": LONG,
    "genlab run dg-colored task.test_envs=[0] method.name=irm": LONG,
    "genlab sweep examples/sweeps/domainbed_digits.toml && genlab report domainbed-digits": LONG,
    "genlab claims run --family dg ; genlab claims run --family ood": "13 claims (an hour or more)",
    "genlab claims run dg.colored_collapse --set data_root=/data/mnist": "needs MNIST on disk",
    "genlab run chomsky-parity": LONG,
    "genlab run chomsky-parity-transformer": LONG,
    "genlab run length-nope-copy model.positional=alibi": LONG,
    "genlab run length-turing-addition": LONG,
    "genlab run length-multiplication task.format=scratchpad": LONG,
    "genlab run length-parity-scratchpad": LONG,
    "genlab run length-looped": LONG,
    "genlab claims run length.chomsky --budget smoke": LONG,
    "genlab claims run --family length --budget full -e pool": "every length claim (an hour)",
    "genlab run diag-digits": LONG,
    "genlab zoo --size 12 --steps 400 --vary width=16,64,256 --vary depth=1,2 "
    "--vary lr=1e-3,1e-2 --vary label_noise=0,0.3": "trains 12 models for minutes",
    "genlab claims run --family diag --budget smoke": "8 claims with their controls (minutes)",
    "pip install 'genlab[fl]'": "installs from the network (the test environment has the extra)",
    "genlab run fed-digits": LONG,
    "genlab run fed-digits method=fedimpro": LONG,
    "genlab claims run fed.fedimpro --budget full": LONG,
    "genlab run cl-split-digits task.scenario=task method.name=replay": "the same path as the EWC run",
    "genlab run lora-hub": LONG,
    "genlab claims run cl.model_zoo --budget full ; genlab claims run lora.hub": LONG,
    "genlab run lora-arrow ; genlab claims run lora.knowledge_subtraction": LONG,
    "genlab sweep examples/plugin/digits.toml -e pool && genlab report plugin-digits": LONG,
    "pip install -e '.[graphs,operators,control]'": "installs from the network (the test environment has "
    "the extras)",
    "genlab run graphs-sir-gcn ; genlab run operators-tfno-burgers ; genlab run nilm-amda": LONG,
    "genlab claims run graphs.sir_gcn --budget smoke": LONG,
    "python examples/notebook.py": "tests/test_plugin_example.py runs it",
    "genlab export plugin-digits --mlflow mlruns/ --tensorboard tb/": "exports the plugin sweep "
    "above, not run here (tests/test_export.py checks both exports)",
}


def blocks(lang: str) -> list[str]:
    """The README's fenced blocks in ``lang``."""
    return re.findall(rf"^```{lang}\n(.*?)^```", README.read_text(), re.S | re.M)


def commands() -> list[str]:
    """Every command line of the README's bash blocks: continuations joined, comments cut."""
    found = []
    for block in blocks("bash"):
        for line in re.sub(r"\\\n\s*", " ", block).splitlines():
            line = re.sub(r"(^|\s+)#.*$", "", line).strip()
            if line:
                found.append(re.sub(r"\s+", " ", line))
    return found


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> tuple[Path, dict[str, str], str]:
    """A folder with examples/ and benchmarks/ linked in, a store holding one tiny run, and the
    environment that points ``genlab`` at them."""
    work = tmp_path_factory.mktemp("readme")
    for name in ("examples", "benchmarks"):
        (work / name).symlink_to(ROOT / name)
    store = work / "genlab-runs"
    run = run_spec(load_run_spec("grokking", TINY), Store(store), progress=False)
    env = {
        **os.environ,
        "GENLAB_STORE": str(store),
        "MPLBACKEND": "Agg",
        "COLUMNS": "120",
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    return work, env, run.run_id[:8]


def test_the_skip_list_names_readme_commands():
    stale = set(SKIP) - set(commands())
    assert not stale, f"SKIP names commands the README no longer has: {sorted(stale)}"


@pytest.mark.slow
@pytest.mark.parametrize("command", [c for c in commands() if c not in SKIP])
def test_readme_command_runs(command: str, workdir):
    work, env, run_id = workdir
    line = re.sub(rf"\b{RUN_ID}\b", run_id, command)
    res = subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-c", line],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    out = f"{res.stdout[-2000:]}\n{res.stderr[-3000:]}"
    assert res.returncode == 0, f"{command!r} exited {res.returncode}:\n{out}"


@pytest.mark.slow
@pytest.mark.parametrize("n", range(len(blocks("python"))))
def test_readme_python_runs(n: int, workdir):
    work, env, _ = workdir
    (work / f"readme_{n}.py").write_text(blocks("python")[n])
    res = subprocess.run(
        [sys.executable, f"readme_{n}.py"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-3000:]
