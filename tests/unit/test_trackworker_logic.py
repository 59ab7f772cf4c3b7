"""The tracks worker's pass on one track, with a provider and a fetch that are fakes: when it looks before it
uploads, what it makes of what it finds, and where a track's URL is taken from (https, s3://, a source reference)."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from migrator.messages import Track
from migrator.providers.facts import RemoteTrack, TrackList
from migrator.trackfetch import Fetched, FetchFailed
from migrator.tracks import TrackOutcome, TrackResult
from migrator.trackworker import TracksWorker

from tests.track_files import SRT

EN = Track("https://captions.example.com/en.srt", "en")


@dataclass
class FakeProvider:
    listed: TrackList | TrackOutcome = field(default_factory=TrackList)
    answer: TrackOutcome = field(default_factory=lambda: TrackOutcome(TrackResult.ATTACHED, remote_track_id="en"))
    name: str = "fake"
    takes_caption_files: bool = True
    published: TrackOutcome = field(default_factory=lambda: TrackOutcome(TrackResult.ATTACHED, remote_track_id="t1"))
    looks: int = 0
    attached: list = field(default_factory=list)
    publishes: list = field(default_factory=list)

    def track_list(self, remote_id):
        self.looks += 1
        return self.listed

    def track_matches(self, remote, track, ref):
        return remote.language == track.language

    def attach_track(self, remote_id, track, upload, label):
        self.attached.append((remote_id, track.language, upload.url, upload.caption.format, label))
        return self.answer

    def publish_track(self, remote_id, remote):
        self.publishes.append((remote_id, remote.remote_id))
        return self.published


def worker(provider, fetched=None, presign=lambda url: "https://bucket.s3.example.com/signed"):
    fetches = []

    def fetch(url, policy):
        fetches.append(url)
        return fetched if fetched is not None else Fetched(SRT, url)

    made = TracksWorker(ledger=None, provider=provider, sqs=None, queue_url="q", presign=presign, fetch=fetch)
    made.fetches = fetches
    return made


def test_a_first_pass_uploads_without_looking():
    provider = FakeProvider()
    got = worker(provider)._pass(EN, {"attempts": 1, "via": "upload"}, "vid", "English")
    assert got.kind is TrackResult.ATTACHED and provider.looks == 0
    assert provider.attached == [("vid", "en", EN.url, "srt", "English")]


def test_a_later_pass_looks_first_and_a_track_already_there_is_attached_without_a_second_upload():
    provider = FakeProvider(listed=TrackList((RemoteTrack("en", remote_id="en"),)))
    made = worker(provider)
    got = made._pass(EN, {"attempts": 2, "via": "upload"}, "vid", "English")
    assert got == TrackOutcome(TrackResult.ATTACHED, remote_track_id="en")
    assert provider.attached == [] and made.fetches == []


def test_a_later_pass_that_finds_nothing_uploads():
    provider = FakeProvider(listed=TrackList((RemoteTrack("fr"),)))
    assert worker(provider)._pass(EN, {"attempts": 3}, "vid", "en").kind is TrackResult.ATTACHED
    assert provider.looks == 1 and len(provider.attached) == 1


@pytest.mark.parametrize(
    ("listed", "kind", "uploads"),
    [
        (TrackList((RemoteTrack("en", "ready", remote_id="t1"),)), TrackResult.ATTACHED, 0),
        (TrackList((RemoteTrack("en", "preparing"),)), TrackResult.WAITING, 0),
        (TrackList((RemoteTrack("en", "draft", remote_id="t1"),)), TrackResult.ATTACHED, 0),  # published (JW)
        (TrackList((RemoteTrack("en", "errored", error="provider: bad file"),)), TrackResult.REFUSED, 0),
        (TrackList((), open_for_tracks=False), TrackResult.WAITING, 0),  # Mux: the asset is not ready yet
        (TrackList(()), TrackResult.ATTACHED, 1),  # ready, and the create's track is not there: sent now
        (TrackList(video_gone="Mux has no such asset"), TrackResult.VIDEO_GONE, 0),
        (TrackOutcome(TrackResult.THROTTLED, retry_after=5.0), TrackResult.THROTTLED, 0),
    ],
)
def test_a_track_the_create_carried_is_confirmed_from_the_providers_list(listed, kind, uploads):
    provider = FakeProvider(listed=listed)
    got = worker(provider)._pass(EN, {"attempts": 1, "via": "create"}, "vid", "en")
    assert got.kind is kind and len(provider.attached) == uploads


@pytest.mark.parametrize(
    "published",
    [
        TrackOutcome(TrackResult.ATTACHED, remote_track_id="t1"),
        TrackOutcome(TrackResult.SUBMITTED, remote_track_id="t1"),  # accepted, not yet listed ready: looked at again
        TrackOutcome(TrackResult.TRANSIENT, error="provider: HTTP 503"),
    ],
)
def test_a_track_the_provider_holds_as_a_draft_is_published_and_never_uploaded_again(published):
    """JW Player keeps a track it has read as a draft, delivered to no viewer, until it is published: the pass
    that finds ours so publishes that very track, whatever the publish answers, and never fetches or sends the
    file a second time (a second track)."""
    provider = FakeProvider(listed=TrackList((RemoteTrack("en", "draft", remote_id="t1"),)), published=published)
    made = worker(provider)
    assert made._pass(EN, {"attempts": 1, "submitted": True}, "vid", "English") == published
    assert provider.publishes == [("vid", "t1")] and provider.attached == [] and made.fetches == []


def test_a_bad_file_or_a_refused_fetch_fails_the_track_with_its_reason_and_sends_nothing():
    provider = FakeProvider()
    junk = worker(provider, fetched=Fetched(b"<html>", EN.url))._pass(EN, {"attempts": 1}, "vid", "en")
    assert junk.kind is TrackResult.REFUSED and junk.error.startswith("not a caption file: neither WebVTT")
    refused = FetchFailed("the track's host c.example resolves to 10.0.0.1, private: only public addresses are fetched")
    got = worker(provider, fetched=refused)._pass(EN, {"attempts": 1}, "vid", "en")
    assert got == TrackOutcome(TrackResult.REFUSED, error=refused.reason)
    slow = worker(provider, fetched=FetchFailed("took too long", retryable=True))._pass(
        EN, {"attempts": 1}, "vid", "en"
    )
    assert slow.kind is TrackResult.TRANSIENT
    assert provider.attached == []


def test_an_s3_track_is_fetched_through_a_presigned_url_and_that_url_is_what_the_provider_gets():
    provider = FakeProvider()
    made = worker(provider)
    made._pass(Track("s3://bucket/en.srt", "en"), {"attempts": 1}, "vid", "en")
    assert made.fetches == ["https://bucket.s3.example.com/signed"]
    assert provider.attached[0][2] == "https://bucket.s3.example.com/signed"


def test_a_source_reference_is_resolved_at_the_source_and_each_answer_has_its_fate():
    """A track's `vimeo://…` is resolved by migrator.sources: a fresh link is fetched as any URL, a
    caption the source serves as text is attached as it is, and the rest is a retry or a failure."""
    from migrator.trackworker import InlineCaption

    ref = Track("vimeo://76979871/texttracks/1", "en")
    answers = {
        "link": "https://captions.vimeocdn.example/en.vtt?token=fresh",
        "text": InlineCaption(SRT.decode(), "srt"),
        "gone": FetchFailed("the source cannot serve it: the video is private"),
        "later": FetchFailed("the source reference is not ready: preparing", retryable=True),
    }
    outcomes = {}
    for name, answer in answers.items():
        provider = FakeProvider()
        made = worker(provider)
        made.resolve_source = lambda url, answer=answer: answer
        outcomes[name] = (made._pass(ref, {"attempts": 1}, "vid", "en"), provider, made.fetches)
    got, provider, fetches = outcomes["link"]
    assert got.kind is TrackResult.ATTACHED and fetches == [answers["link"]]
    got, provider, fetches = outcomes["text"]
    assert got.kind is TrackResult.ATTACHED and fetches == [] and provider.attached[0][3] == "srt"
    assert outcomes["gone"][0].kind is TrackResult.REFUSED and "private" in outcomes["gone"][0].error
    assert outcomes["later"][0].kind is TrackResult.TRANSIENT
    by_url = FakeProvider(name="mux", takes_caption_files=False)  # Mux fetches a caption by URL itself
    made = worker(by_url)
    made.resolve_source = lambda url: answers["text"]
    assert made._pass(ref, {"attempts": 1}, "vid", "en").kind is TrackResult.REFUSED and by_url.attached == []


def test_a_caption_a_source_serves_as_text_reaches_a_target_that_fetches_by_url_through_a_staged_copy():
    """Sources, item 9: Wistia's and Stream's captions (text through their APIs) always failed on Mux, which
    fetches a caption by URL: the worker stages the text in the stack's bucket and hands Mux a short link."""
    from migrator.trackworker import InlineCaption

    ref = Track("wistia://abc123/captions/eng", "en")
    staged = []

    def stage(key, body):
        staged.append((key, body))
        return "https://staging.s3.example.com/" + key + "?X-Amz-Signature=s"

    mux = FakeProvider(name="mux", takes_caption_files=False)
    made = worker(mux)
    made.stage = stage
    made.resolve_source = lambda url: InlineCaption(SRT.decode(), "srt")
    got = made._pass(ref, {"attempts": 1}, "vid", "English")
    assert got.kind is TrackResult.ATTACHED and made.fetches == []
    assert staged == [("captions/vid/en.captions.", SRT)]
    assert mux.attached == [
        ("vid", "en", "https://staging.s3.example.com/captions/vid/en.captions.?X-Amz-Signature=s", "srt", "English")
    ]


