"""What `migrator plan` says of what a viewer sees (issue 42): thumbnails, chapters, collections and publish dates,
counted from the inventory, and per target how many will be carried and how many noted (pure).

The inventory's rows are read as the tracks worker arms them (`migrator.extras.extras_of`): a row's thumbnail is its
`thumbnail_url`; its chapters are its inline list, else its first chapters track (any other chapters track is
noted: one list a video); each collection it names is one membership (a "place"), and each distinct collection
(the source platform and its id: `extras.collection_key`) is one collection to make. Per target, the provider
class's facts (`takes_thumbnail`, `takes_chapters`, `takes_collections`, `one_collection_per_video`,
`collections_instead`, `published_field`: providers/base.py, "--- extras") say what is carried and what is noted
(the entry's settled state where the target cannot carry it, with what was done instead).

Distinct collections are kept in memory by key (16 hex characters each): a library has far fewer collections
than videos, each of which holds many.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from migrator.extras import CHAPTERS, COLLECTION, THUMBNAIL, extras_of
from migrator.messages import AssetMessage


@dataclass
class ExtrasCount:
    """The inventory's extras, counted a row at a time (`add`)."""

    thumbnails: int = 0  # rows with a thumbnail image
    chapters: int = 0  # rows with chapters: inline, or a chapters track
    chapters_surplus: int = 0  # chapters tracks past the one a row carries (noted on every target)
    memberships: int = 0  # (row, collection) places
    assets_in_collections: int = 0  # rows that name at least one collection
    published: int = 0  # rows with an original publish time
    kinds: dict[str, str] = field(default_factory=dict)  # each distinct collection's key -> its kind
    firsts: set[str] = field(default_factory=set)  # the keys of collections that come first in some row

    def add(self, msg: AssetMessage) -> None:
        places = 0
        for extra in extras_of(msg):
            if extra.kind == THUMBNAIL and extra.url:
                self.thumbnails += 1
            elif extra.kind == CHAPTERS:
                if extra.surplus is None:
                    self.chapters += 1
                else:
                    self.chapters_surplus += 1
            elif extra.kind == COLLECTION and extra.collection is not None:
                key = extra.collection_key
                self.kinds.setdefault(key, extra.collection.kind)
                if not places:
                    self.firsts.add(key)
                places += 1
        self.memberships += places
        self.assets_in_collections += int(places > 0)
        self.published += int(msg.published_at is not None)

    @property
    def collections(self) -> int:
        return len(self.kinds)

    def by_kind(self) -> dict[str, int]:
        """Distinct collections by their kind at the source, the most first."""
        return dict(Counter(self.kinds.values()).most_common())

    @property
    def any(self) -> bool:
        return bool(self.thumbnails or self.chapters or self.chapters_surplus or self.memberships or self.published)


@dataclass(frozen=True)
class TargetFacts:
    """What a target does with each extra: its Provider class's facts (providers/base.py, "--- extras")."""

    name: str
    takes_thumbnail: str | None = None  # "image" | "time" | None
    takes_chapters: bool = False
    takes_collections: bool = False
    one_collection_per_video: bool = False
    collections_instead: str = "kept in the ledger only"
    published_field: str | None = None

    @classmethod
    def of(cls, name: str, provider_class) -> TargetFacts:
        return cls(
            name,
            takes_thumbnail=getattr(provider_class, "takes_thumbnail", None),
            takes_chapters=bool(getattr(provider_class, "takes_chapters", False)),
            takes_collections=bool(getattr(provider_class, "takes_collections", False)),
            one_collection_per_video=bool(getattr(provider_class, "one_collection_per_video", False)),
            collections_instead=str(getattr(provider_class, "collections_instead", "kept in the ledger only")),
            published_field=getattr(provider_class, "published_field", None),
        )


@dataclass(frozen=True)
class Carried:
    """How many of one extra a target carries, how many it notes, and in what words (how it carries them, or
    what it does instead)."""

    carried: int
    noted: int
    how: str

    def as_dict(self) -> dict:
        return {"carried": self.carried, "noted": self.noted, "how": self.how}


