"""The behaviours the platforms' documents leave uncertain, tried where that is safe (reads only), one line each.

Each was written down as unconfirmed where the adapter relies on it (docs/sources.md, docs/providers.md):

- JW Player's media list: the walk's `q=created:[lo TO hi]` with `sort=created:asc` (sources/jwplayer.py, the
  audit's `videos()`), and the lost-create lookup's `sort=created:dsc` ("Building a request" documents `q` and
  `sort`, not the range form): the answers of the adapter's own requests are held to the range and the order
  asked, and one more query, a range of one second around a listed media, must answer that media and nothing
  outside the second;
- Mux's asset list newest first (undocumented; the lookup and the delta sweep rely on it);
- Brightcove's OAuth token answer: 200 (RFC 6749) or 201 (the reference's example), and its `expires_in`;
- Kaltura's categoryEntry.list filters (`entryIdIn`, `statusEqual`, `orderBy`: Kaltura ignores a filter field
  it does not support and lists everything); media.list's own are checked by the listing itself
  (kaltura_walk.Walk.check);
- a source link's real lifetime against what the adapter counts (first_contact.link_life_line, for every source).

The relation checks are pure (`range_differences`, `order_differences`, `link_differences`), tested as tables.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping

from migrator.providers.facts import entries, epoch_of, mapping, text

from .first_contact import FAIL, PASS, SKIP, Exchange, Line, NotSent, Watch, iso, line

RANGE = re.compile(r"^(?P<field>\w+):\[(?P<lo>\S+) TO (?P<hi>\S+)\]$")
SHOWN = 3  # differences one line names


# --- the relations (pure) -------------------------------------------------------------------------------------------


def range_differences(q: str, items: object, id_key: str = "id") -> list[str]:
    """What in `items` lies outside the range `q` asked (`<field>:[<ISO> TO <ISO>]`, whole seconds, both ends
    in): each item's field read as a time."""
    found = RANGE.match(q or "")
    if not found:
        return [f"the query {q[:60]!r} is no range this check reads"]
    field, lo, hi = found["field"], epoch_of(found["lo"]), epoch_of(found["hi"])
    if lo is None or hi is None:
        return [f"the range {q[:60]!r} has no times this check reads"]
    out = []
    for item in (mapping(i) for i in entries(items)):
        when = epoch_of(item.get(field))
        name = text(item.get(id_key)) or "?"
        if when is None:
            out.append(f"{name} has no {field} to compare")
        elif not lo <= when < math.floor(hi) + 1:
            out.append(f"{name} {field} {iso(when)} lies outside {field}:[{iso(lo)} TO {iso(hi)}]")
    return out


def order_differences(sort: str, items: object, id_key: str = "id") -> list[str]:
    """Where `items` break the order `sort` asked (`<field>:asc` or `<field>:dsc`/`desc`), read as times."""
    field, _, way = (sort or "").partition(":")
    if way not in ("asc", "dsc", "desc") or not field:
        return [f"the sort {sort[:40]!r} is no order this check reads"]
    out, last = [], None
    for item in (mapping(i) for i in entries(items)):
        when = epoch_of(item.get(field))
        if when is None:
            continue
        if last is not None and ((way == "asc" and when < last[0]) or (way != "asc" and when > last[0])):
            out.append(f"{text(item.get(id_key)) or '?'} ({iso(when)}) comes after {last[1]} ({iso(last[0])})")
        last = (when, text(item.get(id_key)) or "?")
    return out


