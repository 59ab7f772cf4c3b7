"""The uploader's hand-off of a source reference: resolved just before the create, never earlier, and every
way a source can answer given its fate (a fake ledger, pacer, provider and resolver; no AWS).

The ledger's own writes for these fates (the attempt given back, `preparing_since` kept once) are
checked on the emulator in tests/emulator/test_source_waits.py.
"""

from __future__ import annotations

import json
import random
from dataclasses import replace

import pytest
from migrator.fate import FateKind, Outcome, OutcomeKind
from migrator.ledger import Claimed
from migrator.pacer import Go
from migrator.settings import Settings
from migrator.sources import Resolution, ResolutionKind, Resolver
from migrator.sources.dropbox import DropboxSource
from migrator.sources.mux import MuxSource
from migrator.uploader import Uploader

NOW = 1_800_000_000.0


class FakeLedger:
    def __init__(self, previous: dict | None = None):
        self.previous = previous
        self.calls: list[tuple[str, tuple, dict]] = []

    def claim(self, msg, now, lease_until, token, tracks_due=None):
        attempts = int((self.previous or {}).get("attempts", 0)) + 1
        return Claimed(token, attempts, self.previous, msg.source_url, claimed_at=now)

    def __getattr__(self, name):
        def write(*args, **kwargs):
            self.calls.append((name, args, kwargs))

            class Won:
                won = True

            return Won()

        return write

    def names(self) -> list[str]:
        return [name for name, _, _ in self.calls]


class FakePacer:
    """A slot at once, every time; whatever else the uploader tells the pacer is heard and ignored."""

    last_seen = None

    def __init__(self):
        self.reserved = 0

    def reserve(self, now, *args, **kwargs):
        self.reserved += 1
        return Go(now)

    def known_hold(self, *args, **kwargs):
        return None

    def __getattr__(self, name):
        return lambda *args, **kwargs: None


class FakeProvider:
    def __init__(self):
        self.created: list[str] = []

    def source_problem(self, url):
        return None

    def create(self, asset, source_url):
        self.created.append(source_url)
        self.privacy = asset.details.privacy if asset.details else None
        return Outcome(OutcomeKind.CREATED, remote_id="remote-1")

    def create_notes(self, asset, source_url):
        return ()

    def playback(self, asset):
        return "public"


class Clock:
    def __init__(self):
        self.now = NOW

    def __call__(self):
        return self.now


def uploader(resolve, previous=None, timeout_s=600.0):
    clock = Clock()
    settings = Settings(table_name="t", queue_url="q", provider_base_url=None, source_prepare_timeout_s=timeout_s)
    ledger, pacer, provider = FakeLedger(previous), FakePacer(), FakeProvider()
    asked: list[tuple[str, float]] = []

    def resolver(url):
        asked.append((url, clock.now))
        return resolve(url)

    up = Uploader(
        settings=settings,
        ledger=ledger,
        pacer=pacer,
        provider=provider,
        sqs=None,
        presign=lambda url: url,
        clock=clock,
        sleep=lambda s: None,
        rng=random.Random(1),
        sources=resolver,
    )
    return up, ledger, pacer, provider, asked


def record(source_url="vimeo://700000001"):
    return {"messageId": "m1", "body": json.dumps({"id": "vimeo/700000001", "source_url": source_url})}


def test_the_provider_is_handed_the_link_made_at_the_create_not_the_reference():
    up, ledger, _pacer, provider, asked = uploader(lambda url: Resolution.ready("https://cdn.example.com/fresh.mp4"))
    fate = up.process(record(), NOW + 60)
    assert fate.kind is FateKind.FINISHED
    assert provider.created == ["https://cdn.example.com/fresh.mp4"]  # the reference itself never reaches it
    assert asked == [("vimeo://700000001", NOW)] and ledger.names() == ["mark_processing"]


def test_a_file_being_prepared_defers_the_message_without_an_attempt_or_a_create_slot():
    up, ledger, pacer, provider, _ = uploader(lambda url: Resolution.preparing("Mux is preparing the master", 20.0))
    fate = up.process(record("mux://abc"), NOW + 60)
    assert fate.kind is FateKind.LATER and fate.pacing and 5 <= fate.delay_s <= 8  # the first wait is short
    (name, args, _kwargs) = ledger.calls[0]
    assert name == "release_preparing" and args[4] == "Mux is preparing the master"
    assert provider.created == [] and pacer.reserved == 0  # no slot of the provider's rate spent on a wait


def test_a_wait_that_has_lasted_waits_as_long_again_up_to_the_sources_interval():
    previous = {"state": "pending", "attempts": 0, "preparing_since": NOW - 12}
    up, *_ = uploader(lambda url: Resolution.preparing("Mux is preparing the master", 20.0), previous)
    assert 12 <= up.process(record("mux://abc"), NOW + 60).delay_s <= 15
    previous["preparing_since"] = NOW - 300
    up, *_ = uploader(lambda url: Resolution.preparing("Mux is preparing the master", 20.0), previous)
    assert 20 <= up.process(record("mux://abc"), NOW + 60).delay_s <= 23


