# %% [markdown]
# # genlab from a notebook
#
# Notebook-style (`# %%` cells: open it in Jupyter with jupytext or in VS Code, or run it whole:
# `python examples/notebook.py [STORE]`, about a minute on 2 cores). Everything lands in a store, an
# SQLite file you can reopen later; the tables are pandas DataFrames.

# %%
import sys
import tempfile
from pathlib import Path

import genlab

store = genlab.Store(sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(prefix="genlab-nb-"))
here = Path(__file__).resolve().parent if "__file__" in globals() else Path("examples")

# %% [markdown]
# ## One run
# A preset (or a spec file, a dict, a `RunSpec`) with `key.path=value` overrides. Running the same
# spec again returns the finished run instead of training it twice.

# %%
r = genlab.run("dg-colored", "steps=300", "eval.every=50", store=store)
print(
    r.run_id,
    r.status,
    f"test accuracy on the -90% environment: {r.final['test/-90%:accuracy']:.3f}",
)

curves = store.metrics(r.run_id)  # long format: run_id, step, split, metric, value
acc = curves[curves["metric"] == "accuracy"].pivot(index="step", columns="split", values="value")
print(acc.round(3).tail())

# %% [markdown]
# ## Your own method beside genlab's
# `examples/plugin/fishr.py` registers a method (Fishr) with genlab's own decorator; `imports` loads
# it, and each run that uses it records the file's hash in its spec (so editing it gives new runs).

# %%
s = genlab.sweep(
    {
        "name": "notebook-methods",
        "base": "dg-colored",
        "set": ["steps=300", "eval.every=50"],
        "seeds": 2,
        "grid": {"method.name": ["erm", "irm", "fishr"]},
    },
    imports=[str(here / "plugin" / "fishr.py")],
    store=store,
)
print(s.counts())

# %%
table = genlab.results(s, store)  # one row per run: labels and final split:metric values
summary = table.groupby("method.name")[["train/+90%:accuracy", "test/-90%:accuracy"]].agg(
    ["mean", "std"]
)
print(summary.round(3))

# %% [markdown]
# Every run's metrics, for your own plots: `store.metrics()` (all runs) or
# `store.metrics(table.run_id)`; `genlab report notebook-methods --store STORE` prints the same
# sweep as DomainBed's table with confidence intervals.

# %%
everything = store.metrics()
print(f"{everything['run_id'].nunique()} runs, {len(everything)} metric rows in {store.root}")
