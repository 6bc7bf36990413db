"""``genlab site``: the static site from a store holding a real claim verdict, a sweep and a single
run, and from no store at all (a fresh clone: the recorded verdicts of ``docs/verdicts.json``).

The structure tests read the HTML; the browser tests open the sites from disk in headless Chromium
(Debian's package, driven by Playwright), filter by verdict, sort, follow a claim link, check that
the figures loaded and no console error was logged, filter the runs page, and save screenshots in
``test-artifacts/`` (or ``$GENLAB_TEST_ARTIFACTS``).
"""

from __future__ import annotations

import contextlib
import html as html_lib
import json
import os
import re
import shlex
import tempfile
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import genlab
from genlab.cli import app

CLAIM = "dg.rationale_invariance"  # cites catalogue row 8
SETS = {"suite": '["colored_digits:2"]', "steps": "40", "eval_every": "20", "seeds": "2"}
CHROMIUM = Path(os.environ.get("GENLAB_CHROMIUM", "/usr/bin/chromium"))
ARTIFACTS = Path(
    os.environ.get("GENLAB_TEST_ARTIFACTS", Path(__file__).resolve().parents[1] / "test-artifacts")
)
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def cli(*args: str) -> str:
    res = CliRunner().invoke(app, list(args))
    assert res.exit_code == 0, res.output
    return res.stdout


RECORDED = Path(genlab.__file__).resolve().parents[2] / "docs" / "verdicts.json"
SINGLE = ["dg-colored", "steps=20", "eval.every=10", "method.name=mixup"]  # a run of its own


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """A store with a claim verdict (a small configuration of a real claim, through the CLI), a
    two-method sweep and a single run (with its curves), and the site built from it."""
    root = tmp_path_factory.mktemp("site")
    store = root / "store"
    sets = [a for k, v in SETS.items() for a in ("--set", f"{k}={v}")]
    cli("claims", "run", CLAIM, "--budget", "smoke", *sets, "--store", str(store), "-q")
    genlab.sweep(
        {
            "name": "site-sweep",
            "base": "dg-colored",
            "set": ["steps=20", "eval.every=10"],
            "grid": {"method.name": ["erm", "irm"]},
        },
        store=store,
    )
    cli("run", *SINGLE, "--store", str(store), "-q")
    out = root / "site"
    assert cli("site", str(out), "--store", str(store)).strip().endswith("index.html")
    return out, store


@pytest.fixture(scope="module")
def fresh_site(tmp_path_factory):
    """``genlab site OUT`` as on a fresh clone: no store (the default folder absent, no
    ``$GENLAB_STORE``), so all it shows is recorded."""
    root = tmp_path_factory.mktemp("fresh")
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(root)
        mp.delenv("GENLAB_STORE", raising=False)
        res = CliRunner().invoke(app, ["site", "out"])
    assert res.exit_code == 0, res.output
    assert not (root / "genlab-runs").exists()  # reading made no store
    return root / "out"


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
    assert "checked: today's code gives this verdict's configuration" in html_lib.unescape(html)
    # running the command shown gives the same configuration: the same verdict row, no new runs
    before = genlab.Store(store).verdicts()
    cli(*argv[1:], "--store", str(store), "-q")
    after = genlab.Store(store).verdicts()
    assert len(after) == len(before) and set(after["config_id"]) == set(before["config_id"])
    import torch

    for fact in (
        "genlab version",
        "git commit",
        "torch version",
        "host",
        "claim wall time",
        "run ids",
        torch.__version__,
    ):
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
    res = CliRunner().invoke(
        app,
        [
            "sweep",
            str(out / "sweeps" / f"{sid}.json"),
            "--dry-run",
            "--json",
            "--store",
            str(tmp_path / "st"),
        ],
    )
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
    rows = dict(
        re.findall(r'<tr id="claim-([^"]+)".*?<td data-label="Papers">(.*?)</td>', index, re.S)
    )
    assert len(rows) == len(CLAIMS.entries())
    for entry in CLAIMS.entries():
        page = (out / "claims" / f"{entry.name}.html").read_text()
        papers = re.search(r'<section id="papers">(.*?)</section>', page, re.S).group(1)
        papers, row = html_lib.unescape(papers), html_lib.unescape(rows[entry.name])
        for ref in entry.obj.papers:
            if ref.row is None:
                cited = f"{ref.authors}, \u201c{ref.title}\u201d"
                for text in (papers, row):
                    assert cited in text and "not in the catalogue" in text, entry.name
            else:
                link = f'href="../index.html#paper-{ref.row}">#{ref.row} {names[ref.row]}'
                assert link in papers, entry.name
                assert f'href="#paper-{ref.row}">#{ref.row} {names[ref.row]}' in row, entry.name
    collapse = rows["dg.colored_collapse"]
    assert "Gulrajani &amp; Lopez-Paz 2021" in collapse and "<a" not in collapse


