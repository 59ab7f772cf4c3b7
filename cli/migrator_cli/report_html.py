"""`migrator report --html`: one self-contained page for people who would rather look than read.

The page is built from one pass over the ledger with bounded memory (counts, a count per
settled minute, the commonest errors, the largest drifts), and holds nothing that loads
from anywhere: inline CSS, an inline SVG chart, no scripts, no links, no fonts. Every
value from the ledger (ids, provider errors, URLs) is untrusted and escaped.
"""

from __future__ import annotations

import heapq
import math
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from html import escape

from migrator.states import State
from migrator.tracks import caption_counts as track_counts
from migrator.tracks import failures as track_failures

MAX_REASONS = 25  # distinct error texts listed per state
MAX_DRIFTS = 100  # assets in the drift list, largest drift first
MAX_TRACK_FAILURES = 200  # failed tracks listed one by one (the commonest reasons are counted apart)
MAX_BARS = 120  # bars in the throughput chart: minutes are grouped to fit
REASON_CHARS = 200  # an error's text is cut to this before it is counted
_REASON_KEYS = 10_000  # distinct texts tracked per state before the rarest are folded into "other"
STATE_ORDER = tuple(State)
COLOURS = {
    "pending": "#9aa5b1",
    "inventoried": "#7b8794",
    "uploading": "#f0b429",
    "processing": "#2186eb",
    "ready": "#27ab83",
    "failed": "#e12d39",
    "rejected": "#8d2b0b",
}


@dataclass(frozen=True)
class Drift:
    asset_id: str
    drift_s: float
    duration_s: float | None
    provider_duration_s: float | None
    remote_id: str | None


@dataclass
class ReportSummary:
    """What the page shows, accumulated one ledger item at a time."""

    counts: Counter = field(default_factory=Counter)
    # Per UTC minute (epoch minute): assets that reached ready, and those that failed or were rejected.
    ready_per_minute: Counter = field(default_factory=Counter)
    failed_per_minute: Counter = field(default_factory=Counter)
    reasons: dict = field(default_factory=lambda: {State.FAILED.value: Counter(), State.REJECTED.value: Counter()})
    drift_count: int = 0
    _drifts: list = field(default_factory=list)  # a min-heap of (|drift|, asset_id, Drift)
    # What creates could not carry as the rows have it (fidelity_notes), and how the provider plays each video.
    notes: Counter = field(default_factory=Counter)
    noted: int = 0
    playback: Counter = field(default_factory=Counter)
    tracks: Counter = field(default_factory=Counter)  # caption tracks per track state
    track_reasons: Counter = field(default_factory=Counter)
    assets_with_tracks: int = 0
    track_failures: list = field(default_factory=list)  # (asset id, track key, reason), the first listed

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def add(self, item: dict) -> None:
        state = str(item.get("state") or "unknown")
        self.counts[state] += 1
        minute = _minute(item.get("updated_at"))
        if minute is not None:
            if state == State.READY:
                self.ready_per_minute[minute] += 1
            elif state in (State.FAILED, State.REJECTED):
                self.failed_per_minute[minute] += 1
        if state in self.reasons:
            self._count_reason(self.reasons[state], item.get("last_error"))
        notes = item.get("fidelity_notes")
        if isinstance(notes, list) and notes:
            self.noted += 1
            for note in notes:
                self._count_reason(self.notes, note)
        if item.get("playback") is not None:
            self.playback[str(item["playback"])] += 1
        states = item.get("track_states")
        if isinstance(states, dict):
            self.assets_with_tracks += 1
            self.tracks.update(track_counts(states))
            for key, reason in track_failures(states):
                self._count_reason(self.track_reasons, reason)
                if len(self.track_failures) < MAX_TRACK_FAILURES:
                    self.track_failures.append((str(item.get("asset_id")), key, reason[:REASON_CHARS]))
        drift = _number(item.get("drift_s"))
        if drift is not None:
            self.drift_count += 1
            entry = (
                abs(drift),
                str(item.get("asset_id")),
                Drift(
                    str(item.get("asset_id")),
                    drift,
                    _number(item.get("duration_s")),
                    _number(item.get("provider_duration_s")),
                    item.get("remote_id"),
                ),
            )
            if len(self._drifts) < MAX_DRIFTS:
                heapq.heappush(self._drifts, entry)
            elif entry[:2] > self._drifts[0][:2]:
                heapq.heapreplace(self._drifts, entry)

    @staticmethod
    def _count_reason(counter: Counter, error) -> None:
        text = " ".join(str(error or "no error recorded").split())[:REASON_CHARS]
        if text not in counter and len(counter) >= _REASON_KEYS:
            text = "other (too many distinct errors to list)"
        counter[text] += 1

    def drifts(self) -> list[Drift]:
        return [entry[2] for entry in sorted(self._drifts, key=lambda e: (-e[0], e[1]))]


