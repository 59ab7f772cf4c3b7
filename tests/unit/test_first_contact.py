"""`migrator doctor --source/--target`'s pure parts as tables: a link's life against what the adapter counts, the
uncertain behaviours' relations (a range, an order, Kaltura's filters), where webhooks point, the watch that
refuses what is not a read, the extras' looks and a collection's lookup, the report and its JSON (held to the
operator's guide), and the simulators' drift knob."""

from __future__ import annotations

import json
from dataclasses import dataclass
from types import SimpleNamespace

import pytest
from migrator.link_life import LinkTerms
from migrator.providers.extras import ChaptersLook, RemoteCollection, ThumbnailLook
from migrator.providers.http import TransportError
from migrator.shapes import platform
from migrator.tracks import TrackOutcome, TrackResult
from migrator_cli.first_contact import (
    FAIL,
    PASS,
    SKIP,
    NotSent,
    Report,
    Watch,
    carried_expiry,
    line,
    link_life_line,
    shape_lines,
)
from migrator_cli.first_contact_extras import chapters_look, collection_lookups, thumbnail_look
from migrator_cli.first_contact_probes import link_differences, order_differences, range_differences
from migrator_cli.main import main
from migrator_cli.webhook_targets import webhook_check

from infra.sim.config import ConfigError, SimConfig
from infra.sim.drift import apply

NOW = 1_800_000_000.0
DAY = 86_400.0
VIMEO = LinkTerms("Vimeo's download links expire, each at the time its `expires` says")
MUX = LinkTerms("Mux's master file lives 24 hours", expires_unsaid=True)
GCS = LinkTerms("the stack signs Cloud Storage links for 24 hours", longest_s=7 * DAY)


@pytest.mark.parametrize(
    ("url", "told", "terms", "result", "said"),
    [
        # the link carries its end, as the adapter counts it
        (f"https://cdn.example/v.mp4?expires={int(NOW + DAY)}&signature=x", NOW + DAY, VIMEO, PASS, "ends in 24 h"),
        # the link ends sooner than the adapter counts: a target that fetches later would get a dead link
        (f"https://cdn.example/v.mp4?expires={int(NOW + 3600)}&signature=x", NOW + DAY, VIMEO, FAIL, "23 h sooner"),
        # the link ended already
        (f"https://cdn.example/v.mp4?exp={int(NOW - 60)}", None, VIMEO, FAIL, "ended 1 min ago"),
        # an Akamai token in the path (Vimeo's CDN)
        (f"https://cdn.example/exp={int(NOW + 7200)}~acl=%2F*~hmac=ab/v.mp4", None, MUX, PASS, "ends in 2 h"),
        # a V4 signature (Cloud Storage) signed for longer than the platform allows
        (
            "https://storage.example/b/o?X-Goog-Date=20270115T080000Z&X-Goog-Expires=1209600",
            None,
            GCS,
            FAIL,
            "past the",
        ),
        # nothing says when it ends: not measurable (Dropbox's temporary link, Brightcove's renditions)
        ("https://dl.example/cd/0/get/TOKEN/file", NOW + 4 * 3600, LinkTerms("4 hours"), SKIP, "counts it to live 4 h"),
        ("https://cdn.example/v.mp4", None, MUX, SKIP, "the end is not said"),
    ],
)
def test_a_links_real_end_is_weighed_against_what_the_adapter_counts(url, told, terms, result, said):
    checked = link_life_line("p", url, told, terms, NOW)
    assert checked.result == result and said in checked.detail, checked
    assert "TOKEN" not in checked.text()


@pytest.mark.parametrize(
    ("url", "end"),
    [
        ("https://s3.example/b/k?X-Amz-Date=20270115T080000Z&X-Amz-Expires=3600&X-Amz-Signature=x", 1_800_003_600.0),
        ("https://cdn.example/v.mp4?expires=1800000000&signature=x", NOW),
        ("https://cdn.example/v.mp4?exp=18000000000000", None),  # not an epoch in seconds
        ("https://cdn.example/v.mp4?expires=soon", None),
        ("https://cdn.example/v.mp4", None),
    ],
)
def test_the_end_a_link_carries(url, end):
    assert carried_expiry(url) == end


MEDIA = [
    {"id": "a", "created": "2026-01-01T00:00:00Z"},
    {"id": "b", "created": "2026-01-01T00:00:00Z"},
    {"id": "c", "created": "2026-01-02T10:00:00Z"},
]


