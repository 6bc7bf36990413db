"""``genlab site``: the static site from a store holding a real claim verdict and a sweep.

The structure tests read the HTML; the browser test opens the site from disk in headless Chromium
(Debian's package, driven by Playwright), filters by verdict, sorts, follows a claim link, checks that
the figures loaded and no console error was logged, and saves screenshots in ``test-artifacts/``
(or ``$GENLAB_TEST_ARTIFACTS``).
"""

from __future__ import annotations

import html as html_lib
import json
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
    assert listed == {c["id"] for c in json.loads(rows)}


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


def test_sweep_page_reproduce_file_is_a_sweep_file(site, tmp_path):
    """The spec a sweep page links (``sweeps/<id>.json``) is accepted by ``genlab sweep FILE``, and
    it is the same sweep: the same id, the same runs."""
    out, store = site
    [sid] = genlab.Store(store).sweeps()["sweep_id"]
    res = CliRunner().invoke(app, ["sweep", str(out / "sweeps" / f"{sid}.json"), "--dry-run",
                                   "--json", "--store", str(tmp_path / "st")])  # fmt: skip
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    runs = genlab.Store(store).sweep(sid)["runs"]
    assert doc["sweep_id"] == sid and {r["run_id"] for r in doc["runs"]} == {
        r["run_id"] for r in runs
    }


def test_every_claim_page_and_row_shows_its_papers(site):
    """A catalogue row links to its row of the index with the paper's name; a paper outside the
    catalogue shows its authors and title, without a link."""
    from genlab.claims import CLAIMS
    from genlab.papers import catalogue

    out, _ = site
    names = {n: p.name for n, p in catalogue().items()}
    index = (out / "index.html").read_text()
    rows = dict(re.findall(r'<tr id="claim-([^"]+)".*?<td data-label="Papers">(.*?)</td>', index))
    assert len(rows) == len(CLAIMS.entries())
    for entry in CLAIMS.entries():
        page = (out / "claims" / f"{entry.name}.html").read_text()
        papers = re.search(r'<section id="papers">(.*?)</section>', page, re.S).group(1)
        for ref in entry.obj.papers:
            if ref.row is None:
                cited = html_lib.escape(f"{ref.authors}, \u201c{ref.title}\u201d", quote=False)
                for text in (papers, rows[entry.name]):
                    assert cited in text and "not in the catalogue" in text, entry.name
            else:
                link = f'href="../index.html#paper-{ref.row}">#{ref.row} {html_lib.escape(names[ref.row])}'
                assert link in papers, entry.name
                assert f'href="#paper-{ref.row}">#{ref.row} {html_lib.escape(names[ref.row])}' in \
                    rows[entry.name], entry.name  # fmt: skip
    collapse = rows["dg.colored_collapse"]
    assert "Gulrajani &amp; Lopez-Paz 2021" in collapse and "<a" not in collapse


def test_site_opens_on_the_recorded_verdicts(site):
    """Every claim row shows ``docs/verdicts.json``'s verdict (full budget, else smoke) beside the
    store's, filterable; the claim page lists both recorded budgets beside the measured ones."""
    out, _ = site
    recorded = json.loads((Path(genlab.__file__).resolve().parents[2] / "docs" /
                           "verdicts.json").read_text())  # fmt: skip
    index = (out / "index.html").read_text()
    assert 'select data-key="recorded"' in index and "docs/verdicts.json" in index
    rows = dict(re.findall(r'<tr id="claim-([^"]+)" data-verdict="[^"]+" data-recorded="([^"]+)"',
                           index))  # fmt: skip
    assert set(rows) == set(recorded)
    for cid, d in recorded.items():
        shown = next((d[b]["verdict"] for b in ("full", "smoke")
                      if d[b]["verdict"] != "not run"), "not run")  # fmt: skip
        assert rows[cid] == shown.replace(" ", "-"), cid
    page = (out / "claims" / f"{CLAIM}.html").read_text()
    rec = re.search(r'<section id="recorded">(.*)<section id="claim">', page, re.S).group(1)
    full = recorded[CLAIM]["full"]
    assert f'<span class="badge v-{full["verdict"].replace(" ", "-")}">{full["verdict"]} ' \
        '<span class="budget">full</span>' in rec and full["measured"] in rec  # fmt: skip
    assert 'id="recorded-full"' in rec and 'id="recorded-smoke"' in rec
    assert html_lib.escape(recorded[CLAIM]["scope_note"]) in rec
    # the smoke verdict of the store stands beside the recorded smoke verdict, linked
    smoke = rec.split('id="recorded-smoke"', 1)[1]
    assert re.search(r'measured here</span> <a href="#verdict-smoke-\w+">', smoke)
    assert "measured here</span> <span class=\"badge v-not-run\">" in rec.split(
        'id="recorded-smoke"', 1)[0]  # fmt: skip


def _recorded_site(tmp_path, recorded):
    from genlab.claims import CLAIMS
    from genlab.report.site import build_site

    claims = {c: CLAIMS.get(c).obj for c in (CLAIM, "dg.colored_collapse")}
    path = tmp_path / "verdicts.json"
    if recorded is not None:
        path.write_text(json.dumps(recorded))
    out = tmp_path / "site"
    build_site(genlab.Store(tmp_path / "store"), out, claims, path)
    return out