def _number(value) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float | Decimal):
        number = float(value)
        return number if math.isfinite(number) else None
    return None


def _minute(value) -> int | None:
    seconds = _number(value)
    return int(seconds // 60) if seconds is not None and seconds > 0 else None


def bars(per_minute: dict[int, int], first: int, last: int, max_bars: int = MAX_BARS) -> tuple[int, list[int]]:
    """Minutes first..last grouped into at most `max_bars` equal bins: (minutes per bin, count per bin)."""
    span = last - first + 1
    width = max(1, math.ceil(span / max_bars))
    counts = [0] * math.ceil(span / width)
    for minute, count in per_minute.items():
        if first <= minute <= last:
            counts[(minute - first) // width] += count
    return width, counts


def _when(minute: int) -> str:
    return datetime.fromtimestamp(minute * 60, UTC).strftime("%Y-%m-%d %H:%M")


def chart_svg(summary: ReportSummary, width: int = 900, height: int = 240) -> str:
    """Settled assets over time as stacked bars (ready, then failed or rejected), in UTC."""
    minutes = set(summary.ready_per_minute) | set(summary.failed_per_minute)
    if not minutes:
        return '<p class="muted">Nothing has settled yet: no chart.</p>'
    first, last = min(minutes), max(minutes)
    bin_minutes, ready = bars(summary.ready_per_minute, first, last)
    _, failed = bars(summary.failed_per_minute, first, last)
    top = max(r + f for r, f in zip(ready, failed, strict=True)) or 1
    left, plot_w, plot_h = 56, width - 66, height - 44
    step = plot_w / len(ready)
    parts = [
        f'<svg viewBox="0 0 {width} {height}" width="100%" role="img" '
        f'aria-label="assets settled per {bin_minutes} min">',
        f'<line x1="{left}" y1="{10 + plot_h}" x2="{left + plot_w}" y2="{10 + plot_h}" stroke="#bcccdc"/>',
        f'<text x="{left - 6}" y="16" text-anchor="end" class="axis">{top:,}</text>',
        f'<text x="{left - 6}" y="{10 + plot_h}" text-anchor="end" class="axis">0</text>',
        f'<text x="{left}" y="{height - 6}" class="axis">{_when(first)}</text>',
        f'<text x="{left + plot_w}" y="{height - 6}" text-anchor="end" class="axis">{_when(last + 1)} UTC</text>',
    ]
    for n, (r, f) in enumerate(zip(ready, failed, strict=True)):
        x = left + n * step
        w = max(step - 1, 0.5)
        tip = f"{_when(first + n * bin_minutes)}: {r:,} ready, {f:,} failed or rejected"
        y: float = 10 + plot_h
        for count, colour in ((r, COLOURS["ready"]), (f, COLOURS["failed"])):
            if count:
                h = count / top * plot_h
                y -= h
                parts.append(
                    f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" fill="{colour}">'
                    f"<title>{escape(tip)}</title></rect>"
                )
    parts.append("</svg>")
    per = "minute" if bin_minutes == 1 else f"{bin_minutes} minutes"
    peak = max(ready) / bin_minutes
    return "".join(parts) + (
        f'<p class="muted">Each bar is one {per}. Peak: {peak:,.1f} ready a minute. '
        f"Time is when each asset last changed (for a settled asset, when it settled).</p>"
    )


STYLE = """
body{font:15px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2rem auto;max-width:960px;
color:#102a43;padding:0 1rem}
h1{font-size:1.5rem;margin-bottom:.2rem}h2{font-size:1.15rem;margin-top:2rem;border-bottom:1px solid #d9e2ec}
table{border-collapse:collapse;width:100%}td,th{padding:.25rem .5rem;text-align:left;vertical-align:top}
th{background:#f0f4f8}tr:nth-child(even) td{background:#f8fafc}td.n,th.n{text-align:right;
font-variant-numeric:tabular-nums}.muted{color:#627d98;font-size:.9rem}.bar{height:14px;display:flex;
border-radius:3px;overflow:hidden;margin:.6rem 0}.bar span{display:block;height:100%}
code{font-size:.85rem;word-break:break-all}.axis{font-size:11px;fill:#627d98}
""".strip()


def render_html(summary: ReportSummary, stack: str, generated_at: float) -> str:
    """The whole page as one string."""
    states = [s.value for s in STATE_ORDER] + sorted(set(summary.counts) - {s.value for s in STATE_ORDER})
    out = _head(summary, stack, generated_at, states)
    out += _counts_table(summary, states)
    out.append("<h2>Throughput over time</h2>")
    out.append(chart_svg(summary))
    out += _reasons_tables(summary)
    out += _not_carried_section(summary)
    out += _tracks_section(summary)
    out += _drift_section(summary)
    out.append('<p class="muted">migrator report --html. The CSV or JSON Lines report has every asset.</p>')
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def _head(summary: ReportSummary, stack: str, generated_at: float, states: list[str]) -> list[str]:
    """The document's head, the title and the headline figures, with a bar of the states' shares."""
    total = summary.total
    when = datetime.fromtimestamp(generated_at, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    done = summary.counts.get(State.READY, 0) + summary.counts.get(State.REJECTED, 0)
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        # No network: a policy that forbids every fetch, should anything slip in.
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">",
        f"<title>Migration report: {escape(stack)}</title>",
        f"<style>{STYLE}</style></head><body>",
        f"<h1>Migration report: {escape(stack)}</h1>",
        f'<p class="muted">Read from the ledger at {when}: every asset, one scan.</p>',
        f"<p><strong>{total:,}</strong> assets; <strong>{done:,}</strong> settled for good "
        f"({_percent(done, total)}), {summary.counts.get(State.READY, 0):,} ready.</p>",
        '<div class="bar" aria-hidden="true">',
    ]
    for state in states:
        count = summary.counts.get(state, 0)
        if count:
            colour = COLOURS.get(state, "#cbd2d9")
            out.append(f'<span style="width:{count / total * 100:.3f}%;background:{colour}"></span>')
    out.append("</div>")
    return out


def _counts_table(summary: ReportSummary, states: list[str]) -> list[str]:
    total = summary.total
    out = [
        '<h2>Assets by state</h2><table id="counts"><tr><th>state</th><th class="n">assets</th>',
        '<th class="n">share</th></tr>',
    ]
    for state in states:
        count = summary.counts.get(state, 0)
        out.append(
            f'<tr data-state="{escape(state)}"><td>{escape(state)}</td><td class="n">{count:,}</td>'
            f'<td class="n">{_percent(count, total)}</td></tr>'
        )
    out.append(f'<tr><th>all</th><th class="n" id="total">{total:,}</th><th></th></tr></table>')
    return out


def _reasons_tables(summary: ReportSummary) -> list[str]:
    """Why assets are rejected, then failed: the commonest error texts first."""
    out: list[str] = []
    for state in (State.REJECTED.value, State.FAILED.value):
        reasons = summary.reasons[state]
        out.append(f"<h2>Why assets are {state}</h2>")
        if not reasons:
            out.append(f'<p class="muted">No asset is {state}.</p>')
            continue
        out.append(f'<table id="{state}-reasons"><tr><th class="n">assets</th><th>error</th></tr>')
        for text, count in reasons.most_common(MAX_REASONS):
            out.append(f'<tr><td class="n">{count:,}</td><td><code>{escape(text)}</code></td></tr>')
        if len(reasons) > MAX_REASONS:
            rest = sum(reasons.values()) - sum(c for _, c in reasons.most_common(MAX_REASONS))
            out.append(f'<tr><td class="n">{rest:,}</td><td class="muted">other errors</td></tr>')
        out.append("</table>")
    return out


def _not_carried_section(summary: ReportSummary) -> list[str]:
    """How the assets play at the provider, and what of the rows it could not carry."""
    out = ["<h2>What the provider could not carry</h2>"]
    played = ", ".join(f"{count:,} {escape(way)}" for way, count in sorted(summary.playback.items()))
    if played:
        out.append(f"<p>Played at the provider: {played}.</p>")
    if not summary.noted:
        out.append('<p class="muted">Every field of every row went to its place at the provider.</p>')
    else:
        out.append(
            f"<p>{summary.noted:,} assets with something cut, left out or kept only in the ledger"
            " (the CSV or JSON Lines report lists each asset's notes):</p>"
        )
        out.append('<table id="notes"><tr><th class="n">assets</th><th>note</th></tr>')
        for text, count in summary.notes.most_common(MAX_REASONS):
            out.append(f'<tr><td class="n">{count:,}</td><td><code>{escape(text)}</code></td></tr>')
        out.append("</table>")
    return out


def _drift_section(summary: ReportSummary) -> list[str]:
    """The assets whose duration at the provider differs from the source's, the largest drift first."""
    out = ["<h2>Duration drift</h2>"]
    if not summary.drift_count:
        out.append('<p class="muted">No asset drifted: every duration the provider measured matches.</p>')
    else:
        shown = summary.drifts()
        out.append(
            f"<p>{summary.drift_count:,} assets whose duration at the provider differs from the source's"
            f"{f'; the {len(shown)} largest' if len(shown) < summary.drift_count else ''}:</p>"
        )
        out.append(
            '<table id="drift"><tr><th>id</th><th class="n">drift s</th><th class="n">source s</th>'
            '<th class="n">provider s</th><th>provider id</th></tr>'
        )
        for d in shown:
            out.append(
                f"<tr><td><code>{escape(d.asset_id)}</code></td><td class='n'>{d.drift_s:+.3f}</td>"
                f"<td class='n'>{_seconds(d.duration_s)}</td><td class='n'>{_seconds(d.provider_duration_s)}</td>"
                f"<td><code>{escape(str(d.remote_id or ''))}</code></td></tr>"
            )
        out.append("</table>")
    return out


def _tracks_section(summary: ReportSummary) -> list[str]:
    """Caption tracks: how many in each state, why tracks failed, and which (asset, track) failed."""
    out = ["<h2>Caption tracks</h2>"]
    if not summary.assets_with_tracks:
        return [*out, '<p class="muted">No asset has caption tracks at the provider yet.</p>']
    t = summary.tracks
    out.append(
        f'<p id="tracks">{sum(t.values()):,} tracks on {summary.assets_with_tracks:,} assets: '
        f"<strong>{t.get('attached', 0):,}</strong> attached, {t.get('pending', 0):,} pending, "
        f"<strong>{t.get('failed', 0):,}</strong> failed.</p>"
    )
    if summary.track_reasons:
        out.append('<table id="track-reasons"><tr><th class="n">tracks</th><th>why they failed</th></tr>')
        for text, count in summary.track_reasons.most_common(MAX_REASONS):
            out.append(f'<tr><td class="n">{count:,}</td><td><code>{escape(text)}</code></td></tr>')
        out.append("</table>")
        out.append('<table id="track-failures"><tr><th>asset</th><th>track</th><th>reason</th></tr>')
        for asset_id, key, reason in summary.track_failures:
            out.append(f"<tr><td><code>{escape(asset_id)}</code></td><td><code>{escape(key)}</code></td>")
            out.append(f"<td>{escape(reason)}</td></tr>")
        out.append("</table>")
        if t.get("failed", 0) > len(summary.track_failures):
            out.append(
                f'<p class="muted">The first {len(summary.track_failures):,} failed tracks; the report has all.</p>'
            )
    return out


def _percent(part: int, whole: int) -> str:
    return f"{part / whole * 100:.1f} %" if whole else "–"


def _seconds(value: float | None) -> str:
    return "" if value is None else f"{value:.3f}"
