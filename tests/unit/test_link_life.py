"""A source link against the target's need (link_life.decide), as a table; the end a signed URL carries in
itself; and what the Resolver says of each link's life (its source's terms, an s3:// link signed for longer).

Issue 47, item 2.6: Vimeo's pull needs a link "valid for at least 24 hours", and no hand-off compared a link's
end with that: a Dropbox link (4 hours) or Mux's master (24 hours from when Mux made it) was handed over to
fail later."""

from __future__ import annotations

import pytest
from migrator.link_life import (
    FIX,
    MINTED_NOW_S,
    Handing,
    LinkTerms,
    Need,
    decide,
    expiry_in_link,
    need_of,
    span,
)
from migrator.providers import build as build_provider
from migrator.sources import ROW_TERMS, Resolution, Resolver
from migrator.sources.dropbox import DropboxSource
from migrator.sources.jwplayer import JwPlayerSource
from migrator.sources.kaltura import KalturaSource
from migrator.sources.mux import MuxSource

H = 3600.0
DAY = 24 * H
VIMEO = Need("vimeo", DAY, 'api.yaml, upload.link: "The URL must be valid for at least 24 hours"')
AT_ONCE = Need("mux")
DROPBOX = DropboxSource.link_terms
MUX_MASTER = MuxSource.link_terms
SIGNED_HERE = LinkTerms("the stack signs S3 links to live 1 h (PresignExpirySeconds)", longest_s=7 * DAY)
SESSION = LinkTerms("a private video's session token lives 24 hours")
JW_SIGNED = JwPlayerSource.link_terms
KALTURA_KS = KalturaSource.link_terms
NOTHING = LinkTerms()


@pytest.mark.parametrize(
    ("left_s", "terms", "need", "may_remint", "handing", "mint_s", "words"),
    [
        # nothing says it ends (Wistia's original file, a plain URL): handed, whatever the target
        (None, NOTHING, VIMEO, True, Handing.HAND, None, ""),
        (None, ROW_TERMS, AT_ONCE, True, Handing.HAND, None, ""),
        # a target that fetches at once: any link alive now
        (4 * H, DROPBOX, AT_ONCE, True, Handing.HAND, None, ""),
        (5.0, JW_SIGNED, AT_ONCE, True, Handing.HAND, None, ""),
        (None, MUX_MASTER, AT_ONCE, True, Handing.HAND, None, ""),
        # Vimeo's 24 hours: a link minted now for 24 hours meets it, one that lives less does not
        (DAY, SESSION, VIMEO, True, Handing.HAND, None, ""),
        (DAY - MINTED_NOW_S, SESSION, VIMEO, True, Handing.HAND, None, ""),
        (DAY - MINTED_NOW_S - 1, SESSION, VIMEO, True, Handing.REFUSE, None, "this one ends in 24 h"),
        (25 * H, SIGNED_HERE, VIMEO, True, Handing.HAND, None, ""),
        (
            4 * H,
            DROPBOX,
            VIMEO,
            True,
            Handing.REFUSE,
            None,
            'Dropbox\'s temporary links live 4 hours ("This link will expire in four hours"), and this one ends in'
            ' 4 h; vimeo needs one valid for 24 h (api.yaml, upload.link: "The URL must be valid for at least 24'
            f' hours"): {FIX}',
        ),
        (6 * H, JW_SIGNED, VIMEO, True, Handing.REFUSE, None, "JW Player's signed links are signed here for 6 hours"),
        (DAY - 1, KALTURA_KS, VIMEO, True, Handing.HAND, None, ""),  # a KS minted by getUrl just now
        # Mux's master lives 24 hours from when Mux made it, a time nobody says: never enough for a later fetch
        (None, MUX_MASTER, VIMEO, True, Handing.REFUSE, None, "and it ends at a time nobody says; vimeo needs"),
        # a link its source signs for longer on request: signed again for the need and an hour, once
        (H, SIGNED_HERE, VIMEO, True, Handing.REMINT, 25 * H, "signed again to live 25 h: vimeo needs one valid"),
        (H, SIGNED_HERE, VIMEO, False, Handing.REFUSE, None, "this one ends in 1 h"),
        (H, SIGNED_HERE, Need("x", 8 * DAY), True, Handing.REFUSE, None, "x needs one valid for 192 h"),
        # a link that ended already: signed again where it can be, else refused with the row's own fix
        (-30.0, SIGNED_HERE, AT_ONCE, True, Handing.REMINT, H, "mux fetches it once the create is accepted"),
        (-30.0, ROW_TERMS, AT_ONCE, True, Handing.REFUSE, None, "the row's link, and this one ended 30 s ago"),
        (0.0, ROW_TERMS, AT_ONCE, True, Handing.REFUSE, None, "give the row a link that lives as long"),
    ],
)
def test_a_link_is_handed_only_when_it_lives_as_long_as_the_target_needs(
    left_s, terms, need, may_remint, handing, mint_s, words
):
    verdict = decide(left_s, terms, need, may_remint)
    assert (verdict.handing, verdict.mint_s) == (handing, mint_s)
    assert words in verdict.reason


