"""Without the ``genlab[fl]`` extra, a federated run exits 2 naming the extra and writes nothing.
The import failure is simulated (these tests run whether or not ``flwr`` is installed)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from genlab.cli import app
from genlab.store import Store

SRC = Path(__file__).resolve().parents[1] / "src"


def test_without_the_extra_run_exits_2_naming_it(tmp_path, monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "flwr", None)  # `import flwr` raises ImportError
    store = tmp_path / "s"
    res = CliRunner().invoke(app, ["run", "fed-digits", "--store", str(store), "-q", "--no-plot"])
    assert res.exit_code == 2, res.output
    assert "genlab[fl]" in res.output
    assert Store(store).runs().empty


def test_the_genlab_command_exits_2_when_flwr_cannot_be_imported(tmp_path) -> None:
    """A real process in which ``import flwr`` fails (``sys.modules['flwr'] = None``)."""
    store = tmp_path / "s"
    code = (
        "import sys; sys.modules['flwr'] = None; from genlab.cli import main; "
        f"sys.argv = ['genlab', 'run', 'fed-digits', '--store', {str(store)!r}]; main()"
    )
    env = {**os.environ, "PYTHONPATH": f"{SRC}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    res = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )
    assert res.returncode == 2, res.stdout + res.stderr
    assert "pip install 'genlab[fl]'" in res.stderr
    assert "run " not in res.stderr  # refused before the run is announced
    assert not store.exists()  # nothing written


def test_other_runs_do_not_need_the_extra(tmp_path) -> None:
    store = tmp_path / "s"
    code = (
        "import sys; sys.modules['flwr'] = None; from genlab.cli import main; "
        f"sys.argv = ['genlab', 'run', 'grokking', 'steps=2', '--store', {str(store)!r}, "
        "'-q', '--no-plot']; main()"
    )
    env = {**os.environ, "PYTHONPATH": f"{SRC}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    res = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )
    assert res.returncode == 0, res.stdout + res.stderr