@pytest.mark.parametrize("takes_files", [True, False])
def test_caption_text_over_the_cap_is_refused_like_a_fetched_file_and_junk_is_never_staged(takes_files):
    from migrator.trackfetch import FetchPolicy
    from migrator.trackworker import InlineCaption

    ref = Track("cloudflare://uid/captions/en", "en")
    provider = FakeProvider(takes_caption_files=takes_files)
    made = worker(provider)
    made.policy, staged = FetchPolicy(max_bytes=1024), []
    made.stage = lambda key, body: staged.append(key) or "https://x"
    made.resolve_source = lambda url: InlineCaption("WEBVTT\n\n" + "x" * 2000, "vtt")
    got = made._pass(ref, {"attempts": 1}, "vid", "en")
    assert got.kind is TrackResult.REFUSED and "over the 1,024 allowed" in got.error
    made.resolve_source = lambda url: InlineCaption("<html>sign in</html>", None)
    got = made._pass(ref, {"attempts": 1}, "vid", "en")
    assert got.kind is TrackResult.REFUSED and got.error.startswith("not a caption file")
    assert staged == [] and provider.attached == []


# --- the fleet's pace: a pass's calls, counted ---------------------------------------------------------------


def test_a_pass_counts_only_the_requests_it_sends_to_the_targets_api():
    from migrator.providers.http import _watch, watching
    from migrator.trackworker import ProviderCalls

    calls = ProviderCalls("https://api.vimeo.com")
    with watching(calls):
        for url in (
            "https://api.vimeo.com/videos/1/pictures",  # made
            "https://upload.vimeo.example/pictures/9?sig=x",  # its file, to the upload link: another origin
            "https://api.vimeo.com/videos/1/pictures/9",  # made active
        ):
            _watch.get().before("POST", url)
    assert calls.count == 2 and _watch.get() is None  # the watch ends with the pass
    every = ProviderCalls("")  # a provider with no transport (a test's fake): every request counts
    with watching(every):
        _watch.get().before("GET", "https://anywhere.example/x")
    assert every.count == 1


