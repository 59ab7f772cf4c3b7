"""The adapters' own requests against the simulators: what WP-A changed on the wire, both sides.

The generic listing pages with `limit` and `cursor` (the simulator and `GenericProvider.videos()`
agree), and Cloudflare's copy sends `input`, which the simulator takes (and still takes the
deprecated `url`).
"""

from __future__ import annotations

import json

from migrator.fate import OutcomeKind
from migrator.providers import AssetRef, build

from tests.sim.test_cloudflare import ACCOUNT, TOKEN, StreamClient


def test_generic_simulator_pages_its_list_with_limit_and_cursor(launch, web):
    sim = launch("generic")
    ids = [
        web.post(
            f"{sim.url}/videos", json={"input": f"https://m.example/{n}.mp4", "metadata": {"migration_ref": f"a{n}"}}
        ).json()["id"]
        for n in range(5)
    ]
    whole = web.get(f"{sim.url}/videos").json()
    assert [v["id"] for v in whole["data"]] == ids and "next_cursor" not in whole  # the seed's one page
    seen, cursor, pages = [], None, 0
    while True:
        page = web.get(f"{sim.url}/videos", params={"limit": 2, **({"cursor": cursor} if cursor else {})}).json()
        seen, pages = seen + [v["id"] for v in page["data"]], pages + 1
        cursor = page.get("next_cursor")
        if not cursor:
            break
    assert (seen, pages) == (ids, 3)  # oldest first, each once
    assert web.get(f"{sim.url}/videos", params={"limit": 0}).status_code == 400
    assert web.get(f"{sim.url}/videos", params={"cursor": "x"}).status_code == 400


def test_generic_adapter_lists_a_paged_library_whole(launch):
    sim = launch("generic")
    generic = build("generic", sim.url, lambda: None)
    generic.http.session.trust_env = False
    for n in range(230):
        assert generic.create(AssetRef(f"lib/{n}"), f"https://m.example/{n}.mp4").kind is OutcomeKind.CREATED
    listed = list(generic.videos())
    assert sorted(v.ref for v in listed) == sorted(f"lib/{n}" for n in range(230))
    assert len(sim.requests_log(ops=("list",))) == 3  # 100 + 100 + 30


def test_cloudflare_copy_sends_input_and_the_simulator_takes_it(launch, web):
    sim = launch("cloudflare", token=TOKEN, account_id=ACCOUNT)
    cf = build("cloudflare", sim.url, lambda: json.dumps({"account_id": ACCOUNT, "api_token": TOKEN}))
    cf.http.session.trust_env = False
    outcome = cf.create(AssetRef("lib/1", title="One"), "https://m.example/one.mp4")
    assert outcome.kind is OutcomeKind.CREATED
    client = StreamClient(web, sim.url)
    assert client.get(outcome.remote_id).json()["result"]["meta"]["migration_ref"] == "lib/1"
    # The deprecated spelling still works, and a bad URL in either is refused naming the field.
    assert client.copy("https://m.example/two.mp4").status_code == 200
    bad = web.post(f"{client.root}/copy", json={"input": "not a url"}, headers=client.headers)
    assert bad.status_code == 400 and "input" in json.dumps(bad.json())


def test_generic_simulator_holds_the_rows_fields_in_metadata_and_refuses_a_privacy_it_does_not_know(launch, web):
    from migrator.messages import AssetMessage

    sim = launch("generic")
    generic = build("generic", sim.url, lambda: None)
    generic.http.session.trust_env = False
    row = AssetMessage("lib/1", "https://m.example/1.mp4", title="T", tags=("a",), privacy="private", folder="f")
    outcome = generic.create(AssetRef(row.asset_id, row.title, 0, row), row.source_url)
    held = web.get(f"{sim.url}/videos/{outcome.remote_id}").json()
    assert held["metadata"] == {
        "migration_ref": "lib/1",
        "title": "T",
        "tags": ["a"],
        "folder": "f",
        "privacy": "signed",
    }
    assert generic.poll(row.asset_id, outcome.remote_id).video.privacy == "signed"
    body = {"input": "https://m.example/2.mp4", "metadata": {"migration_ref": "lib/2", "privacy": "hidden"}}
    assert web.post(f"{sim.url}/videos", json=body).status_code == 400
