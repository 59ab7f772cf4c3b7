"""The tracks worker against the emulator's ledger and the provider simulator, each provider's way: what the
provider holds afterwards (read back from the simulator), each track once, after a lost answer and after a
pass that died; a bad track failing alone, with its reason, while the others attach; and at JW Player, a track
held as a draft (delivered to no one) published by the worker, never sent a second time. Then the extras
(issue 42) at api.video and Bunny: a thumbnail, chapters and collections, once each, read back from the target,
and a collection made once whatever the races, crashes and lost answers."""

from __future__ import annotations

import time

import pytest
from migrator.extras import collection_entry_key, collection_key
from migrator.fate import FateKind
from migrator.ledger import Ledger
from migrator.messages import AssetMessage, Track, track_key
from migrator.providers import AssetRef, build
from migrator.providers.facts import TrackUpload
from migrator.row_extras import Chapter, Collection
from migrator.states import State
from migrator.trackfetch import FetchPolicy
from migrator.tracks import TrackMove, TrackState, initial_states, tracks_message
from migrator.trackworker import TracksWorker

from infra.accounts import account
from infra.provider_sim import ProviderSim, SimConfig
from tests.track_files import SRT, VTT, FileServer, body, declared_huge

pytestmark = pytest.mark.emulator


class Clock:
    """The worker's time: real time plus what the test skipped ahead (retry times, waits)."""

    def __init__(self):
        self.skipped = 0.0

    def __call__(self) -> float:
        return time.time() + self.skipped


@pytest.fixture
def files():
    with FileServer() as server:
        yield server


def started(name: str, aws, table, files):
    acct = account(name)
    sim = ProviderSim(
        SimConfig(port=0, profile=name, rate=0, read_rate=0, budget_quota=0, processing_delay_s=0.1, **acct.sim)
    ).start()
    policy = FetchPolicy(test_origins=frozenset({files.origin}))
    provider = build(name, sim.url, lambda: acct.credentials, track_policy=policy)
    clock = Clock()
    worker = TracksWorker(
        ledger=Ledger(table, aws("dynamodb")), provider=provider, sqs=None, queue_url="q", policy=policy, clock=clock
    )
    return name, sim, provider, worker, clock


@pytest.fixture(params=["mux", "cloudflare", "apivideo", "jwplayer"])
def setup(request, aws, table, files):
    made = started(request.param, aws, table, files)
    yield made
    made[1].stop()


def ready_asset(worker, provider, asset_id: str, tracks: tuple[Track, ...]) -> str:
    """The asset as the uploader and the webhook leave it: created at the provider (Mux's create carrying
    the tracks it can fetch), then ready in the ledger."""
    msg = AssetMessage(asset_id, "https://media.example.com/a.mp4?duration=5", tracks=tracks)
    ledger, now = worker.ledger, time.time()
    ledger.claim(msg, now, now + 60, "up")
    made = provider.create(AssetRef(asset_id, details=msg), msg.source_url)
    assert made.remote_id, made
    assert ledger.mark_processing(asset_id, "up", made.remote_id, now).won
    deadline = time.time() + 5
    while provider.poll(asset_id, made.remote_id).video.target is None:
        assert time.time() < deadline
        time.sleep(0.05)
    assert ledger.settle(asset_id, State.READY, made.remote_id, time.time()).won
    return made.remote_id


def drive(worker, clock, asset_id: str, passes: int = 20):
    """Deliver the asset's tracks message until the worker is done with it, skipping ahead to each retry time."""
    record = {"body": tracks_message(asset_id), "messageId": "m", "attributes": {"ApproximateReceiveCount": "1"}}
    for _ in range(passes):
        fate = worker.process(record, clock() + 120)
        if fate.kind is not FateKind.LATER:
            return fate
        clock.skipped += fate.delay_s + 0.01
        time.sleep(0.15)  # Mux fetches a track in the background
    raise AssertionError(f"{asset_id}: tracks still not settled after {passes} passes")


