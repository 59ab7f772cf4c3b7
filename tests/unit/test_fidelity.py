"""What a create carries of a video besides its bytes, per provider, against each provider's documented
request shape; privacy kept on every path; the provider options; the notes of what did not fit.

The shape checks go through the providers' official SDKs (installed as test dependencies), whose
request models are generated from the providers' OpenAPI files: mux-python 5.1.2's
CreateAssetRequest must take the body (its enums checked) and give it back whole; cloudflare-python
5.9.0's `stream.copy.create` must send, for the same values, exactly our body; api-video 1.4.7's
VideoCreationPayload must take it with its types checked. No network anywhere.

Long (about 680 lines, 30 tests) as a table is long: each test is one field or option on one provider's
path, and stands alone.
"""

from __future__ import annotations

import io
import json
import typing

import httpx
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from migrator.create_options import chosen_options, row_problems, stack_options
from migrator.messages import AssetMessage, Poison, encode_message, parse_message
from migrator.providers import AssetRef, CreateDefaults, build
from migrator.providers.apivideo import read_listed
from migrator.providers.cloudflare import read_stream_video
from migrator.providers.fidelity import playback_of
from migrator.providers.generic import read_video
from migrator.providers.keys import asset_tag, idempotency_key
from migrator.providers.mux import read_asset
from migrator.settings import Settings, SettingsError, load

from tests.unit.test_providers import API_SECRET, CF_SECRET, MUX_SECRET, Session

SOURCE = "https://media.example.com/intro.mp4"
SECRETS = {"mux": MUX_SECRET, "cloudflare": CF_SECRET, "apivideo": API_SECRET, "generic": "t"}
PROVIDERS = tuple(SECRETS)

# A row carrying everything a video is (what an inventory or a platform listing gives).
ROW = AssetMessage(
    asset_id="library/intro-2019",
    source_url=SOURCE,
    title="Intro",
    duration_s=120.0,
    metadata={"author": "Ada", "episode": 3},
    description="The first one.",
    tags=("intro", "2019"),
    privacy="private",
    poster_time_s=30.0,
    created_at="2019-05-01T10:00:00Z",
    folder="talks/2019",
)


def ref(row: AssetMessage = ROW, generation: int = 0) -> AssetRef:
    return AssetRef(row.asset_id, row.title, generation, row)


def provider(name: str, defaults: CreateDefaults | None = None):
    made = build(
        name, "https://p.example" if name == "generic" else None, lambda: SECRETS[name], create_defaults=defaults
    )
    made.http.session = Session((201, {}))
    return made


def body_of(name: str, row: AssetMessage = ROW, defaults: CreateDefaults | None = None) -> tuple[dict, list[str]]:
    return provider(name, defaults)._create_body(ref(row), SOURCE)


def at(doc: object, path: tuple) -> object:
    for step in path:
        doc = doc[step]
    return doc


# --- the per-provider tables: row field -> request field ----------------------------------------

