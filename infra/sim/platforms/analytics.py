"""The source profiles' analytics endpoints (issue 45): each video's usage, seeded from the video so that tests can
assert exact numbers, answered in each platform's own shape. The profiles route to these (their `src_usage` op).

The seed (`seeded`): one video in five (index % 5 == 1, not the fifth a library holds back as unfetchable) was never
played (0 plays, a few loads, no day played);
the others were played `3 + (index * 37) % 997` times, loaded twice that plus `index % 11`, last on the day
`index % 60` days before the request's day (UTC), and on `index % 3` earlier days (7 days apart) before it.

What each answer follows (the documents the readers cite, functions/migrator/sources/analytics/):
- Wistia, "Show Media Stats" (https://docs.wistia.com/reference/get_stats-medias-mediaid): `GET
  /modern/stats/medias/{id}` -> `{load_count, play_count, play_rate, hours_watched, engagement, visitors,
  actions}`; a media the account does not hold: 404 ("Media not found or does not belong to account");
- JW Player, "Analytics API reference" (https://developer.jwplayer.com/jwplayer/docs/analytics-api-reference) and
  "Data Availability" (https://docs.jwplayer.com/platform/docs/analytics-reference): `POST
  /v2/sites/{site}/analytics/queries` with the query body; `page_length` at most 100 ("Maximum: 100 rows per
  page"), `page` from 0; a `start_date` before 2017-01-01 ("Earliest available data") counts from then. The answer's
  shape (`data.rows`, `metadata.column_headers`) is as the reader reads it: the reference's response section was not
  in the corpora read (the reader's docstring says so). Rows: the medias played in the range, most played first;
- Brightcove, "Dimension: video" (https://apis.support.brightcove.com/analytics/dimension-guides/
  dimension-video.html): `GET /v1/data?accounts&dimensions=video&fields&from&to&limit&offset&sort` ->
  `{account, item_count, items: [{video, video_view, video_impression}], summary}`; `from=alltime` counts every
  view; `limit` defaults to 10. Items: the videos loaded at least once;
- api.video, apivideo/api.video-python-client `get_metrics_breakdown`: `GET /data/buckets/play-total/media-id
  ?currentPage&pageSize` (1-100, default 25) -> `{context, data: [{dimensionValue, metricValue}], pagination}`
  (`pagination.links` required by the client's model: empty here);
  another metric than play-total with the media-id breakdown is answered 400 here (our choice: only this one is
  modelled). Buckets: the videos played;
- Mux, muxinc/mux-python `list_breakdown_values`: `GET /data/v1/metrics/views/breakdown?group_by=asset_id
  &timeframe[]&limit&page&order_by&order_direction` -> `{data: [{views, value, total_watch_time,
  total_playing_time, negative_impact, field}], total_row_count, timeframe, meta}`; the answer's timeframe is the
  one asked, its start rounded down to the day (past 15 days Mux rounds "to an day boundary", Mux changelog
  "Mux Data API support for more granular timeframes"). Rows: the assets played;
- Cloudflare, "GraphQL Analytics API" for Stream (https://developers.cloudflare.com/stream/getting-analytics/
  fetching-bulk-analytics/) and the "Settings node" (https://developers.cloudflare.com/analytics/graphql-api/
  features/discovery/settings/): `POST /graphql {query, variables}`; a query naming `settings` is answered with the
  dataset's `{enabled, maxDuration, notOlderThan, maxPageSize}` (SETTINGS: our values, which the documents leave to
  the plan); one naming `streamMinutesViewedAdaptiveGroups` with the rows `{sum: {minutesViewed}, dimensions: {uid,
  date}}` in uid then date order, filtered by `variables.filter` (`date_geq`, `date_lt`, and `AND`/`OR` of `uid_gt`,
  `uid` + `date_gt`); GraphQL is parsed no further than that (the query's text is not checked). Errors come in a
  200's `errors`, as GraphQL does.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

from ..library import Item, Shelf
from ..profile import Reply

NEVER_PLAYED_EVERY = 5
SETTINGS = {"enabled": True, "maxDuration": 93 * 86400, "notOlderThan": 93 * 86400, "maxPageSize": 10000}
JW_EARLIEST = "2017-01-01"


@dataclass(frozen=True)
class Seed:
    plays: int
    loads: int
    days: tuple[date, ...]  # the days played, oldest first (none: never played)


def seeded(video: Item, today: date | None = None) -> Seed:
    """A video's usage, from its index alone (and the day, for the days played)."""
    i = video.index
    if i % NEVER_PLAYED_EVERY == 1:
        return Seed(0, i % 4, ())
    plays = 3 + (i * 37) % 997
    last = (today or utc_today()) - timedelta(days=i % 60)
    days = tuple(last - timedelta(days=7 * k) for k in range(i % 3, -1, -1))
    return Seed(plays, 2 * plays + i % 11, days)


def utc_today() -> date:
    return datetime.now(UTC).date()


def _videos(shelf: Shelf) -> Iterator[Item]:
    for index in range(shelf.size):
        video = shelf.video(index)
        if video is not None:
            yield video