class Slots:
    """A pacer that hands out `free` slots, then holds."""

    def __init__(self, free: int):
        self.free, self.taken = free, 0

    def reserve(self, now, within=None, purpose="create"):
        from migrator.pacer_item import Go, Hold

        if self.taken >= self.free:
            return Hold(now + 5, "429")
        self.taken += 1
        return Go(now)


@pytest.mark.parametrize(("calls", "free", "taken"), [(3, 10, 2), (1, 10, 0), (0, 10, 0), (5, 2, 2)])
def test_a_pass_owes_the_slots_of_its_calls_past_the_first_and_stops_at_a_hold(calls, free, taken):
    made = worker(FakeProvider())
    made.pacer = Slots(free)
    made._owe(calls - 1)
    assert made.pacer.taken == taken


@pytest.mark.parametrize(("covers_all", "item_id"), [(True, "#pacer"), (False, "#pacer#tracks")])
def test_the_tracks_take_the_fleets_pace_only_where_one_budget_covers_every_call(covers_all, item_id):
    """Vimeo, Cloudflare, JW Player: a track's call spends what a create would. Mux limits creates (1/s) apart
    from the rest (5/s): there a track's 429 must neither hold nor cut the creates; the tracks learn their own."""
    from types import SimpleNamespace

    from migrator.pacer import Pacer
    from migrator.settings import Settings

    provider = SimpleNamespace(budget_covers_all_calls=covers_all, create_rate_per_s=1.0, max_in_flight=None)
    settings = Settings(table_name="ledger", queue_url="q", provider="mux", provider_base_url="https://x")
    pacer = Pacer.for_tracks(settings, client=None, provider=provider)
    assert pacer.table.item_id == item_id
    assert (pacer.ceiling is not None) is covers_all  # the documented create rate bounds only the fleet's pace