# (row field, where it goes in the body, the value, the document that says so)
MUX_TABLE = [
    ("title", ("meta", "title"), "Intro", "AssetMetadata.title: the asset title, max 512 code points"),
    ("id (our reference)", ("passthrough",), ROW.asset_id, "CreateAssetRequest.passthrough: max 255 characters"),
    ("attempt key", ("meta", "external_id"), idempotency_key(ROW.asset_id), "AssetMetadata.external_id: max 128"),
    ("privacy private", ("playback_policies",), ["signed"], "CreateAssetRequest.playback_policies: public | signed"),
    ("source", ("inputs", 0, "url"), SOURCE, "CreateAssetRequest.inputs[].url"),
]
CLOUDFLARE_TABLE = [
    ("title", ("meta", "name"), "Intro", "Stream video `meta.name`: the dashboard's name (copy: meta)"),
    ("description", ("meta", "description"), "The first one.", "CopyCreateParams.meta: a user key-value store"),
    ("tags", ("meta", "tags"), ["intro", "2019"], "CopyCreateParams.meta"),
    ("metadata.author", ("meta", "author"), "Ada", "CopyCreateParams.meta"),
    ("metadata.episode", ("meta", "episode"), 3, "CopyCreateParams.meta"),
    ("created_at", ("meta", "created_at"), "2019-05-01T10:00:00Z", "CopyCreateParams.meta"),
    ("folder", ("meta", "folder"), "talks/2019", "CopyCreateParams.meta"),
    ("poster_time_s / duration_s", ("thumbnailTimestampPct",), 0.25, "thumbnailTimestampPct: a fraction, 0 to 1"),
    ("privacy private", ("requireSignedURLs",), True, "requireSignedURLs: a signed token is needed to view"),
    ("id (our reference)", ("meta", "migration_ref"), ROW.asset_id, "CopyCreateParams.meta"),
    ("id (the find filter)", ("creator",), asset_tag(ROW.asset_id), "CopyCreateParams.creator: max 64"),
    ("source", ("input",), SOURCE, "CopyCreateParams.input (preferred over the deprecated url)"),
]
APIVIDEO_TABLE = [
    ("title", ("title",), "Intro", "video-creation-payload.title (required)"),
    ("description", ("description",), "The first one.", "video-creation-payload.description"),
    ("tags", ("tags",), ["intro", "2019"], "video-creation-payload.tags: array of strings"),
    ("privacy private", ("public",), False, "video-creation-payload.public: false makes the video private"),
    ("source", ("source",), SOURCE, "video-creation-payload.source"),
]
GENERIC_TABLE = [
    ("id (our reference)", ("metadata", "migration_ref"), ROW.asset_id, "seed 000: metadata.migration_ref"),
    ("title", ("metadata", "title"), "Intro", "our contract: metadata is a free map"),
    ("description", ("metadata", "description"), "The first one.", "our contract"),
    ("tags", ("metadata", "tags"), ["intro", "2019"], "our contract"),
    ("poster_time_s", ("metadata", "poster_time_s"), 30.0, "our contract"),
    ("created_at", ("metadata", "created_at"), "2019-05-01T10:00:00Z", "our contract"),
    ("folder", ("metadata", "folder"), "talks/2019", "our contract"),
    ("metadata.author", ("metadata", "author"), "Ada", "our contract"),
    ("privacy private", ("metadata", "privacy"), "signed", "our contract: public | signed"),
    ("source", ("input",), SOURCE, "seed 000: input"),
]
TABLES = {"mux": MUX_TABLE, "cloudflare": CLOUDFLARE_TABLE, "apivideo": APIVIDEO_TABLE, "generic": GENERIC_TABLE}


@pytest.mark.parametrize(
    ("name", "field", "path", "value"),
    [(name, field, path, value) for name, rows in TABLES.items() for field, path, value, _doc in rows],
)
def test_each_row_field_goes_to_the_providers_own_place(name, field, path, value):
    body, _ = body_of(name)
    assert at(body, path) == value, field


def test_api_video_metadata_pairs_carry_our_reference_and_what_has_no_field_of_its_own_as_text():
    body, notes = body_of("apivideo")
    assert body["metadata"] == [
        {"key": "author", "value": "Ada"},
        {"key": "episode", "value": "3"},  # "metadata values are strings" (video-creation-payload: metadata)
        {"key": "migration_ref", "value": ROW.asset_id},
        {"key": "migration_key", "value": idempotency_key(ROW.asset_id)},
        {"key": "created_at", "value": "2019-05-01T10:00:00Z"},
        {"key": "folder", "value": "talks/2019"},
        {"key": "poster_time_s", "value": "30.0"},
    ]
    # The poster time is no note: the tracks worker picks that frame once the video exists (extras.py).
    assert notes == ["metadata: 1 values sent as JSON text (api.video keeps text): episode"]


def test_mux_has_no_place_for_description_tags_custom_fields_creation_time_or_folder_and_says_so():
    _, notes = body_of("mux")
    # The poster time is no note: the tracks worker sets the asset's thumbnail_time once it is ready (extras.py).
    assert notes == [
        "description: not carried by mux (kept in the ledger)",
        "tags: not carried by mux (kept in the ledger)",
        "metadata: not carried by mux (kept in the ledger)",
        "created_at: not carried by mux (kept in the ledger)",
        "folder: not carried by mux (kept in the ledger)",
    ]


def test_cloudflare_and_generic_carry_every_field_and_note_nothing():
    assert body_of("cloudflare")[1] == [] and body_of("generic")[1] == []


