"""Sidecar files beside a video in an object store or a file host (issue 42): its poster image and its chapters, found
by name in the listing that lists the video, and its folder as a collection. Pure: the sources list, this matches.

Which names count, beside a video `<stem>.<extension>` (the stem: the video's whole path without its last
extension; `talk.v2.mp4`'s is `talk.v2`):

- the poster: `<stem>.jpg`, `<stem>.jpeg`, `<stem>.png` or `<stem>.webp`, the extension in any case (`Talk.JPG`);
  where several are there, the first in that order. The target checks the image by its bytes, never its name;
- the chapters: `<stem>.chapters.vtt` (any case), a WebVTT file whose cues are the chapters (each cue's start and
  text), carried as a track of kind chapters, read by the tracks worker (extras.read_chapters).

Names that do not count: the video's whole name and an image extension (`talk.mp4.jpg`), any other suffix
(`talk-thumb.jpg`, `talk.en.jpg`, `talk.chapters.srt`), a file in another folder. A sidecar without its video is
listed as what it is, no video (skipped); two videos of one stem (`talk.mp4`, `talk.mov`) share its sidecars.
The stem is compared as the store compares names: exactly in S3, Cloud Storage and Azure, without case in Dropbox.

One pass, memory flat: every name that starts with `<stem>.` lies together in the listing's (lexicographic) order,
so a page of the listing holds a video's sidecars but where that stretch crosses the page's first or last name
(`boundary_stems`): those stems alone are listed again by prefix, one request each, at most two a page. A
`SidecarIndex` keeps only the sidecar names of one page; `Pairing` hands each video on as soon as the listing has
passed its stretch, for a source that reads a page as a stream (Azure's List Blobs).
"""

from __future__ import annotations

import posixpath
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass

# In the order one is chosen where several are there.
IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".webp")
CHAPTERS_SUFFIX = ".chapters.vtt"
IMAGE, CHAPTERS = "image", "chapters"


@dataclass(frozen=True)
class Sidecars:
    """The names of a video's sidecars found (None: none)."""

    image: str | None = None
    chapters: str | None = None


NO_SIDECARS = Sidecars()


def stem_of(name: str) -> str:
    """The video's path without its last extension (the path itself where its file name has none)."""
    folder, base = posixpath.split(name)
    head, dot, _ = base.rpartition(".")
    return posixpath.join(folder, head) if dot and head else name


def sidecar_of(name: str) -> tuple[str, str, int] | None:
    """(IMAGE or CHAPTERS, the stem it belongs to, its rank among its kind) for a name of a sidecar's form, else
    None. A name that is nothing but the suffix (`.jpg`) belongs to no stem."""
    lower = name.lower()
    if lower.endswith(CHAPTERS_SUFFIX):
        stem = name[: -len(CHAPTERS_SUFFIX)]
        return (CHAPTERS, stem, 0) if posixpath.basename(stem) else None
    for rank, suffix in enumerate(IMAGE_SUFFIXES):
        if lower.endswith(suffix):
            stem = name[: -len(suffix)]
            return (IMAGE, stem, rank) if posixpath.basename(stem) else None
    return None


class SidecarIndex:
    """The sidecar names of a stretch of a listing, by stem (`fold`: without case, as Dropbox compares paths)."""

    def __init__(self, fold: bool = False):
        self.fold = fold
        self._found: dict[str, dict[str, tuple[int, str]]] = {}

    def _key(self, stem: str) -> str:
        return stem.lower() if self.fold else stem

    def add(self, name: str) -> bool:
        """Keep `name` if it has a sidecar's form; whether it has."""
        found = sidecar_of(name)
        if found is None:
            return False
        kind, stem, rank = found
        held = self._found.setdefault(self._key(stem), {})
        if kind not in held or (rank, name) < held[kind]:
            held[kind] = (rank, name)
        return True

    def add_all(self, names: Iterable[str]) -> None:
        for name in names:
            self.add(name)

    def of(self, video: str) -> Sidecars:
        """The sidecars of the video named `video` (its path as the listing gives it)."""
        held = self._found.get(self._key(stem_of(video)), {})
        image, chapters = held.get(IMAGE), held.get(CHAPTERS)
        return Sidecars(image[1] if image else None, chapters[1] if chapters else None)


