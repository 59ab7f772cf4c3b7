"""What the source pairs of issue 42 check at the end of a migration: every thumbnail, chapters list and place in a
collection the source's rows name is held by the target's simulator, read through the target's own API
(tests/e2e/held), once each; what the target cannot carry is noted in the ledger, not lost.

The expected side is the source's: a thumbnail's image and a chapters file are fetched from the source simulator
through the source reference the row names (resolved by the source adapter, as the tracks worker resolves it); a
row's inline chapters and its collections are the inventory's reading of the source. The held side is only ever
what the target's simulator serves at the end.
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

import requests
from migrator.extras import CHAPTERS_KEY, THUMBNAIL_KEY, collection_entry_key, collection_key, read_chapters
from migrator.ledger import Ledger
from migrator.providers import PROVIDERS
from migrator.row_extras import MAX_POSITION
from migrator.sources import build as build_source
from migrator.sources.base import parse_ref

from tests.e2e.held import HeldCollection, collections_of, extras_of

# Where a target moves a chapter's start (Vimeo's first at 0, Bunny's whole seconds), it moves it by less than this.
START_TOLERANCE_S = 1.0
# The tracks worker's attempts while a test loses a share of the extras' answers: the shared stacks allow 2
# (MaxTrackAttempts), and a lost answer spends one. A Vimeo thumbnail is three writes (and a fourth, the half-made
# picture's delete, on a retry), each answer lost at the test's rate (0.1: an attempt fails about one time in three):
# at 10 attempts one thumbnail in 60,000 fails for good. What is tested is that a retry never makes a second, not
# the stack's patience.
PATIENT_TRACK_ATTEMPTS = "10"


@contextlib.contextmanager
def patient_tracks(aws, stack_name: str) -> Iterator[None]:
    """The stack's tracks worker with PATIENT_TRACK_ATTEMPTS for the body, then as the shared stack had it."""
    from tests.e2e.stacks import set_environment

    name = aws("cloudformation").describe_stack_resource(StackName=stack_name, LogicalResourceId="TracksFunction")[
        "StackResourceDetail"
    ]["PhysicalResourceId"]
    lambda_client = aws("lambda")
    before = lambda_client.get_function_configuration(FunctionName=name)["Environment"]["Variables"]
    set_environment(lambda_client, name, {**before, "MAX_TRACK_ATTEMPTS": PATIENT_TRACK_ATTEMPTS})
    try:
        yield
    finally:
        set_environment(lambda_client, name, before)


@contextlib.contextmanager
def answers_lost(aws, stack_name: str, sim, rate: float, seed: int, **during) -> Iterator[None]:
    """For the body: a share `rate` of the target simulator `sim`'s track and extras write answers lost (the write
    performed), `during` set on it too, and the stack's tracks worker patient (`patient_tracks`); then each setting
    as it was. A body that ends with no answer lost proved nothing, and fails."""
    changes = {**during, "track_lose_rate": rate, "seed": seed}
    kept = {name: value for name, value in sim.config_dict().items() if name in changes}
    lost_before = sim.stats().get("lost_track_responses", 0)
    sim.patch_config(changes)
    try:
        with patient_tracks(aws, stack_name):
            yield
    finally:
        sim.patch_config(kept)
    assert sim.stats()["lost_track_responses"] > lost_before, "no answer was lost: the test would prove nothing"


def assert_entries_settled(settled: Mapping[str, Mapping], refused_by_design: str | None = None) -> None:
    """Every caption entry of the ledger `settled` items attached, every extra attached or noted; each that is not
    named with its state and error. `refused_by_design`: the start of a failure the target's documents make (api.video
    keeps one caption file a language), not counted."""

    def fine(entry: Mapping) -> bool:
        state, error = entry.get("state"), str(entry.get("error") or "")
        if refused_by_design and state == "failed" and error.startswith(refused_by_design):
            return True
        return state == "attached" or (entry.get("kind", "caption") != "caption" and state == "noted")

    wrong = {
        asset_id: {
            key: (entry.get("state"), str(entry.get("error") or "")[:160])
            for key, entry in (item.get("track_states") or {}).items()
            if not fine(entry)
        }
        for asset_id, item in settled.items()
    }
    wrong = {asset_id: entries for asset_id, entries in wrong.items() if entries}
    assert not wrong, wrong


@dataclass
class SourceFiles:
    """Fetches what a row's source reference names from the source simulator: `credentials` by platform, `bases` the
    API base URL by platform. One source adapter a platform (one token where the platform hands tokens out)."""

    credentials: Mapping[str, Mapping]
    bases: Mapping[str, str]
    built: dict = field(default_factory=dict)

    @classmethod
    def of(cls, sources) -> SourceFiles:
        """Every source simulator of the e2e package (tests/e2e/sources.py)."""
        return cls(sources.credentials, {platform: sources.base(platform) for platform in sources.sims})

    def read(self, url: str) -> bytes:
        ref = parse_ref(url)
        if ref is not None:
            if ref.platform not in self.built:
                creds = self.credentials[ref.platform]
                self.built[ref.platform] = build_source(ref.platform, lambda: creds, self.bases[ref.platform])
            source = self.built[ref.platform]
            resolved = source.resolve(ref)
            if resolved.text is not None:
                return resolved.text.encode("utf-8")
            assert resolved.url, f"the source did not resolve {url}: {resolved.kind} {resolved.reason}"
            url = resolved.url
        session = requests.Session()
        session.trust_env = False  # the simulators are on loopback
        answer = session.get(url, timeout=10)
        assert answer.status_code == 200, f"{url}: HTTP {answer.status_code}"
        return answer.content


