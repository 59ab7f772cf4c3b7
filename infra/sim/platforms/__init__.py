"""The platforms the simulator speaks, one profile each, and the one place they are registered.

Each module is one platform's wire format (its paths, credentials, bodies, errors, rate-limit headers, events and
signatures) on the shared engine (infra/sim/*.py), and its profile class declares what the rest reads of it: its
`name` (the `--profile` value, the same as the platform's in migrator.platforms), its documented `limits`, and where
its API lives below the simulator's address (`api_path`). A platform with a big wire format keeps its parts beside
it (mux_signing, cloudflare_signing, apivideo_library, apivideo_vod, jwplayer_library, kaltura_entries,
vimeo_target).

A profile is registered by one line in REGISTERED below (docs/adding-a-platform.md); the engine finds it by name
through infra.sim.catalog.
"""

from __future__ import annotations

from .. import catalog
from ..profile import Profile
from .apivideo import ApiVideo
from .brightcove import Brightcove
from .bunny import Bunny
from .cloudflare import Cloudflare
from .dropbox import Dropbox
from .generic import Generic
from .jwplayer import JwPlayer
from .kaltura import Kaltura
from .mux import Mux
from .vimeo import Vimeo
from .wistia import Wistia

REGISTERED: tuple[type[Profile], ...] = (
    Generic,
    Mux,
    Cloudflare,
    ApiVideo,
    Vimeo,
    Wistia,
    Kaltura,
    JwPlayer,
    Brightcove,
    Dropbox,
    Bunny,
)
# One instance of each, by name (they hold no state: the engine's SimState does).
PROFILES: dict[str, Profile] = catalog.install(cls() for cls in REGISTERED)