@pytest.mark.parametrize(
    ("q", "items", "said"),
    [
        ("created:[2026-01-01T00:00:00Z TO 2026-01-03T00:00:00Z]", MEDIA, []),
        ("created:[2026-01-01T00:00:00Z TO 2026-01-01T00:00:00Z]", MEDIA[:2], []),  # one second, both ends in
        (
            "created:[2026-01-01T00:00:00Z TO 2026-01-01T00:00:00Z]",
            MEDIA,
            ["c created 2026-01-02T10:00:00Z lies outside created:[2026-01-01T00:00:00Z TO 2026-01-01T00:00:00Z]"],
        ),
        ("created:[2026-01-01T00:00:00Z TO 2026-01-03T00:00:00Z]", [{"id": "d"}], ["d has no created to compare"]),
        ("title:foo", MEDIA, ["the query 'title:foo' is no range this check reads"]),
    ],
)
def test_a_range_query_answers_only_what_lies_in_its_range(q, items, said):
    assert range_differences(q, items) == said


@pytest.mark.parametrize(
    ("sort", "items", "said"),
    [
        ("created:asc", MEDIA, []),
        ("created:dsc", list(reversed(MEDIA)), []),
        ("created:dsc", MEDIA, ["c (2026-01-02T10:00:00Z) comes after b (2026-01-01T00:00:00Z)"]),
        (
            "created_at:dsc",
            [{"id": "x", "created_at": "1700000000"}, {"id": "y", "created_at": "1700000500"}],
            ["y (2023-11-14T22:21:40Z) comes after x (2023-11-14T22:13:20Z)"],
        ),
        ("created", MEDIA, ["the sort 'created' is no order this check reads"]),
    ],
)
def test_an_order_asked_is_the_order_answered(sort, items, said):
    assert order_differences(sort, items) == said


FILTER = {"entryIdIn": "0_a,0_b", "statusEqual": 2, "orderBy": "+createdAt"}


@pytest.mark.parametrize(
    ("objects", "said"),
    [
        ([{"entryId": "0_a", "status": 2, "createdAt": 1}, {"entryId": "0_b", "status": "2", "createdAt": 2}], []),
        ([{"entryId": "0_z", "status": 2, "createdAt": 1}], ["a link of entry 0_z not in entryIdIn"]),
        ([{"entryId": "0_a", "status": 1, "createdAt": 1}], ["a link of entry 0_a with status 1, not 2"]),
        (
            [{"entryId": "0_a", "status": 2, "createdAt": 5}, {"entryId": "0_b", "status": 2, "createdAt": 1}],
            ["a link of entry 0_b created before the one answered ahead of it"],
        ),
    ],
)
def test_kalturas_category_links_lie_within_their_filter(objects, said):
    assert link_differences(FILTER, objects) == said


@dataclass
class Stand:
    """A provider as doctor's webhook check sees it."""

    name: str = "apivideo"
    urls: object = None
    one: object = None

    def webhook_urls(self):
        if isinstance(self.urls, Exception):
            raise self.urls
        return self.urls


class One:
    """A provider with one webhook per account (Cloudflare's `webhook_target`)."""

    name = "cloudflare"

    def __init__(self, url):
        self.url = url

    def webhook_target(self):
        return self.url


HERE, OLD = "https://new.example/live/webhook", "https://old.example/live/webhook"


@pytest.mark.parametrize(
    ("provider", "here", "ok", "unknown", "said"),
    [
        (Stand(urls=[OLD, HERE]), HERE, True, False, "a subscription points at this stack"),
        (Stand(urls=[OLD]), HERE, False, False, f"point at {OLD}, none at this stack's {HERE}"),
        (Stand(urls=[]), HERE, False, False, "no webhook subscription"),
        (Stand(urls=None), HERE, True, True, "did not let these credentials read"),
        (Stand(urls=TransportError("timeout")), HERE, False, False, "got no answer (timeout)"),
        (Stand(urls=[OLD]), None, True, False, f"subscribed: {OLD}"),  # first contact: no stack yet
        (Stand(urls=[]), None, True, False, "no webhook subscribed yet"),
        (One(HERE), HERE, True, False, "the account's one webhook points at this stack"),
        (One(OLD), HERE, False, False, f"the account's only webhook points at {OLD}"),
        (One(""), HERE, False, False, "the account has no webhook"),
        (One(None), HERE, True, True, "gives no read of its webhook subscriptions, so where they point cannot be"),
        (SimpleNamespace(name="vimeo"), HERE, True, True, "vimeo sends no webhooks"),
        (Stand(urls=["https://h.example/hook?token=s3cret"]), HERE, False, False, "hook?token=REDACTED, none"),
    ],
)
def test_doctor_says_where_webhooks_point_where_the_provider_can_tell(provider, here, ok, unknown, said):
    found = webhook_check(provider, here)
    assert (found.ok, found.unknown) == (ok, unknown) and said in found.detail, found
    if isinstance(provider, One) and provider.url is None:
        assert HERE in found.detail  # the URL to set, since it cannot be read back


