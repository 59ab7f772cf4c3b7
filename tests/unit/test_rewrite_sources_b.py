"""The source embed forms of Mux, Cloudflare Stream, api.video and object storage (S3, GCS, Azure Blob, Bunny Stream),
against the snippets of their own documents (tests/data/rewrite/snippets/<platform>.json, each cited): each is
found as exactly the embeds expected, each form's sample is found again as itself, look-alikes are left alone, and
a found embed's span is the embed alone inside a page."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from migrator_cli.rewrite import forms
from migrator_cli.rewrite.model import KINDS, OPTIONS

pytestmark = pytest.mark.unit

DATA = Path(__file__).resolve().parents[1] / "data" / "rewrite" / "snippets"
PLATFORMS = ("mux", "cloudflare", "apivideo", "objects")
# Ids of the shapes each platform uses, for the samples (what a form writes with an id put in).
SAMPLE_IDS = {
    "mux": ("uNbxnGLKJ00yfbijDO8COxTOyVKT01xpxW", "EcHgOK9coz5K4rjSwOkoE7Y7O01201YMIC200RI6lNxnhs", "PB" + "7" * 30),
    "cloudflare": ("6b9e68b07dfee8cc2d116e4c51d6a957", "5d5bc37ffcf54c9b82e996823bffbb81"),
    "apivideo": ("vi5fv44Hol1jFrCovyktAJS9", "viMgTc1KULkXrjFfDCTBtLs1"),
    # S3's object URL, GCS's and Azure's source ids (the map's keys), and Bunny's GUIDs.
    "s3": ("s3://media-bucket/talks/intro.mp4", "s3://my.dotted.bucket/a/b/Final Cut.MOV"),
    "gcs": ("my-bucket/videos/a.mp4", "b_2/x/y.webm"),
    "azure": ("myaccount/mycontainer/myblob.mp4", "acct9/videos/2024/talk.m4v"),
    "bunny": ("eb1c4f77-0cda-46be-b47d-1118ad7c2ffe", "d9d9ab1f-fc9f-4488-9c26-4ffc653c0024"),
}
PAGE = '<main><h1>Our talks</h1>\n<p>Watch it below (or <a href="https://example.com/talk.mp4">download</a>).</p>\n{}\n<p>Thanks</p></main>'


def doc(platform: str) -> dict:
    return json.loads((DATA / f"{platform}.json").read_text())


def entries(key: str) -> list[tuple[str, dict]]:
    return [(p, entry) for p in PLATFORMS for entry in doc(p)[key]]


def registered(platform: str) -> list:
    return [f for f in forms.all_forms() if f.name.startswith(_prefixes(platform))]


def _prefixes(platform: str) -> tuple[str, ...]:
    return ("s3.", "gcs.", "azure.", "bunny.") if platform == "objects" else (platform + ".",)


@pytest.mark.parametrize(("platform", "entry"), entries("forms"), ids=lambda v: v if isinstance(v, str) else v["form"])
def test_each_documents_snippet_is_found_as_exactly_the_embeds_it_holds(platform, entry):
    found = forms.find(entry["snippet"])
    assert entry["cite"].startswith("https://")
    assert [(e.form, e.platform, e.kind, e.video_id) for e in found] == [
        (x.get("form", entry["form"]), x.get("platform", platform), x["kind"], x["video_id"]) for x in entry["expect"]
    ]
    for embed, expected in zip(found, entry["expect"], strict=True):
        assert embed.kind in KINDS and set(embed.options) <= set(OPTIONS)
        assert dict(embed.options) == expected.get("options", {})
        assert embed.private is expected.get("private", False)
        for name in ("unknown", "attributes", "detail"):
            if name in expected:
                value = getattr(embed, name)
                assert (list(value) if name == "unknown" else dict(value) if name == "attributes" else value) == (
                    expected[name]
                )


@pytest.mark.parametrize(
    ("platform", "entry"),
    [(p, e) for p, e in entries("forms") if e.get("whole", True) and len(e["expect"]) == 1],
    ids=lambda v: v if isinstance(v, str) else v["form"],
)
def test_a_snippet_inside_a_page_is_found_with_a_span_of_the_embed_alone(platform, entry):
    text = PAGE.format(entry["snippet"])
    found = [e for e in forms.find(text) if e.platform != "https"]
    assert [text[e.start : e.end] for e in found] == [entry["snippet"]]


@pytest.mark.parametrize(
    ("platform", "entry"), entries("lookalikes"), ids=lambda v: v if isinstance(v, str) else v["why"]
)
def test_look_alikes_are_left_alone(platform, entry):
    assert forms.find(entry["snippet"]) == [], entry["why"]


@pytest.mark.parametrize("platform", PLATFORMS)
def test_every_registered_form_has_a_documents_snippet_and_at_least_five_look_alikes(platform):
    named = {e["form"] for e in doc(platform)["forms"]} | {
        x["form"] for e in doc(platform)["forms"] for x in e["expect"] if "form" in x
    }
    assert {f.name for f in registered(platform)} <= named
    assert len(doc(platform)["lookalikes"]) >= 5


def sample_cases() -> list[tuple[str, object, str]]:
    cases = []
    for platform in PLATFORMS:
        for form in registered(platform):
            cases += [(platform, form, video_id) for video_id in SAMPLE_IDS[form.platform]]
    return cases


@pytest.mark.parametrize(("platform", "form", "video_id"), sample_cases(), ids=lambda v: getattr(v, "name", str(v)))
def test_a_forms_sample_is_found_again_as_that_form_and_id(platform, form, video_id):
    found = forms.find(form.sample(video_id))
    assert [(e.form, e.video_id) for e in found] == [(form.name, video_id)]
    assert form.hint in form.sample(video_id).lower()


def test_object_urls_take_the_video_extensions_the_s3_source_lists():
    from migrator.sources.s3 import VIDEO_EXTENSIONS
    from migrator_cli.rewrite.sources import objects

    assert set(objects.VIDEO_EXTENSIONS) == set(VIDEO_EXTENSIONS)


def test_a_cloudflare_token_names_its_video_only_by_a_well_formed_sub():
    from migrator_cli.rewrite.sources.cloudflare import uid_of

    uid = "6b9e68b07dfee8cc2d116e4c51d6a957"
    assert uid_of(uid.upper()) == (uid, False)
    signed = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiI2YjllNjhiMDdkZmVlOGNjMmQxMTZlNGM1MWQ2YTk1NyJ9.c2ln"
    assert uid_of(signed) == (uid, True)
    assert uid_of("eyJhbGciOiJSUzI1NiJ9.bm90IGpzb24.c2ln") is None  # the payload is no JSON
    assert uid_of("eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOjQyfQ.c2ln") is None  # sub is no uid


def test_a_url_inside_another_urls_query_is_a_url_but_an_encoded_one_is_not():
    """A share or redirect link that carries a video's URL as it is points at that video: the inner URL is found
    (and rewritten), up to the outer URL's next parameter; percent-encoded, it is only text of the outer URL (as a
    Cloudflare iframe's `poster` parameter is), and nothing is found."""
    pid = "uNbxnGLKJ00yfbijDO8COxTOyVKT01xpxW"
    plain = f"https://example.com/share?u=https://stream.mux.com/{pid}.m3u8&via=site"
    found = forms.find(plain)
    assert [(e.form, e.video_id, plain[e.start : e.end]) for e in found] == [
        ("mux.hls", pid, f"https://stream.mux.com/{pid}.m3u8")
    ]
    encoded = f"https://example.com/share?u=https%3A%2F%2Fstream.mux.com%2F{pid}.m3u8"
    assert forms.find(encoded) == []


def test_an_element_whose_name_only_starts_like_a_player_is_left_alone():
    uid = "6b9e68b07dfee8cc2d116e4c51d6a957"
    assert forms.find(f'<stream-card src="{uid}"></stream>') == []
    assert forms.find('<mux-player-x playback-id="uNbxnGLKJ00yfbijDO8COxTOyVKT01xpxW"></mux-player>') == []