def test_site_opens_on_the_recorded_verdicts(site):
    """Every claim row shows ``docs/verdicts.json``'s verdict (full budget, else smoke) beside the
    store's, filterable; the claim page lists both recorded budgets beside the measured ones."""
    out, _ = site
    recorded = json.loads(RECORDED.read_text())
    index = (out / "index.html").read_text()
    assert 'select data-key="recorded"' in index and "docs/verdicts.json" in index
    rows = dict(
        re.findall(r'<tr id="claim-([^"]+)" data-verdict="[^"]+" data-recorded="([^"]+)"', index)
    )
    assert set(recorded) <= set(rows)  # a claim registered since the file was made: not run
    assert all(rows[c] == "not-run" for c in set(rows) - set(recorded))
    for cid, d in recorded.items():
        shown = next(
            (d[b]["verdict"] for b in ("full", "smoke") if d[b]["verdict"] != "not run"), "not run"
        )
        assert rows[cid] == shown.replace(" ", "-"), cid
    page = (out / "claims" / f"{CLAIM}.html").read_text()
    rec = re.search(r'<section id="recorded">(.*)<section id="claim">', page, re.S).group(1)
    full = recorded[CLAIM]["full"]
    assert (
        f'<span class="badge v-{full["verdict"].replace(" ", "-")}">{full["verdict"]} '
        '<span class="budget">full</span>'
        in rec
        and full["measured"] in rec
    )
    assert 'id="recorded-full"' in rec and 'id="recorded-smoke"' in rec
    assert recorded[CLAIM]["scope_note"] in html_lib.unescape(rec)
    # the smoke verdict of the store stands beside the recorded smoke verdict, linked
    smoke = rec.split('id="recorded-smoke"', 1)[1]
    assert re.search(r'measured here</span> <a href="#verdict-smoke-\w+">', smoke)
    assert (
        'measured here</span> <span class="badge v-not-run">'
        in rec.split('id="recorded-smoke"', 1)[0]
    )


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
    measured = {
        "verdict": "inconclusive",
        "decision": "reproduced",
        "scope": "proxy",
        "design_hash": "abc123",
        "frozen": True,
        "seeds": 5,
        "wall_s": 12.5,
        "cpu_s": 20.0,
        "controls": {"negative": "not reproduced", "positive": None},
        "evidence": "gain 0.01 [-0.01, 0.03]. Inconclusive because controls not run.",
        "reason": "controls not run: positive",
        "needs": "run its controls: <here>",
        "measured": "2026-12-02",
        "rules": "measured",
    }
    recorded = {
        CLAIM: {
            "id": CLAIM,
            "family": "dg",
            "scope": "proxy",
            "scope_note": "digits",
            "papers": [8],
            "smoke": measured,
            "full": {"verdict": "not run"},
            "changes": [{"budget": "full", "reason": "more seeds"}],
        }
    }
    out = _recorded_site(tmp_path, recorded)
    index = (out / "index.html").read_text()
    row = re.search(rf'<tr id="claim-{re.escape(CLAIM)}".*?</tr>', index, re.S).group(0)
    assert 'data-recorded="inconclusive"' in row and 'data-verdict="not-run"' in row
    assert '<span class="budget">smoke</span>' in row and "2026-12-02" in row
    assert "why: controls not run: positive" in row
    assert "needs: run its controls: &lt;here&gt;" in row
    other = re.search(r'<tr id="claim-dg\.colored_collapse".*?</tr>', index, re.S).group(0)
    assert 'data-recorded="not-run"' in other  # not in the file
    page = (out / "claims" / f"{CLAIM}.html").read_text()
    full, smoke = page.split('id="recorded-smoke"', 1)[0], page.split('id="recorded-smoke"', 1)[1]
    assert "No verdict was recorded at this budget." in full.split('id="recorded-full"', 1)[1]
    smoke = smoke.split('<section id="claim">', 1)[0]
    for text in (
        "Inconclusive because</strong> controls not run: positive",
        "run its controls: &lt;here&gt;",
        '<span class="badge v-not-reproduced">',
        'positive: <span class="badge v-not-run">',
        "abc123",
        "12.5 s",
        "20.0 s",
        "<dt>seeds</dt><dd>5</dd>",
        "decision</dt><dd>reproduced</dd>",
    ):
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


