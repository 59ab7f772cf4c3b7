"""Who may watch a Kaltura entry, as the row's privacy (pure; sources/kaltura.py reads what it needs).

"Kaltura entries carry no public or private flag of their own": who may watch is the categories' (KalturaCategory
`privacy`: 1 ALL, 2 AUTHENTICATED_USERS, 3 MEMBERS_ONLY; `appearInList`: 1 PARTNER_ONLY, 3 CATEGORY_MEMBERS_ONLY;
`contributionPolicy` says who may add entries, not who may watch), the widest of them ("the category with the
lowest restriction level the content is associated with", developer.kaltura.com "Content Categories Management"),
narrowed by the entry's moderation, its `displayInSearch`, an access control profile with rules, and its
scheduling window. Never wider than Kaltura's: what is not understood is private.

The scheduling window (KalturaBaseEntry `startDate` / `endDate`, epoch seconds, "null when not set, send -1 to
remove", KalturaApiClient 23.10.0): "a start date (sunrise) and an end date (sunset) ... the time window during
which viewers can access the media. If users try to access the entry outside of this window, they'll see an
error message" (knowledge.kaltura.com "Schedule availability of an entry"; kaltura/server
KSecureEntryHelper::validateScheduling, NOT_SCHEDULED_NOW). No target keeps a window, so:
- not yet open (`startDate` ahead): private, the note naming the date Kaltura would publish it, for the operator
  to publish it at the target then;
- closed (`endDate` passed): private;
- open, but closing (`endDate` ahead): signed, as a restricting access control profile is (a target's signed
  playback leaves the owner's backend to keep the window), the note naming the date;
- open for good (`startDate` passed, no `endDate`), or none: the categories' privacy, unchanged.
A date that is not a whole number of seconds is a window this tool cannot read: private. Null, absent, or 0 and
below (-1 is the request's "remove") is no date.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..providers.facts import text
from .kaltura_api import number
from .rows import rfc3339

PRIVACY_ALL, AUTHENTICATED_USERS, MEMBERS_ONLY = 1, 2, 3
LISTED = 1  # appearInList PARTNER_ONLY: the category shows in the partner's listings; 3: its members' only
WIDTH = {"public": 3, "unlisted": 2, "private": 0, "signed": 0}
# moderationStatus: 1 PENDING_MODERATION, 3 REJECTED, 5 FLAGGED_FOR_REVIEW: not shown to viewers.
UNMODERATED = {1: "pending moderation", 3: "rejected by moderation", 5: "flagged for review"}
HIDDEN_FROM_SEARCH = {-1, 0}  # displayInSearch SYSTEM, NONE: the entry is found by no search


def category_privacy(category: Mapping | None) -> tuple[str, str | None]:
    """What one category lets viewers do with its entries, and why where that is narrower than public."""
    if not category:
        return "private", "a category these credentials cannot read"
    name = (text(category.get("fullName")) or text(category.get("name")) or "?")[:80]
    privacy, listed = number(category.get("privacy")), number(category.get("appearInList"))
    if privacy == PRIVACY_ALL:
        return ("public", None) if listed == LISTED else ("unlisted", f"in {name}, a category listed to its members")
    if privacy == AUTHENTICATED_USERS:
        return "private", f"in {name}, whose entries only the partner's signed-in users may watch"
    if privacy == MEMBERS_ONLY:
        return "private", f"in {name}, whose entries only its members may watch"
    return "private", f"in {name}, a category of a privacy this tool does not know"


def schedule_date(entry: Mapping, name: str) -> tuple[int | None, bool]:
    """(the window's date, whether it could be read): (None, True) where none is set."""
    value = entry.get(name)
    if value is None or value == "":
        return None, True
    found = number(value)
    if found is None or found >= 32_503_680_000:  # not whole seconds, or past the year 3000
        return None, False
    return (found if found > 0 else None), True


def window_of(entry: Mapping, now: float) -> tuple[str | None, str | None]:
    """What the entry's scheduling window allows now: (None, None) where it narrows nothing, else ("private" or
    "signed", why)."""
    (start, start_read), (end, end_read) = schedule_date(entry, "startDate"), schedule_date(entry, "endDate")
    if not (start_read and end_read):
        return "private", "a scheduling window (startDate/endDate) this tool cannot read"
    if start is not None and start > now:
        return "private", (
            f"scheduled to be published from {rfc3339(start)} (startDate), not playable before: publish it at the"
            " target then"
        )
    if end is not None and end <= now:
        return "private", f"no longer played since {rfc3339(end)} (endDate)"
    if end is not None:
        return "signed", (
            f"played only until {rfc3339(end)} (endDate): no target keeps a window, so the owner's backend, which"
            " signs playback, keeps it"
        )
    return None, None


def schedule_metadata(entry: Mapping) -> dict[str, str]:
    """The window as the row keeps it (`metadata.schedule`): the dates set, RFC 3339."""
    found = {}
    for name, key in (("startDate", "start_date"), ("endDate", "end_date")):
        when, _ = schedule_date(entry, name)
        said = rfc3339(when) if when is not None else None
        if said:
            found[key] = said
    return found


def privacy_of(
    entry: Mapping, categories: Sequence[Mapping | None], restricted: bool, now: float
) -> tuple[str, str | None]:
    """The row's privacy: the widest any of the entry's categories gives (Kaltura shows an entry wherever it is
    published), narrowed by its moderation, its displayInSearch, a restricting access control profile and its
    scheduling window; and the note saying what Kaltura had that no target keeps. An entry in no category is
    private."""
    chosen, notes = _by_categories(entry, categories)
    if restricted and chosen in ("public", "unlisted"):
        chosen, notes = "signed", [*notes, "an access control profile restricts where and to whom it plays"]
    window, why = window_of(entry, now)
    if window is not None and why:
        notes.append(why)
        if window == "private" or chosen in ("public", "unlisted"):
            chosen = window
    if chosen == "public":
        return chosen, None
    return chosen, f"Kaltura: {'; '.join(notes)[:400]}; carried as {chosen}"


def _by_categories(entry: Mapping, categories: Sequence[Mapping | None]) -> tuple[str, list[str]]:
    moderation = number(entry.get("moderationStatus"))
    if moderation in UNMODERATED:
        return "private", [f"shown to no viewer: {UNMODERATED[moderation]}"]
    if not categories:
        return "private", ["in no category: published nowhere on Kaltura, so only its owner and the partner see it"]
    chosen, notes = "private", []
    for category in categories:
        privacy, note = category_privacy(category)
        notes += [note] if note else []
        if WIDTH[privacy] > WIDTH[chosen]:
            chosen = privacy
    if chosen == "public" and number(entry.get("displayInSearch")) in HIDDEN_FROM_SEARCH:
        chosen, notes = "unlisted", [*notes, "hidden from search (displayInSearch)"]
    return chosen, notes