def link_differences(filter_doc: Mapping, objects: object) -> list[str]:
    """What of a categoryEntry.list answer lies outside its filter: an entry not in `entryIdIn`, a link not of
    `statusEqual`, the order not `+createdAt`."""
    asked = {i for i in str(filter_doc.get("entryIdIn") or "").split(",") if i}
    status = filter_doc.get("statusEqual")
    out, last = [], None
    for link in (mapping(o) for o in entries(objects)):
        entry = str(link.get("entryId"))
        if asked and entry not in asked:
            out.append(f"a link of entry {entry[:20]} not in entryIdIn")
        if status is not None and str(link.get("status")) != str(status):
            out.append(f"a link of entry {entry[:20]} with status {str(link.get('status'))[:10]}, not {status}")
        created = link.get("createdAt")
        if filter_doc.get("orderBy") == "+createdAt" and isinstance(created, int | float):
            if last is not None and created < last:
                out.append(f"a link of entry {entry[:20]} created before the one answered ahead of it")
            last = created
    return out


def verdict(name: str, differences: list[str], passed: str, fix: str) -> Line:
    if differences:
        more = f"; and {len(differences) - SHOWN} more" if len(differences) > SHOWN else ""
        return line(name, FAIL, "; ".join(differences[:SHOWN]) + more, fix)
    return line(name, PASS, passed)


# --- JW Player ------------------------------------------------------------------------------------------------------

JW_FIX = (
    "the adapter's walk of the library by date relies on it (docs/sources.md, JW Player): report this line and do"
    " not migrate from or audit this property until it is understood"
)


def _media_lists(watch: Watch) -> list[Exchange]:
    return [ex for ex in watch.answers("the media list") if ex.status == 200]


def jw_walk(watch: Watch, field: str = "created") -> list[Line]:
    """The walk's own queries (`q` a range, `sort` ascending) held to what they asked."""
    walked = [ex for ex in _media_lists(watch) if "q" in ex.params]
    if not walked:
        return []
    items = [m for ex in walked for m in entries(mapping(ex.body).get("media"))]
    name = f"jwplayer media list q {field}:[… TO …] and sort {field}:asc"
    if not items:
        return [line(name, SKIP, "the queries answered no media: the range and the order cannot be seen")]
    found = [d for ex in walked for d in range_differences(ex.params["q"], mapping(ex.body).get("media"))]
    found += [d for ex in walked for d in order_differences(ex.params.get("sort", ""), mapping(ex.body).get("media"))]
    return [verdict(name, found, f"{len(items)} media answered, each within the range asked and in order", JW_FIX)]


def jw_narrow(read: Callable[[dict], object], items: object) -> Line:
    """One query of one second, around the first listed media: it must answer that media and none outside."""
    from migrator.providers.jwplayer import PAGE_LENGTH, Slice

    name = "jwplayer media list q narrows to one second"
    dated = ((mapping(m), epoch_of(mapping(m).get("created"))) for m in entries(items))
    first, created = next(((m, t) for m, t in dated if t is not None), ({}, None))
    if created is None:
        return line(name, SKIP, "no listed media with a creation time to ask about")
    second = math.floor(created)
    params = Slice(second, second).params("created", PAGE_LENGTH)
    try:
        body = read(params)
    except NotSent as exc:
        return line(name, SKIP, f"not sent: {exc}")
    answered = entries(mapping(body).get("media"))
    found = range_differences(params["q"], answered)
    if text(first.get("id")) not in {text(mapping(m).get("id")) for m in answered}:
        found.insert(0, f"{text(first.get('id'))}, created in that second, was not answered")
    passed = f"{params['q']} answered {len(answered)} media, {text(first.get('id'))} among them, none outside"
    return verdict(name, found, passed, JW_FIX)


def jw_source(source, watch: Watch, page, clock) -> list[Line]:
    out = jw_walk(watch)
    walked = [ex for ex in _media_lists(watch) if "q" in ex.params]
    if walked:

        def read(params: dict) -> object:
            return source.read("GET", source._media(), "the media list", gone_ok=False, params=params)

        out.append(jw_narrow(read, mapping(walked[0].body).get("media")))
    return out