def test_a_row_with_only_an_id_is_noted_nothing_anywhere():
    bare = AssetMessage("lib/bare", SOURCE, privacy="public")
    assert all(body_of(name, bare)[1] == [] for name in PROVIDERS)


# --- limits: cut with a note, never silently ---------------------------------------------------


def test_mux_title_is_cut_to_512_utf16_units_with_a_note_never_splitting_a_character():
    body, notes = body_of("mux", AssetMessage("a", SOURCE, title="x" * 511 + "🎬"))  # 513 units
    assert body["meta"]["title"] == "x" * 511 and "title: cut to 512 characters" in notes
    body, notes = body_of("mux", AssetMessage("a", SOURCE, title="t" * 512))
    assert body["meta"]["title"] == "t" * 512 and not notes


def test_mux_passthrough_too_short_for_the_id_carries_its_hash_and_says_so():
    long_id = "🎬" * 128  # 256 UTF-16 units: over passthrough's 255
    body, notes = body_of("mux", AssetMessage(long_id, SOURCE, privacy="public"))
    assert body["passthrough"].startswith("sha256:")
    assert notes == ["id: passthrough carries its hash (over 255 characters)"]


def test_cloudflare_poster_past_the_end_is_the_last_frame_and_without_a_duration_stays_in_meta():
    body, notes = body_of("cloudflare", AssetMessage("a", SOURCE, duration_s=10.0, poster_time_s=12.0))
    assert body["thumbnailTimestampPct"] == 1.0
    assert notes == ["poster_time_s: past the duration, the last frame taken (thumbnailTimestampPct 1)"]
    body, notes = body_of("cloudflare", AssetMessage("a", SOURCE, poster_time_s=12.0))
    assert "thumbnailTimestampPct" not in body and body["meta"]["poster_time_s"] == 12.0
    assert notes == ["poster_time_s: kept in meta only (thumbnailTimestampPct needs the duration, not known)"]


@pytest.mark.parametrize(("name", "key"), [("cloudflare", "name"), ("generic", "title"), ("apivideo", "migration_ref")])
def test_a_custom_field_named_like_one_of_ours_is_not_carried_there_and_is_noted(name, key):
    body, notes = body_of(name, AssetMessage("lib/1", SOURCE, title="Real", metadata={key: "theirs"}))
    assert f"metadata.{key}: not carried" in " ".join(notes)
    text = json.dumps(body)
    assert "theirs" not in text  # ours won the key; the ledger keeps the row's value


def test_unlisted_is_sent_as_public_and_the_note_says_the_provider_has_no_unlisted():
    for name in PROVIDERS:
        _, notes = body_of(name, AssetMessage("a", SOURCE, privacy="unlisted"))
        assert f"privacy: unlisted sent as public ({name} has no unlisted)" in notes


# --- the documented request shape, through the official SDKs -------------------------------------


class _Json:
    def __init__(self, doc):
        self.data = json.dumps(doc)


def test_the_mux_body_is_a_create_asset_request_mux_python_takes_whole():
    import mux_python

    options = {"mux": {"video_quality": "plus", "max_resolution_tier": "2160p", "static_renditions": ["highest"]}}
    body, _ = body_of("mux", AssetMessage("a", SOURCE, title="T", privacy="signed", options=options))
    client = mux_python.ApiClient()
    model = client.deserialize(_Json(body), "CreateAssetRequest")  # its enums checked here
    echoed = client.sanitize_for_serialization(model)
    assert {k: echoed[k] for k in body} == body  # no field of ours is one the SDK does not know
    assert body["static_renditions"] == [{"resolution": "highest"}] and "mp4_support" not in body


def test_the_cloudflare_body_is_what_cloudflare_python_sends_for_the_same_values():
    import cloudflare
    from cloudflare.types.stream.copy_create_params import CopyCreateParams

    sent = []

    def answer(request: httpx.Request) -> httpx.Response:
        sent.append(json.loads(request.content))
        return httpx.Response(200, json={"result": {"uid": "u"}, "success": True, "errors": [], "messages": []})

    alias = {}
    for name, hint in typing.get_type_hints(CopyCreateParams, include_extras=True).items():
        wire = next((m.alias for m in getattr(hint, "__metadata__", ()) if getattr(m, "alias", None)), name)
        alias[wire] = name
    options = {"cloudflare": {"allowedOrigins": ["example.com", "*.example.org"]}}
    body, _ = body_of("cloudflare", AssetMessage("a", SOURCE, title="T", privacy="private", options=options))
    http = httpx.Client(transport=httpx.MockTransport(answer))
    client = cloudflare.Cloudflare(api_token="t", base_url="https://api.example", http_client=http, max_retries=0)
    client.stream.copy.create(account_id="acct", **{alias[key]: value for key, value in body.items()})
    assert sent == [body]


