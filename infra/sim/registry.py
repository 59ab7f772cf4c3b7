"""The provider profiles by name, one instance each, in the order config.PROFILES names them."""

from __future__ import annotations

from .apivideo import ApiVideo
from .brightcove import Brightcove
from .bunny import Bunny
from .cloudflare import Cloudflare
from .config import PROFILES as PROFILE_NAMES
from .dropbox import Dropbox
from .generic import Generic
from .jwplayer import JwPlayer
from .kaltura import Kaltura
from .mux import Mux
from .profile import Profile
from .vimeo import Vimeo
from .wistia import Wistia

PROFILES: dict[str, Profile] = {
    p.name: p
    for p in (
        Generic(),
        Mux(),
        Cloudflare(),
        ApiVideo(),
        Vimeo(),
        Wistia(),
        Kaltura(),
        JwPlayer(),
        Brightcove(),
        Dropbox(),
    )
}
PROFILES["bunny"] = Bunny()  # config.PROFILES names it last
assert tuple(PROFILES) == PROFILE_NAMES, "config.PROFILES and the profile classes must agree"