@dataclass
class Carried:
    """What the check found at the target, for the test to say it proved something."""

    thumbnails: int = 0  # custom images held (bytes compared where the target serves them as uploaded)
    thumbnails_noted: int = 0  # a target that takes no image: the ledger notes it
    chapters: int = 0  # chapters lists held, titles and starts as the source's
    places: int = 0  # videos held in the collection made for their source collection
    places_noted: int = 0  # placements the target cannot make (a second folder), noted in the ledger
    ordered: int = 0  # collections whose videos were found in the source's order
    collections: set[str] = field(default_factory=set)  # the target's ids of the collections made


def source_chapters(files: SourceFiles, row: Mapping) -> tuple[tuple[float, str], ...]:
    """The chapters the source holds for a row: its inline list, else its chapters track's file."""
    if row.get("chapters"):
        return tuple((float(c["start_s"]), c["title"]) for c in row["chapters"])
    for track in row.get("tracks") or ():
        if track.get("kind") == "chapters":
            read = read_chapters(files.read(track["url"]))
            assert not isinstance(read, str), read
            return tuple((c.start_s, c.title) for c in read)
    return ()


def assert_chapters_match(held: tuple[tuple[float, str], ...], expected: tuple[tuple[float, str], ...], where: str):
    """The same titles in the same order, each start within START_TOLERANCE_S (the first may be moved to 0)."""
    assert [title for _, title in held] == [title for _, title in expected], (where, held, expected)
    for n, ((start, _), (wanted, _)) in enumerate(zip(held, expected, strict=True)):
        assert abs(start - wanted) < START_TOLERANCE_S or (n == 0 and start == 0), (where, held, expected)


def assert_extras_held(
    files: SourceFiles, platform: str, target: str, sim, table: str, dynamodb, rows: list[dict]
) -> Carried:
    """Every extra the ready `rows` name, held by the `target`'s simulator `sim` as the source has it, or noted in the
    ledger (`table`) where the target cannot carry it; no collection made twice."""
    provider = PROVIDERS[target]
    ledger = Ledger(table, dynamodb)
    items = ledger.get_many([row["id"] for row in rows])
    carried = Carried()
    held_collections = collections_of(target, sim)
    by_id = {c.remote_id: c for c in held_collections}
    placed: dict[str, list[tuple[int, str]]] = {}
    for row in rows:
        item = items[row["id"]]
        if item.get("state") != "ready":
            continue
        remote, states = item["remote_id"], item.get("track_states") or {}
        held = extras_of(target, sim, remote)
        where = f"{row['id']} ({remote})"
        if row.get("thumbnail_url"):
            state = (states.get(THUMBNAIL_KEY) or {}).get("state")
            if provider.takes_thumbnail == "image":
                assert held.thumbnail is not None and state == "attached", (where, state, states.get(THUMBNAIL_KEY))
                if held.thumbnail_as_uploaded:
                    assert held.thumbnail == files.read(row["thumbnail_url"]), where
                carried.thumbnails += 1
            else:
                assert state == "noted", (where, states.get(THUMBNAIL_KEY))
                carried.thumbnails_noted += 1
        expected = source_chapters(files, row)
        if expected and provider.takes_chapters:
            assert (states.get(CHAPTERS_KEY) or {}).get("state") == "attached", (where, states.get(CHAPTERS_KEY))
            assert_chapters_match(held.chapters, expected, where)
            carried.chapters += 1
        for collection in row.get("collections") or ():
            key = collection_key(platform, collection["id"])
            entry = states.get(collection_entry_key(key)) or {}
            assert entry.get("state") in ("attached", "noted"), (where, collection, entry)
            if entry["state"] == "noted" or not provider.takes_collections:
                carried.places_noted += 1
                continue
            made = ledger.collection(key) or {}
            made_id = made.get("remote_collection_id")
            assert made_id in by_id, (where, collection, made, sorted(by_id))
            assert remote in by_id[made_id].members, (where, by_id[made_id])
            carried.places += 1
            carried.collections.add(made_id)
            position = collection.get("position")
            placed.setdefault(made_id, []).append((MAX_POSITION if position is None else int(position), remote))
    assert_made_once(held_collections, carried.collections)
    for made_id, members in placed.items():
        if by_id[made_id].ordered:
            assert_in_source_order(by_id[made_id], dict((remote, pos) for pos, remote in members))
            carried.ordered += 1
    return carried


def assert_made_once(held: list[HeldCollection], ours: set[str]) -> None:
    """No second collection of the name of one we made (a lost answer or a crash must not make another)."""
    names = Counter(c.name for c in held)
    twice = {c.name: names[c.name] for c in held if c.remote_id in ours and names[c.name] > 1}
    assert not twice, f"collections made more than once: {twice}"


def assert_in_source_order(held: HeldCollection, positions: dict[str, int]) -> None:
    """Our videos, as the target orders them in the collection, come in the order of their source positions."""
    seen = [positions[m] for m in held.members if m in positions]
    assert seen == sorted(seen), (held.name, held.members, positions)
