"""Whether a source link lives as long as the target needs it: a pure decision, made at the hand-off.

A provider that fetches the link it is handed later than the create documents how long the link must stay
valid (`Provider.link_valid_for_s`: Vimeo's pull, "The URL must be valid for at least 24 hours"); one that
fetches it once the create is accepted needs a link alive at the hand-off. What a source link has is what
its platform documents of its links (`LinkTerms`, each source's class fact) and the time this one ends
where the link or the platform says it (`Resolution.expires_at`). `decide` weighs the two:

| the link                                             | target fetches at once | target needs it for N          |
|------------------------------------------------------|------------------------|--------------------------------|
| nothing says it ends (Wistia's original, a plain URL) | handed                 | handed                         |
| ends in N or more (a link minted now for N counts)   | handed                 | handed                         |
| ends sooner; its source signs links for N or more    | handed while alive     | re-minted for N and an hour    |
| ends sooner; nothing can sign it for longer          | handed while alive     | refused: why, and what to do   |
| ends at a time nobody says (Mux's master, Brightcove) | handed                 | refused (re-minted if it can)  |
| ended already                                        | re-minted, or refused  | re-minted, or refused          |

A refusal rejects the asset before any create is sent, its reason in the ledger; a re-mint hands the new link
with a note the ledger keeps. There is no "stage it in the stack's bucket" row: the stack stages caption text
only (the tracks worker's `StagedCaptions`), and copying a video through a Lambda is not built, so a link that
cannot live long enough is refused with the fix instead.

`expiry_in_link` reads the end a signed URL carries in itself (an S3, Cloud Storage or Azure signature, a
CloudFront or S3 V2 `Expires`), for a row's https link: untrusted text, read only where it is well formed.
"""

from __future__ import annotations

import calendar
import time
from dataclasses import dataclass
from enum import StrEnum
from urllib.parse import parse_qsl, urlsplit

# A link minted at the hand-off to live exactly what the target needs (api.video's 24-hour session, a KS in
# Kaltura's URL) meets the need: the create follows its mint within seconds (upload.create hands a link over
# again when more than HANDED_FRESH_S passed), which this covers with the clocks' own error.
MINTED_NOW_S = 60.0
# A link signed again is signed for what the target needs and this much more: the create's own retries and a
# clock that runs ahead.
REMINT_MARGIN_S = 3600.0
# What to do where a source's links cannot live as long as the target needs (a source's `LinkTerms.fix` says
# better where it knows better).
FIX = (
    "copy the videos to a bucket the stack signs links for (s3://, or a Cloud Storage or Azure source) and"
    " migrate from there, or migrate to a target that fetches at once"
)
# Untrusted numbers in a URL: more digits than any time this century is no time.
_MAX_DIGITS = 12


@dataclass(frozen=True)
class LinkTerms:
    """What a platform documents of how long the video links it hands out live."""

    words: str = ""  # the lifetime as the platform says it, quoted in a refusal ("" : nothing documented)
    # A link with no `expires_at` still ends, at a time nobody says (Mux's master lives 24 hours from when Mux
    # made it, not from the hand-off): never handed to a target that fetches later.
    expires_unsaid: bool = False
    # The longest a link can be signed for on request (S3 SigV4, Cloud Storage V4: seven days), where its
    # lifetime is the signer's to choose; None: not ours to choose.
    longest_s: float | None = None
    fix: str = FIX  # what the operator does where such a link cannot live long enough


@dataclass(frozen=True)
class Need:
    """How long a target needs the link it is handed: `valid_for_s` None where it fetches at once."""

    target: str
    valid_for_s: float | None = None
    words: str = ""  # the target's document, quoted in a refusal


def need_of(provider: object) -> Need:
    """What a provider needs of the link it is handed, from its class facts (`Provider.link_valid_for_s`,
    `.link_need_doc`); a stand-in without them fetches at once."""
    return Need(
        getattr(provider, "name", "") or "the provider",
        getattr(provider, "link_valid_for_s", None),
        getattr(provider, "link_need_doc", ""),
    )


class Handing(StrEnum):
    HAND = "hand"  # handed as it is
    REMINT = "remint"  # signed again by its source, for `mint_s`
    REFUSE = "refuse"  # the asset rejected with `reason`, no create spent


@dataclass(frozen=True)
class Verdict:
    handing: Handing
    mint_s: float | None = None  # REMINT: how long the new link must live
    reason: str = ""  # REFUSE: the rejection's words; REMINT: the note the ledger keeps


