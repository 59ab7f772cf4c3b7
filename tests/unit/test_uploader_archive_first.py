"""ArchiveFirst in the uploader's flow (fakes, no AWS; the ledger's own writes are checked on the emulator in
tests/emulator/test_uploader_archive.py): the archived copy handed over through the same hand-off as any s3://
source, weighed against what the target needs of a link; the row's own link never resolved; a target that cannot
fetch a presigned GET refused; and a stack that archives alongside the create unchanged."""

from __future__ import annotations

import json
from dataclasses import replace

from migrator.fate import FateKind
from migrator.sources import Resolution, Resolver

from tests.unit.test_uploader_sources import NOW, FakeLedger, FakeProvider, FetchesLater, record, uploader

KEY = "masters/vimeo/700000001/original.mp4"  # archive.plan.original_key: the id a folder per segment
ARCHIVED = {"state": "archived", "key": KEY, "sha256": "c2hh", "bytes": 10}


class ArchiveLedger(FakeLedger):
    """The fake ledger with the copy's item as the archive worker left it (None: none owed)."""

    def __init__(self, archived: dict | None):
        super().__init__(None)
        self.archived = archived

    def archive(self, asset_id):
        self.calls.append(("archive", (asset_id,), {}))
        return self.archived


class FakeSqs:
    def __init__(self):
        self.sent: list[dict] = []

    def send_message(self, **kwargs):
        self.sent.append(kwargs)


def presign(url, expiry_s=None):
    return url.replace("s3://", "https://signed.example/") + f"?expires={expiry_s or 3600}"


def archiving_first(archived: dict | None, first: bool = True):
    resolved: list[str] = []

    def row_source(url):  # the row's one-use link: resolving it would spend it
        resolved.append(url)
        return Resolution.ready("https://one-use.example.com/a.mp4")

    up, _ledger, pacer, provider, _asked = uploader(row_source)
    up.ledger = ledger = ArchiveLedger(archived)
    up.sqs = sqs = FakeSqs()
    up.settings = replace(
        up.settings,
        archive_queue_url="archive-q",
        archive_first=first,
        archive_bucket="owner-masters",
        archive_prefix="masters",
        presign_expiry_s=3600,
    )
    stack = Resolver(lambda platform: None, presign, presign_expiry_s=3600, clock=up.clock)

    def sources(url, lasting_s=None):
        return stack(url, lasting_s) if url.startswith("s3://") else row_source(url)

    up.sources = sources
    return up, ledger, pacer, provider, sqs, resolved


def test_the_archived_copy_is_signed_for_as_long_as_the_target_needs_and_the_row_link_is_never_spent():
    up, ledger, _pacer, _provider, sqs, resolved = archiving_first(ARCHIVED)
    up.provider = target = FetchesLater()  # Vimeo's pull: a link valid 24 hours
    fate = up.process(record(), NOW + 60)
    assert fate.kind is FateKind.FINISHED
    assert target.created == [f"https://signed.example/owner-masters/{KEY}?expires=90000"]
    assert resolved == []  # the row's one-use link was never asked for
    assert ledger.names() == ["archive", "mark_processing"]
    assert sqs.sent == []  # copied already: no second copy owed


def test_the_first_pass_owes_the_copy_and_holds_the_claim_without_a_create_or_a_slot():
    up, ledger, pacer, provider, sqs, resolved = archiving_first(None)
    fate = up.process(record(), NOW + 60)
    assert fate.kind is FateKind.LATER and fate.pacing and 30 <= fate.delay_s <= 36
    assert provider.created == [] and pacer.reserved == 0 and resolved == []
    assert ledger.names() == ["archive", "owe_archive", "release_throttled"]
    (_, _args, kwargs) = ledger.calls[-1]
    assert kwargs["count"] is False  # a hold: no attempt spent, no throttle counted
    assert [(m["QueueUrl"], json.loads(m["MessageBody"])) for m in sqs.sent] == [
        ("archive-q", {"id": "vimeo/700000001"})
    ]


def test_a_target_that_cannot_fetch_a_presigned_get_is_refused_with_its_reason():
    class HeadsFirst(FakeProvider):
        def source_problem(self, url):
            return "cloudflare fetches a source with HEAD and range GETs" if url.startswith("s3://") else None

    up, ledger, _pacer, _provider, _sqs, _resolved = archiving_first(ARCHIVED)
    up.provider = target = HeadsFirst()
    up.process(record(), NOW + 60)
    assert target.created == []
    assert ledger.names() == ["archive", "mark_rejected"] and "HEAD and range GETs" in ledger.calls[-1][1][2]


def test_archiving_alongside_the_create_reads_no_copy_and_hands_the_rows_link():
    up, ledger, _pacer, provider, sqs, resolved = archiving_first(None, first=False)
    up.process(record(), NOW + 60)
    assert provider.created == ["https://one-use.example.com/a.mp4"] and resolved == ["vimeo://700000001"]
    assert ledger.names() == ["mark_processing", "owe_archive"]  # the copy owed after the create, as before
    assert [m["QueueUrl"] for m in sqs.sent] == ["archive-q"]