def test_the_api_video_body_is_a_video_creation_payload_api_video_takes_with_its_types_checked():
    from apivideo.api_client import ApiClient
    from apivideo.model.metadata import Metadata
    from apivideo.model.video_creation_payload import VideoCreationPayload

    options = {"apivideo": {"mp4Support": False, "playerId": "pl45KFKdlddgk654dspkze"}}
    body, _ = body_of("apivideo", AssetMessage("a", SOURCE, title="T", tags=("x",), options=options))
    python_names = {wire: name for name, wire in VideoCreationPayload.attribute_map.items()}
    assert set(body) <= set(python_names)
    fields = {python_names[key]: value for key, value in body.items()}
    fields["metadata"] = [Metadata(**pair) for pair in fields["metadata"]]  # each key and value must be text
    payload = VideoCreationPayload(fields.pop("title"), **fields)
    assert ApiClient().sanitize_for_serialization(payload) == body


# --- privacy is kept, on every path ------------------------------------------------------------


PRIVATE = ("private", "signed")


def held_privacy(name: str, body: dict) -> str | None:
    """Who may play what the provider made of `body`: the body through the provider's simulator (which
    takes and stores it as the provider would), read back as our adapter reads the provider's answer."""
    from infra.sim.platforms import PROFILES
    from infra.sim.profile import Call, Draft
    from infra.sim.video import Video

    profile = PROFILES[name]
    draft = profile.parse_create(json.loads(json.dumps(body)), None, Call("", {"account": "a"}, {}, "https://s"))
    assert isinstance(draft, Draft), draft.body
    video = Video("vid1", 1, draft.ref, None, draft.source, draft.request, 1.8e9, 0.0, 1.0)
    rendered = profile.render(video, 0.0)
    reader = {"mux": read_asset, "cloudflare": read_stream_video, "apivideo": read_listed, "generic": read_video}
    return reader[name](rendered).privacy


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-1000, 1000) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(min_size=1, max_size=6), inner, max_size=3),
    max_leaves=6,
)
# Keys that try to say "public" through a side door: options and metadata named like the privacy fields.
side_doors = st.fixed_dictionaries(
    {},
    optional={
        "public": st.booleans(),
        "requireSignedURLs": st.booleans(),
        "playback_policies": st.just(["public"]),
        "privacy": st.sampled_from(["public", "unlisted"]),
    },
)


PRIVATE_ROWS = st.sampled_from(PRIVATE)


@st.composite
def rows(draw, privacy=PRIVATE_ROWS):
    doc = {
        "id": draw(st.text(st.characters(codec="utf-8", categories=("L", "N", "P")), min_size=1, max_size=300)),
        "source_url": SOURCE,
        "privacy": draw(privacy),
        "options": {
            name: draw(st.dictionaries(st.sampled_from(["video_quality", "test", "playerId", "x"]), json_values))
            | draw(side_doors)
            for name in draw(st.sets(st.sampled_from(PROVIDERS)))
        },
        "metadata": draw(side_doors) | draw(st.dictionaries(st.text(min_size=1, max_size=8), json_values, max_size=3)),
    }
    for name, values in (
        ("title", st.text(max_size=600)),
        ("description", st.text(max_size=40)),
        ("poster_time_s", st.floats(0, 1e4)),
        ("duration_s", st.floats(0, 1e4)),
    ):
        if draw(st.booleans()):
            doc[name] = draw(values)
    if doc["privacy"] is None:
        del doc["privacy"]
    parsed = parse_message(json.dumps(doc))
    assume(not isinstance(parsed, Poison))
    return parsed


