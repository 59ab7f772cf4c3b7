"""Usage read apart from a listing (issue 45): one reader per platform whose analytics are priced or paced apart.

`READERS` maps a platform to a factory `(credentials_reader, base_url, *, patient, rate_per_s) -> UsageReader`
(usage.py), the same arguments `sources.build` takes; `migrator usage --from PLATFORM` runs the pass with it.
Platforms that give usage in the listing itself (Kaltura's entry fields, Vimeo's stats) are not here: their
rows carry it from the inventory.

One module per platform, each citing the platform's documents and reusing that platform's source (sources/) for
its transport, credentials, pacing and 429 handling; what they share is in common.py. A per-video reader (Wistia)
reads the pass's ids from its cursor; the others page through an account-wide breakdown and name only the videos
the answer holds.
"""

from __future__ import annotations

from collections.abc import Callable

from ...usage import UsageReader
from .apivideo import ApiVideoUsage
from .brightcove import BrightcoveUsage
from .cloudflare import CloudflareUsage
from .jwplayer import JwPlayerUsage
from .mux import MuxUsage
from .wistia import WistiaUsage

READERS: dict[str, Callable[..., UsageReader]] = {
    "wistia": WistiaUsage,
    "jwplayer": JwPlayerUsage,
    "brightcove": BrightcoveUsage,
    "apivideo": ApiVideoUsage,
    "mux": MuxUsage,
    "cloudflare": CloudflareUsage,
}
