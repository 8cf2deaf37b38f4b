"""Every relative link of the README and of ``docs/*.md`` leads somewhere.

The README is short and links to ``docs/`` pages for the long tables; this keeps those links
(and their ``#anchors``, GitHub's heading slugs) from rotting when a section moves.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
LINK = re.compile(r"\[(?:[^\]\[]|\[[^\]]*\])*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, blanks to '-'."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    text = FENCE.sub("", page.read_text())
    headings = {_slug(m.group(1)) for m in re.finditer(r"^#+ (.*)$", text, re.M)}
    return headings | set(re.findall(r'<a id="([^"]+)"></a>', text))  # explicit anchors


def _links(page: Path) -> list[str]:
    text = FENCE.sub("", page.read_text())
    text = re.sub(r"`[^`\n]*`", "", text)  # code spans are not links
    return [t for t in LINK.findall(text) if not re.match(r"^[a-z]+:", t)]


@pytest.mark.parametrize("page", PAGES, ids=[p.relative_to(REPO).as_posix() for p in PAGES])
def test_every_relative_link_and_anchor_of_the_page_resolves(page: Path) -> None:
    broken = []
    for target in _links(page):
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            broken.append(f"{target}: no file {dest}")
        elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
            broken.append(f"{target}: no heading #{anchor} in {dest.name}")
    assert broken == [], "\n".join(broken)


def test_the_readme_links_every_docs_page() -> None:
    readme = (REPO / "README.md").read_text()
    missing = [p.name for p in PAGES[1:] if f"docs/{p.name}" not in readme]
    assert missing == []


# Sections that moved from the README to docs/ (issue 27): a bookmark or an old link to the
# README's anchor still lands on the README, next to the link to the section's new page.
MOVED_FROM_README = {
    "node-inventory-for-gitops-workloadrun-fn-inventory": "docs/gitops.md",
    "plain-kubectl-releasing-waves-workloadrun-fn-release": "docs/gitops.md",
    "registry-credentials-in-gitops": "docs/gitops.md",
    "how-detection-works": "docs/detection.md",
    "the-catalog": "docs/detection.md",
    "previewing": "docs/detection.md",
    "adding-or-changing-an-entry": "docs/detection.md",
    "re-rendering-after-the-fleet-changes": "docs/apply-order.md",
    "latest-results": "docs/performance.md",
    "targets": "docs/performance.md",
}


@pytest.mark.parametrize("anchor", sorted(MOVED_FROM_README))
def test_a_moved_sections_readme_anchor_still_resolves_beside_its_new_page(anchor: str) -> None:
    readme = REPO / "README.md"
    page = REPO / MOVED_FROM_README[anchor]
    assert anchor in _anchors(readme)
    assert anchor in _anchors(page), f"{page.name} has no section #{anchor}"
    (row,) = [ln for ln in readme.read_text().splitlines() if f'<a id="{anchor}"></a>' in ln]
    assert f"]({MOVED_FROM_README[anchor]})" in row