stack_defaults = st.builds(
    CreateDefaults,
    st.sampled_from(["public", "signed"]),
    st.fixed_dictionaries(
        {
            "mux": st.fixed_dictionaries({}, optional={"test": st.booleans(), "video_quality": st.just("plus")}),
            "cloudflare": st.fixed_dictionaries({}, optional={"allowedOrigins": st.just(["example.com"])}),
            "apivideo": st.fixed_dictionaries({}, optional={"mp4Support": st.booleans()}),
        }
    ),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(PROVIDERS), row=rows(), defaults=stack_defaults)
def test_no_private_or_signed_row_is_ever_sent_as_public_by_any_provider(name, row, defaults):
    body, _ = body_of(name, row, defaults)
    assert held_privacy(name, body) == "signed"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(PROVIDERS), row=rows(privacy=st.none()))
def test_a_row_with_no_privacy_takes_default_playback_and_signed_by_default(name, row):
    assert held_privacy(name, body_of(name, row, CreateDefaults("signed"))[0]) == "signed"
    assert held_privacy(name, body_of(name, row)[0]) == "signed"  # no stack setting at all: signed
    assert held_privacy(name, body_of(name, row, CreateDefaults("public"))[0]) == "public"


@pytest.mark.parametrize(
    ("privacy", "default", "wanted"),
    [
        ("private", "public", "signed"),
        ("signed", "public", "signed"),
        ("public", "signed", "public"),
        ("unlisted", "signed", "public"),
        (None, "signed", "signed"),
        (None, "public", "public"),
        (None, "garbage", "signed"),  # a setting that is not "public" never makes a video public
    ],
)
def test_privacy_maps_to_the_providers_means(privacy, default, wanted):
    assert playback_of(privacy, default) == wanted
    for name in PROVIDERS:
        body, _ = body_of(name, AssetMessage("a", SOURCE, privacy=privacy), CreateDefaults(default))
        assert held_privacy(name, body) == wanted, name


def test_what_each_reader_says_of_privacy_from_the_documented_bodies():
    # Mux: the OpenAPI 201 example has one public playback id; a signed-only asset; an asset with no ids.
    assert read_asset({"id": "a", "playback_ids": [{"policy": "public", "id": "p"}]}).privacy == "public"
    assert read_asset({"id": "a", "playback_ids": [{"policy": "signed", "id": "p"}]}).privacy == "signed"
    assert read_asset({"id": "a", "playback_ids": [{"policy": "drm", "id": "p"}]}).privacy == "signed"
    mixed = [{"policy": "signed", "id": "p"}, {"policy": "public", "id": "q"}]
    assert read_asset({"id": "a", "playback_ids": mixed}).privacy == "public"  # one public id: anyone may play
    assert read_asset({"id": "a"}).privacy is None and read_asset({"id": "a", "playback_ids": 3}).privacy is None
    # Cloudflare: requireSignedURLs on the video object; api.video: `public` on the video object.
    assert read_stream_video({"uid": "u", "requireSignedURLs": True}).privacy == "signed"
    assert read_stream_video({"uid": "u", "requireSignedURLs": False}).privacy == "public"
    assert read_stream_video({"uid": "u", "requireSignedURLs": "yes"}).privacy is None
    assert read_listed({"videoId": "v", "public": False}).privacy == "signed"
    assert read_listed({"videoId": "v", "public": True}).privacy == "public"
    assert read_listed({"videoId": "v"}).privacy is None
    assert read_video({"id": "v", "metadata": {"privacy": "signed"}}).privacy == "signed"
    assert read_video({"id": "v", "metadata": {"privacy": "hidden"}}).privacy is None


# --- provider options -----------------------------------------------------------------------------


def test_stack_options_come_from_the_uploaders_environment_checked():
    env = {
        "MUX_VIDEO_QUALITY": "premium",
        "MUX_MAX_RESOLUTION_TIER": "2160p",
        "MUX_STATIC_RENDITIONS": "highest, audio-only",
        "MUX_TEST": "true",
        "CLOUDFLARE_THUMBNAIL_PCT": "0.5",
        "CLOUDFLARE_ALLOWED_ORIGINS": "example.com,*.example.org",
        "APIVIDEO_MP4_SUPPORT": "false",
        "APIVIDEO_PLAYER_ID": "pl45KFKdlddgk654dspkze",
        "BUNNY_TOKEN_AUTHENTICATION": "true",
        "AWS_MP4": "true",
    }
    assert stack_options(env) == {
        "generic": {},
        "mux": {
            "video_quality": "premium",
            "max_resolution_tier": "2160p",
            "static_renditions": ["highest", "audio-only"],
            "test": True,
        },
        "cloudflare": {"thumbnailTimestampPct": 0.5, "allowedOrigins": ["example.com", "*.example.org"]},
        "apivideo": {"mp4Support": False, "playerId": "pl45KFKdlddgk654dspkze"},
        "bunny": {"tokenAuthentication": True},
        "aws": {"mp4": True},
    }
    assert stack_options({}) == {"generic": {}, "mux": {}, "cloudflare": {}, "apivideo": {}, "bunny": {}, "aws": {}}


