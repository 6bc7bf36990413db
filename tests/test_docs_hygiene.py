"""The pages a user reads (README.md, docs/**/*.md, mkdocs.yml's nav) carry no machine paths and
no internal labels: no scratch folders of the machine that measured, no named stores under
``genlab-runs/``, no issue, helper, session or branch labels of how the project was built. How a
verdict came to be lives in ``claims.lock`` and the store, not in the pages."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]

FORBIDDEN = {
    "a machine path": r"(?<![\w.~-])/(?:work|tmp|home|root|Users|scratch|mnt)/",
    "a named store": r"genlab-runs/[\w.-]",
    "an issue label": r"\bissues? #?h?\d+",
    "a helper label": r"\bh\d{2}\b|\b(?:other|another) helpers?\b|\bhelpers?'",
    "a session label": r"\bsessions? \d+|\bsession-\d|\bother sessions\b|\(lead\)",
    "a branch name": r"\bbranch `",
}


def offences(text: str) -> list[str]:
    """Each forbidden match in ``text`` as ``line N: what: the line``."""
    found = []
    for n, line in enumerate(text.splitlines(), 1):
        for what, pattern in FORBIDDEN.items():
            if m := re.search(pattern, line):
                found.append(f"line {n}: {what} ({m.group(0)!r}): {line.strip()[:120]}")
    return found


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_machine_paths_or_internal_labels(page: Path):
    bad = offences(page.read_text())
    assert not bad, f"{page.relative_to(ROOT)}:\n" + "\n".join(bad)


def test_the_check_can_fail():
    text = "\n".join(
        [
            "measured in /tmp/h24-len-explore",
            "the store genlab-runs/issue31-oat",
            "under issue #30",
            "since the h22 fix",
            "beside other helpers' jobs",
            "(session 3)",
            "branch `h16-cl`",
            "fine: ./genlab-runs/ and the paper's helper models, row #91",
        ]
    )
    assert len(offences(text)) == 9  # two in the first line, two in the branch's


def test_every_page_is_in_the_site():
    nav = (ROOT / "mkdocs.yml").read_text()
    for page in (ROOT / "docs").rglob("*.md"):
        assert str(page.relative_to(ROOT / "docs")) in nav, (
            f"{page.name} is not in mkdocs.yml's nav"
        )


MAX_WORDS = 29_800  # half of the 59.6k words docs/ held when it read like a lab notebook


def test_docs_stay_within_half_their_old_length():
    """docs/ (prose, generated tables and API reference pages) stays at most half of its old size:
    a new page or claim row must be paid for by cutting elsewhere (``EVIDENCE`` in
    tools/verdict_tables.py sets how much of each verdict's evidence verdicts.md shows)."""
    words = sum(len(p.read_text().split()) for p in (ROOT / "docs").rglob("*.md"))
    assert words <= MAX_WORDS, f"docs/ holds {words} words, more than {MAX_WORDS}"
