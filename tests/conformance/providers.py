"""The target's contract, against its simulator: what every provider adapter answers, whatever its wire format.

`check_provider(name, launch, hooks, origin)` (the fixtures of tests/sim/conftest.py) runs, in order:

1. check: doctor's one cheap authenticated read is accepted with the made-up account's credentials;
2. create: a video made from a URL, tagged with our asset, CREATED with the provider's id;
3. find after a lost answer: a create the simulator performed but never answered is found by our reference
   before anything is sent again (the uploader's rule: a lost answer never makes a second video);
4. poll: each video reaches READY, under the id the create or the find named;
5. read_webhook: every event the simulator signed and delivered is verified over its exact bytes and read, and
   one names a video made here (a provider that `sends_webhooks`);
6. videos(): the audit's listing holds both videos, each under our reference, and nothing twice;
7. track_list, where the provider `takes_tracks`: a ready video's text tracks are listed (none yet).
"""

from __future__ import annotations

import time

from migrator.fate import OutcomeKind
from migrator.messages import AssetMessage
from migrator.providers import PROVIDERS, AssetRef, CreateDefaults, build
from migrator.providers.facts import TrackList
from migrator.states import State

from infra.accounts import account
from infra.sim import catalog
from tests.sim.support import wait_for

READY_WITHIN_S = 10.0


def _ref(asset_id: str, source: str) -> AssetRef:
    row = AssetMessage(asset_id, source, title=f"Conformance {asset_id}", privacy="public")
    return AssetRef(asset_id, row.title, 0, row)


def _ready(provider, asset_id: str, remote_id: str) -> bool:
    poll = provider.poll(asset_id, remote_id)
    return poll.video is not None and poll.video.target is State.READY


def provider_on_sim(name: str, launch, **knobs):
    """(simulator, provider): the target registered as `name` on its simulator profile, with the made-up account."""
    acct = account(name)
    sim = launch(name, **acct.sim, **knobs)
    provider = build(
        name,
        sim.url + catalog.profile(name).api_path,
        lambda: acct.credentials,
        webhook_scheme=acct.webhook_scheme,
        create_defaults=CreateDefaults("public", {}),
    )
    provider.http.session.trust_env = False
    return sim, provider


def check_provider(name: str, launch, hooks, origin, sample: bytes | None = None) -> None:
    """Run the target contract for the provider registered as `name` against its simulator profile (the aws
    target against the MediaConvert simulator, transcoding `sample`: tests/conformance/aws.py)."""
    if name == "aws":
        from tests.conformance.aws import check_aws

        assert sample is not None, "the aws target's contract transcodes a sample video"
        return check_aws(sample)
    acct = account(name)
    knobs = {"webhook_url": hooks.url, "webhook_secret": acct.webhook_secret, "webhook_scheme": acct.webhook_scheme}
    sim, provider = provider_on_sim(name, launch, **knobs)
    source = f"{origin.url}/ok.mp4?duration=12"
    started = time.time() - 5

    assert provider.check().status == 200, f"{name}: doctor's read refused the made-up account"

    made = provider.create(_ref("conformance/made", source), source)
    assert made.kind is OutcomeKind.CREATED and made.remote_id, f"{name}: create answered {made}"

    sim.patch_config({"lose_rate": 1.0})  # performed, never answered
    lost = provider.create(_ref("conformance/lost", source), source)
    sim.patch_config({"lose_rate": 0.0})
    assert lost.kind in (OutcomeKind.TRANSIENT, OutcomeKind.CREATED), f"{name}: a lost answer read as {lost}"
    assert set(sim._store.videos) - {made.remote_id}, f"{name}: the simulator did not perform the lost create"
    found = provider.find("conformance/lost", started)
    assert found.kind is OutcomeKind.CREATED, f"{name}: the lost create was not found ({found})"
    assert set(sim._store.videos) == {made.remote_id, found.remote_id}, f"{name}: find named another video"
    assert sim.stats()["duplicate_videos"] == 0

    remote = {"conformance/made": made.remote_id, "conformance/lost": found.remote_id}
    for asset_id, remote_id in remote.items():
        ready = wait_for(lambda a=asset_id, r=remote_id: _ready(provider, a, r), READY_WITHIN_S)
        assert ready, f"{name}: {asset_id} never polled READY"

    if PROVIDERS[name].sends_webhooks:
        assert wait_for(lambda: hooks.deliveries, READY_WITHIN_S), f"{name}: the simulator delivered no event"
        events = [
            provider.read_webhook(d.body, d.headers, [acct.webhook_secret], time.time(), 300) for d in hooks.deliveries
        ]
        named = {e.remote_id or (e.video.remote_id if e.video else None) for e in events} | {
            remote.get(e.asset_id or "") for e in events
        }
        assert named & set(remote.values()), f"{name}: no event named a video made here ({events})"

    listed = list(provider.videos())
    ours = sorted(v.ref for v in listed if v.ref in remote)
    assert ours == sorted(remote), f"{name}: the audit's listing held {ours}"
    assert len({v.remote_id for v in listed}) == len(listed), f"{name}: the listing named a video twice"

    if PROVIDERS[name].takes_tracks:
        tracks = provider.track_list(made.remote_id)
        assert isinstance(tracks, TrackList) and not tracks.video_gone, f"{name}: track_list answered {tracks}"