def held(sim, remote_id: str) -> dict:
    tracks = next((v["tracks"] for v in sim.text_tracks() if v["video_id"] == remote_id), [])
    return {t["language"]: t for t in tracks}


def states(worker, asset_id: str) -> dict:
    return worker.ledger.get(asset_id)["track_states"]


def test_two_caption_tracks_one_srt_one_webvtt_arrive_once_each(setup, files):
    name, sim, provider, worker, clock = setup
    en = Track(files.route("/en.srt", body(SRT)), "en", "captions", closed_captions=True, format="srt")
    fr = Track(files.route("/fr.vtt", body(VTT)), "fr", "subtitles", format="vtt")
    remote_id = ready_asset(worker, provider, f"{name}/two", (en, fr))
    assert drive(worker, clock, f"{name}/two").kind is FateKind.FINISHED
    entries = states(worker, f"{name}/two")
    assert {k: e["state"] for k, e in entries.items()} == {track_key(en): "attached", track_key(fr): "attached"}
    at_provider = held(sim, remote_id)
    assert set(at_provider) == {"en", "fr"} and all(t["uploads"] == 1 for t in at_provider.values())
    assert all(t["status"] == "ready" for t in at_provider.values())
    if name == "mux":  # Mux fetched both itself, from the create's text inputs, and keeps SRT as SRT
        assert {e["via"] for e in entries.values()} == {"create"} and at_provider["en"]["format"] == "srt"
        assert sim.stats()["track_uploads"] == 0
    elif name == "jwplayer":  # checked by the worker, then fetched by JW from its URL (SRT as SRT), and published
        assert at_provider["en"]["format"] == "srt" and sim.stats()["track_uploads"] == 2
    else:  # the worker uploaded them, the SRT as WebVTT
        assert at_provider["en"]["format"] == "vtt" and "Hello from SubRip" in at_provider["en"]["content"]
        assert sim.stats()["track_uploads"] == 2
    assert "tracks_lane" not in worker.ledger.get(f"{name}/two")


def test_a_lost_answer_and_a_pass_that_died_never_attach_a_track_twice(setup, files):
    name, sim, provider, worker, clock = setup
    # Languages Mux would not take at create ("x-..." tags wait for the tracks endpoint), so every provider
    # gets these from the worker.
    lost = Track(files.route("/lost.vtt", body(VTT)), "de-x-lost")
    died = Track(files.route("/died.srt", body(SRT)), "es-x-died")
    asset_id = f"{name}/faults"
    remote_id = ready_asset(worker, provider, asset_id, (lost, died))
    entries = initial_states(
        (lost, died), takes_tracks=True, provider=name, at_create=set(), one_per_language=True, now=time.time()
    )
    assert worker.ledger.arm_tracks(asset_id, remote_id, entries, time.time()).won
    # A pass that died after its upload reached the provider: its claim is left, its lease long over.
    past = time.time() - 600
    assert worker.ledger.claim_track(asset_id, track_key(died), remote_id, "dead", past, past + 60)
    from migrator.captions import read_caption

    done = provider.attach_track(remote_id, died, TrackUpload(read_caption(SRT), died.url), "es")
    assert done.kind.value in ("attached", "submitted")
    uploads_before = sim.stats()["track_uploads"]
    sim.patch_config({"track_lose_rate": 1.0})  # the next upload is performed, its answer lost
    record = {"body": tracks_message(asset_id), "messageId": "m", "attributes": {}}
    assert worker.process(record, clock() + 120).kind is FateKind.LATER
    sim.patch_config({"track_lose_rate": 0.0})
    assert sim.stats()["lost_track_responses"] == 1
    assert drive(worker, clock, asset_id).kind is FateKind.FINISHED
    entries = states(worker, asset_id)
    assert {e["state"] for e in entries.values()} == {"attached"}
    assert int(entries[track_key(died)]["attempts"]) == 2  # the dead pass's, then a look that found it
    # One upload for each track in all: the lost answer's, and the dead pass's.
    assert sim.stats()["track_uploads"] - uploads_before == 1
    assert {t["uploads"] for t in held(sim, remote_id).values()} == {1}