def _query(call_query: str) -> dict[str, list[str]]:
    return urllib.parse.parse_qs(call_query, keep_blank_values=True)


def _bounded(text: str | None, default: int, low: int, high: int | None) -> int | None:
    if text is None:
        return default
    if not text.isdigit() or int(text) < low or (high is not None and int(text) > high):
        return None
    return int(text)


# ----- Wistia


def wistia_stats(video: Item | None) -> Reply:
    if video is None:
        return Reply(404, {"error": "Media not found or does not belong to account"})
    seed = seeded(video)
    return Reply(
        200,
        {
            "load_count": seed.loads,
            "play_count": seed.plays,
            "play_rate": round(seed.plays / seed.loads, 2) if seed.loads else 0,
            "hours_watched": round(seed.plays * video.duration / 3600 / 2, 3),
            "engagement": 0.5 if seed.plays else 0,
            "visitors": seed.loads,
            "actions": [],
        },
    )


# ----- JW Player


def jwplayer_query(shelf: Shelf, body: object, id_of: Callable[[Item], str]) -> Reply:
    if not isinstance(body, dict):
        return Reply(400, {"errors": [{"code": "invalid_body", "description": "The body must be a JSON object"}]})
    page, length = body.get("page", 0), body.get("page_length", 10)
    metrics = body.get("metrics")
    plays_sum = metrics == [{"operation": "sum", "field": "plays"}]
    if body.get("dimensions") != ["media_id"] or not plays_sum:
        return Reply(400, {"errors": [{"code": "invalid_query", "description": "only plays by media_id is modelled"}]})
    bad_page = not isinstance(page, int) or isinstance(page, bool) or page < 0
    if bad_page or not isinstance(length, int) or not 1 <= length <= 100:
        return Reply(400, {"errors": [{"code": "invalid_page", "description": "page_length must be 1 to 100"}]})
    start, end = str(body.get("start_date", "")), str(body.get("end_date", ""))
    if not start or not end or start > end:
        return Reply(400, {"errors": [{"code": "invalid_date", "description": "start_date and end_date are required"}]})
    played = [(seeded(v).plays, id_of(v)) for v in _videos(shelf) if seeded(v).plays]
    played.sort(key=lambda row: (-row[0], row[1]))
    rows = [[media, plays] for plays, media in played[page * length : (page + 1) * length]]
    headers = {
        "dimensions": [{"field": "media_id", "type": "string"}],
        "metrics": [{"field": "plays", "type": "integer"}],
    }
    metadata = {"column_headers": headers, "start_date": max(start, JW_EARLIEST), "end_date": end, "page": page}
    return Reply(200, {"data": {"rows": rows}, "metadata": metadata, "includes": {}})


# ----- Brightcove


def brightcove_data(shelf: Shelf, call_query: str, account: str, id_of: Callable[[Item], str]) -> Reply:
    query = _query(call_query)
    one = {k: v[0] for k, v in query.items()}
    if one.get("accounts") != account or one.get("dimensions") != "video":
        return Reply(400, [{"error_code": "BAD_REQUEST", "message": "accounts and dimensions=video are required"}])
    limit = _bounded(one.get("limit"), 10, 1, None)
    offset = _bounded(one.get("offset"), 0, 0, None)
    if limit is None or offset is None:
        return Reply(400, [{"error_code": "BAD_REQUEST", "message": "limit and offset must be whole numbers"}])
    fields = one.get("fields", "video,video_view").split(",")
    seen = [(id_of(v), seeded(v)) for v in _videos(shelf) if seeded(v).loads or seeded(v).plays]
    if one.get("sort", "video_view") == "video":
        seen.sort(key=lambda item: item[0])
    else:
        seen.sort(key=lambda item: -item[1].plays)
    values = {"video_view": lambda s: s.plays, "video_impression": lambda s: s.loads}
    items = [
        {f: (vid if f == "video" else values[f](seed)) for f in fields if f == "video" or f in values}
        for vid, seed in seen[offset : offset + limit]
    ]
    summary = {"video_view": sum(s.plays for _, s in seen), "video_impression": sum(s.loads for _, s in seen)}
    return Reply(200, {"account": account, "item_count": len(seen), "items": items, "summary": summary})


# ----- api.video