def test_the_watch_refuses_what_is_not_a_declared_read_and_keeps_every_answer():
    watch = Watch(platform("source", "wistia"), "https://api.wistia.com/modern")
    with pytest.raises(NotSent) as refused:
        watch.before("DELETE", "https://api.wistia.com/modern/medias/abc")
    assert refused.value.path == "/medias/abc" and watch.refused == [refused.value]
    watch.before("GET", "https://api.wistia.com/modern/medias?per_page=100")  # below the API's address
    answer = SimpleNamespace(status=200, body=[{"hashed_id": "abc", "type": "Video"}], text="", headers={})
    watch.after("GET", "https://api.wistia.com/modern/medias", {"per_page": "100"}, None, answer)
    (kept,) = watch.exchanges
    assert kept.declared.name == "the media list" and kept.params == {"per_page": "100"}
    (listed, *rest) = shape_lines(watch.platform, watch.exchanges)
    assert listed.result == FAIL and "[0].status: missing" in listed.detail and all(r.result == SKIP for r in rest)


def test_every_line_is_redacted_and_stripped_of_terminal_controls():
    said = line("n", FAIL, "https://cdn.example/v.mp4?signature=abcdef&x=1 \x1b[31mred", "see https://u:p@h/x")
    assert "abcdef" not in said.text() and "\x1b" not in said.text() and "u:p@" not in said.text()


def test_the_json_is_the_operator_guides():
    from tests.e2e.test_cli_stack import documented_fields

    documented = documented_fields()
    report = Report("source", "vimeo", [line("a", PASS, "d"), line("b", SKIP, "d"), line("c", FAIL, "d", "f")])
    doc = report.as_dict()
    assert set(doc) == documented["doctor --source"] == documented["doctor --target"]
    assert set(doc["checks"][0]) == documented["doctor --source check"]
    assert (doc["ok"], doc["passed"], doc["failed"], doc["skipped"]) == (False, 1, 1, 1)
    assert json.loads(json.dumps(doc)) == doc


