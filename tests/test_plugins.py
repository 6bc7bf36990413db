"""Plugins (genlab.plugins): user components from files, modules and entry points; their code hash
in the run id; clear exit-2 errors for plugins that raise or clash with genlab's names."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from genlab import plugins
from genlab.cli import app
from genlab.errors import SpecError
from genlab.methods import METHODS
from genlab.spec import load_run_spec, parse_spec

SRC = Path(__file__).resolve().parents[1] / "src"

METHOD = """
from genlab.methods import METHODS, Method
from genlab.losses import cross_entropy
import torch

@METHODS.register("{name}")
class Mine(Method):
    \"\"\"ERM written by a user{tag}.\"\"\"

    def loss(self, model, batches):
        x, y = (torch.cat(t) for t in zip(*batches.values()))
        return cross_entropy(model(x), y), {{}}
"""


pytestmark = pytest.mark.usefixtures("unload_plugins")


def write_method(path: Path, name: str, tag: str = "") -> Path:
    path.write_text(textwrap.dedent(METHOD.format(name=name, tag=tag)))
    return path


def spec_file(folder: Path, plugin_ref: str, method: str) -> Path:
    f = folder / "spec.toml"
    f.write_text(
        f'imports = ["{plugin_ref}"]\nsteps = 3\n[task]\nname = "colored_digits"\n'
        f'[model]\nname = "mlp"\n[method]\nname = "{method}"\n'
    )
    return f


def test_file_plugin_hash_in_run_id_path_not(tmp_path):
    a = tmp_path / "a"
    a.mkdir()
    write_method(a / "my_erm.py", "user_erm_a")
    spec = load_run_spec(str(spec_file(a, "./my_erm.py", "user_erm_a")))
    [ref] = spec.imports
    assert ref.module == "my_erm" and ref.path == str((a / "my_erm.py").resolve())
    assert len(ref.sha256) == 64 and ref.sha256 in spec.canonical_json()
    first = spec.run_id

    # the same code elsewhere: same id (the path is not part of it)
    b = tmp_path / "b"
    b.mkdir()
    plugins._unload(str((a / "my_erm.py").resolve()))
    write_method(b / "my_erm.py", "user_erm_a")
    assert load_run_spec(str(spec_file(b, "./my_erm.py", "user_erm_a"))).run_id == first

    # edited code: reloaded, new id; the old record no longer validates
    write_method(b / "my_erm.py", "user_erm_a", tag=" (edited)")
    edited = load_run_spec(str(spec_file(b, "./my_erm.py", "user_erm_a")))
    assert edited.run_id != first
    assert "(edited)" in METHODS.get("user_erm_a").summary
    with pytest.raises(SpecError, match="changed since this spec was made"):
        parse_spec(
            json.loads(spec.canonical_json())
            | {"imports": [{**spec.imports[0].model_dump(), "path": str(b / "my_erm.py")}]}
        )


def test_unused_plugin_is_not_recorded_and_builtin_ids_unchanged(tmp_path):
    write_method(tmp_path / "unused.py", "user_unused")
    plain = load_run_spec("dg-colored", ["steps=3"])
    with_import = load_run_spec("dg-colored", ["steps=3", f'imports=["{tmp_path / "unused.py"}"]'])
    assert "user_unused" in METHODS
    assert with_import.imports == [] and "imports" not in plain.canonical_json()
    assert with_import.run_id == plain.run_id


def test_cli_import_option_records_plugin_and_trains(tmp_path):
    plugin = write_method(tmp_path / "cli_erm.py", "user_erm_cli")
    store = tmp_path / "store"
    res = CliRunner().invoke(
        app,
        [
            "--import",
            str(plugin),
            "run",
            "dg-colored",
            "steps=4",
            "method.name=user_erm_cli",
            "--store",
            str(store),
            "--json",
            "--no-plot",
        ],
    )
    assert res.exit_code == 0, res.output
    rid = json.loads(res.stdout)["run_id"]
    shown = CliRunner().invoke(app, ["show", rid, "--store", str(store), "--json"])
    assert json.loads(shown.stdout)["spec"]["imports"][0]["module"] == "cli_erm"


def test_plugin_raising_at_import_exits_2_naming_file_and_line(tmp_path):
    bad = tmp_path / "broken.py"
    bad.write_text("import math\n\nraise RuntimeError('no GPU here')\n")
    res = CliRunner().invoke(app, ["--import", str(bad), "list", "methods"])
    assert res.exit_code == 2
    msg = "".join(res.output.split())  # rich wraps long lines anywhere
    assert "".join(f"plugin {bad} failed at import: RuntimeError: no GPU here".split()) in msg
    assert f"{bad}:3" in msg


def test_plugin_clashing_with_a_genlab_name_exits_2_and_registers_nothing(tmp_path):
    clash = tmp_path / "clash.py"
    clash.write_text(
        textwrap.dedent(METHOD.format(name="user_before_clash", tag=""))
        + textwrap.dedent(METHOD.format(name="irm", tag=""))
    )
    store = tmp_path / "store"
    res = CliRunner().invoke(
        app, ["--import", str(clash), "run", "dg-colored", "steps=3", "--store", str(store)]
    )
    assert res.exit_code == 2
    msg = "".join(res.output.split())
    assert (
        "".join(f"plugin {clash} registers method 'irm', which genlab already has".split()) in msg
    )
    assert "user_before_clash" not in METHODS  # rolled back whole
    assert METHODS.get("irm").obj.__module__ == "genlab.methods.dg_irm"
    assert not store.exists()


def test_two_plugins_clash_names_the_first(tmp_path):
    write_method(tmp_path / "one.py", "user_twice")
    write_method(tmp_path / "two.py", "user_twice")
    plugins.load(str(tmp_path / "one.py"))
    with pytest.raises(
        SpecError,
        match=r"two\.py registers method 'user_twice', which plugin "
        r".*one\.py already has",
    ):
        plugins.load(str(tmp_path / "two.py"))


def test_missing_plugin_is_a_spec_error(tmp_path):
    with pytest.raises(SpecError, match="no plugin file"):
        load_run_spec("dg-colored", [f'imports=["{tmp_path}/nope.py"]'])
    with pytest.raises(SpecError, match="no module 'genlab_no_such_module'"):
        load_run_spec("dg-colored", ['imports=["genlab_no_such_module"]'])


def test_module_plugin_and_entry_point_in_a_fresh_process(tmp_path):
    """An installed package's entry point (group genlab.plugins) registers its method without any
    option; a run using it records the package's code hash."""
    site = tmp_path / "site"
    pkg = site / "userpkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    write_method(pkg / "methods.py", "user_erm_ep")
    dist = site / "userpkg-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: userpkg\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[genlab.plugins]\nuser = userpkg.methods\n")
    env = {**os.environ, "PYTHONPATH": f"{SRC}{os.pathsep}{site}", "OMP_NUM_THREADS": "1"}
    code = (
        "from genlab.spec import load_run_spec; "
        "s = load_run_spec('dg-colored', ['steps=3', 'method.name=user_erm_ep']); "
        "print(s.imports[0].model_dump_json())"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    ref = json.loads(out.stdout)
    assert ref["module"] == "userpkg.methods" and ref["path"] is None
    assert ref["sha256"] == plugins._hash_files(sorted(pkg.rglob("*.py")), site)


def test_module_imported_before_it_is_named_is_still_recorded(tmp_path, monkeypatch):
    """A notebook imports its module first, then names it in ``imports``: the components it
    registered are still attributed to it, so the run id follows its code."""
    write_method(tmp_path / "nb_methods.py", "user_erm_nb")
    monkeypatch.syspath_prepend(str(tmp_path))
    import nb_methods  # noqa: F401  (registers user_erm_nb outside genlab's view)

    try:
        spec = load_run_spec(
            "dg-colored", ["steps=3", "method.name=user_erm_nb", 'imports=["nb_methods"]']
        )
        assert [r.module for r in spec.imports] == ["nb_methods"]
    finally:
        plugins._LOADED.pop("nb_methods", None)
        METHODS.unregister("user_erm_nb")
        plugins._OWNERS.pop(("method", "user_erm_nb"), None)
        sys.modules.pop("nb_methods", None)