def test_a_refusal_says_why_and_what_to_do_within_the_ledgers_excerpt():
    reason = decide(4 * H, DROPBOX, VIMEO).reason
    assert reason.startswith("Dropbox's temporary links live 4 hours") and reason.endswith(FIX)
    assert len(reason) < 400 and "http" not in reason  # no link, so no signature, is ever written


@pytest.mark.parametrize(
    ("seconds", "said"), [(DAY, "24 h"), (4.5 * H, "4.5 h"), (25 * H, "25 h"), (720, "12 min"), (40, "40 s")]
)
def test_a_span_reads_as_an_operator_says_it(seconds, said):
    assert span(seconds) == said


JAN_1_2026 = 1_767_225_600.0


@pytest.mark.parametrize(
    ("url", "expires"),
    [
        (
            "https://b.s3.amazonaws.com/k.mp4?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Date=20260101T000000Z"
            "&X-Amz-Expires=3600&X-Amz-SignedHeaders=host&X-Amz-Signature=ab",
            JAN_1_2026 + 3600,
        ),
        (
            "https://storage.googleapis.com/b/o.mp4?X-Goog-Algorithm=GOOG4-RSA-SHA256&X-Goog-Date=20260101T000000Z"
            "&X-Goog-Expires=86400&X-Goog-Signature=ab",
            JAN_1_2026 + 86400,
        ),
        (
            "https://a.blob.core.windows.net/c/b.mp4?sv=2025-11-05&se=2026-01-02T00%3A00%3A00Z&sr=b&sp=r&sig=x%3D",
            JAN_1_2026 + 86400,
        ),
        ("https://a.blob.core.windows.net/c/b.mp4?sv=2025-11-05&se=2026-01-02&sr=b&sp=r&sig=x", JAN_1_2026 + 86400),
        ("https://d1.cloudfront.net/v.mp4?Expires=1767225600&Signature=x&Key-Pair-Id=K", JAN_1_2026),
        ("https://media.example.com/a.mp4?duration=40", None),  # says nothing of an end
        ("https://sim.local/_media/v.mp4?exp=1767225600&sig=abc", None),  # a form this does not know
        ("https://b.s3.amazonaws.com/k?X-Amz-Date=yesterday&X-Amz-Expires=3600&X-Amz-Signature=ab", None),
        ("https://b.s3.amazonaws.com/k?X-Amz-Date=20260101T000000Z&X-Amz-Expires=-5&X-Amz-Signature=ab", None),
        ("https://d1.cloudfront.net/v.mp4?Expires=99999999999999999999&Signature=x", None),
        ("https://a.blob.core.windows.net/c/b?se=soon&sig=x", None),
    ],
)
def test_the_end_a_signed_url_carries_in_itself(url, expires):
    assert expiry_in_link(url) == expires


def test_what_a_provider_needs_comes_from_its_class_facts():
    vimeo = build_provider("vimeo", "https://api.vimeo.com", lambda: "t")
    assert need_of(vimeo) == Need(
        "vimeo", 86_400.0, 'api.yaml, upload.link: "The URL must be valid for at least 24 hours"'
    )
    for name in ("mux", "cloudflare", "apivideo", "generic", "jwplayer", "bunny"):
        assert need_of(build_provider(name, "https://p.example", lambda: "{}")).valid_for_s is None, name
    assert need_of(object()) == Need("the provider")  # a stand-in fetches at once


class Source:
    link_terms = DROPBOX

    def __init__(self, expires_at):
        self.expires_at, self.lasting = expires_at, []

    def resolve(self, ref):
        return Resolution.ready("https://dl.example.com/x.mp4", expires_at=self.expires_at)

    def resolve_lasting(self, ref, lasting_s):
        self.lasting.append(lasting_s)
        return self.resolve(ref)


def test_the_resolver_says_what_is_known_of_each_links_life():
    source, signed = Source(1_000.0 + 4 * H), []

    def presign(url, expiry_s=None):
        signed.append(expiry_s)
        return url.replace("s3://", "https://signed.example/")

    resolver = Resolver(lambda platform: source, presign, presign_expiry_s=3600, clock=lambda: 1_000.0)
    video = resolver("dropbox://id:abc")
    assert (video.expires_at, video.terms) == (1_000.0 + 4 * H, DROPBOX)  # the source's own terms
    assert resolver("dropbox://id:abc/sidecar/id:def").terms is None  # a track's link is no video's
    s3 = resolver("s3://bucket/k.mp4")
    assert (s3.url, s3.expires_at, s3.terms.longest_s) == ("https://signed.example/bucket/k.mp4", 4_600.0, 7 * DAY)
    longer = resolver("s3://bucket/k.mp4", lasting_s=25 * H)
    assert signed == [None, 90_000] and longer.expires_at == 1_000.0 + 25 * H
    assert resolver("s3://bucket/k.mp4", lasting_s=30 * DAY).expires_at == 1_000.0 + 7 * DAY  # SigV4's most
    row = resolver("https://b.s3.amazonaws.com/k?X-Amz-Date=20260101T000000Z&X-Amz-Expires=60&X-Amz-Signature=a")
    assert (row.expires_at, row.terms) == (JAN_1_2026 + 60, ROW_TERMS)
    resolver("dropbox://id:abc", lasting_s=25 * H)
    assert source.lasting == [25 * H]
