"""Cloudflare Stream's usage: the GraphQL Analytics API's minutes viewed, by video and day (issue 45).

Documents: "GraphQL Analytics API" for Stream (https://developers.cloudflare.com/stream/getting-analytics/
fetching-bulk-analytics/): a token with the "Account Analytics" permission; the server-side dataset
`streamMinutesViewedAdaptiveGroups`, "Minutes of video delivered" (`sum { minutesViewed }`) for "all live and
on-demand videos played via HLS or DASH, regardless of whether or not you use the Stream Player", its filters and
dimensions `date`, `datetime`, `uid`, `clientCountryName`, `creator`, asked under `viewer { accounts(filter:
{accountTag: ...}) }`. "Limits" (https://developers.cloudflare.com/analytics/graphql-api/limits/): "An account-scoped
query can include only 1 account", "300 GraphQL queries over 5-minute window" per user, and per dataset "how far
back in time can data be requested, the maximum time period ... in one query, ... the maximum number of records",
which the "Settings node" (https://developers.cloudflare.com/analytics/graphql-api/features/discovery/settings/)
answers: `settings { streamMinutesViewedAdaptiveGroups { enabled maxDuration notOlderThan maxPageSize } }`
(`notOlderThan`: "how far back in time a query can read", `maxDuration`: "how wide the requested time range" may be,
both in seconds).

- the pass's first page asks the settings node, then reads the widest range one query may ask: the last
  min(notOlderThan, maxDuration) seconds, in whole days up to today (`since`: its first day); the range and the page
  size (min(maxPageSize, 10,000)) go into the cursor, so a resumed pass reads the same range;
- the data: `streamMinutesViewedAdaptiveGroups(filter: {date_geq, date_lt}, limit, orderBy: [uid_ASC, date_ASC])
  { sum { minutesViewed } dimensions { uid date } }`, paged by a filter past the last row read (`OR: [{uid_gt},
  {uid, date_gt}]`; GraphQL adaptive datasets page by filter, "Pagination" in the same documents);
- what it gives: no plays and no views (the dataset counts minutes delivered, not plays; the client-side dataset
  with a view count the Stream Player once fed is no longer documented), and the last day a video was delivered:
  `last_played_at`, that day's start (UTC). A video missing from the answer was delivered on no day of the range;
- a GraphQL error comes in a 200's `errors`: one that says the token is not authorised is `SourceDenied`, any
  other a `SourceError`. Paced at 1 query a second (300 per 5 minutes), on the Cloudflare API's 429 handling.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime, timedelta

from ...fate import excerpt
from ...providers.cloudflare import credentials as cloudflare_credentials
from ...providers.facts import CredentialsError
from ...usage import Usage, UsagePage, utc_text
from ..base import SourceDenied, SourceError
from ..cloudflare import CloudflareSource
from .common import Reader, array, count, malformed, obj, video_id

PLATFORM = "cloudflare"
COUNTED_BY = "cloudflare stream minutes viewed: the last day a video was delivered (no play count)"
DATASET = "streamMinutesViewedAdaptiveGroups"
MAX_LIMIT = 10_000
GRAPHQL_RATE_PER_S = 1.0  # "300 GraphQL queries over 5-minute window"
_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_DENIED = ("not authorized", "unauthorized", "does not have access", "permission")

SETTINGS_QUERY = """query StreamUsageSettings($accountTag: string!) {
  viewer { accounts(filter: {accountTag: $accountTag}) {
    settings { streamMinutesViewedAdaptiveGroups { enabled maxDuration notOlderThan maxPageSize } }
  } }
}"""
USAGE_QUERY = """query StreamUsage($accountTag: string!,
    $filter: AccountStreamMinutesViewedAdaptiveGroupsFilter_InputObject!, $limit: uint64!) {
  viewer { accounts(filter: {accountTag: $accountTag}) {
    streamMinutesViewedAdaptiveGroups(filter: $filter, limit: $limit, orderBy: [uid_ASC, date_ASC]) {
      sum { minutesViewed }
      dimensions { uid date }
    }
  } }
}"""


def account_node(answer: object, what: str) -> Mapping:
    """The one account's node of a GraphQL answer; SourceDenied/SourceError for the answer's `errors`."""
    answer = obj(PLATFORM, answer, "the answer")
    errors = answer.get("errors")
    if errors:
        listed = array(PLATFORM, errors, "errors")
        messages = "; ".join(str(obj(PLATFORM, e, "an error").get("message")) for e in listed)
        if any(word in messages.lower() for word in _DENIED):
            raise SourceDenied(f"{PLATFORM}: {what}: {excerpt(messages, 160)} (the token needs Account Analytics)")
        raise SourceError(f"{PLATFORM}: {what} answered errors: {excerpt(messages, 200)}")
    viewer = obj(PLATFORM, obj(PLATFORM, answer.get("data"), "data").get("viewer"), "data.viewer")
    accounts = array(PLATFORM, viewer.get("accounts"), "data.viewer.accounts")
    if len(accounts) != 1:
        raise malformed(PLATFORM, f"{len(accounts)} accounts answered, not the one asked for")
    return obj(PLATFORM, accounts[0], "the account")


def window_of(answer: object, now: float) -> tuple[str, str, int]:
    """The range to read (first day, the day after the last) and the page size, from the settings node's answer."""
    settings = obj(PLATFORM, account_node(answer, "the settings").get("settings"), "settings")
    node = obj(PLATFORM, settings.get(DATASET), DATASET)
    if node.get("enabled") is not True:
        raise SourceDenied(f"{PLATFORM}: {DATASET} is not enabled for this account or token (Account Analytics)")
    back_s = count(PLATFORM, node.get("notOlderThan"), "notOlderThan")
    span_s = min(back_s, count(PLATFORM, node.get("maxDuration"), "maxDuration"))
    limit = min(MAX_LIMIT, count(PLATFORM, node.get("maxPageSize"), "maxPageSize"))
    if limit < 1 or span_s < 86400:
        raise malformed(PLATFORM, "the dataset allows less than a day or no records", node)
    today = datetime.fromtimestamp(now, UTC).date()
    first = today - timedelta(days=span_s // 86400 - 1)
    return first.isoformat(), (today + timedelta(days=1)).isoformat(), limit


def usage_of_groups(answer: object, read_at: str, since: str) -> tuple[dict[str, Usage], int, tuple[str, str] | None]:
    """Each video's last day delivered from one page, the rows it held and the last row's (uid, date)."""
    groups = array(PLATFORM, account_node(answer, "the minutes viewed").get(DATASET), DATASET)
    found: dict[str, Usage] = {}
    last: tuple[str, str] | None = None
    for group in groups:
        group = obj(PLATFORM, group, "a group")
        dims = obj(PLATFORM, group.get("dimensions"), "dimensions")
        uid, day = video_id(PLATFORM, dims.get("uid"), "uid"), dims.get("date")
        if not isinstance(day, str) or not _DAY.match(day):
            raise malformed(PLATFORM, "date is not a day", day)
        minutes = obj(PLATFORM, group.get("sum"), "sum").get("minutesViewed")
        if isinstance(minutes, bool) or not isinstance(minutes, int | float) or not 0 <= minutes < 1e15:
            raise malformed(PLATFORM, "minutesViewed is not a number", minutes)
        last = (uid, day)
        if minutes > 0:  # ordered by date: a later row of the uid is a later day
            found[uid] = Usage(read_at=read_at, counted_by=COUNTED_BY, last_played_at=f"{day}T00:00:00Z", since=since)
    return found, len(groups), last


def page_filter(first: str, end: str, after: tuple[str, str] | None) -> dict:
    window = {"date_geq": first, "date_lt": end}
    if after is None:
        return window
    uid, day = after
    return {"AND": [window, {"OR": [{"uid_gt": uid}, {"uid": uid, "date_gt": day}]}]}


def parse_cursor(cursor: str) -> tuple[str, str, int, tuple[str, str] | None]:
    try:
        doc = json.loads(cursor)
        first, end, limit, after = doc["first"], doc["end"], doc["limit"], doc.get("after")
        ok = all(isinstance(d, str) and _DAY.match(d) for d in (first, end)) and isinstance(limit, int) and limit > 0
        if not ok or (after is not None and not (isinstance(after, list) and len(after) == 2)):
            raise ValueError
    except (ValueError, TypeError, KeyError):
        raise SourceError(f"{PLATFORM}: not a usage cursor of this reader: {excerpt(cursor, 40)}") from None
    return first, end, limit, ((str(after[0]), str(after[1])) if after else None)


class CloudflareUsage(Reader):
    """The last day each video was delivered, paged through the GraphQL answer (usage.UsageReader)."""

    platform = PLATFORM
    counted_by = COUNTED_BY
    source_class = CloudflareSource

    def __init__(self, credentials: Callable[[], Mapping | None], base_url: str | None = None, **options):
        if options.get("rate_per_s") is None:  # GraphQL's own budget, not the REST API's
            options["rate_per_s"] = GRAPHQL_RATE_PER_S
        super().__init__(credentials, base_url, **options)

    def _graphql(self, query: str, variables: dict, what: str) -> object:
        body = {"query": query, "variables": variables}
        return self.source.read("POST", "/graphql", what, gone_ok=False, json_body=body)

    def _account(self) -> str:
        try:
            return cloudflare_credentials(json.dumps(dict(self.source.credentials() or {})))[0]
        except CredentialsError as exc:
            raise SourceDenied(str(exc)) from None

    def page(self, cursor: str | None, video_ids: Sequence[str]) -> UsagePage:
        before = self.source.requests
        account = self._account()
        if cursor is None:
            settings = self._graphql(SETTINGS_QUERY, {"accountTag": account}, "the settings")
            first, end, limit = window_of(settings, self.source.clock())
            after = None
        else:
            first, end, limit, after = parse_cursor(cursor)
        variables = {"accountTag": account, "filter": page_filter(first, end, after), "limit": limit}
        answer = self._graphql(USAGE_QUERY, variables, "the minutes viewed")
        usage, held, last = usage_of_groups(answer, utc_text(self.source.clock()), f"{first}T00:00:00Z")
        following = None
        if held == limit and last is not None:
            following = json.dumps({"first": first, "end": end, "limit": limit, "after": list(last)})
        return UsagePage(usage=usage, cursor=following, requests=self.source.requests - before)