def test_recorded_verdict_under_the_current_rules(tmp_path):
    """A verdict measured under the current rules shows its scope, reason, needs, controls'
    measured verdicts, seeds and times; with no full verdict the smoke one is shown."""
    measured = {"verdict": "inconclusive", "decision": "reproduced", "scope": "proxy",
                "design_hash": "abc123", "frozen": True, "seeds": 5, "wall_s": 12.5,
                "cpu_s": 20.0, "controls": {"negative": "not reproduced", "positive": None},
                "evidence": "gain 0.01 [-0.01, 0.03]. Inconclusive because controls not run.",
                "reason": "controls not run: positive", "needs": "run its controls: <here>",
                "measured": "2026-12-02", "rules": "measured"}  # fmt: skip
    recorded = {CLAIM: {"id": CLAIM, "family": "dg", "scope": "proxy", "scope_note": "digits",
                        "papers": [8], "smoke": measured, "full": {"verdict": "not run"},
                        "changes": [{"budget": "full", "reason": "more seeds"}]}}  # fmt: skip
    out = _recorded_site(tmp_path, recorded)
    index = (out / "index.html").read_text()
    row = re.search(rf'<tr id="claim-{re.escape(CLAIM)}".*?</tr>', index).group(0)
    assert 'data-recorded="inconclusive"' in row and 'data-verdict="not-run"' in row
    assert '<span class="budget">smoke</span>' in row and "2026-12-02" in row
    assert "why: controls not run: positive" in row
    assert "needs: run its controls: &lt;here&gt;" in row
    other = re.search(r'<tr id="claim-dg\.colored_collapse".*?</tr>', index).group(0)
    assert 'data-recorded="not-run"' in other  # not in the file
    page = (out / "claims" / f"{CLAIM}.html").read_text()
    full, smoke = page.split('id="recorded-smoke"', 1)[0], page.split('id="recorded-smoke"', 1)[1]
    assert "No verdict was recorded at this budget." in full.split('id="recorded-full"', 1)[1]
    smoke = smoke.split('<section id="claim">', 1)[0]
    for text in ("Inconclusive because</strong> controls not run: positive",
                 "run its controls: &lt;here&gt;", '<span class="badge v-not-reproduced">',
                 'positive: <span class="badge v-not-run">', "abc123", "12.5 s", "20.0 s",
                 "<dt>seeds</dt><dd>5</dd>", "decision</dt><dd>reproduced</dd>"):  # fmt: skip
        assert text in smoke, text
    assert "earlier rules" not in smoke
    assert "more seeds" in page and 'id="recorded-changes"' in page
    assert (out / "claims" / "dg.colored_collapse.html").is_file()


def test_site_without_a_verdict_file(tmp_path):
    """An installed wheel has no docs/verdicts.json: the site shows the store's verdicts only."""
    out = _recorded_site(tmp_path, None)
    index = (out / "index.html").read_text()
    assert "data-recorded" in index and 'select data-key="recorded"' not in index
    assert ">Recorded<" not in index and "docs/verdicts.json" not in index
    page = (out / "claims" / f"{CLAIM}.html").read_text()
    assert 'id="recorded"' not in page and 'href="../index.html#paper-8">#8 ' in page


def _browser():
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("Playwright is not installed (pip install playwright; .ci/run does)")
    if not CHROMIUM.is_file():
        pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install chromium; .ci/run does)")
    return sync_playwright


# an image has loaded (waiting for a lazy one scrolled into view) and has pixels
LOADED = ("(img) => (img.complete ? Promise.resolve() : new Promise(r => { img.onload = r; "
          "img.onerror = r; })).then(() => img.naturalWidth > 0)")  # fmt: skip


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

        # the claims table filtered by the recorded verdict (docs/verdicts.json)
        sel = ".controls[data-for=claims-table] select[data-key=recorded]"
        page.select_option(sel, "reproduced")
        shown = page.locator("#claims-table tbody tr:not([hidden])")
        assert 0 < shown.count() < page.locator("#claims-table tbody tr").count()
        for i in range(shown.count()):
            assert shown.nth(i).get_attribute("data-recorded") == "reproduced"
        page.select_option(sel, "")

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
        assert page.locator("#recorded-full .badge").first.is_visible()
        assert page.locator("#papers a[href='../index.html#paper-8']").count() == 1
        imgs = page.locator("img")
        assert imgs.count() >= 1
        for i in range(imgs.count()):
            imgs.nth(i).scroll_into_view_if_needed()  # a lazy image loads once in view: wait
            assert imgs.nth(i).evaluate(LOADED), imgs.nth(i).get_attribute("src")
        page.screenshot(path=str(ARTIFACTS / "site-claim.png"), full_page=True)

        # a sweep page, and phone width: no page wider than the screen
        page.goto(next((out / "sweeps").glob("*.html")).as_uri())
        for i in range(page.locator("img").count()):
            page.locator("img").nth(i).scroll_into_view_if_needed()
            assert page.locator("img").nth(i).evaluate(LOADED)
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
