"""The docs' links hold: every relative Markdown link points at a file that exists, every `#anchor` at a heading.

The pages checked are README.md, CHANGELOG.md, CONTRIBUTING.md (where they exist) and docs/*.md. A link is
`[text](target)` (its text may span lines) or a reference definition `[label]: target`, outside fenced code
blocks and inline code; a target with a scheme (https:, mailto:) is not ours to check. A relative target is
resolved from the page's folder; its `#anchor`, or an in-page `#anchor`, must be the slug of a heading of the
target page, made as GitHub makes it: the heading's text as rendered (emphasis and code marks gone, a link's
text kept), lowercased, every character but letters, digits, `_`, `-` and spaces dropped, each space a hyphen,
and `-1`, `-2`, ... after a slug the page already has. An explicit `<a name="...">` or `id="..."` counts too.

docs/security.md names the test that guards each defence as `tests/<path>.py::<name>`: each must be a test
that exists (a `def <name>(` in that file).
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted(
    path.relative_to(ROOT).as_posix()
    for path in [ROOT / "README.md", ROOT / "CHANGELOG.md", ROOT / "CONTRIBUTING.md", *(ROOT / "docs").glob("*.md")]
    if path.is_file()
)

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
INLINE_CODE = re.compile(r"(`+)(.+?)\1", re.DOTALL)
INLINE_LINK = re.compile(
    r"!?\[((?:[^\[\]]|\[[^\[\]]*\])*)\]"  # the text, which may hold one level of brackets and span lines
    r"\(\s*(<[^>]*>|[^()\s]*(?:\([^()\s]*\)[^()\s]*)*)"  # the target, which may hold balanced parentheses
    r"(?:\s+[\"'(][^)]*)?\s*\)"  # an optional title
)
REFERENCE = re.compile(r"^ {0,3}\[(?!\^)[^\]]+\]:\s*(<[^>]*>|\S+)", re.MULTILINE)  # not a footnote ([^1]:)
HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")
HTML_ANCHOR = re.compile(r"<a\s[^>]*?(?:name|id)=[\"']([^\"']+)[\"']", re.IGNORECASE)
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
TEST_REFERENCE = re.compile(r"(tests/[\w/]+\.py)::(\w+)")


def prose(text: str) -> str:
    """The text outside fenced code blocks, each fenced line blanked (so line numbers stay)."""
    lines, fence = [], None
    for line in text.splitlines():
        opened = FENCE.match(line)
        if fence is None and opened:
            fence = opened.group(1)[0] * len(opened.group(1))
            lines.append("")
        elif fence is not None:
            if line.strip().startswith(fence) and set(line.strip()) == {fence[0]}:
                fence = None
            lines.append("")
        else:
            lines.append(line)
    return "\n".join(lines)


def links(text: str) -> list[str]:
    """Every link target of a page, in order: inline links and reference definitions, none in code."""
    body = INLINE_CODE.sub(lambda m: " " * len(m.group(0)), prose(text))
    found = [(m.start(), m.group(2)) for m in INLINE_LINK.finditer(body)]
    found += [(m.start(), m.group(1)) for m in REFERENCE.finditer(body)]
    return [target.strip("<>") for _, target in sorted(found)]


def rendered(heading: str) -> str:
    """A heading's text as GitHub renders it: a link's text kept, code and emphasis marks gone."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = re.sub(r"<[^>]+>", "", text)
    return text.replace("`", "").replace("*", "")


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lowercase; letters, digits, `_`, `-` and spaces kept; spaces to hyphens."""
    text = rendered(heading).strip().lower()
    kept = "".join(ch for ch in text if ch in " -_" or unicodedata.category(ch)[0] in "LMN")
    return kept.replace(" ", "-")


def anchors(text: str) -> set[str]:
    """Every anchor a page offers: its headings' slugs (repeats numbered as GitHub numbers them), and HTML anchors."""
    seen: dict[str, int] = {}
    found = set()
    for line in prose(text).splitlines():
        heading = HEADING.match(line)
        if not heading:
            continue
        base = slug(heading.group(2))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found | set(HTML_ANCHOR.findall(text))


def broken(page: Path, root: Path) -> list[str]:
    """Each relative link of `page` whose file does not exist or whose anchor names no heading, with why."""
    problems = []
    for target in links(page.read_text(encoding="utf-8")):
        if not target or SCHEME.match(target) or target.startswith("//"):
            continue
        path_part, _, anchor = target.partition("#")
        path_part = path_part.split("?", 1)[0]
        destination = (page.parent / path_part).resolve() if path_part else page
        if not destination.exists():
            shown = destination.relative_to(root) if destination.is_relative_to(root) else destination
            problems.append(f"{target}: no file {shown}")
            continue
        if anchor and destination.suffix == ".md" and destination.is_file():
            if anchor not in anchors(destination.read_text(encoding="utf-8")):
                problems.append(f"{target}: no heading #{anchor} in {destination.name}")
    return problems