def test_a_bad_track_fails_alone_with_its_reason_and_the_video_stays_ready(setup, files):
    name, sim, provider, worker, clock = setup
    good = Track(files.route("/good.vtt", body(VTT)), "en")
    tracks = {
        "internal": Track(files.url("/x.vtt").replace(str(files.port), str(files.port + 1)), "fr"),
        "metadata": Track("https://169.254.169.254/latest/meta-data/", "de"),
        "private": Track("https://10.20.30.40/captions.vtt", "es"),
        "unreachable": Track("https://captions.nowhere.invalid/it.vtt", "it"),
        "too large": Track(files.route("/big.vtt", declared_huge(3 * 1024 * 1024)), "pt"),
        "not a caption": Track(files.route("/page.html", body(b"<html><body>Sign in</body></html>")), "nl"),
    }
    asset_id = f"{name}/bad"
    remote_id = ready_asset(worker, provider, asset_id, (good, *tracks.values()))
    worker.max_attempts = 2  # an unreachable host is retried, then fails for good
    assert drive(worker, clock, asset_id, passes=30).kind is FateKind.FINISHED
    entries = states(worker, asset_id)
    assert entries[track_key(good)]["state"] == "attached"
    at_provider = held(sim, remote_id)
    # The plainly internal ones never left us; at Mux the rest were handed on at create and errored there.
    assert {lang for lang, t in at_provider.items() if t["status"] == "ready"} == {"en"}
    assert set(at_provider) == ({"en", "it", "pt", "nl"} if name == "mux" else {"en"})
    reasons = {label: entries[track_key(t)].get("error", "") for label, t in tracks.items()}
    assert all(entries[track_key(t)]["state"] == "failed" for t in tracks.values()), reasons
    assert "only https" in reasons["internal"]
    assert "169.254.169.254 is link-local" in reasons["metadata"]
    assert "10.20.30.40 is private" in reasons["private"]
    if name == "mux":  # Mux fetched these itself (the create's inputs): its words
        assert "could not be downloaded" in reasons["unreachable"]
        assert "larger than" in reasons["too large"]
        assert "not a valid WebVTT or SRT" in reasons["not a caption"]
    else:
        assert "does not resolve" in reasons["unreachable"] and "after 2 attempts" in reasons["unreachable"]
        assert "over the 2,097,152 allowed" in reasons["too large"]
        assert reasons["not a caption"].startswith("not a caption file:")
    assert worker.ledger.get(asset_id)["state"] == "ready"


def test_a_staged_caption_is_written_to_the_bucket_and_served_back_through_a_sigv4_link(aws):
    """The staged copy a URL-fetching target (Mux) is handed: in the stack's bucket, behind a presigned GET
    signed with SigV4 (what S3 takes everywhere), living minutes, not the day the object may stay."""
    import urllib.parse

    import boto3
    import requests
    from migrator.presign import SIGV4, S3Presigner
    from migrator.trackworker import STAGED_LINK_S, StagedCaptions

    s3 = aws("s3")
    bucket = f"staging-{int(time.time() * 1000)}"
    s3.create_bucket(Bucket=bucket)
    signing = boto3.client(
        "s3", endpoint_url=s3.meta.endpoint_url, region_name="us-east-1", config=SIGV4,
        aws_access_key_id="test", aws_secret_access_key="test",
    )  # fmt: skip
    presigner = S3Presigner(STAGED_LINK_S, client_for=lambda region: signing, region_of=lambda bucket: "us-east-1")
    stage = StagedCaptions(bucket, s3=s3, presign=presigner)
    url = stage("captions/vid-1/en.captions.English", SRT)
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query)
    assert query["X-Amz-Algorithm"] == ["AWS4-HMAC-SHA256"] and query["X-Amz-Expires"] == [str(STAGED_LINK_S)]
    assert s3.get_object(Bucket=bucket, Key="captions/vid-1/en.captions.English")["Body"].read() == SRT
    assert requests.get(url, timeout=10).content == SRT


