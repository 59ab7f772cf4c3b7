"""Chapters kept as a file (issue 42): a WebVTT text track of kind chapters, as Brightcove ("Managing Text Tracks",
`kind` chapters) and JW Player (a text track's `track_kind` chapters) keep them. Each cue is a chapter: its start,
and its text the chapter's title (W3C, "WebVTT: The Web Video Text Tracks Format", chapter cues: "The cue text of
each cue represents a chapter title"), the cues in order and not overlapping.

Which library video has chapters is the `library_chapters_every` knob's (0: none); the file is computed from the
video's index like the rest of the library (infra/sim/library.py). Titles carry characters a naive pipeline would
mangle, never a character WebVTT would read as markup (`&`, `<`) or a cue arrow.
"""

from __future__ import annotations

from ..config import SimConfig
from ..library import Item

TITLES = ("Intro", "Welcome « live »", "The demo — part 2", "Wrap-up", "Bonus: 日本語")


def has_chapters(cfg: SimConfig, index: int) -> bool:
    """Whether library video `index` has a chapters track: every Nth, from the second (0: none)."""
    every = cfg.library_chapters_every
    return every > 0 and index % every == 1 % every


def cues(video: Item) -> list[tuple[float, float, str]]:
    """(start, end, title) of the video's chapters: three to five, the first at 0, spread over whole seconds."""
    count = 3 + video.index % 3
    starts = [float(int(k * video.duration // count)) for k in range(count)]
    ends = [*starts[1:], float(video.duration)]
    return [(start, end, TITLES[k % len(TITLES)]) for k, (start, end) in enumerate(zip(starts, ends, strict=True))]


def _stamp(seconds: float) -> str:
    millis = round(seconds * 1000)
    hours, rest = divmod(millis, 3_600_000)
    minutes, rest = divmod(rest, 60_000)
    return f"{hours:02d}:{minutes:02d}:{rest // 1000:02d}.{rest % 1000:03d}"


def vtt(video: Item) -> bytes:
    """The video's chapters file: a WEBVTT header, then a numbered cue a chapter."""
    blocks = [
        f"{n}\n{_stamp(start)} --> {_stamp(end)}\n{title}" for n, (start, end, title) in enumerate(cues(video), 1)
    ]
    return ("WEBVTT\n\n" + "\n\n".join(blocks) + "\n").encode()