@contextlib.contextmanager
def browser_page(problems: list[str]) -> Iterator[Any]:
    """A page of Debian's Chromium driven by Playwright (skips where either is missing); console
    errors, page errors and failed requests go to ``problems``."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("Playwright is not installed (pip install playwright; .ci/run does)")
    if not CHROMIUM.is_file():
        pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install chromium; .ci/run does)")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p, tempfile.TemporaryDirectory() as profile:
        browser = p.chromium.launch_persistent_context(
            profile,
            executable_path=str(CHROMIUM),
            headless=True,
            args=FLAGS,
            viewport={"width": 1280, "height": 900},
        )
        page = browser.new_page()
        page.on("console", lambda m: m.type == "error" and problems.append(f"console: {m.text}"))
        page.on("pageerror", lambda exc: problems.append(f"page error: {exc}"))
        page.on("requestfailed", lambda r: problems.append(f"failed: {r.url}"))
        try:
            yield page
        finally:
            browser.close()


# an image has loaded (waiting for a lazy one scrolled into view) and has pixels
LOADED = (
    "(img) => (img.complete ? Promise.resolve() : new Promise(r => { img.onload = r; "
    "img.onerror = r; })).then(() => img.naturalWidth > 0)"
)


def test_site_in_a_real_browser(site):
    out, _ = site
    problems: list[str] = []
    with browser_page(problems) as page:
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
    assert problems == []


@pytest.mark.parametrize(
    "value",
    [
        None,
        True,
        3,
        1e-3,
        0.1,
        float("inf"),
        "a b",
        "x:1",
        [1, 2.5],
        ["colored_digits:2"],
        {"lr": 0.01, "k": [1]},
        [],
    ],
)
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


# ---- a fresh clone: recorded verdicts with scope and evidence figure, no store -------------------


def _claim_rows(index: str) -> dict[str, str]:
    return dict(re.findall(r'<tr id="claim-([^"]+)".*?>(.*?)</tr>', index, re.S))


def test_fresh_clone_shows_every_recorded_verdict_with_scope_and_figure(fresh_site):
    """With no store, every claim of ``docs/verdicts.json`` shows its recorded verdict (full
    budget, else smoke) with its date, scope and an evidence figure drawn from the file; the
    figure is an SVG that names both budgets' verdicts."""
    import xml.etree.ElementTree as ET

    recorded = json.loads(RECORDED.read_text())
    rows = _claim_rows((fresh_site / "index.html").read_text())
    assert set(recorded) <= set(rows)
    for cid, entry in recorded.items():
        budget = next((b for b in ("full", "smoke") if entry[b]["verdict"] != "not run"), None)
        if budget is None:
            continue
        rec, row = entry[budget], html_lib.unescape(rows[cid])
        assert (
            f'<span class="badge v-{rec["verdict"].replace(" ", "-")}">{rec["verdict"]} '
            f'<span class="budget">{budget}</span>' in row
        ), cid
        assert rec["measured"] in row and f"scope: {rec.get('scope') or entry['scope']}" in row
        src = f"figures/evidence-{cid}.svg"
        assert f'<img src="{src}"' in row, cid
        svg = ET.parse(fresh_site / src).getroot()
        assert svg.tag == "{http://www.w3.org/2000/svg}svg"
        text = " ".join("".join(t.itertext()) for t in svg.iter("{http://www.w3.org/2000/svg}text"))
        for b in ("full", "smoke"):
            assert f"{b} budget: {entry[b]['verdict']}" in text, (cid, b)
        page = (fresh_site / "claims" / f"{cid}.html").read_text()
        assert f'<img src="../{src}"' in page and 'id="recorded-full"' in page