def jw_target(provider, watch: Watch, clock) -> list[Line]:
    out = []
    looked = [ex for ex in _media_lists(watch) if ex.params.get("sort") == "created:dsc"]
    name = "jwplayer lost-create lookup's sort=created:dsc"
    items = [m for ex in looked for m in entries(mapping(ex.body).get("media"))]
    if len(items) < 2:
        out.append(line(name, SKIP, "fewer than two media listed: the order cannot be seen"))
    else:
        found = [d for ex in looked for d in order_differences("created:dsc", mapping(ex.body).get("media"))]
        fix = "the lookup reads newest first back to the earlier try: report this line before migrating"
        out.append(verdict(name, found, f"{len(items)} media answered newest first", fix))
    out += jw_walk(watch)
    return out


# --- Mux ------------------------------------------------------------------------------------------------------------


def mux_order(watch: Watch) -> list[Line]:
    """Mux's asset list newest first: undocumented, and the lookup and the delta sweep stop at the first older."""
    listed = [ex for ex in watch.answers("the asset list") if ex.status == 200]
    items = [a for ex in listed[:1] for a in entries(mapping(ex.body).get("data"))]
    name = "mux asset list newest first"
    if len(items) < 2:
        return [line(name, SKIP, "fewer than two assets listed: the order cannot be seen")]
    fix = (
        "the lookup after a crash and the delta sweep stop at the first asset older than they look for: report"
        " this line before migrating"
    )
    found = order_differences("created_at:dsc", items)
    return [verdict(name, found, f"{len(items)} assets answered newest first (created_at)", fix)]


# --- Brightcove, Kaltura --------------------------------------------------------------------------------------------


def brightcove_token(source, watch: Watch, page, clock) -> list[Line]:
    from migrator.sources.brightcove import TOKEN_TTL_S

    got = watch.answers("the access token")
    name = "brightcove access token answer (200 or 201)"
    if not got:
        return [line(name, SKIP, "no token was asked for in this run (one was held already)")]
    ex = got[0]
    lifetime = mapping(ex.body).get("expires_in")
    said = (
        f"expires_in {lifetime} s"
        if isinstance(lifetime, int)
        else f"no expires_in (the adapter counts {TOKEN_TTL_S:.0f} s)"
    )
    if ex.status not in (200, 201):
        return [line(name, FAIL, f"HTTP {ex.status}", "the client credentials (docs/sources.md, Brightcove)")]
    return [line(name, PASS, f"HTTP {ex.status}, a bearer token, {said}")]


def kaltura_filters(source, watch: Watch, page, clock) -> list[Line]:
    out = [
        line(
            "kaltura media.list filters",
            PASS,
            "every entry answered lies within the window, statuses and categories asked (the listing checks each:"
            " kaltura_walk.Walk.check)",
        )
    ]
    got = [ex for ex in watch.answers("the category links") if ex.status == 200]
    name = "kaltura categoryEntry.list filters (entryIdIn, statusEqual, orderBy)"
    links = [o for ex in got for o in entries(mapping(ex.body).get("objects"))]
    if not links:
        out.append(line(name, SKIP, "no entry of the first page is in a category: the filters could not be seen"))
        return out
    found = [
        d
        for ex in got
        for d in link_differences(mapping(mapping(ex.sent).get("filter")), mapping(ex.body).get("objects"))
    ]
    fix = "an entry's categories (and so its privacy) would be another's: report this line before migrating"
    out.append(verdict(name, found, f"{len(links)} links answered, each of an entry asked, ACTIVE, in order", fix))
    return out


SOURCE_PROBES: dict[str, tuple] = {
    "jwplayer": (jw_source,),
    "mux": (lambda source, watch, page, clock: mux_order(watch),),
    "brightcove": (brightcove_token,),
    "kaltura": (kaltura_filters,),
}
TARGET_PROBES: dict[str, tuple] = {
    "jwplayer": (jw_target,),
    "mux": (lambda provider, watch, clock: mux_order(watch),),
}