BASE_ENV = {"LEDGER_TABLE": "t", "QUEUE_URL": "q", "PROVIDER": "mux"}


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("MUX_VIDEO_QUALITY", "ultra"),
        ("MUX_MAX_RESOLUTION_TIER", "720p"),
        ("MUX_STATIC_RENDITIONS", "highest,highest"),
        ("MUX_TEST", "yes"),
        ("CLOUDFLARE_THUMBNAIL_PCT", "1.5"),
        ("CLOUDFLARE_ALLOWED_ORIGINS", "https://example.com/"),
        ("APIVIDEO_MP4_SUPPORT", "maybe"),
        ("AWS_MP4", "yes"),
        ("APIVIDEO_PLAYER_ID", "pl 1"),
        ("DEFAULT_PLAYBACK", "private"),
    ],
)
def test_a_stack_option_out_of_its_range_is_refused_naming_the_setting(name, value):
    with pytest.raises(SettingsError, match=name):
        load({**BASE_ENV, name: value})


def test_default_playback_is_signed_unless_set():
    assert load(BASE_ENV).default_playback == "signed" and Settings("t", "q", None).default_playback == "signed"
    assert load({**BASE_ENV, "DEFAULT_PLAYBACK": "public"}).default_playback == "public"


def test_the_mux_options_go_to_their_fields_and_a_rows_own_override_the_stacks():
    stack = CreateDefaults(
        "signed", {"mux": {"video_quality": "basic", "test": True, "static_renditions": ["highest"]}}
    )
    body, notes = body_of("mux", AssetMessage("a", SOURCE, privacy="public"), stack)
    assert (body["video_quality"], body["test"], body["static_renditions"]) == (
        "basic",
        True,
        [{"resolution": "highest"}],
    )
    row = AssetMessage(
        "a", SOURCE, privacy="public", options={"mux": {"video_quality": "premium", "max_resolution_tier": "1440p"}}
    )
    body, notes = body_of("mux", row, stack)
    assert (body["video_quality"], body["max_resolution_tier"], body["test"]) == ("premium", "1440p", True)
    assert not notes


def test_cloudflare_and_api_video_options_go_to_their_fields():
    stack = CreateDefaults("signed", {"cloudflare": {"thumbnailTimestampPct": 0.1, "allowedOrigins": ["a.example"]}})
    body, _ = body_of("cloudflare", AssetMessage("a", SOURCE), stack)
    assert (body["thumbnailTimestampPct"], body["allowedOrigins"]) == (0.1, ["a.example"])
    body, _ = body_of("cloudflare", AssetMessage("a", SOURCE, duration_s=100.0, poster_time_s=50.0), stack)
    assert body["thumbnailTimestampPct"] == 0.5  # the row's poster time wins over the option
    row = AssetMessage("a", SOURCE, options={"apivideo": {"mp4Support": False, "playerId": "pl1"}})
    body, _ = body_of("apivideo", row)
    assert (body["mp4Support"], body["playerId"]) == (False, "pl1")


def test_a_row_option_the_provider_would_not_take_is_left_out_at_create_with_a_note():
    stack = {"video_quality": "basic"}
    options = {"mux": {"video_quality": "ultra", "playback_policies": ["public"], "test": True}}
    chosen, notes = chosen_options("mux", stack, options)
    assert chosen == {"video_quality": "basic", "test": True}
    assert notes == [
        "options.mux.video_quality: must be one of basic, plus, premium (ignored)",
        "options.mux.playback_policies: not an option of mux (ignored)",
    ]
    assert chosen_options("mux", stack, {"cloudflare": {"x": 1}}) == (stack, [])  # another target's section
    assert chosen_options("mux", {}, {"mux": "plus"}) == ({}, ["options.mux: not an object (ignored)"])


