"""The audit's comparison of the provider's library with the ledger (no network: a listed library)."""

from __future__ import annotations

from migrator.providers import Video, build
from migrator.providers.http import Answer
from migrator.states import State
from migrator_cli.audit import audit, paced


class Library:
    """A provider whose library is a list, with the one extra read api.video needs for statuses."""

    def __init__(self, videos, statuses=None):
        self._videos, self.statuses, self.settled_calls = videos, statuses or {}, 0

    def videos(self):
        yield from self._videos

    def settled(self, video):
        self.settled_calls += 1
        return self.statuses.get(video.remote_id, video)


def v(remote_id, ref, target=None, status="preparing"):
    return Video(remote_id, ref, target, status)


def test_one_live_video_per_asset_is_ok_and_an_errored_leftover_is_not_a_duplicate():
    library = Library(
        [
            v("v1", "a", State.READY, "ready"),
            v("v2", "b", State.REJECTED, "errored"),  # the first try of a retried rejected asset
            v("v3", "b", State.READY, "ready"),
            v("v9", None, State.READY, "ready"),  # not ours: another team's video
        ]
    )
    ledger = [
        {"asset_id": "a", "state": "ready", "remote_id": "v1"},
        {"asset_id": "b", "state": "ready", "remote_id": "v3"},
    ]
    report = audit(library, ledger)
    assert report.ok, report.lines()
    assert (report.provider_videos, report.our_videos, report.errored_leftovers, report.ledger_assets) == (4, 3, 1, 2)


def test_duplicates_missing_videos_and_state_drift_are_each_listed():
    library = Library(
        [
            v("v1", "dup", State.READY, "ready"),
            v("v2", "dup", None, "preparing"),
            v("v5", "late", State.READY, "ready"),
            v("v6", "bad", State.REJECTED, "errored"),
        ]
    )
    ledger = [
        {"asset_id": "dup", "state": "ready", "remote_id": "v1"},
        {"asset_id": "gone", "state": "ready", "remote_id": "v4"},
        {"asset_id": "late", "state": "processing", "remote_id": "v5"},
        {"asset_id": "bad", "state": "ready", "remote_id": "v6"},
        {"asset_id": "never", "state": "pending"},
    ]
    report = audit(library, ledger)
    kinds = {(f.kind, f.asset_id) for f in report.findings}
    assert kinds == {("duplicate", "dup"), ("missing", "gone"), ("state", "late"), ("state", "bad")}
    assert not report.ok and report.as_dict()["duplicates"] == 1
    assert "FINDINGS" in report.lines()[-1]


def test_statuses_are_read_only_for_our_videos():
    library = Library(
        [v("v1", "a", None, "listed"), v("v2", None, None, "listed")],
        statuses={"v1": v("v1", "a", State.READY, "playable")},
    )
    report = audit(library, [{"asset_id": "a", "state": "ready", "remote_id": "v1"}])
    assert report.ok and library.settled_calls == 1


def test_the_audit_waits_out_429s_with_the_providers_hint():
    provider = build("generic", "https://p.example", lambda: None)
    answers = iter([Answer(429, None, "", {"Retry-After": "7"}), Answer(200, {"data": []}, "", {})])
    provider.http.send = lambda *a, **k: next(answers)
    slept: list[float] = []
    paced(provider, sleep=slept.append)
    assert provider.http.send("GET", "/videos").status == 200 and slept == [7.0]


def test_a_video_played_otherwise_than_its_row_asks_is_listed_a_private_row_public_above_all():
    library = Library(
        [
            Video("v1", "priv", State.READY, "ready", privacy="public"),  # private row, public at the provider
            Video("v2", "pub", State.READY, "ready", privacy="public"),
            Video("v3", "default", State.READY, "ready", privacy="public"),  # no privacy: DefaultPlayback signed
            Video("v4", "unlisted", State.READY, "ready", privacy="public"),
            Video("v5", "unknown", State.READY, "ready"),  # the provider's answer does not say
            Video("v6", "old", State.READY, "ready", privacy="signed"),  # a ledger from before playback was kept
            Video("v7", "over", State.READY, "ready", privacy="signed"),  # public row made signed: also drift
        ]
    )
    ledger = [
        {"asset_id": "priv", "state": "ready", "remote_id": "v1", "privacy": "private", "playback": "signed"},
        {"asset_id": "pub", "state": "ready", "remote_id": "v2", "privacy": "public", "playback": "public"},
        {"asset_id": "default", "state": "ready", "remote_id": "v3", "playback": "signed"},
        {"asset_id": "unlisted", "state": "ready", "remote_id": "v4", "privacy": "unlisted"},
        {"asset_id": "unknown", "state": "ready", "remote_id": "v5", "privacy": "signed"},
        {"asset_id": "old", "state": "ready", "remote_id": "v6"},
        {"asset_id": "over", "state": "ready", "remote_id": "v7", "privacy": "public"},
    ]
    report = audit(library, ledger)
    found = {f.asset_id: f.detail for f in report.findings if f.kind == "privacy"}
    assert found == {
        "priv": "row privacy private: signed wanted, public at the provider",
        "default": "row privacy none (DefaultPlayback signed): signed wanted, public at the provider",
        "over": "row privacy public: public wanted, signed at the provider",
    }
    assert report.as_dict()["privacy_drift"] == 3 and not report.ok
    assert any(line.startswith("privacy drift     3") for line in report.lines())


def test_api_videos_status_read_keeps_the_privacy_its_listing_gave():
    from migrator.providers.apivideo import ApiVideoProvider
    from migrator.providers.http import Answer as HttpAnswer

    api = build("apivideo", None, lambda: "key")
    assert isinstance(api, ApiVideoProvider)
    status = {"encoding": {"playable": True, "metadata": {"duration": 9}}}
    api.http.send = lambda *a, **k: HttpAnswer(200, status, "", {})
    settled = api.settled(Video("v1", "a", status="listed", privacy="signed"))
    assert (settled.target, settled.privacy) == (State.READY, "signed")