def shares(name: str | None, stem: str) -> bool:
    """Whether `name` lies in the stretch of the listing a stem's names take: the stem itself (a video without an
    extension) or a name that starts with `<stem>.`."""
    return name is not None and (name == stem or name.startswith(stem + "."))


def boundary_stems(videos: Iterable[str], first: str | None, last: str | None, before: bool, after: bool) -> list[str]:
    """The stems of `videos` (a page's, in the listing's order) whose sidecars may lie on another page: the page's
    `first` name shares the stem and a page came `before`, or its `last` does and one comes `after`. Each is
    listed again by the prefix `<stem>.`, once."""
    stems: list[str] = []
    for video in videos:
        stem = stem_of(video)
        crosses = (before and shares(first, stem)) or (after and shares(last, stem))
        if crosses and stem not in stems:
            stems.append(stem)
    return stems


class Pairing:
    """A page read as a stream: each name listed is `see`n, in the listing's order, and what is made of it `hold`,
    with the video's name where it is one; what is held is handed on, in the order held (`finish(sidecars)`), once
    the listing has passed the stretch of the video's stem, or at the page's `end`. A stem that crosses the
    page's first or last name is looked up (`lookup(prefix)` -> the names under it), once."""

    def __init__(self, lookup: Callable[[str], Iterable[str]], before: bool, fold: bool = False):
        self.index = SidecarIndex(fold)
        self.lookup, self.before = lookup, before
        self.first: str | None = None
        self.last: str | None = None
        self._held: deque[tuple[str | None, Callable[[Sidecars], None]]] = deque()
        self._looked: set[str] = set()

    def see(self, name: str) -> None:
        if self.first is None:
            self.first = name
        self.last = name
        self._release(lambda stem: not shares(name, stem), after=False)
        self.index.add(name)

    def hold(self, video: str | None, finish: Callable[[Sidecars], None]) -> None:
        """`finish` called with the sidecars of `video` once they are all seen (at once, for None, when nothing is
        held before it)."""
        self._held.append((video, finish))
        self._release(lambda stem: False, after=False)

    def end(self, after: bool) -> None:
        """The page is read: what is still held is handed on (a stem at its end looked up where a page follows)."""
        self._release(lambda stem: True, after=after)

    def _release(self, passed: Callable[[str], bool], after: bool) -> None:
        while self._held:
            video, finish = self._held[0]
            stem = stem_of(video) if video is not None else None
            if stem is not None and not passed(stem):
                return
            self._held.popleft()
            if stem is None:
                finish(NO_SIDECARS)
                continue
            crosses = (self.before and shares(self.first, stem)) or (after and shares(self.last, stem))
            if crosses and stem not in self._looked:
                self._looked.add(stem)
                self.index.add_all(self.lookup(stem + "."))
            finish(self.index.of(video or ""))


def folder_collection(store_path: str, name: str, prefix: str) -> tuple[str, str] | None:
    """(id, name) of the folder that holds object `name` listed under `prefix`, as a collection of kind folder; None
    at the top of the listing. The id is the folder's whole path in the store (`store_path`: the bucket, or the
    account and container, then the folder), the same from every listing; the name is the folder path below the
    listing's prefix, as the row's `folder` says it. A store's folders are the `/`-delimited prefixes of its names:
    the only structure an owner gives objects there, and what its console shows as folders."""
    below = name[len(prefix) :] if name.startswith(prefix) else name
    folder = posixpath.dirname(below).strip("/")
    if not folder:
        return None
    whole = posixpath.dirname(name).strip("/")
    return f"{store_path.strip('/')}/{whole}", folder