def test_a_target_without_credentials_is_one_clear_line(capsys, monkeypatch):
    for name in ("MIGRATOR_PROVIDER_CREDENTIALS", "MIGRATOR_STACK", "MIGRATOR_OUTPUTS"):
        monkeypatch.delenv(name, raising=False)
    assert main(["doctor", "--target", "mux"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("migrator doctor: no mux credentials: pass --provider-credentials FILE")


def test_one_side_at_a_time(capsys):
    with pytest.raises(SystemExit) as exited:
        main(["doctor", "--source", "vimeo", "--target", "mux"])
    assert exited.value.code == 2 and "not allowed with argument" in capsys.readouterr().err


# --- what a viewer sees: the extras' looks and a collection's lookup (first_contact_extras.py) ----------------------


@dataclass
class Looks:
    """A target's extras as doctor meets them: each look answers `seen` (or raises it: a refused request)."""

    takes_thumbnail: str | None = "image"
    takes_chapters: bool = True
    takes_collections: bool = True
    seen: object = None
    name: str = "fake"
    collections_instead: str = "kept in the ledger only"

    def _answer(self, default):
        if isinstance(self.seen, Exception):
            raise self.seen
        return default if self.seen is None else self.seen

    def thumbnail_state(self, remote_id):
        return self._answer(ThumbnailLook())

    def chapters_of(self, remote_id, language):
        assert language == "en"  # the worker's language where the row says none
        return self._answer(ChaptersLook(2))

    def find_collection(self, name, ref):
        assert "doctor" in name and "/" in ref  # a name and a reference no collection of ours carries
        return self.seen if not isinstance(self.seen, Exception) else self._answer(None)


GONE = TrackOutcome(TrackResult.TRANSIENT, error="provider: timeout")
HALF_MADE = NotSent("DELETE", "/videos/1/pictures/7")


@pytest.mark.parametrize(
    ("look", "provider", "result", "said"),
    [
        (thumbnail_look, Looks(), PASS, "v1: answered and read; none set by a pass"),
        (thumbnail_look, Looks(seen=ThumbnailLook(True, "abc")), PASS, "a custom one set by a pass (abc)"),
        (thumbnail_look, Looks(takes_thumbnail="time"), SKIP, "takes a poster frame's time only"),
        (thumbnail_look, Looks(takes_thumbnail=None), SKIP, "takes no thumbnail"),
        (thumbnail_look, Looks(seen=GONE), FAIL, "v1: transient: provider: timeout"),
        # A look that would finish a half-made extra asks for a write: refused, and said, never sent.
        (thumbnail_look, Looks(seen=HALF_MADE), SKIP, "DELETE /videos/1/pictures/7, a write this check never sends"),
        (thumbnail_look, Looks(seen=NotSent("GET", "/x")), FAIL, "would need GET /x, which is no read"),
        (chapters_look, Looks(), PASS, "v1: answered and read; 2 held (en)"),
        (chapters_look, Looks(seen=TrackOutcome(TrackResult.WAITING, error="reading")), PASS, "would wait"),
        (chapters_look, Looks(seen=TrackOutcome(TrackResult.VIDEO_GONE, error="404")), FAIL, "video_gone: 404"),
        (chapters_look, Looks(takes_chapters=False), SKIP, "takes no chapters"),
    ],
)
def test_the_extras_looks_are_made_where_the_target_takes_them(look, provider, result, said):
    got = look(provider, "v1")
    assert (got.result, got.name) == (result, f"fake {look.__name__.split('_')[0]} look of one video")
    assert said in got.detail, got


@pytest.mark.parametrize(
    ("provider", "result", "said"),
    [
        (Looks(), PASS, "are not found, as they must not be"),
        (Looks(seen=RemoteCollection("c9", "x")), FAIL, "were 'found' as c9: the lookup's match is not applied"),
        (Looks(seen=TrackOutcome(TrackResult.THROTTLED)), FAIL, "throttled"),
        (Looks(seen=NotSent("GET", "/me/x")), FAIL, "would need GET /me/x"),
        (Looks(takes_collections=False), SKIP, "keeps no collections: kept in the ledger only"),
    ],
)
def test_a_collection_nothing_can_carry_is_looked_up_and_must_not_be_found(provider, result, said):
    (got,) = collection_lookups(provider, lambda: NOW)
    assert (got.name, got.result) == ("fake collection lookup", result) and said in got.detail, got
    assert result != FAIL or got.fix


def test_vimeo_looks_a_name_up_in_its_folders_and_its_showcases():
    asked = []
    vimeo = SimpleNamespace(name="vimeo", takes_collections=True, _named=lambda place, name: asked.append(place))
    lines = collection_lookups(vimeo, lambda: NOW)
    assert [(each.name, each.result) for each in lines] == [
        ("vimeo collection lookup, a folder", PASS),
        ("vimeo collection lookup, a showcase", PASS),
    ]
    assert asked == ["projects", "albums"]


# --- the simulators' drift knob (a test knob, infra/sim/drift.py) ---------------------------------------------------


@pytest.mark.parametrize(
    ("rules", "answer", "drifted"),
    [
        (["rename data.*.status state"], {"data": [{"status": "a"}, {}]}, {"data": [{"state": "a"}, {}]}),
        (["drop media.*.id"], {"media": [{"id": 1, "x": 2}]}, {"media": [{"x": 2}]}),
        (['set media.*.status "published"'], {"media": [{"status": "ready"}]}, {"media": [{"status": "published"}]}),
        (["set *.type null"], [{"type": "Video"}], [{"type": None}]),
        (["rename paging.next following"], {"data": []}, {"data": []}),  # a path that leads nowhere: no change
        (["rename data items", "drop total"], {"data": [1], "total": 1}, {"items": [1]}),
    ],
)
def test_the_drift_knob_reshapes_answers_as_a_drifted_platform_would(rules, answer, drifted):
    held = json.loads(json.dumps(answer))
    assert apply(rules, answer) == drifted and answer == held  # a copy: what the simulator holds is not changed


@pytest.mark.parametrize("rules", [["rename data"], ["shout data"], ["set a.b not-json"], [3], "drop x"])
def test_a_drift_rule_the_knob_cannot_read_is_refused(rules):
    with pytest.raises(ConfigError, match="drift"):
        SimConfig(drift=rules)