def test_a_track_left_a_draft_at_jw_player_is_published_and_never_sent_again(aws, table, files):
    """The version before this one created JW tracks without `upload.auto_publish`: JW read each and held it as a
    draft, delivered to no viewer, and the worker waited on it as if still processing until it failed. Its pass
    left the track submitted; this worker's look finds the draft and publishes that very track."""
    name, sim, provider, worker, clock = started("jwplayer", aws, table, files)
    try:
        en = Track(files.route("/en.vtt", body(VTT)), "en", "captions", format="vtt")
        asset_id, key = "jwplayer/drafted", track_key(en)
        remote_id = ready_asset(worker, provider, asset_id, (en,))
        entries = initial_states(
            (en,), takes_tracks=True, provider=name, at_create=set(), one_per_language=False, now=time.time()
        )
        assert worker.ledger.arm_tracks(asset_id, remote_id, entries, time.time()).won
        past = time.time() - 600
        claim = worker.ledger.claim_track(asset_id, key, remote_id, "older", past, past + 60)
        body_then = {"upload": {"method": "fetch", "download_url": en.url, "file_format": "vtt"}}
        body_then["metadata"] = {"label": "en", "srclang": "en", "track_kind": "captions"}
        made = provider.http.send("POST", f"/v2/sites/{sim.config.account_id}/media/{remote_id}/text_tracks/",
                                  json_body=body_then)  # fmt: skip
        assert made.status == 201
        submitted = TrackMove(TrackState.PENDING, retry_at=past, submitted=True)
        assert worker.ledger.finish_track(asset_id, key, remote_id, claim.token, submitted, past).won
        deadline = time.time() + 5
        while held(sim, remote_id)["en"]["status"] != "draft":
            assert time.time() < deadline
            time.sleep(0.05)
        assert drive(worker, clock, asset_id).kind is FateKind.FINISHED
        entry = states(worker, asset_id)[key]
        assert entry["state"] == "attached" and entry["remote_track_id"] == made.body["id"]
        assert held(sim, remote_id)["en"]["status"] == "ready" and held(sim, remote_id)["en"]["uploads"] == 1
        assert sim.stats()["track_uploads"] == 1  # the older version's: published, never sent again
    finally:
        sim.stop()


# --- what a viewer sees (issue 42): the extras, read back from what the target holds at the end -----------------


def extras_setup(name: str, aws, table, files):
    """A simulator of `name` (Bunny's library without token authentication, so a player reads its files as they
    are), our provider on it, and a worker whose fetches may reach the file server."""
    acct = account(name)
    sim_config = {**acct.sim, **({"token_secret": None} if name == "bunny" else {})}
    sim = ProviderSim(
        SimConfig(port=0, profile=name, rate=0, read_rate=0, budget_quota=0, processing_delay_s=0.1, **sim_config)
    ).start()
    policy = FetchPolicy(test_origins=frozenset({files.origin}))
    provider = build(name, sim.url, lambda: acct.credentials, track_policy=policy)
    provider.http.session.trust_env = False
    clock = Clock()
    worker = TracksWorker(
        ledger=Ledger(table, aws("dynamodb")), provider=provider, sqs=None, queue_url="q", policy=policy, clock=clock
    )
    return sim, provider, worker, clock


def ready_row(worker, provider, msg: AssetMessage) -> str:
    """The asset as the uploader and the webhook leave it, its row's extras in the ledger item."""
    ledger, now = worker.ledger, time.time()
    ledger.claim(msg, now, now + 60, "up")
    made = provider.create(AssetRef(msg.asset_id, details=msg), msg.source_url)
    assert made.remote_id, made
    assert ledger.mark_processing(msg.asset_id, "up", made.remote_id, now).won
    deadline = time.time() + 5
    while (polled := provider.poll(msg.asset_id, made.remote_id).video).target is None:
        assert time.time() < deadline
        time.sleep(0.05)
    assert ledger.settle(msg.asset_id, State.READY, made.remote_id, time.time(), polled.duration_s).won
    return made.remote_id