def test_evidence_figure_draws_each_part_against_its_thresholds(fresh_site):
    """A recorded part written as ``Interval.text()`` is drawn with its numbers, its thresholds
    and the colour of what it says; a verdict decided without intervals says so."""
    from genlab.report.site.evidence import parts_from_text

    recorded = json.loads(RECORDED.read_text())
    with_parts = {
        c: parts_from_text(e["full"]["evidence"])
        for c, e in recorded.items()
        if "(n=" in e["full"].get("evidence", "")
    }
    cid, parts = next((c, p) for c, p in sorted(with_parts.items()) if p and p[0].verdict)
    svg = (fresh_site / "figures" / f"evidence-{cid}.svg").read_text()
    for p in parts:
        assert f"{p.estimate:.3f} [{p.lo:.3f}, {p.hi:.3f}] n={p.n}" in svg, cid
        assert f'<g class="{p.verdict.replace(" ", "-")}">' in svg
    assert 'class="null"' in svg or 'class="band"' in svg
    assert 'class="smallest"' in svg or 'class="band"' in svg
    counted = next(
        c
        for c, e in sorted(recorded.items())
        if e["full"]["verdict"] != "not run" and not parts_from_text(e["full"]["evidence"])
    )
    svg = (fresh_site / "figures" / f"evidence-{counted}.svg").read_text()
    assert "not by an interval: see the evidence" in svg


def test_fresh_clone_claim_pages_link_their_papers(fresh_site):
    from genlab.claims import CLAIMS

    for entry in CLAIMS.entries():
        page = (fresh_site / "claims" / f"{entry.name}.html").read_text()
        papers = re.search(r'<section id="papers">(.*?)</section>', page, re.S).group(1)
        for ref in entry.obj.papers:
            if ref.row is not None:
                assert f'href="../index.html#paper-{ref.row}"' in papers, entry.name
    runs = (fresh_site / "runs.html").read_text()
    assert "No run in this store yet" in runs


def _interval_cases():
    for est, lo, hi in [
        (0.05, 0.02, 0.08),
        (0.005, 0.001, 0.01),
        (-0.01, -0.03, 0.01),
        (0.0, -0.004, 0.004),
        (0.3, 0.25, 0.35),
        (float("nan"), 0.0, 1.0),
    ]:
        for kw in (
            {"null": 0.0, "smallest": 0.02},
            {"null": 0.0, "smallest": 0.02, "above": False},
            {"smallest": 0.005, "absence": True},
            {"null": 0.5, "smallest": 0.5, "above": False},
        ):
            yield est, lo, hi, kw