def test_a_preparation_past_its_bound_fails_the_asset_with_the_reason():
    previous = {"state": "pending", "attempts": 0, "preparing_since": NOW - 700}
    up, ledger, _, provider, _ = uploader(lambda url: Resolution.preparing("Stream is preparing the MP4"), previous)
    fate = up.process(record("cloudflare://c1"), NOW + 60)
    assert fate.kind is FateKind.FINISHED and provider.created == []
    (name, args, _kwargs) = ledger.calls[0]
    assert name == "fail_preparing"
    assert "not ready after 700 s (SourcePrepareTimeoutSeconds 600): Stream is preparing the MP4" in args[2]


def test_the_last_wait_ends_at_the_bound_not_past_it():
    previous = {"state": "pending", "attempts": 0, "preparing_since": NOW - 590}
    up, _ledger, *_ = uploader(lambda url: Resolution.preparing("preparing", 60.0), previous)
    fate = up.process(record("mux://abc"), NOW + 60)
    assert fate.kind is FateKind.LATER and fate.delay_s <= 11 + 3  # 10 s left of the 600, plus a second and jitter


def test_unfetchable_at_the_create_is_rejected_with_the_inventorys_words():
    reason = "not found at the source: deleted from Vimeo, or no longer visible to these credentials"
    up, ledger, _, provider, _ = uploader(lambda url: Resolution.unfetchable(reason))
    fate = up.process(record(), NOW + 60)
    assert fate.kind is FateKind.FINISHED and provider.created == []
    (name, args, _kwargs) = ledger.calls[0]
    assert name == "mark_rejected" and args[2] == reason


@pytest.mark.parametrize("kind", [ResolutionKind.THROTTLED, ResolutionKind.DENIED])
def test_the_sources_pace_and_our_credentials_hold_the_asset_without_spending_it(kind):
    up, ledger, _, provider, _ = uploader(lambda url: Resolution(kind, reason="vimeo: HTTP 429", retry_after=30.0))
    fate = up.process(record(), NOW + 60)
    assert fate.kind is FateKind.LATER and fate.pacing and fate.delay_s >= 30
    (name, _args, kwargs) = ledger.calls[0]
    assert name == "release_throttled" and kwargs == {"count": False} and provider.created == []


def test_a_source_that_did_not_answer_spends_an_attempt_like_any_failed_request():
    up, ledger, _, _provider, _ = uploader(lambda url: Resolution(ResolutionKind.TRANSIENT, reason="vimeo: HTTP 502"))
    fate = up.process(record(), NOW + 60)
    assert fate.kind is FateKind.LATER and not fate.pacing
    (name, args, _kwargs) = ledger.calls[0]
    assert name == "mark_failed" and args[2] == "source: vimeo: HTTP 502" and args[3] is not None


def test_without_a_resolver_https_and_s3_sources_work_as_before():
    up, _ledger, _, provider, _ = uploader(lambda url: Resolution.ready(url))
    up.sources = None
    up.presign = lambda url: url.replace("s3://", "https://signed.example/")
    up.process(record("s3://bucket/a.mp4"), NOW + 60)
    assert provider.created == ["https://signed.example/bucket/a.mp4"]


@pytest.mark.parametrize(
    ("recorded", "at_the_source", "created_with", "recorded_now"),
    [
        ("public", "private", "private", "private"),  # made private since the inventory: the narrower wins
        ("private", "public", "private", None),  # made public since: never widened
        (None, None, None, None),  # the platform said nothing: the row as the ledger has it
        ("public", None, "public", None),  # nor does saying nothing narrow a public row (an https source)
    ],
)
def test_the_privacy_the_source_says_at_the_create_narrows_what_the_create_carries(
    recorded, at_the_source, created_with, recorded_now
):
    """Review 4, item 2: the privacy the uploader read from the source just before the create was ignored."""
    previous = {"state": "pending", "attempts": 0, "source_url": "vimeo://700000001", "privacy": recorded}
    ready = Resolution.ready("https://cdn.example.com/fresh.mp4", privacy=at_the_source)
    up, ledger, _pacer, provider, _ = uploader(lambda url: ready, previous={k: v for k, v in previous.items() if v})
    up.process(record(), NOW + 60)
    assert provider.privacy == created_with
    [(name, _args, kwargs)] = ledger.calls
    assert name == "mark_processing" and kwargs.get("privacy") == recorded_now


class ThrottledOnce(FakeProvider):
    """Answers the first create 429 with a Retry-After short enough to wait out in place."""

    def __init__(self, retry_after: float):
        super().__init__()
        self.retry_after = retry_after

    def create(self, asset, source_url):
        if not self.created:
            self.created.append(source_url)
            return Outcome(OutcomeKind.THROTTLED, retry_after=self.retry_after)
        return super().create(asset, source_url)