HAND = Verdict(Handing.HAND)


def decide(left_s: float | None, terms: LinkTerms, need: Need, may_remint: bool = True) -> Verdict:
    """What to do with a link that ends in `left_s` seconds (None: no end is known) before handing it to a target
    with `need` (see the module's table). `may_remint` False: this link was signed again already, and one
    still short is refused."""
    at_once = need.valid_for_s is None
    required = 0.0 if need.valid_for_s is None else float(need.valid_for_s)
    if left_s is None:
        if at_once or not terms.expires_unsaid:
            return HAND
    elif left_s > 0 and left_s >= required - (0.0 if at_once else MINTED_NOW_S):
        return HAND
    if may_remint and terms.longest_s is not None and terms.longest_s >= required:
        mint_s = min(terms.longest_s, required + REMINT_MARGIN_S)
        note = f"the source link was signed again to live {span(mint_s)}: {_needs(need)}"
        return Verdict(Handing.REMINT, mint_s, note)
    return Verdict(Handing.REFUSE, reason=f"{_has(left_s, terms)}; {_needs(need)}: {terms.fix}")


def _has(left_s: float | None, terms: LinkTerms) -> str:
    """What the link has, in words: the platform's, then this link's own end."""
    if left_s is None:
        this = "it ends at a time nobody says"
    elif left_s <= 0:
        this = f"this one ended {span(-left_s)} ago"
    else:
        this = f"this one ends in {span(left_s)}"
    return f"{terms.words}, and {this}" if terms.words else f"the link: {this}"


def _needs(need: Need) -> str:
    if need.valid_for_s is None:
        return f"{need.target} fetches it once the create is accepted"
    said = f" ({need.words})" if need.words else ""
    return f"{need.target} needs one valid for {span(need.valid_for_s)}{said}"


def span(seconds: float) -> str:
    """A duration as an operator reads it: 24 h, 4.5 h, 12 min, 40 s."""
    seconds = max(0.0, float(seconds))
    if seconds >= 3600:
        hours = seconds / 3600
        return f"{hours:.0f} h" if abs(hours - round(hours)) < 0.05 else f"{hours:.1f} h"
    if seconds >= 60:
        return f"{seconds / 60:.0f} min"
    return f"{seconds:.0f} s"


# --- the end a signed URL carries --------------------------------------------------------------------------


def expiry_in_link(url: str) -> float | None:
    """When a signed https URL stops working, as its own query says (epoch seconds), or None when it carries no
    end this knows: S3 SigV4 (`X-Amz-Date` + `X-Amz-Expires`), Cloud Storage V4 (`X-Goog-Date` +
    `X-Goog-Expires`), an Azure SAS (`se` beside `sig`), S3 V2 or CloudFront (`Expires` beside `Signature`).
    A signature made with temporary credentials may end sooner (AWS: "the URL expires when the token expires"):
    only what the link says is read."""
    try:
        query = dict(parse_qsl(urlsplit(url).query, keep_blank_values=True))
    except ValueError:
        return None
    for date, expires in (("X-Amz-Date", "X-Amz-Expires"), ("X-Goog-Date", "X-Goog-Expires")):
        if date in query and expires in query:
            start, lasting = _basic_time(query[date]), _whole(query[expires])
            return start + lasting if start is not None and lasting is not None else None
    if "se" in query and "sig" in query:
        return _iso_time(query["se"])
    if "Expires" in query and "Signature" in query:
        return _whole(query["Expires"])
    return None


def _whole(text: str) -> float | None:
    return float(text) if text.isascii() and text.isdigit() and len(text) <= _MAX_DIGITS else None


def _basic_time(text: str) -> float | None:
    """`20260101T000000Z` (ISO 8601 basic, UTC), as SigV4 and V4 signatures date themselves."""
    try:
        return float(calendar.timegm(time.strptime(text, "%Y%m%dT%H%M%SZ")))
    except ValueError:
        return None


def _iso_time(text: str) -> float | None:
    """An Azure SAS `se`: `2026-01-01T00:00:00Z`, or the date alone (`2026-01-01`: its midnight, UTC)."""
    for form in ("%Y-%m-%dT%H:%M:%SZ", "%Y-%m-%dT%H:%M:%S.%fZ", "%Y-%m-%dT%H:%MZ", "%Y-%m-%d"):
        try:
            return float(calendar.timegm(time.strptime(text, form)))
        except ValueError:
            continue
    return None