def collections_at(sim, provider) -> list[dict]:
    """Bunny's collections as its API lists them (Collection_List)."""
    answer = provider.http.send("GET", f"{provider._library()}/collections", params={"itemsPerPage": "1000"})
    assert answer.status == 200
    return answer.body["items"]


IMAGE = bytes.fromhex(
    "89504e470d0a1a0a0000000d49484452000000040000000308020000003b9639910000000e49444154789c636840020c3839005f3612"
    "018e731cab0000000049454e44ae426082"
)  # a 4x3 grey PNG
CHAPTERED = (Chapter(0.0, "Intro"), Chapter(12.5, "Demo"), Chapter(40.0, "Questions"))
FOLDERS = (Collection("folders/1", "Talks", "folder", 2), Collection("showcases/9", "Best of", "showcase", 0))


@pytest.mark.parametrize("name", ["apivideo", "bunny"])
def test_a_thumbnail_chapters_and_collections_arrive_once_each_and_the_player_reads_them_back(name, aws, table, files):
    sim, provider, worker, clock = extras_setup(name, aws, table, files)
    try:
        poster = files.route("/poster.png", body(IMAGE, headers={"Content-Type": "image/png"}))
        msg = AssetMessage(
            f"{name}/shown", "https://media.example.com/a.mp4?duration=61", privacy="public", thumbnail_url=poster,
            chapters=CHAPTERED, collections=FOLDERS,
        )  # fmt: skip
        remote_id = ready_row(worker, provider, msg)
        assert drive(worker, clock, msg.asset_id).kind is FateKind.FINISHED
        entries = states(worker, msg.asset_id)
        first, second = (collection_entry_key(collection_key("inventory", c.id)) for c in FOLDERS)
        assert {k: (e["kind"], e["state"]) for k, e in entries.items()} == {
            "thumbnail": ("thumbnail", "attached"),
            "chapters": ("chapters", "attached"),
            first: ("collection", "noted" if name == "apivideo" else "attached"),
            second: ("collection", "noted"),
        }
        assert "tracks_lane" not in worker.ledger.get(msg.asset_id)
        writes = [r["op"] for r in sim.requests_log(ops=None) if r["method"] != "GET"]
        if name == "apivideo":
            video = provider.http.send("GET", f"/videos/{remote_id}").body
            assert provider.http.session.get(video["assets"]["thumbnail"], timeout=5).content == IMAGE
            chapters = provider.http.send("GET", f"/videos/{remote_id}/chapters").body["data"]
            assert [c["language"] for c in chapters] == ["en"]
            vtt = provider.http.session.get(chapters[0]["src"], timeout=5).content
            assert vtt.startswith(b"WEBVTT") and b"00:00:12.500 --> 00:00:40.000\nDemo" in vtt
            assert set(video["tags"]) == {"Talks", "Best of"}  # no collections at api.video: tags, and a note
            assert "api.video has no folders or playlists" in entries[first]["note"]
            assert writes.count("store_thumbnail_upload") == 1 and writes.count("store_chapter_add") == 1
        else:
            video = provider.http.send("GET", f"{provider._library()}/videos/{remote_id}").body
            play = provider.http.send("GET", f"{provider._library()}/videos/{remote_id}/play").body
            assert provider.http.session.get(play["thumbnailUrl"], timeout=5).content == IMAGE
            assert [c["title"] for c in video["chapters"]] == ["Intro", "Demo", "Questions"]
            (talks,) = collections_at(sim, provider)  # one collection: Bunny keeps a video in one only
            assert (talks["name"], talks["videoCount"], video["collectionId"]) == ("Talks", 1, talks["guid"])
            item = worker.ledger.collection(collection_key("inventory", "folders/1"))
            assert item["state"] == "created" and item["remote_collection_id"] == talks["guid"]
            assert "one collection only" in entries[second]["note"]
            assert writes.count("store_thumbnail") == 1 and writes.count("store_collection_create") == 1
    finally:
        sim.stop()