def apivideo_buckets(shelf: Shelf, metric: str, breakdown: str, call_query: str, id_of: Callable[[Item], str]) -> Reply:
    if metric != "play-total" or breakdown != "media-id":
        problem = {"type": "https://docs.api.video/reference/invalid-attribute", "title": "not modelled", "status": 400}
        return Reply(400, problem)
    one = {k: v[0] for k, v in _query(call_query).items()}
    page = _bounded(one.get("currentPage"), 1, 1, None)
    size = _bounded(one.get("pageSize"), 25, 1, 100)
    if page is None or size is None:
        return Reply(400, {"title": "currentPage or pageSize out of range", "status": 400})
    played = [(id_of(v), seeded(v).plays) for v in _videos(shelf) if seeded(v).plays]
    chosen = played[(page - 1) * size : page * size]
    pages = max(1, -(-len(played) // size))
    pagination = {
        "currentPage": page,
        "currentPageItems": len(chosen),
        "pageSize": size,
        "pagesTotal": pages,
        "itemsTotal": len(played),
        "links": [],
    }
    data = [{"dimensionValue": media, "metricValue": plays} for media, plays in chosen]
    # No `metric` in the context: the client's context model (AnalyticsMetricsBreakdownResponseContext) allows no
    # "play-total" among its metrics, and what api.video says there for it is not documented.
    return Reply(200, {"context": {"breakdown": breakdown}, "data": data, "pagination": pagination})


# ----- Mux


def mux_breakdown(shelf: Shelf, metric: str, call_query: str, id_of: Callable[[Item], str]) -> Reply:
    query = _query(call_query)
    one = {k: v[0] for k, v in query.items()}
    if metric != "views" or one.get("group_by") != "asset_id":
        return Reply(400, {"error": {"type": "invalid_parameters", "messages": ["only views by asset_id is modelled"]}})
    limit = _bounded(one.get("limit"), 25, 1, None)
    page = _bounded(one.get("page"), 1, 1, None)
    frame = query.get("timeframe[]", [])
    if limit is None or page is None or len(frame) != 2 or not all(f.isdigit() for f in frame):
        return Reply(400, {"error": {"type": "invalid_parameters", "messages": ["limit, page or timeframe[]"]}})
    start, end = int(frame[0]) // 86400 * 86400, int(frame[1])
    rows = [(id_of(v), seeded(v).plays) for v in _videos(shelf) if seeded(v).plays]
    rows.sort(key=lambda row: row[0], reverse=one.get("order_direction") == "desc")
    data = [
        {
            "views": n,
            "value": n,
            "total_watch_time": n * 1000,
            "total_playing_time": n * 1000,
            "negative_impact": 0,
            "field": asset,
        }
        for asset, n in rows[(page - 1) * limit : page * limit]
    ]
    return Reply(200, {"data": data, "total_row_count": len(rows), "timeframe": [start, end], "meta": {}})


# ----- Cloudflare


def cloudflare_graphql(shelf: Shelf, body: object, account: str, id_of: Callable[[Item], str]) -> Reply:
    if not isinstance(body, dict) or not isinstance(body.get("query"), str):
        return _graphql_error("a GraphQL request is {query, variables}")
    variables = body.get("variables") or {}
    if not isinstance(variables, dict) or variables.get("accountTag") != account:
        return _graphql_error("not authorized for that account")
    if "settings" in body["query"]:
        settings = {"streamMinutesViewedAdaptiveGroups": SETTINGS}
        return Reply(200, {"data": {"viewer": {"accounts": [{"settings": settings}]}}, "errors": None})
    if "streamMinutesViewedAdaptiveGroups" not in body["query"]:
        return _graphql_error("only streamMinutesViewedAdaptiveGroups and its settings are modelled")
    limit = variables.get("limit")
    if not isinstance(limit, int) or not 1 <= limit <= SETTINGS["maxPageSize"]:
        return _graphql_error(f"limit must be 1 to {SETTINGS['maxPageSize']}")
    try:
        keep = _filter(variables.get("filter"))
    except (ValueError, TypeError, KeyError) as exc:
        return _graphql_error(f"filter: {exc}")
    found: list[tuple[str, str, int]] = []  # uid, day, minutes
    for video in _videos(shelf):
        uid = id_of(video)
        found += [(uid, d.isoformat(), 1 + video.index % 9) for d in seeded(video).days if keep(uid, d.isoformat())]
    found.sort()
    rows = [{"sum": {"minutesViewed": m}, "dimensions": {"uid": u, "date": d}} for u, d, m in found]
    groups = {"streamMinutesViewedAdaptiveGroups": rows[:limit]}
    return Reply(200, {"data": {"viewer": {"accounts": [groups]}}, "errors": None})


def _filter(doc: object) -> Callable[[str, str], bool]:
    """The rows a dataset filter keeps (date_geq, date_lt, uid, uid_gt, date_gt, AND, OR), as a predicate."""
    if not isinstance(doc, dict):
        raise ValueError("a filter is an object")
    tests = [_field_test(key, value) for key, value in doc.items()]
    return lambda uid, day: all(test(uid, day) for test in tests)


def _field_test(key: str, value: object) -> Callable[[str, str], bool]:
    if key in ("AND", "OR"):
        if not isinstance(value, list):
            raise ValueError(f"{key} takes a list")
        parts = [_filter(part) for part in value]
        combine = all if key == "AND" else any
        return lambda uid, day: combine(part(uid, day) for part in parts)
    if key not in ("date_geq", "date_lt", "date_gt", "uid", "uid_gt"):
        raise ValueError(f"unknown filter field {key}")
    name, _, op = key.partition("_")
    compare: Callable[[str, str], bool] = {"geq": str.__ge__, "lt": str.__lt__, "gt": str.__gt__, "": str.__eq__}[op]
    wanted = str(value)
    return lambda uid, day: compare(uid if name == "uid" else day, wanted)


def _graphql_error(message: str) -> Reply:
    return Reply(200, {"data": None, "errors": [{"message": message, "path": ["viewer"], "extensions": {}}]})