def test_parts_read_back_as_the_claims_write_them():
    """``Interval.text()`` parsed back gives the same numbers and the verdict
    ``Interval.verdict()`` gives (the site mirrors the rule; this keeps them together)."""
    from genlab.claims.guards import Interval
    from genlab.report.site.evidence import Part, part_verdict, parts_from_text

    for est, lo, hi, kw in _interval_cases():
        iv = Interval("a - b (x)", est, lo, hi, 5, **kw)
        [p] = parts_from_text(f"Accuracy per arm: a 0.5, b 0.4; {iv.text()}. Some more words.")
        assert p.name == "a - b (x)" and p.n == 5 and p.absence == iv.absence
        assert p.verdict == iv.verdict(), (iv, p)
        exact = Part(iv.name, est, lo, hi, 5, iv.null, iv.smallest, iv.above, iv.absence)
        assert part_verdict(exact) == iv.verdict()
    loose = parts_from_text("Test accuracy small 0.986, large 0.956; gap 0.030 [0.013, 0.048]")
    assert [(p.name, p.lo, p.verdict) for p in loose] == [("gap", 0.013, None)]
    assert parts_from_text("7/7 expected successes held") == []


def test_recorded_intervals_are_drawn_as_recorded():
    """An entry with ``intervals`` (as the claims runner keeps them beside a verdict) is drawn from
    them, not from its evidence text; an interval without bounds is drawn as its estimate only."""
    from genlab.report.site.evidence import figure, parts_of

    rec = {
        "verdict": "inconclusive",
        "measured": "2026-12-04",
        "evidence": "x 0.1 [0.0, 0.2]",
        "intervals": [
            {
                "name": "gain <b>",
                "estimate": 0.05,
                "lo": 0.01,
                "hi": 0.09,
                "n": 5,
                "null": 0.0,
                "smallest": 0.02,
                "above": True,
                "absence": False,
                "verdict": "reproduced",
            },
            {
                "name": "one seed",
                "estimate": 0.3,
                "lo": None,
                "hi": None,
                "n": 1,
                "null": 0.0,
                "smallest": 0.1,
                "above": True,
                "absence": False,
            },
        ],
    }
    parts = parts_of(rec)
    assert [(p.name, p.verdict) for p in parts] == [
        ("gain <b>", "reproduced"),
        ("one seed", "inconclusive"),
    ]
    svg = figure(
        "x.y", {"scope": "proxy", "full": rec, "smoke": {"verdict": "not run"}}, ("full", "smoke")
    )
    assert "gain &lt;b&gt;" in svg and "<b>" not in svg and "0.300 [nan, nan] n=1" in svg
    assert "not run at this budget" in svg and "2026-12-04" in svg


# ---- runs, sweeps' reproduce command, --publish -----------------------------------------------


def test_runs_page_lists_every_run_with_its_kind(site):
    out, store = site
    runs = (out / "runs.html").read_text()
    rows = dict(re.findall(r'<tr id="run-(\w+)" data-kind="([^"]*)"', runs))
    ids = genlab.Store(store).runs()["run_id"].tolist()
    assert sorted(rows) == sorted(ids)
    [sid] = genlab.Store(store).sweeps()["sweep_id"]
    in_sweep = {r["run_id"] for r in genlab.Store(store).sweep(sid)["runs"]}
    claimed = {r for ids_ in genlab.Store(store).verdicts()["run_ids"] for r in ids_}
    single = genlab.spec.load_run_spec(SINGLE[0], SINGLE[1:]).run_id
    assert rows[single] == "single"
    assert all("sweep" in rows[r].split() for r in in_sweep)
    assert all("claim" in rows[r].split() for r in claimed)
    for key in ("kind", "preset", "status", "method", "metric", "metric-min"):
        assert f'data-key="{key}"' in runs
    assert 'data-preset="dg-colored"' in runs