@pytest.mark.parametrize(("retry_after", "minted"), [(8.0, 2), (1.0, 1)])
def test_a_link_made_before_a_wait_in_place_is_made_again_before_the_create(retry_after, minted):
    """A 429 waited out inside the invocation: a link the source minted before the wait may have expired by
    its end (a Vimeo link of the test stack's 20 s), so the create after a wait of more than a few seconds is
    handed a link made again; after a moment's wait the first link is still handed."""
    up, _ledger, _pacer, _, asked = uploader(lambda url: Resolution.ready(f"https://cdn.example.com/{len(asked)}.mp4"))
    clock = up.clock

    def sleep(seconds):
        clock.now += seconds

    provider = ThrottledOnce(retry_after)
    up.provider, up.sleep = provider, sleep
    fate = up.process(record(), NOW + 300)
    assert fate.kind is FateKind.FINISHED
    assert len(asked) == minted
    assert provider.created == ["https://cdn.example.com/1.mp4", f"https://cdn.example.com/{minted}.mp4"]


class FetchesLater(FakeProvider):
    """A target that fetches the link it is handed later than the create, as Vimeo's pull does."""

    name = "vimeo"
    link_valid_for_s = 86_400.0
    link_need_doc = 'api.yaml, upload.link: "The URL must be valid for at least 24 hours"'


def dropbox_link(url):
    return replace(
        Resolution.ready("https://dl.dropboxusercontent.com/x.mp4", expires_at=NOW + 4 * 3600),
        terms=DropboxSource.link_terms,
    )


def test_a_link_that_ends_before_the_target_fetches_it_is_refused_before_any_create():
    """Issue 47, item 2.6: a Dropbox link (4 hours) was handed to Vimeo, which needs 24, to fail later."""
    up, ledger, pacer, _provider, _ = uploader(dropbox_link)
    up.provider = target = FetchesLater()
    fate = up.process(record("dropbox://id:abc"), NOW + 60)
    assert fate.kind is FateKind.FINISHED and target.created == [] and pacer.reserved == 0  # no create, no slot
    [(name, args, _kwargs)] = ledger.calls
    assert name == "mark_rejected"
    assert args[2].startswith("Dropbox's temporary links live 4 hours") and "vimeo needs one valid for 24 h" in args[2]


def test_mux_s_master_is_refused_to_a_target_that_fetches_later_and_handed_to_one_that_fetches_at_once():
    master = replace(Resolution.ready("https://master.mux.com/a.mp4"), terms=MuxSource.link_terms)
    up, ledger, _pacer, provider, _ = uploader(lambda url: master)
    up.process(record("mux://abc"), NOW + 60)
    assert provider.created == ["https://master.mux.com/a.mp4"]  # Mux, Stream, api.video...: at once
    up, ledger, _pacer, _provider, _ = uploader(lambda url: master)
    up.provider = target = FetchesLater()
    up.process(record("mux://abc"), NOW + 60)
    [(name, args, _kwargs)] = ledger.calls
    assert target.created == [] and name == "mark_rejected" and "at a time nobody says" in args[2]


def test_an_s3_link_signed_for_less_is_signed_again_for_the_target_and_the_ledger_notes_it():
    up, ledger, _pacer, _provider, _ = uploader(lambda url: None)

    def presign(url, expiry_s=None):
        return url.replace("s3://", "https://signed.example/") + f"?expires={expiry_s or 3600}"

    up.sources = Resolver(lambda platform: None, presign, presign_expiry_s=3600, clock=up.clock)
    up.provider = target = FetchesLater()
    fate = up.process(record("s3://masters/a.mp4"), NOW + 60)
    assert fate.kind is FateKind.FINISHED
    assert target.created == ["https://signed.example/masters/a.mp4?expires=90000"]  # 24 hours and one more
    [(name, _args, kwargs)] = ledger.calls
    assert name == "mark_processing"
    assert kwargs["notes"] == (
        "the source link was signed again to live 25 h: vimeo needs one valid for 24 h"
        ' (api.yaml, upload.link: "The URL must be valid for at least 24 hours")',
    )


def test_a_rows_link_that_ended_in_the_queue_is_refused_with_its_fix_not_handed_to_fail():
    ended = "https://b.s3.amazonaws.com/k.mp4?X-Amz-Date=20260101T000000Z&X-Amz-Expires=60&X-Amz-Signature=ab"
    up, ledger, _pacer, provider, _ = uploader(lambda url: None)
    up.sources = Resolver(lambda platform: None, lambda url: url, clock=up.clock)  # NOW is past 2026-01-01
    up.process(record(ended), NOW + 60)
    [(name, args, _kwargs)] = ledger.calls
    assert provider.created == [] and name == "mark_rejected"
    assert args[2].startswith("the row's link, and this one ended") and "give the row a link" in args[2]
