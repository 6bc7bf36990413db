"""``genlab site``: the static site from a store holding a real claim verdict and a sweep.

The structure tests read the HTML; the browser test opens the site from disk in headless Chromium
(Debian's package, driven by Playwright), filters by verdict, sorts, follows a claim link, checks that
the figures loaded and no console error was logged, and saves screenshots in ``test-artifacts/``
(or ``$GENLAB_TEST_ARTIFACTS``).
"""

from __future__ import annotations

import html as html_lib
import os
import re
import shlex
import tempfile
from html.parser import HTMLParser
from pathlib import Path

import pytest
from typer.testing import CliRunner

import genlab
from genlab.cli import app

CLAIM = "dg.rationale_invariance"  # cites catalogue row 8
SETS = {"suite": '["colored_digits:2"]', "steps": "40", "eval_every": "20", "seeds": "2"}
CHROMIUM = Path(os.environ.get("GENLAB_CHROMIUM", "/usr/bin/chromium"))
ARTIFACTS = Path(os.environ.get("GENLAB_TEST_ARTIFACTS",
                                Path(__file__).resolve().parents[1] / "test-artifacts"))  # fmt: skip
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]  # fmt: skip


def cli(*args: str) -> str:
    res = CliRunner().invoke(app, list(args))
    assert res.exit_code == 0, res.output
    return res.stdout


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """A store with a claim verdict (a small configuration of a real claim, through the CLI) and
    a two-method sweep, and the site built from it."""
    root = tmp_path_factory.mktemp("site")
    store = root / "store"
    sets = [a for k, v in SETS.items() for a in ("--set", f"{k}={v}")]
    cli("claims", "run", CLAIM, "--budget", "smoke", *sets, "--store", str(store), "-q")
    genlab.sweep({"name": "site-sweep", "base": "dg-colored", "set": ["steps=20", "eval.every=10"],
                  "grid": {"method.name": ["erm", "irm"]}}, store=store)  # fmt: skip
    out = root / "site"
    assert cli("site", str(out), "--store", str(store)).strip().endswith("index.html")
    return out, store


class Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.refs: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids.add(a["id"])
        for key in ("href", "src"):
            if a.get(key):
                self.refs.append(a[key])


def parse(path: Path) -> Links:
    p = Links()
    p.feed(path.read_text())
    return p


def test_every_link_resolves_offline(site):
    out, _ = site
    pages = sorted(out.rglob("*.html"))
    parsed = {p.resolve(): parse(p) for p in pages}
    for page, links in parsed.items():
        for ref in links.refs:
            assert not re.match(r"^(https?:)?//", ref), f"{page.name}: external {ref}"
            target, _, anchor = ref.partition("#")
            dest = (page.parent / target).resolve() if target else page
            assert dest.is_file(), f"{page.name}: broken link {ref}"
            if anchor and dest.suffix == ".html":
                assert anchor in parsed[dest].ids, f"{page.name}: no anchor {ref}"


def test_index_lists_all_papers_and_claims(site):
    out, _ = site
    index = parse(out / "index.html")
    assert {f"paper-{n}" for n in range(1, 121)} <= index.ids
    claims = [r for r in index.refs if r.startswith("claims/")]
    listed = {Path(r.partition("#")[0]).stem for r in claims}
    rows = CliRunner().invoke(app, ["claims", "list", "--json"]).stdout
    assert listed == {c["id"] for c in __import__("json").loads(rows)}


def test_claim_page_reproduce_command_and_provenance(site):
    out, store = site
    html = (out / "claims" / f"{CLAIM}.html").read_text()
    cmd = re.search(r"<pre><code>(genlab claims run [^<]+)</code></pre>", html).group(1)
    argv = shlex.split(html_lib.unescape(cmd))
    assert argv[:6] == ["genlab", "claims", "run", CLAIM, "--budget", "smoke"]
    assert dict(a.split("=", 1) for a in argv[7::2]) == SETS
    assert "checked: today&#x27;s code gives this verdict&#x27;s configuration" in html
    # running the command shown gives the same configuration: the same verdict row, no new runs
    before = genlab.Store(store).verdicts()
    cli(*argv[1:], "--store", str(store), "-q")
    after = genlab.Store(store).verdicts()
    assert len(after) == len(before) and set(after["config_id"]) == set(before["config_id"])
    import torch

    for fact in ("genlab version", "git commit", "torch version", "host", "claim wall time",
                 "run ids", torch.__version__):  # fmt: skip
        assert fact in html
    for rid in before["run_ids"].iloc[0]:
        assert rid in html