@dataclass(frozen=True)
class ExtrasOutlook:
    """What becomes of the inventory's extras on one target."""

    thumbnails: Carried
    chapters: Carried
    memberships: Carried
    published: Carried
    collections_made: int

    def as_dict(self) -> dict:
        return {
            "thumbnails": self.thumbnails.as_dict(),
            "chapters": self.chapters.as_dict(),
            "memberships": self.memberships.as_dict(),
            "published": self.published.as_dict(),
            "collections_made": self.collections_made,
        }

    def line(self) -> str:
        """One line: each extra's carried and noted counts, and the collections to make (the parts with any)."""
        parts = []
        for what, counted in (
            ("thumbnails", self.thumbnails),
            ("chapters", self.chapters),
            ("places", self.memberships),
            ("publish dates", self.published),
        ):
            if counted.carried or counted.noted:
                parts.append(
                    f"{what} {counted.carried:,} carried" + (f", {counted.noted:,} noted" if counted.noted else "")
                )
            if what == "places" and self.collections_made:
                parts.append(f"collections {self.collections_made:,} made")
        return "; ".join(parts)

    def notes(self) -> list[str]:
        """Why each noted extra is noted (only those with any)."""
        named = (
            ("thumbnails", self.thumbnails),
            ("chapters", self.chapters),
            ("places", self.memberships),
            ("publish dates", self.published),
        )
        return [f"{what} noted: {counted.how}" for what, counted in named if counted.noted]


def outlook(count: ExtrasCount, facts: TargetFacts) -> ExtrasOutlook:
    """What becomes of `count` on the target `facts` describes: as the tracks worker arms and works each extra."""
    return ExtrasOutlook(
        _thumbnails(count.thumbnails, facts),
        _chapters(count, facts),
        _memberships(count, facts),
        _published(count.published, facts),
        _made(count, facts),
    )


def _thumbnails(n: int, facts: TargetFacts) -> Carried:
    if facts.takes_thumbnail == "image":
        return Carried(n, 0, "set as the video's poster image")
    if facts.takes_thumbnail == "time":
        return Carried(
            0,
            n,
            f"{facts.name} takes a poster time only: the frame at the row's poster time is set, the image is kept"
            " in the stack's bucket",
        )
    return Carried(0, n, f"{facts.name} takes no thumbnail: the image is kept in the stack's bucket")


def _chapters(count: ExtrasCount, facts: TargetFacts) -> Carried:
    surplus = (
        f"; {count.chapters_surplus:,} chapters tracks past a row's first (one list a video)"
        if count.chapters_surplus
        else ""
    )
    if facts.takes_chapters:
        return Carried(count.chapters, count.chapters_surplus, "written as the video's chapters" + surplus)
    return Carried(
        0,
        count.chapters + count.chapters_surplus,
        f"{facts.name} takes no chapters: the WebVTT file is kept in the stack's bucket" + surplus,
    )


def _memberships(count: ExtrasCount, facts: TargetFacts) -> Carried:
    if not facts.takes_collections:
        return Carried(0, count.memberships, f"{facts.name} keeps no collections: {facts.collections_instead}")
    if facts.one_collection_per_video:
        return Carried(
            count.assets_in_collections,
            count.memberships - count.assets_in_collections,
            f"{facts.name} keeps a video in one collection only: it is placed in the row's first",
        )
    return Carried(count.memberships, 0, "each video placed in each of its collections")


def _made(count: ExtrasCount, facts: TargetFacts) -> int:
    if not facts.takes_collections:
        return 0
    return len(count.firsts) if facts.one_collection_per_video else count.collections


def _published(n: int, facts: TargetFacts) -> Carried:
    if facts.published_field:
        return Carried(n, 0, f"set in the create's {facts.published_field}")
    return Carried(
        0, n, f"{facts.name} has no publish date field: kept in its metadata where it keeps the row's, else noted"
    )