def test_no_second_collection_after_two_workers_race_a_crash_after_the_create_or_a_lost_answer(aws, table, files):
    """Bunny: each asset's first collection is made once however the passes meet: two workers at once on two
    videos of one collection, a pass that dies between the create and its ledger write, a create whose answer
    is lost. Read back from the simulator: one collection per name, every video in it."""
    import threading

    sim, provider, worker, clock = extras_setup("bunny", aws, table, files)
    try:

        def row(asset_id: str, collection: Collection) -> AssetMessage:
            return AssetMessage(asset_id, "https://media.example.com/a.mp4?duration=9", privacy="public",
                                collections=(collection,))  # fmt: skip

        # Two workers, two videos, one new collection, at once.
        raced = Collection("folders/raced", "Raced", "folder")
        ids = {f"bunny/race-{n}": ready_row(worker, provider, row(f"bunny/race-{n}", raced)) for n in range(2)}
        other = TracksWorker(
            ledger=Ledger(table, aws("dynamodb")), provider=provider, sqs=None, queue_url="q", policy=worker.policy,
            clock=clock,
        )  # fmt: skip
        threads = [
            threading.Thread(target=drive, args=(w, clock, a)) for w, a in zip((worker, other), ids, strict=True)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

        # A pass that dies after the create, before its ledger write: its lease runs out, the next pass finds it.
        crashed = Collection("folders/crashed", "Crashed", "folder")
        ids["bunny/crash"] = ready_row(worker, provider, row("bunny/crash", crashed))
        record = worker.ledger.record_collection

        def dies(*args, **kwargs):
            raise RuntimeError("the Lambda ended here")

        worker.ledger.record_collection = dies  # type: ignore[method-assign]
        message = {"body": tracks_message("bunny/crash"), "messageId": "m", "attributes": {}}
        with pytest.raises(RuntimeError):
            worker.process(message, clock() + 120)
        worker.ledger.record_collection = record  # type: ignore[method-assign]
        clock.skipped += 300  # past the dead pass's lease
        assert drive(worker, clock, "bunny/crash").kind is FateKind.FINISHED

        # A create whose answer is lost: made at Bunny, unknown to us; looked up by its name before any second one.
        lost = Collection("folders/lost", "Lost", "folder")
        ids["bunny/lost"] = ready_row(worker, provider, row("bunny/lost", lost))
        sim.patch_config({"track_lose_rate": 1.0})
        assert worker.process(message | {"body": tracks_message("bunny/lost")}, clock() + 120).kind is FateKind.LATER
        sim.patch_config({"track_lose_rate": 0.0})
        assert sim.stats()["lost_track_responses"] == 1
        assert drive(worker, clock, "bunny/lost").kind is FateKind.FINISHED

        held_now = collections_at(sim, provider)
        assert sorted(c["name"] for c in held_now) == ["Crashed", "Lost", "Raced"]  # 0 duplicates
        by_name = {c["name"]: c for c in held_now}
        assert (by_name["Raced"]["videoCount"], by_name["Crashed"]["videoCount"], by_name["Lost"]["videoCount"]) == (
            2, 1, 1,
        )  # fmt: skip
        for asset_id, remote_id in ids.items():
            assert {e["state"] for e in states(worker, asset_id).values()} == {"attached"}, asset_id
            video = provider.http.send("GET", f"{provider._library()}/videos/{remote_id}").body
            assert video["collectionId"] in {c["guid"] for c in held_now}
        creates = [r for r in sim.requests_log(ops=None) if r["op"] == "store_collection_create"]
        assert len(creates) == 3
    finally:
        sim.stop()


def test_an_item_armed_by_0_3_0_with_entries_of_no_kind_keeps_working(setup, files):
    """Before issue 42 an entry had no kind: it is a caption track, worked, counted and closed as before."""
    name, sim, provider, worker, clock = setup
    en = Track(files.route("/old.vtt", body(VTT)), "de-x-old")  # a tag Mux takes only from the worker, as above
    asset_id = f"{name}/old"
    remote_id = ready_asset(worker, provider, asset_id, (en,))
    old_entry = {"state": "pending", "attempts": 0, "updated_at": time.time(), "via": "upload"}  # 0.3.0's shape
    assert worker.ledger.arm_tracks(asset_id, remote_id, {track_key(en): old_entry}, time.time()).won
    assert drive(worker, clock, asset_id).kind is FateKind.FINISHED
    entry = states(worker, asset_id)[track_key(en)]
    assert entry["state"] == "attached" and "kind" not in entry
    assert set(held(sim, remote_id)) == {"de-x-old"} and "tracks_lane" not in worker.ledger.get(asset_id)


def test_at_api_video_a_poster_time_alone_is_picked_once_the_video_exists(aws, table, files):
    sim, provider, worker, clock = extras_setup("apivideo", aws, table, files)
    try:
        msg = AssetMessage("apivideo/timed", "https://media.example.com/a.mp4?duration=30", poster_time_s=12.25)
        remote_id = ready_row(worker, provider, msg)
        assert drive(worker, clock, msg.asset_id).kind is FateKind.FINISHED
        entry = states(worker, msg.asset_id)["thumbnail"]
        assert (entry["state"], entry["remote_track_id"]) == ("attached", "00:00:12.25")
        picks = [r for r in sim.requests_log(ops=None) if r["op"] == "store_thumbnail_pick"]
        assert len(picks) == 1
        with sim._lock:
            assert sim._store.videos[remote_id].extras["thumbnail_time"] == "00:00:12.25"
    finally:
        sim.stop()


def test_the_worker_takes_the_fleets_pace_and_meets_no_429_where_an_unpaced_one_meets_them(aws, table, files):
    """Tracks and creates share the provider's limit. A worker that calls until its first 429 spends the limit in
    bursts and then stands held (the demo's vimeo -> mux: about 20 calls, a 429, 7 to 15 s held, again); one that
    takes a slot of the fleet's pace for each pass keeps under it. The same work, unpaced then paced."""
    from migrator.pacer import Pacer

    acct = account("apivideo")
    unlimited = {"rate": 0, "read_rate": 0, "budget_quota": 0, "processing_delay_s": 0.1}
    sim = ProviderSim(SimConfig(port=0, profile="apivideo", **unlimited, **acct.sim)).start()
    try:
        policy = FetchPolicy(test_origins=frozenset({files.origin}))
        provider = build("apivideo", sim.url, lambda: acct.credentials, track_policy=policy)
        clock = Clock()
        ledger = Ledger(table, aws("dynamodb"))
        worker = TracksWorker(ledger=ledger, provider=provider, sqs=None, queue_url="q", policy=policy, clock=clock)
        tracks = tuple(Track(files.route(f"/{lang}.vtt", body(VTT)), lang, format="vtt") for lang in ("en", "fr", "de"))

        def run(prefix: str) -> int:
            ids = [f"{prefix}/{n}" for n in range(4)]
            sim.patch_config({"read_rate": 0})
            for asset_id in ids:
                ready_asset(worker, provider, asset_id, tracks)
            sim.patch_config({"read_rate": 4.0, "read_burst": 2})  # the limit every call but a create meets
            before = sim.stats()["read_throttled"]
            for asset_id in ids:
                assert drive(worker, clock, asset_id, passes=40).kind is FateKind.FINISHED
            assert all(e["state"] == "attached" for a in ids for e in states(worker, a).values())
            return sim.stats()["read_throttled"] - before

        unpaced = run("unpaced")
        time.sleep(1.0)  # the bucket refills
        worker.pacer = Pacer(table, aws("dynamodb"), 3.0, 3.0)
        started = time.time()
        paced = run("paced")
        slots = float(worker.pacer.state()["next_slot"])
        assert unpaced > 0, "the workload must meet the limit unpaced, or the test shows nothing"
        assert paced == 0
        assert slots >= started + 11 / 3.0  # each of the 12 paced passes took a slot of the fleet's pace (3/s)
    finally:
        sim.stop()