def test_sweep_page_has_domainbed_table(site):
    out, store = site
    [sid] = genlab.Store(store).sweeps()["sweep_id"]
    html = (out / "sweeps" / f"{sid}.html").read_text()
    assert "DomainBed table" in html and ">erm<" in html and ">irm<" in html


def _browser():
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("Playwright is not installed (pip install playwright; .ci/run does)")
    if not CHROMIUM.is_file():
        pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install chromium; .ci/run does)")
    return sync_playwright


def test_site_in_a_real_browser(site):
    sync_playwright = _browser()
    out, _ = site
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    problems: list[str] = []
    with sync_playwright() as p, tempfile.TemporaryDirectory() as profile:
        browser = p.chromium.launch_persistent_context(
            profile, executable_path=str(CHROMIUM), headless=True, args=FLAGS,
            viewport={"width": 1280, "height": 900})  # fmt: skip
        page = browser.new_page()
        page.on("console", lambda m: m.type == "error" and problems.append(f"console: {m.text}"))
        page.on("pageerror", lambda exc: problems.append(f"page error: {exc}"))
        page.on("requestfailed", lambda r: problems.append(f"failed: {r.url}"))
        page.goto((out / "index.html").as_uri())
        rows = page.locator("#papers-table tbody tr")
        assert rows.count() == 120
        count = page.locator(".controls[data-for=papers-table] .count")
        assert count.inner_text() == "showing 120 of 120"
        page.screenshot(path=str(ARTIFACTS / "site-index.png"))

        # filter by the claim's verdict: only papers with a claim of that verdict stay
        row_id = "#claim-" + CLAIM.replace(".", "\\.")
        verdict = page.locator(row_id).get_attribute("data-verdict")
        page.select_option(".controls[data-for=papers-table] select[data-key=verdict]", verdict)
        visible = page.locator("#papers-table tbody tr:not([hidden])")
        n = visible.count()
        assert 0 < n < 120
        for i in range(n):
            assert verdict in visible.nth(i).get_attribute("data-verdict").split()
        assert count.inner_text() == f"showing {n} of 120"
        page.screenshot(path=str(ARTIFACTS / "site-index-filtered.png"))
        page.select_option(".controls[data-for=papers-table] select[data-key=verdict]", "")

        # sort by number, descending on the second click
        header = page.locator("#papers-table th button.sort").first
        header.click()
        header.click()
        assert page.locator("#papers-table tbody tr").first.get_attribute("id") == "paper-120"

        # follow the claim's link from the claims table
        page.click(f"#claims-table a[href='claims/{CLAIM}.html']")
        page.wait_for_load_state("load")
        assert page.url.endswith(f"claims/{CLAIM}.html")
        assert page.locator("h1").inner_text() == CLAIM
        imgs = page.locator("img")
        assert imgs.count() >= 1
        for i in range(imgs.count()):
            imgs.nth(i).scroll_into_view_if_needed()
            assert imgs.nth(i).evaluate("(img) => img.complete && img.naturalWidth > 0"), \
                imgs.nth(i).get_attribute("src")  # fmt: skip
        page.screenshot(path=str(ARTIFACTS / "site-claim.png"), full_page=True)

        # a sweep page, and phone width: no page wider than the screen
        page.goto(next((out / "sweeps").glob("*.html")).as_uri())
        for i in range(page.locator("img").count()):
            page.locator("img").nth(i).scroll_into_view_if_needed()
            assert page.locator("img").nth(i).evaluate("(img) => img.naturalWidth > 0")
        page.set_viewport_size({"width": 390, "height": 844})
        for name in ("index.html", f"claims/{CLAIM}.html"):
            page.goto((out / name).as_uri())
            overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
            assert overflow <= 1, f"{name} is {overflow}px wider than a phone screen"
        page.screenshot(path=str(ARTIFACTS / "site-claim-phone.png"), full_page=True)
        browser.close()
    assert problems == []


@pytest.mark.parametrize("value", [None, True, 3, 1e-3, 0.1, float("inf"), "a b", "x:1",
                                   [1, 2.5], ["colored_digits:2"], {"lr": 0.01, "k": [1]}, []])  # fmt: skip
def test_reproduce_values_parse_back(value):
    from genlab.report.site.data import toml_literal
    from genlab.spec import parse_value

    assert parse_value(toml_literal(value)) == value


def test_verdict_extras_keep_every_column():
    import pandas as pd

    from genlab.provenance import verdict_extras

    df = pd.DataFrame([[1, 2.0, float("nan")]], columns=["a", "a", "b"]).set_index("b")
    tbl = verdict_extras(df, 0.0)["table"]
    assert tbl == {"columns": ["b", "a", "a (2)"], "data": [[None, 1, 2.0]]}
