"""Plain text files (HTML, Markdown, YAML, templates of every kind) streamed in windows of about a megabyte.

A small file is one record. A large one is cut into records at line boundaries, and a cut must never fall inside an
embed: a script embed or a responsive wrapper spans lines, and its two halves would each be left alone. The rewrite
is opaque (and records what it did, so it must see each text once), so the cut is chosen by where embeds are:
`locate` (by default the source forms' own finder, `forms.find`, which is what the engine matches) is run over the
HOLD characters either side of a candidate cut, and the cut moves back to the start of the line where any embed
crossing it begins, until none does. Every character is rewritten exactly once.

Why not a rule on the text alone: a blank line can sit inside a pasted script embed, and a stretch of HOLD
characters without a "<" never occurs in HTML, so such a rule either cuts embeds or never cuts an HTML file at all.

The limits: an embed longer than HOLD (64 KB; documented embeds are a few KB at most) is not seen whole around a cut
and may be cut, and is then left as it was; where every line boundary of WINDOW_LIMIT characters sits inside an
embed (nothing but embeds, back to back, for 16 MB) the text is cut at a line boundary regardless; and one line is
never split, so a single line of hundreds of megabytes (minified HTML) is held whole.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TextIO

from . import Changed, TextRewrite

WINDOW = 1 << 20  # characters a record is cut at, about
HOLD = 1 << 16  # the longest embed a cut is sure to miss
WINDOW_LIMIT = 16 * WINDOW

Locate = Callable[[str], Iterable[tuple[int, int]]]  # a text -> the (start, end) spans of the embeds in it


def embed_spans(text: str) -> list[tuple[int, int]]:
    """Where the source forms find embeds in `text` (the engine runs the same forms)."""
    from .. import forms

    return [embed.span for embed in forms.find(text)]


def clear_cut(text: str, start: int, hold: int, locate: Locate) -> int:
    """The last line boundary at or before `start` that no embed crosses (0 when there is none): embeds are looked
    for in the `hold` characters either side of each candidate."""
    cut = text.rfind("\n", 0, start) + 1
    while cut:
        low = max(0, cut - hold)
        crossing = [s for s, e in locate(text[low : cut + hold]) if low + s < cut < low + e]
        if not crossing:
            return cut
        cut = text.rfind("\n", 0, low + min(crossing)) + 1
    return 0


def run(
    src: TextIO,
    dst: TextIO,
    rewrite: TextRewrite,
    changed: Changed,
    *,
    locate: Locate | None = None,
    window: int | None = None,
    hold: int | None = None,
) -> None:
    find = locate or embed_spans
    window = window or WINDOW
    hold = hold or HOLD
    line = 1
    buffer = ""
    want = window + hold
    at_end = False
    while True:
        if not at_end and len(buffer) < want:
            block = src.read(want - len(buffer))
            at_end = not block
            buffer += block
            if not at_end and len(buffer) < want:
                continue  # a short read (a pipe): read on
        if not buffer:
            return
        if at_end:
            record, buffer = buffer, ""
        else:
            cut = clear_cut(buffer, len(buffer) - hold, hold, find)
            if not cut and want < WINDOW_LIMIT:
                want += window  # an embed crosses every boundary seen yet, or there is no boundary: read on
                continue
            if not cut:
                # Embeds back to back for WINDOW_LIMIT: cut at a line boundary regardless; with none, read on.
                cut = buffer.rfind("\n", 0, len(buffer) - hold) + 1
                if not cut:
                    want += window
                    continue
            record, buffer = buffer[:cut], buffer[cut:]
            want = window + hold
        rewritten = rewrite(record)
        dst.write(rewritten)
        if rewritten != record:
            changed(line, record, rewritten)
        line += record.count("\n")
        if at_end and not buffer:
            return
