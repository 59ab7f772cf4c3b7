"""`migrator doctor --target T`, what a viewer sees (issue 42): the extras' looks, made as the tracks worker makes them.

Before the tracks worker sets a thumbnail, chapters or a place in a collection (functions/migrator/extrawork.py), it
looks at what the target holds: `thumbnail_state` where the target takes an image, `chapters_of` where it takes
chapters, and before it makes a collection the lookup a lost answer needs (`find_collection`, by our reference where
the target keeps one, else by name). Those answers are read by the adapter as its documents say; here the looks are
made once, on the sample video doctor read (first_contact_target.py), and the lookup for a name and a reference no
collection carries (like the lost-create lookup's PROBE_ASSET: it must find nothing). Each gets a line, and each
answer is held to its declaration (shapes/targets.py) with the others.

Read-only like the rest of doctor: nothing that makes or places a collection is called. A look that would finish
what an earlier pass left half made (Vimeo deletes a custom picture never made active; JW Player promotes its own
thumbnail, publishes a draft chapters track, deletes one whose file never came) asks for a write the watch refuses
before it is sent: that line is a SKIP saying so, and the answer the look read is still checked.
"""

from __future__ import annotations

from collections.abc import Callable

from migrator.extrawork import DEFAULT_CHAPTERS_LANGUAGE
from migrator.providers.extras import RemoteCollection
from migrator.tracks import TrackOutcome, TrackResult

from .first_contact import FAIL, PASS, SKIP, Line, NotSent, line, refusal

# A collection name and reference no collection carries: our references are 16 hex digits (ledger/collections.py),
# so one with a slash and letters past f is none of ours; a name with a stamp and these words is no one's.
PROBE_COLLECTION = "migrator doctor first contact {stamp}"
PROBE_COLLECTION_REF = "doctor/first-contact-{stamp}"
CALL_FIX = "the credentials' rights to this read, then report this line"
LOOKUP_FIX = (
    "a collection's making could adopt another one, and its videos be placed there: report this line before"
    " migrating collections"
)


def video_looks(provider, remote_id: str) -> list[Line]:
    """The thumbnail's and the chapters' looks on one video, where the target takes them."""
    return [thumbnail_look(provider, remote_id), chapters_look(provider, remote_id)]


def thumbnail_look(provider, remote_id: str) -> Line:
    name = f"{provider.name} thumbnail look of one video"
    if provider.takes_thumbnail != "image":
        why = (
            "takes a poster frame's time only: the worker sets it without a look"
            if provider.takes_thumbnail == "time"
            else "takes no thumbnail: the worker keeps the image in the stack's bucket, noted"
        )
        return line(name, SKIP, f"this provider {why}")
    try:
        seen = provider.thumbnail_state(remote_id)
    except NotSent as exc:
        return refused(name, exc, "the look")
    if isinstance(seen, TrackOutcome):
        return outcome_line(name, remote_id, seen)
    held = f"a custom one set by a pass ({seen.digest or 'unnamed'})" if seen.custom else "none set by a pass"
    return line(name, PASS, f"{remote_id}: answered and read; {held}")


def chapters_look(provider, remote_id: str) -> Line:
    name = f"{provider.name} chapters look of one video"
    if not provider.takes_chapters:
        return line(
            name, SKIP, "this provider takes no chapters: the worker keeps the file in the stack's bucket, noted"
        )
    try:
        seen = provider.chapters_of(remote_id, DEFAULT_CHAPTERS_LANGUAGE)
    except NotSent as exc:
        return refused(name, exc, "the look")
    if isinstance(seen, TrackOutcome):
        return outcome_line(name, remote_id, seen)
    return line(name, PASS, f"{remote_id}: answered and read; {seen.count} held ({DEFAULT_CHAPTERS_LANGUAGE})")


def collection_lookups(provider, clock: Callable[[], float]) -> list[Line]:
    """The lookup before a collection is made, for a name and reference no collection carries: it must find none."""
    name = f"{provider.name} collection lookup"
    if not provider.takes_collections:
        return [line(name, SKIP, f"this provider keeps no collections: {provider.collections_instead}")]
    stamp = int(clock())
    title, ref = PROBE_COLLECTION.format(stamp=stamp), PROBE_COLLECTION_REF.format(stamp=stamp)
    lookups = LOOKUPS.get(provider.name, find_collection)(provider, title, ref)
    return [lookup_line(f"{name}{f', {what}' if what else ''}", look) for what, look in lookups]


def find_collection(provider, title: str, ref: str) -> list[tuple[str, Callable[[], object]]]:
    return [("", lambda: provider.find_collection(title, ref))]


def vimeo_lookups(provider, title: str, ref: str) -> list[tuple[str, Callable[[], object]]]:
    """Vimeo's `find_collection` asks nothing (a name may be a folder's and a showcase's): its `create_collection`
    looks the name up where it makes one, in the folders or the showcases; each is asked here."""
    from migrator.providers.vimeo_extras import FOLDER, SHOWCASE

    return [
        ("a folder", lambda: provider._named(FOLDER, title)),
        ("a showcase", lambda: provider._named(SHOWCASE, title)),
    ]


LOOKUPS: dict[str, Callable[..., list[tuple[str, Callable[[], object]]]]] = {"vimeo": vimeo_lookups}


def lookup_line(name: str, look: Callable[[], object]) -> Line:
    try:
        found = look()
    except NotSent as exc:
        return refused(name, exc, "the lookup")
    if found is None:
        return line(name, PASS, "a name and a reference no collection carries are not found, as they must not be")
    if isinstance(found, TrackOutcome):
        return line(name, FAIL, f"{found.kind.value}: {found.error or '?'}", CALL_FIX)
    remote = found.remote_id if isinstance(found, RemoteCollection) else str(found)
    detail = f"a name and a reference no collection carries were 'found' as {remote}: the lookup's match is not applied"
    return line(name, FAIL, detail, LOOKUP_FIX)


def outcome_line(name: str, remote_id: str, seen: TrackOutcome) -> Line:
    """A look answered with why not: WAITING is an answer read (the worker would wait: the target is still reading
    what an earlier pass sent); the rest are failures of the call (no answer, refused, not found)."""
    said = f"{remote_id}: {seen.kind.value}: {seen.error or '?'}"
    if seen.kind is TrackResult.WAITING:
        return line(name, PASS, f"answered and read; the worker would wait ({said})")
    return line(name, FAIL, said, CALL_FIX)


def refused(name: str, exc: NotSent, what: str) -> Line:
    """A read not declared is the declarations' gap (FAIL); a write is a look finishing a half-made extra (SKIP)."""
    if exc.method == "GET":
        return line(name, FAIL, refusal(exc, what), "report this line")
    detail = (
        f"{what} read the answer and would finish what an earlier pass left half made with {exc.method} {exc.path},"
        " a write this check never sends: not sent (the answer is checked below)"
    )
    return line(name, SKIP, detail)