def missing_tests(text: str, root: Path) -> list[str]:
    """Each `tests/<path>.py::<name>` the text names whose file lacks a `def <name>(`."""
    problems = []
    for path, name in sorted(set(TEST_REFERENCE.findall(text))):
        source = root / path
        if not source.is_file():
            problems.append(f"{path}::{name}: no file {path}")
        elif not re.search(rf"^\s*(?:async\s+)?def {re.escape(name)}\(", source.read_text(encoding="utf-8"), re.M):
            problems.append(f"{path}::{name}: no test of that name")
    return problems


@pytest.mark.parametrize(
    ("heading", "anchor"),
    [
        ("Deploy to AWS", "deploy-to-aws"),
        ("Webhooks: verified, once, forward only", "webhooks-verified-once-forward-only"),
        ("The fleet model (`tests/unit/test_pacing_fleet.py`)", "the-fleet-model-testsunittest_pacing_fleetpy"),
        ("Caption tracks (`bench/tracks`)", "caption-tracks-benchtracks"),
        ("The test suite (`.ci/run`)", "the-test-suite-cirun"),
        ("A message's fate", "a-messages-fate"),
        ("Stream → Mux, signed", "stream--mux-signed"),
        ("What **we** learned", "what-we-learned"),
        ("See [the guide](operator-guide.md) first", "see-the-guide-first"),
        ("0.3.0 — 2026-12-04 (7e1afbb)", "030--2026-12-04-7e1afbb"),
        ("Café au lait", "café-au-lait"),
    ],
)
def test_a_heading_gets_githubs_anchor(heading, anchor):
    assert slug(heading) == anchor


def test_a_repeated_heading_is_numbered_and_html_anchors_count():
    page = '# Notes\n\n## Notes\n\n## Notes\n\n<a name="kept-here"></a>\n```\n# not a heading\n```\n'
    assert anchors(page) == {"notes", "notes-1", "notes-2", "kept-here"}


@pytest.mark.parametrize(
    ("text", "targets"),
    [
        ("See [the guide](docs/guide.md#deploy).", ["docs/guide.md#deploy"]),
        ("A [link whose text\nspans two lines](a.md) and [another](#here).", ["a.md", "#here"]),
        ('[titled](b.md "the title") and [angled](<c d.md>)', ["b.md", "c d.md"]),
        ("`[not a link](x.md)` in code, [a link](y.md)", ["y.md"]),
        ("```bash\n[not a link](x.md)\n```\n[after](z.md)", ["z.md"]),
        ("[external](https://example.com/a.md) ![an image](img/p.png)", ["https://example.com/a.md", "img/p.png"]),
        ("[ref]: docs/ref.md\n", ["docs/ref.md"]),
        ("[a link (with parentheses)](page_(1).md)", ["page_(1).md"]),
    ],
)
def test_the_links_of_a_page_are_found_outside_code(text, targets):
    assert links(text) == targets


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("[ok](other.md#a-heading) [ok](#top) [ok](https://example.com/nowhere.md)", None),
        ("[gone](missing.md)", "missing.md: no file"),
        ("[wrong anchor](other.md#no-such-heading)", "no heading #no-such-heading in other.md"),
        ("[wrong in-page anchor](#nowhere)", "no heading #nowhere in page.md"),
        ("[a folder](sub/)", None),
    ],
)
def test_a_broken_link_or_anchor_is_reported(tmp_path, text, problem):
    (tmp_path / "sub").mkdir()
    (tmp_path / "other.md").write_text("# Other\n\n## A heading\n")
    page = tmp_path / "page.md"
    page.write_text(f"# Top\n\n{text}\n")
    problems = broken(page, tmp_path)
    if problem is None:
        assert problems == []
    else:
        assert len(problems) == 1 and problem in problems[0]


def test_a_test_reference_must_name_a_test_that_exists(tmp_path):
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_x.py").write_text("def test_here():\n    pass\n\nasync def test_async():\n    pass\n")
    text = "`tests/test_x.py::test_here`, `tests/test_x.py::test_async`, `tests/test_x.py::test_gone`"
    text += " and `tests/test_y.py::test_a`"
    assert missing_tests(text, tmp_path) == [
        "tests/test_x.py::test_gone: no test of that name",
        "tests/test_y.py::test_a: no file tests/test_y.py",
    ]


@pytest.mark.parametrize("page", PAGES)
def test_every_relative_link_of_the_docs_points_at_a_file_and_a_heading(page):
    assert broken(ROOT / page, ROOT) == []


def test_every_test_the_security_page_names_exists():
    text = (ROOT / "docs" / "security.md").read_text(encoding="utf-8")
    assert len(TEST_REFERENCE.findall(text)) >= 30, "the page names each defence's test as tests/<path>.py::<name>"
    assert missing_tests(text, ROOT) == []
