"""Cloudflare Stream as a source, what a viewer sees first (issue 42): the poster frame (`thumbnailTimestampPct` of
the duration) and the video's default `thumbnail`, as it is for a video without signed URLs, else a reference
resolved to it with a token in place of the uid; nothing else (no chapters, no collections, no publish time).
Driven by cloudflare 5.9.0 (its Video model's `thumbnail`, `stream.token.create`) and migrator.sources.cloudflare
against the "cloudflare" simulator."""

from __future__ import annotations

import cloudflare
import pytest
from migrator.messages import AssetMessage
from migrator.sources import ResolutionKind, build, parse_ref

from infra.sim.library import item
from infra.sim.platforms.cloudflare import FAULTS

TOKEN, ACCOUNT = "cf-src-token", "0123456789abcdef0123456789abcdef"


def uid(index: int) -> str:
    return f"cf{index:030d}"


@pytest.fixture
def library(launch):
    # Private every fourth from 0: 0 and 8 require signed URLs, 4 is limited to one site's embeds.
    sim = launch("cloudflare", token=TOKEN, account_id=ACCOUNT, library_size=10, library_private_every=4)
    creds = {"account_id": ACCOUNT, "api_token": TOKEN}
    client = cloudflare.Cloudflare(api_token=TOKEN, base_url=sim.url, max_retries=0)
    yield sim, build("cloudflare", lambda: creds, sim.url, patient=True, rate_per_s=0), client
    client.close()


def test_the_sdk_reads_the_default_thumbnail_a_signed_video_serves_only_at_a_token(library, web):
    sim, _, client = library
    public = client.stream.get(identifier=uid(1), account_id=ACCOUNT)
    assert public.thumbnail == f"{sim.url}/_stream/{uid(1)}/thumbnails/thumbnail.jpg"
    assert web.get(public.thumbnail).content[:3] == b"\xff\xd8\xff"
    signed = client.stream.get(identifier=uid(8), account_id=ACCOUNT)
    assert signed.require_signed_urls is True and web.get(signed.thumbnail).status_code == 403
    token = client.stream.token.create(uid(8), account_id=ACCOUNT).token  # not downloadable: a thumbnail needs not
    image = web.get(signed.thumbnail.replace(uid(8), token))
    assert image.status_code == 200 and image.headers["Content-Type"] == "image/jpeg"


def test_rows_carry_the_poster_frame_and_the_thumbnail_a_signed_one_by_reference(library, web):
    sim, source, _ = library
    rows = {e.asset_id.split("/")[1]: e for e in source.page(None, tracks=False).entries}
    one, four, eight = rows[uid(1)], rows[uid(4)], rows[uid(8)]
    assert isinstance(one, AssetMessage) and one.poster_time_s == pytest.approx(
        0.25 * item(sim.config, 1, FAULTS).duration, abs=0.001
    )
    assert one.thumbnail_url == f"{sim.url}/_stream/{uid(1)}/thumbnails/thumbnail.jpg"  # lasting: no token
    assert four.privacy == "signed" and four.thumbnail_url.endswith(f"/{uid(4)}/thumbnails/thumbnail.jpg")
    assert eight.thumbnail_url == f"cloudflare://{uid(8)}/thumbnail/default"
    resolved = source.resolve(parse_ref(eight.thumbnail_url))
    assert resolved.kind is ResolutionKind.READY and uid(8) not in resolved.url and resolved.expires_at
    assert web.get(resolved.url).content[:3] == b"\xff\xd8\xff"
    assert not one.chapters and not one.collections and one.published_at is None and not one.tracks


def test_a_video_still_encoding_has_no_thumbnail_yet(launch):
    sim = launch("cloudflare", token=TOKEN, account_id=ACCOUNT, library_size=3, library_unfetchable_every=3)
    source = build("cloudflare", lambda: {"account_id": ACCOUNT, "api_token": TOKEN}, sim.url, rate_per_s=0)
    page = source.page(None, tracks=False)
    assert [p.asset_id for p in page.pending] == [f"cloudflare/{uid(2)}"]  # processing: no row, no thumbnail
    gone = source.resolve(parse_ref(f"cloudflare://{uid(2)}/thumbnail/default"))
    assert gone.kind is ResolutionKind.UNFETCHABLE and "no thumbnail" in gone.reason