def test_load_refuses_a_row_whose_options_the_stacks_provider_would_not_take(tmp_path):
    from migrator_cli.load import SourceBucket, load_inventory

    rows = [
        {"id": "ok", "source_url": SOURCE, "options": {"mux": {"video_quality": "plus"}}},
        {"id": "typo", "source_url": SOURCE, "options": {"mux": {"video_qualty": "plus"}}},
        {"id": "bad", "source_url": SOURCE, "options": {"mux": {"max_resolution_tier": "4k"}}},
        {"id": "other", "source_url": SOURCE, "options": {"cloudflare": {"anything": 1}}},
    ]
    path = tmp_path / "inv.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = io.StringIO()
    summary = load_inventory(
        str(path), dry_run=True, source_bucket=SourceBucket.of_outputs({"Provider": "mux"}), out=out
    )
    printed = out.getvalue()
    assert (summary.good, summary.bad) == (2, 2)
    assert "line 2: options.mux.video_qualty is not an option of mux (known: video_quality," in printed
    assert "line 3: options.mux.max_resolution_tier must be one of 1080p, 1440p, 2160p" in printed
    assert row_problems("mux", {"mux": []}) == ["options.mux must be an object"]


# --- the notes travel with the outcome ------------------------------------------------------------


def test_a_create_outcome_carries_the_bodys_notes_whatever_the_answer():
    from migrator.fate import OutcomeKind

    mux = provider("mux")
    mux.http.session = Session((201, {"data": {"id": "a1", "status": "preparing"}}))
    created = mux.create(ref(), SOURCE)
    assert created.kind is OutcomeKind.CREATED and created.notes == tuple(body_of("mux")[1])
    mux.http.session = Session((400, {"error": {"type": "invalid_parameters", "messages": ["no"]}}))
    assert mux.create(ref(), SOURCE).notes == created.notes
    assert mux.create_notes(ref(), SOURCE) == created.notes


def test_a_message_round_trip_keeps_what_the_body_is_built_from():
    again = parse_message(encode_message(ROW))
    assert all(body_of(name, again) == body_of(name) for name in PROVIDERS)


# --- the uploader keeps the notes and the playback with the processing write ----------------------


class _Pacer:
    """Every slot at once, nothing held: the pacer's part is tested elsewhere."""

    last_seen = None

    def reserve(self, now, within=None, purpose="create"):
        from migrator.pacer import Go

        return Go(now)

    def known_hold(self, *args, **kwargs):
        return None

    def observe(self, *args, **kwargs): ...


class _Ledger:
    """The claim and the one write the uploader makes on a create: what it was asked to write."""

    def __init__(self, previous: dict | None = None):
        self.previous, self.processing = previous, []

    def claim(self, msg, now, lease_until, token, tracks_due=None):
        from migrator.ledger import Claimed

        source = (self.previous or {}).get("source_url") or msg.source_url
        return Claimed(token, int((self.previous or {}).get("attempts", 0)) + 1, self.previous, source, now)

    def mark_processing(self, asset_id, token, remote_id, now, **fields):
        from migrator.ledger import WriteResult

        self.processing.append({"remote_id": remote_id, **fields})
        return WriteResult(True)


def _uploader(ledger, session):
    from migrator.uploader import Uploader

    mux = provider("mux", CreateDefaults("signed"))
    mux.http.session = session
    settings = Settings("t", "q", None, provider="mux")
    return Uploader(settings, ledger, _Pacer(), mux, None, lambda url: url, clock=lambda: 1.8e9, sleep=lambda s: None)


def test_the_uploader_writes_the_creates_notes_and_playback_with_the_processing_write():
    ledger = _Ledger()
    session = Session((201, {"data": {"id": "a1", "status": "preparing"}}))
    record = {"messageId": "m", "body": encode_message(ROW)}
    _uploader(ledger, session).process(record, 1.8e9 + 60)
    assert ledger.processing == [
        {"remote_id": "a1", "throttles": 0, "notes": tuple(body_of("mux")[1]), "playback": "signed", "privacy": None}
    ]  # privacy: nothing narrower came from a source
    assert json.loads(session.sent[0].body)["playback_policies"] == ["signed"]


