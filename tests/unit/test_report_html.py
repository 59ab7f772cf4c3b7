"""report --html, the pure part: what the page holds, that it holds only what it should, and that it
loads nothing: no scripts, no links, no external resources, every ledger value escaped."""

from __future__ import annotations

import re
from decimal import Decimal
from html.parser import HTMLParser

import pytest
from migrator_cli.report_html import MAX_DRIFTS, ReportSummary, bars, render_html

T0 = 1_800_000_000  # a minute boundary (30_000_000 * 60)

# Tags the page may use, and attributes that would make a browser fetch something.
ALLOWED_TAGS = {
    "html", "head", "meta", "title", "style", "body", "h1", "h2", "p", "strong", "div", "span",
    "table", "tr", "th", "td", "code", "svg", "line", "text", "rect",
}  # fmt: skip
FETCHING_ATTRIBUTES = {"src", "href", "xlink:href", "srcset", "action", "formaction", "data", "poster", "background"}


class Page(HTMLParser):
    """The page as a browser would read it: its tags, the text of each table row, its style sheet."""

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict]] = []
        self.tables: dict[str, list[list[str]]] = {}
        self.styles: list[str] = []
        self._table: str | None = None
        self._row: list[str] | None = None
        self._cell: list[str] | None = None
        self._in_style = False
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        self.tags.append((tag, attributes))
        if tag == "table":
            self._table = attributes.get("id", "")
            self.tables[self._table] = []
        elif tag == "tr":
            self._row = []
        elif tag in ("td", "th"):
            self._cell = []
        elif tag == "style":
            self._in_style = True
        if "style" in attributes:
            self.styles.append(attributes["style"] or "")

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None and self._row is not None:
            self._row.append("".join(self._cell).strip())
            self._cell = None
        elif tag == "tr" and self._row is not None and self._table is not None:
            self.tables[self._table].append(self._row)
            self._row = None
        elif tag == "table":
            self._table = None
        elif tag == "style":
            self._in_style = False

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)
        if self._in_style:
            self.styles.append(data)


def item(asset_id, state, at=T0, **extra) -> dict:
    return {"asset_id": asset_id, "state": state, "updated_at": Decimal(at) if isinstance(at, int) else at, **extra}


def library() -> list[dict]:
    items = [item(f"r{n}", "ready", T0 + 60 * (n % 3) + 5) for n in range(30)]
    items += [item(f"p{n}", "processing") for n in range(4)]
    items += [item("pending-1", "pending")]
    items += [item(f"x{n}", "rejected", T0 + 150, last_error="source: 404 Not Found") for n in range(3)]
    items += [item("x9", "rejected", T0 + 170, last_error="provider: unsupported codec\n(hevc)")]
    items += [item("f1", "failed", T0 + 100, last_error="timeout")]
    items += [
        item("d1", "ready", T0 + 10, drift_s=Decimal("-2.5"), duration_s=Decimal("60"), provider_duration_s=57.5),
        item("d2", "ready", T0 + 11, drift_s=Decimal("12"), duration_s=Decimal("100"), provider_duration_s=112),
    ]
    return items


def summary_of(items) -> ReportSummary:
    summary = ReportSummary()
    for it in items:
        summary.add(it)
    return summary


def test_the_page_holds_the_ledgers_numbers():
    items = library()
    page = Page(render_html(summary_of(items), "prod", T0 + 600))

    counts = {row[0]: row[1] for row in page.tables["counts"][1:] if row[0] != "all"}
    expected = {"ready": 32, "processing": 4, "pending": 1, "rejected": 4, "failed": 1}
    assert {state: int(n) for state, n in counts.items() if n != "0"} == expected
    assert page.tables["counts"][-1][:2] == ["all", f"{len(items)}"]

    assert page.tables["rejected-reasons"][1:] == [
        ["3", "source: 404 Not Found"],
        ["1", "provider: unsupported codec (hevc)"],  # a line break is folded, never a row of its own
    ]
    assert page.tables["failed-reasons"][1:] == [["1", "timeout"]]
    assert [row[:2] for row in page.tables["drift"][1:]] == [["d2", "+12.000"], ["d1", "-2.500"]]


def test_the_chart_has_a_bar_per_minute_with_its_counts():
    html = render_html(summary_of(library()), "prod", T0 + 600)
    tips = re.findall(r"<title>([^<]*ready[^<]*)</title>", html)
    # Minutes 0, 1, 2 (ready 10 + 2 drifted, 10, 10; failed 1 and rejected 3 in minute 1, rejected 1 in minute 2).
    assert any(tip.endswith(": 12 ready, 0 failed or rejected") for tip in tips)
    assert any(tip.endswith(": 10 ready, 4 failed or rejected") for tip in tips)
    assert any(tip.endswith(": 10 ready, 1 failed or rejected") for tip in tips)


