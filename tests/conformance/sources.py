"""The source's contract, against its simulator: what every source adapter answers, whatever its wire format.

`check_source(name, launch, web)` (the fixtures of tests/sim/conftest.py) holds a small library on the platform's
simulator (captioned videos, unfetchable ones in the profile's own ways) and runs, in order:

1. page: the listing, page after page from each cursor, gives every video once, each a row whose `source_url` is a
   reference to this platform (never a download link) or an Unfetchable with its reason;
2. video: one listed video asked for by its id is the same row again (the next sweep's look at a pending video);
3. resolve: a row's reference becomes a download link (after PREPARING, where the platform makes the file first)
   that the simulator serves, as the target will fetch it;
4. tracks: a captioned row's caption references resolve to the caption itself (a link to it, or its text).
"""

from __future__ import annotations

from migrator.messages import AssetMessage
from migrator.sources import Page, ResolutionKind, Unfetchable, build, parse_ref

from infra.sim import catalog
from tests.sim.support import list_all, wait_for

LIBRARY = {
    "library_size": 10,
    "library_captions_every": 2,
    "library_unfetchable_every": 5,
    "link_ttl_s": 3600.0,
    "prepare_s": 0.05,
}
READY_WITHIN_S = 5.0


def _asset_ids(page: Page) -> list[str]:
    return [e.asset_id for e in page.entries]


def _resolved(source, ref) -> object:
    """The reference resolved, asked again while the platform prepares the file (a READY answer, or the last)."""
    answers = []

    def ready() -> bool:
        answers.append(source.resolve(ref))
        return answers[-1].kind is ResolutionKind.READY

    wait_for(ready, READY_WITHIN_S, step=0.05)
    return answers[-1]


def check_source(name: str, launch, web) -> None:
    """Run the source contract for the source registered as `name` against its simulator profile."""
    profile = catalog.profile(name)
    made = profile.made_up_source()
    sim = launch(name, **LIBRARY, **made.sim)
    source = build(name, lambda: made.credentials, sim.url + profile.api_path, patient=True, rate_per_s=0)

    entries, _pages = list_all(source)
    rows = [e for e in entries if isinstance(e, AssetMessage)]
    unfetchable = [e for e in entries if isinstance(e, Unfetchable)]
    assert rows, f"{name}: the listing gave no row ({entries})"
    ids = [e.asset_id for e in entries]
    assert len(ids) == len(set(ids)), f"{name}: the listing gave a video twice"
    for row in rows:
        ref = parse_ref(row.source_url)
        assert ref is not None and ref.platform == name and not ref.is_track, f"{name}: row {row.source_url}"
    assert unfetchable and all(u.reason for u in unfetchable), f"{name}: no unfetchable video, or one without why"

    row = rows[0]
    again = source.video(parse_ref(row.source_url).video_id)
    assert _asset_ids(again) == [row.asset_id], f"{name}: video() gave {again}"

    resolved = _resolved(source, parse_ref(row.source_url))
    assert resolved.kind is ResolutionKind.READY and resolved.url, f"{name}: resolve answered {resolved}"
    served = web.get(resolved.url, timeout=5)
    assert served.status_code == 200 and served.content, f"{name}: the link answered {served.status_code}"

    captioned = [r for r in rows if r.tracks]
    assert captioned, f"{name}: no captioned row in a library with captions"
    for track in captioned[0].tracks:
        caption = _resolved(source, parse_ref(track.url))
        assert caption.kind is ResolutionKind.READY, f"{name}: the track {track.url} resolved {caption}"
        text = caption.text if caption.text is not None else web.get(caption.url, timeout=5).text
        assert "-->" in text, f"{name}: the track {track.url} is no caption ({text[:60]!r})"