def test_run_page_has_config_metrics_curves_and_a_command_that_reproduces_it(site):
    """Each run's page: its spec, final metrics, its curves (the single run drew them) and a
    reproduce command that gives the run's id with today's code (running it trains nothing)."""
    from genlab.spec import load_run_spec

    out, store = site
    single = load_run_spec(SINGLE[0], SINGLE[1:]).run_id
    for page in sorted((out / "runs").glob("*.html")):
        html = page.read_text()
        rid = page.stem
        cmd = html_lib.unescape(
            re.search(r"<pre><code>(genlab run [^<]+)</code></pre>", html).group(1)
        )
        argv = shlex.split(cmd)
        ref = str(out / "runs" / argv[2]) if argv[2].endswith(".json") else argv[2]
        assert load_run_spec(ref, argv[3:]).run_id == rid, cmd
        assert "checked: today" in html_lib.unescape(html)
        assert '<section id="config">' in html and "optimizer.lr" in html
        assert '<section id="metrics">' in html and "test/-90%" in html
        spec = json.loads((out / "runs" / f"{rid}.json").read_text())
        assert genlab.spec.parse_spec(spec).run_id == rid
    html = (out / "runs" / f"{single}.html").read_text()
    assert f'<img src="../figures/run-{single}.png"' in html
    assert (out / "figures" / f"run-{single}.png").read_bytes()[:4] == b"\x89PNG"
    cmd = re.search(r"<pre><code>(genlab run [^<]+)</code></pre>", html).group(1)
    assert cmd == "genlab run dg-colored " + " ".join(sorted(SINGLE[1:], key=cmd.index))
    res = CliRunner().invoke(app, [*shlex.split(cmd)[1:], "--store", str(store), "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["run_id"] == single and doc["skipped"] is True


def test_sweep_page_reproduce_command_runs(site):
    """The sweep page's command, run as it stands on the saved file: exit 0, the same sweep and
    runs (the earlier bug: the file held ``"random": {}`` and ``genlab sweep`` exited 2 with
    "[random] has no axes")."""
    out, store = site
    [sid] = genlab.Store(store).sweeps()["sweep_id"]
    html = html_lib.unescape((out / "sweeps" / f"{sid}.html").read_text())
    cmd = re.search(r"<pre><code>(genlab sweep [^<]+)</code></pre>", html).group(1)
    assert cmd == f"genlab sweep {sid}.json && genlab report {sid}"
    spec = json.loads((out / "sweeps" / f"{sid}.json").read_text())
    assert "random" not in spec and spec["grid"]
    for part in cmd.split(" && "):
        argv = shlex.split(part)[1:]
        argv = [str(out / "sweeps" / a) if a.endswith(".json") else a for a in argv]
        res = CliRunner().invoke(app, [*argv, "--store", str(store)])
        assert res.exit_code == 0, res.output
        assert "has no axes" not in res.output
    assert list(genlab.Store(store).sweeps()["sweep_id"]) == [sid]
    for rid in re.findall(r'href="\.\./runs/(\w+)\.html"', html):
        assert (out / "runs" / f"{rid}.html").is_file()


def _resolves_inside(out: Path) -> list[str]:
    """Every href/src of every page and figure, checked here without the site's own checker:
    relative, naming a file inside ``out``."""
    root, bad = out.resolve(), []
    for page in sorted(root.rglob("*")):
        if page.suffix not in (".html", ".svg"):
            continue
        for ref in re.findall(r'(?:href|src)="([^"]*)"', page.read_text()):
            ref = html_lib.unescape(ref)
            if page.suffix == ".svg" and ref == "http://www.w3.org/2000/svg":
                continue  # the namespace, not a link
            target = ref.partition("#")[0]
            dest = (page.parent / target).resolve() if target else page
            if (
                re.match(r"^([a-z][a-z0-9+.-]*:|/)", ref)
                or not dest.is_relative_to(root)
                or not dest.is_file()
            ):
                bad.append(f"{page.relative_to(root)}: {ref}")
    return bad


def test_every_link_stays_inside_the_site(site, fresh_site):
    """Both sites, as any static host would serve them: every href/src relative and naming a file
    inside the folder (figures included), by this test's reading and by the site's own check."""
    from genlab.report.site.links import outside_links

    for out in (site[0], fresh_site):
        assert _resolves_inside(out) == [] and outside_links(out) == []


def test_publish_from_a_fresh_clone(tmp_path):
    """``genlab site OUT --publish`` with no store: a folder for any static host (index.html at
    its root, a .nojekyll file, every link inside it)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(tmp_path)
        mp.delenv("GENLAB_STORE", raising=False)
        res = CliRunner().invoke(app, ["site", "public", "--publish"])
    assert res.exit_code == 0, res.output
    assert "ready to publish" in res.stdout
    pub = tmp_path / "public"
    assert (pub / "index.html").is_file() and (pub / ".nojekyll").is_file()
    assert (pub / "runs.html").is_file() and any((pub / "figures").glob("evidence-*.svg"))
    assert _resolves_inside(pub) == []


@pytest.mark.slow
def test_publish_a_store_names_no_machine_path(site, tmp_path):
    """Published from a store with runs, sweeps and verdicts: every link inside the folder, and
    the footer names the store by its folder's name only."""
    out, store = site
    pub = tmp_path / "public"
    assert "ready to publish" in cli("site", str(pub), "--store", str(store), "--publish")
    assert (pub / ".nojekyll").is_file() and any((pub / "runs").glob("*.html"))
    assert _resolves_inside(pub) == []
    for page in pub.rglob("*.html"):
        footer = page.read_text().rsplit("<footer>", 1)[1]
        assert str(store) not in footer and "<code>store</code>" in footer


def test_the_link_check_can_fail(tmp_path):
    from genlab.report.site.links import outside_links

    (tmp_path / "runs").mkdir()
    (tmp_path / "index.html").write_text(
        '<p id="here"></p><a href="#here">a</a><img src="f.svg"><a href="runs/r.html#top">r</a>'
    )
    (tmp_path / "f.svg").write_text("<svg/>")
    (tmp_path / "runs" / "r.html").write_text('<h1 id="top"></h1><a href="../index.html">i</a>')
    assert outside_links(tmp_path) == [] and _resolves_inside(tmp_path) == []
    (tmp_path / "bad.html").write_text(
        '<a href="../elsewhere.html">x</a><img src="/abs.png">'
        '<a href="https://example.org/">y</a><a href="index.html#nope">'
        '</a><a href="runs/none.html">z</a>'
    )
    bad = outside_links(tmp_path)
    assert len(bad) == 5 and len(_resolves_inside(tmp_path)) == 4  # (anchors: the site's check)


def test_runs_page_and_recorded_verdicts_in_a_real_browser(site, fresh_site):
    """In Chromium: the fresh clone's claims index shows a recorded verdict, its scope and its
    evidence figure (loaded); a claim page links its papers; the runs page lists the runs and its
    filters (kind, metric range) work; a run's page opens with its curves."""
    out, store = site
    recorded = json.loads(RECORDED.read_text())
    cid = next(c for c, e in sorted(recorded.items()) if e["full"]["verdict"] == "reproduced")
    problems: list[str] = []
    with browser_page(problems) as page:
        page.goto((fresh_site / "index.html").as_uri() + "#claims")
        row = page.locator("#claim-" + cid.replace(".", "\\."))
        cell = row.locator("td[data-label=Recorded]")
        assert cell.locator(".badge").first.inner_text().startswith("reproduced")
        assert (
            f"scope: {recorded[cid]['full'].get('scope') or recorded[cid]['scope']}"
            in cell.inner_text()
        )
        img = cell.locator("img")
        img.scroll_into_view_if_needed()
        assert img.evaluate(LOADED), img.get_attribute("src")
        row.screenshot(path=str(ARTIFACTS / "site-fresh-claim-row.png"))

        row.locator(f"a[href='claims/{cid}.html']").first.click()
        page.wait_for_load_state("load")
        refs = [
            r.row
            for r in __import__("genlab.claims", fromlist=["CLAIMS"]).CLAIMS.get(cid).obj.papers
            if r.row is not None
        ]
        for n in refs:
            assert page.locator(f"#papers a[href='../index.html#paper-{n}']").count() == 1
        figure = page.locator("#evidence-figure img")
        assert figure.evaluate(LOADED)
        page.screenshot(path=str(ARTIFACTS / "site-fresh-claim.png"), full_page=True)
        if refs:
            page.locator(f"#papers a[href='../index.html#paper-{refs[0]}']").click()
            page.wait_for_load_state("load")
            assert page.url.endswith(f"index.html#paper-{refs[0]}")

        page.goto((out / "runs.html").as_uri())
        rows = page.locator("#runs-table tbody tr")
        n = len(genlab.Store(store).runs())
        assert rows.count() == n and page.locator("#runs-table tbody tr:not([hidden])").count() == n
        single = genlab.spec.load_run_spec(SINGLE[0], SINGLE[1:]).run_id
        page.select_option(".controls[data-for=runs-table] select[data-key=kind]", "single")
        shown = page.locator("#runs-table tbody tr:not([hidden])")
        assert shown.count() == 1 and shown.first.get_attribute("id") == f"run-{single}"
        page.select_option(".controls[data-for=runs-table] select[data-key=kind]", "")
        # a metric range: only the runs whose value lies in it stay, the column shows the metric
        metric = "val/+90%:accuracy"
        page.select_option(".controls[data-for=runs-table] select[data-key=metric]", metric)
        values = {
            r: json.loads(r_["summary"])["final"][metric]
            for r, r_ in genlab.Store(store).runs().set_index("run_id").iterrows()
        }
        cut = sorted(values.values())[len(values) // 2]
        page.fill(".controls[data-for=runs-table] input[data-key=metric-min]", repr(cut))
        keep = {r for r, v in values.items() if v >= cut}
        shown = page.locator("#runs-table tbody tr:not([hidden])")
        assert {shown.nth(i).get_attribute("id")[4:] for i in range(shown.count())} == keep
        assert page.locator("#runs-table th .metric-name").inner_text() == metric
        count = page.locator(".controls[data-for=runs-table] .count").inner_text()
        assert count == f"showing {len(keep)} of {n}"
        page.screenshot(path=str(ARTIFACTS / "site-runs.png"), full_page=True)
        page.fill(".controls[data-for=runs-table] input[data-key=metric-min]", "")

        page.click(f"#run-{single} a")
        page.wait_for_load_state("load")
        assert page.locator("h1").inner_text() == f"run {single}"
        curves = page.locator("#metrics img")
        curves.scroll_into_view_if_needed()
        assert curves.evaluate(LOADED)
        page.screenshot(path=str(ARTIFACTS / "site-run.png"), full_page=True)
    assert problems == []


def test_no_html_is_assembled_in_python():
    """The site's and the reports' HTML comes from the Jinja2 templates (autoescaped): no string
    literal of ``genlab.report`` other than a docstring holds an HTML tag."""
    import ast

    src = Path(genlab.__file__).parent / "report"
    tag = re.compile(
        r"<(html|body|div|p|table|tr|td|th|a|img|span|section|h[1-6]|ul|li|dl|dt|dd|"
        r"pre|code|figure|svg|script|style|label|select|option|input)[\s>/]"
    )
    found = []
    for path in sorted(src.rglob("*.py")):
        tree = ast.parse(path.read_text())
        docs = {
            id(n.body[0].value)
            for n in ast.walk(tree)
            if isinstance(n, ast.Module | ast.FunctionDef | ast.ClassDef)
            and n.body
            and isinstance(n.body[0], ast.Expr)
            and isinstance(n.body[0].value, ast.Constant)
        }
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and id(node) not in docs
                and tag.search(node.value)
            ):
                found.append(f"{path.relative_to(src)}:{node.lineno}")
    assert found == []
    from genlab.report.templating import environment

    assert environment().autoescape is True