@pytest.mark.parametrize(
    ("per_minute", "first", "last", "max_bars", "expected"),
    [
        ({0: 1, 1: 2, 2: 3}, 0, 2, 120, (1, [1, 2, 3])),
        ({0: 1, 1: 2, 2: 3, 3: 4, 4: 5}, 0, 4, 2, (3, [6, 9])),  # 5 minutes in 2 bars of 3 minutes
        ({10: 7}, 10, 10, 120, (1, [7])),
        ({5: 1, 500: 1}, 5, 500, 120, (5, [1] + [0] * 98 + [1])),
    ],
)
def test_minutes_are_grouped_into_at_most_so_many_bars(per_minute, first, last, max_bars, expected):
    assert bars(per_minute, first, last, max_bars) == expected


def test_nothing_on_the_page_loads_from_anywhere_and_ledger_text_is_escaped():
    hostile = [
        item('<script src="https://evil.example/x.js"></script>', "rejected", last_error="<img src=https://e.example>"),
        item("a\" onload=\"fetch('//e.example')", "ready", drift_s=1.0, remote_id="<iframe src=//e.example>"),
        item("style", "failed", last_error="</code><style>@import url(https://e.example/x.css)</style>"),
    ]
    html = render_html(summary_of([*library(), *hostile]), "<b>stack</b>", T0)
    page = Page(html)

    assert {tag for tag, _ in page.tags} <= ALLOWED_TAGS
    for tag, attributes in page.tags:
        assert not FETCHING_ATTRIBUTES & set(attributes), (tag, attributes)
        assert not any(name.startswith("on") for name in attributes), (tag, attributes)
    assert not any("url(" in css or "@import" in css for css in page.styles)
    # The hostile text is on the page as text.
    rejected = page.tables["rejected-reasons"]
    assert ["1", "<img src=https://e.example>"] in rejected
    assert '<script src="https://evil.example/x.js"></script>' not in html
    # And a browser is told to fetch nothing at all, should anything slip through.
    csp = [a["content"] for tag, a in page.tags if tag == "meta" and a.get("http-equiv") == "Content-Security-Policy"]
    assert csp == ["default-src 'none'; style-src 'unsafe-inline'"]


def test_memory_is_bounded_however_many_assets_drifted():
    summary = ReportSummary()
    values = [float(n % 97) - 48 for n in range(5 * MAX_DRIFTS)]
    for n, value in enumerate(values):
        summary.add(item(f"d{n}", "ready", drift_s=value))
    drifts = summary.drifts()
    assert summary.drift_count == len(values) and len(drifts) == MAX_DRIFTS
    # The largest were kept, largest first.
    assert [abs(d.drift_s) for d in drifts] == sorted(map(abs, values), reverse=True)[:MAX_DRIFTS]


def test_an_empty_ledger_is_a_page_that_says_so():
    html = render_html(ReportSummary(), "new", T0)
    page = Page(html)
    assert page.tables["counts"][-1][:2] == ["all", "0"]
    assert "Nothing has settled yet" in html and "No asset is rejected." in html


def test_a_ledger_value_that_is_not_a_number_is_not_charted():
    summary = summary_of(
        [item("a", "ready", at="soon"), item("b", "ready", drift_s="NaN"), item("c", "ready", drift_s=float("inf"))]
    )
    assert summary.counts["ready"] == 3 and sum(summary.ready_per_minute.values()) == 2
    assert summary.drift_count == 0


def test_the_page_counts_what_creates_could_not_carry_and_how_videos_play():
    notes = ["description: not carried by mux (kept in the ledger)", "<b>title</b>: cut to 512 characters"]
    items = [
        item("a", "ready", T0, fidelity_notes=notes, playback="signed"),
        item("b", "ready", T0, fidelity_notes=notes[:1], playback="signed"),
        item("c", "ready", T0, playback="public"),
    ]
    html = render_html(summary_of(items), "prod", T0 + 600)
    page = Page(html)
    assert page.tables["notes"][1:] == [
        ["2", "description: not carried by mux (kept in the ledger)"],
        ["1", "<b>title</b>: cut to 512 characters"],
    ]
    assert "<b>title</b>" not in html  # ledger text is escaped
    assert "Played at the provider: 1 public, 2 signed." in html