def test_an_adopted_video_gets_the_notes_and_playback_of_the_row_the_ledger_kept():
    # An earlier try created the video and crashed before its write; the ledger holds the row (public here).
    from migrator.ledger.table import ledger_name

    row = {ledger_name(k): v for k, v in json.loads(encode_message(ROW)).items() if k != "id"}
    kept = {**row, "privacy": "public", "created_at": 1.8e9 - 3600}  # the ledger's own created_at beside
    previous = {"asset_id": ROW.asset_id, "state": "uploading", "attempts": 1, "claimed_at": 1.8e9 - 60, **kept}
    listed = {"data": [{"id": "a0", "passthrough": ROW.asset_id, "status": "preparing", "created_at": "1799999950"}]}
    session = Session((200, listed), (200, {"data": listed["data"][0]}))
    ledger = _Ledger(previous)
    later = AssetMessage(ROW.asset_id, SOURCE, privacy="private")  # a later message does not change the row
    _uploader(ledger, session).process({"messageId": "m", "body": encode_message(later)}, 1.8e9 + 60)
    [write] = ledger.processing
    assert write["remote_id"] == "a0" and write["playback"] == "public"
    assert write["notes"] == tuple(n for n in body_of("mux")[1])  # the same fields Mux has no place for
    assert all(r.method == "GET" for r in session.sent)  # found, never created again


def test_a_privacy_a_later_row_adds_is_the_one_the_create_carries():
    # The first message named no privacy and its try failed; the row was reloaded as private. The claim
    # stores the privacy the ledger lacked, and the create must carry it even where DefaultPlayback is public.
    previous = {"asset_id": "lib/p", "source_url": SOURCE, "state": "failed", "attempts": 1, "claimed_at": 1.8e9 - 60}
    listed = {"data": [], "next_cursor": None}  # the lookup first: the failed try made nothing
    session = Session((200, listed), (201, {"data": {"id": "a2", "status": "preparing"}}))
    ledger = _Ledger(previous)
    uploader = _uploader(ledger, session)
    uploader.provider.create_defaults = CreateDefaults("public")
    later = AssetMessage("lib/p", SOURCE, title="Now titled", privacy="private")
    uploader.process({"messageId": "m", "body": encode_message(later)}, 1.8e9 + 60)
    created = json.loads(session.sent[-1].body)
    assert created["playback_policies"] == ["signed"] and created["meta"]["title"] == "Now titled"
    assert ledger.processing[0]["playback"] == "signed"


# --- the original's creation time is kept apart from the ledger's own ------------------------------


class _Client:
    """Records each UpdateItem; answers as DynamoDB does to a write that wins."""

    def __init__(self):
        self.requests = []

    def update_item(self, **request):
        self.requests.append(request)
        return {}


def _set_paths(request: dict) -> list[str]:
    """The attributes an UpdateItem SETs, by name (DynamoDB refuses one named twice: "Two document paths
    overlap with each other")."""
    import re

    names = request.get("ExpressionAttributeNames", {})
    sets = request["UpdateExpression"].split(" REMOVE ")[0].removeprefix("SET ")
    return [names.get(lhs, lhs) for lhs in re.findall(r"(?:^|, )(#?\w+) = ", sets)]


def test_the_ledger_keeps_the_originals_creation_time_apart_from_its_own():
    from migrator.ledger import Ledger, message_of

    client = _Client()
    ledger = Ledger("t", client)
    ledger.record_intake(ROW, 1.8e9)
    ledger.stage(ROW, 1.8e9)
    ledger.claim(ROW, 1.8e9, 1.8e9 + 60, "tok")
    # Each write that makes the item (the claim's schema stamp after it sets the version alone).
    writes = [r for r in client.requests if _set_paths(r) != ["schema"]]
    assert len(writes) == 3
    for request in writes:
        paths = _set_paths(request)
        assert len(paths) == len(set(paths)), paths  # each attribute set once
        assert "created_at" in paths and "original_created_at" in paths
    item = {"asset_id": ROW.asset_id, "source_url": SOURCE, "created_at": 1.8e9, "original_created_at": ROW.created_at}
    assert message_of(item).created_at == "2019-05-01T10:00:00Z"
    # A row with no creation time: the ledger's own is never taken for the original's.
    assert message_of({"asset_id": "a", "source_url": SOURCE, "created_at": 1.8e9}).created_at is None
