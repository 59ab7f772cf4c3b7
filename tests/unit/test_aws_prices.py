"""`migrator plan`'s cost of the aws target (issue 44): MediaConvert minutes per tier and resolution class, S3 storage
of the HLS and CloudFront egress as a rate, checked against cases computed by hand; every price cited, the unread
ones marked; and the section shown for the aws target only."""

from __future__ import annotations

import json

import pytest
from migrator.platforms import TARGETS
from migrator_cli import aws_prices as P
from migrator_cli.archive_prices import PRICES, storage_usd
from migrator_cli.main import main
from migrator_cli.plan import Inventory, estimate, load_json
from migrator_cli.plan_aws import aws_outlook
from migrator_cli.plan_report import Plan

GiB = 1024**3
LADDER_KBPS = 6_128 + 3_628 + 996  # the job's ladder at its ceilings with audio (aws_job.LADDER); the thumbnail's 0


@pytest.mark.parametrize(
    ("height", "resolution"),
    [(240, "SD"), (480, "SD"), (719, "SD"), (720, "HD"), (1080, "HD"), (1081, "UHD"), (1440, "UHD"), (2160, "UHD")],
)
def test_an_outputs_resolution_class_is_awss_sd_below_720p_hd_to_1080p_uhd_above(height, resolution):
    assert P.resolution_class(height) == resolution


@pytest.mark.parametrize(("fps", "rate"), [(23.976, "<=30fps"), (30, "<=30fps"), (30.01, "30-60fps"), (60, "30-60fps")])
def test_frame_rate_classes_split_at_30_fps(fps, rate):
    assert P.frame_rate_class(fps) == rate


@pytest.mark.parametrize("fps", [0, -1, 60.1, 120])
def test_a_frame_rate_past_60_fps_is_not_priced_here(fps):
    with pytest.raises(ValueError, match="up to 60 fps"):
        P.frame_rate_class(fps)


@pytest.mark.parametrize(
    ("tier", "rate", "by_class"),
    [
        # 90 minutes of source through the default ladder: 1080p and 720p are HD (2 x 90 min), 480p, 360p and the
        # thumbnail capture SD (3 x 90 min).
        ("basic", "<=30fps", {"SD": 180 * 0.0075, "HD": 180 * 0.015}),  # $1.35 + $2.70 = $4.05
        ("basic", "30-60fps", {"SD": 180 * 0.015, "HD": 180 * 0.030}),  # twice: $8.10
        ("professional", "<=30fps", {"SD": 180 * 0.012, "HD": 180 * 0.024}),  # $2.16 + $4.32 = $6.48
        ("professional", "30-60fps", {"SD": 180 * 0.024, "HD": 180 * 0.048}),  # $12.96
    ],
)
def test_ninety_minutes_of_1080p_cost_each_renditions_minutes_at_its_class_and_tier(tier, rate, by_class):
    minutes = P.output_minutes(90)
    assert minutes == {"SD": 180, "HD": 180}
    assert P.transcode_usd(minutes, tier, rate) == pytest.approx(by_class)


@pytest.mark.parametrize(
    ("ladder", "minutes", "basic"),
    [
        # A 4K ladder: one UHD and one HD output of 10 minutes each.
        ((P.Rendition("2160p", 2160, 16_000), P.Rendition("1080p", 1080, 5_000)), {"UHD": 10, "HD": 10}, 0.30 + 0.15),
        ((P.Rendition("360p", 360, 900),), {"SD": 10}, 0.075),  # one SD rendition
    ],
)
def test_the_ladder_is_a_parameter(ladder, minutes, basic):
    assert P.output_minutes(10, ladder) == minutes
    assert sum(P.transcode_usd(P.output_minutes(10, ladder), "basic").values()) == pytest.approx(basic)


@pytest.mark.parametrize(("tier", "rate"), [("premium", "<=30fps"), ("basic", "60-120fps")])
def test_an_unknown_tier_or_rate_is_refused(tier, rate):
    with pytest.raises(ValueError, match="no MediaConvert price"):
        P.transcode_usd({"SD": 1}, tier, rate)


@pytest.mark.parametrize(
    ("seconds", "nbytes"),
    [
        (5400, LADDER_KBPS * 1000 / 8 * 5400),  # 90 min: 7,298,100,000 bytes, about 6.8 GiB
        (60, LADDER_KBPS * 1000 / 8 * 60),
        (0, 0),
    ],
)
def test_s3_holds_the_renditions_bitrates_over_the_duration_at_the_archives_standard_price(seconds, nbytes):
    assert P.output_bytes(seconds) == pytest.approx(nbytes)
    assert P.s3_month_usd(nbytes) == pytest.approx(nbytes / GiB * 0.023)
    assert P.s3_month_usd(nbytes) == pytest.approx(storage_usd(PRICES["STANDARD"], nbytes / GiB))  # one S3 table


@pytest.mark.parametrize(
    ("gb", "free_gb", "usd"),
    [(1024, 0, 87.04), (1024, 1024, 0.0), (3072, 1024, 2048 * 0.085), (10, 1024, 0.0)],
)
def test_cloudfront_egress_is_085_a_gb_past_the_free_terabyte(gb, free_gb, usd):
    assert P.egress_usd(gb, free_gb=free_gb) == pytest.approx(usd)


def test_a_view_sends_its_renditions_bitrate_over_the_duration():
    # 90 minutes at 1080p (5,128 kbit/s): 3,461,400,000 bytes, 3.22 GiB; 1,000 views $274.01.
    assert P.view_gb(5400, 5_128) == pytest.approx(5_128_000 / 8 * 5400 / GiB)
    outlook = aws_outlook(1, 1, 5400)
    assert outlook.per_1000_views(P.DEFAULT_LADDER[0]) == pytest.approx(1000 * 6_128_000 / 8 * 5400 / GiB * 0.085)


def test_rows_without_a_duration_are_costed_at_the_mean_and_counted():
    outlook = aws_outlook(4, 3, 3 * 1800)  # three of 30 minutes, one without a duration
    assert (outlook.source_minutes, outlook.estimated_minutes, outlook.mean_seconds) == (120, 30, 1800)
    assert outlook.output_minutes == {"SD": 240, "HD": 240}
    assert outlook.once_usd("basic") == pytest.approx(240 * 0.0075 + 240 * 0.015)
    assert "1 of 4 rows without a duration, at the mean: 30.0 min" in outlook.lines()[0]
    nothing = aws_outlook(2, 0, 0)
    assert not nothing.costed and nothing.lines() == [
        "aws target      - (no row says its duration: give duration_s to cost it; 2 of 2 rows without a duration,"
        " at the mean: 0.0 min)"
    ]
    assert nothing.as_dict()["once_usd"] == {} and nothing.as_dict()["s3_usd_month"] == 0


def test_every_price_is_cited_and_the_unread_ones_are_marked():
    cited = P.cited()
    for price in cited.values():
        assert price["source"].startswith("https://aws.amazon.com/") and price["date"]
    assert cited["mediaconvert"]["verified"] is False and cited["cloudfront_egress_gb"]["verified"] is True
    assert cited["mediaconvert"]["usd_per_minute"]["basic/HD/30-60fps"] == 0.030
    lines = aws_outlook(1, 1, 5400).lines()
    prices = lines[lines.index("  aws prices (us-east-1; date, source):") + 1 :]
    assert [line.endswith("(not verified)") for line in prices] == [True, True, False, True, True, False]
    assert any(P.CLOUDFRONT in line and "1 TB and 10,000,000 requests a month free" in line for line in prices)


def _aws_plan(inventory: Inventory, provider: str = "aws") -> Plan:
    est = estimate(
        inventory, provider, load_json(None, "prices.json"), load_json(None, "aws-prices.json"), {}, rate=1.0
    )
    return Plan("inv.jsonl", inventory, [est], "us-east-1")


def test_the_aws_estimate_carries_mediaconverts_basic_once_and_s3_a_month_and_the_section():
    plan = _aws_plan(Inventory(rows=1, assets=1, duration_known=1, seconds_known=5400))
    (est,) = plan.estimates
    assert est.encoding_usd == pytest.approx(4.05) and est.storage_usd_month == pytest.approx(
        LADDER_KBPS * 1000 / 8 * 5400 / GiB * 0.023, abs=1e-6
    )
    assert not any("no prices in the table" in w for w in est.warnings)
    assert any("MediaConvert prices are not verified" in w for w in est.warnings)
    text = "\n".join(plan.lines())
    assert "aws target      90.0 min of source video (every row has a duration)" in text
    assert "  MediaConvert output minutes: SD 180.0 (360p, thumbnail), HD 180.0 (1080p, 720p)" in text
    assert "MediaConvert basic" in text and "$4.05 once" in text and "sources above 30 fps: $8.10" in text
    assert "MediaConvert professional" in text and "$6.48 once" in text and "sources above 30 fps: $12.96" in text
    assert "  total          $4.05 (Basic) to $6.48 (Professional) once" in text
    doc = plan.as_dict()["aws"]
    assert doc["once_usd"] == {"basic": pytest.approx(4.05), "professional": pytest.approx(6.48)}
    assert doc["output_minutes"] == {"SD": 180, "HD": 180} and doc["egress"]["usd_per_tb"] == 87.04
    assert doc["prices"]["s3_standard_gb_month"]["usd"] == 0.023


def test_the_section_is_the_aws_targets_only():
    plan = _aws_plan(Inventory(rows=1, assets=1, duration_known=1, seconds_known=60), provider="mux")
    assert plan.aws is None and "aws" not in plan.as_dict()
    assert not any(line.startswith(("aws target", "  MediaConvert")) for line in plan.lines())


@pytest.fixture
def inventory(tmp_path):
    path = tmp_path / "inv.jsonl"
    rows = [
        {"id": "a", "source_url": "https://e.example.com/a.mp4", "duration_s": 5400},
        {"id": "b", "source_url": "https://e.example.com/b.mp4"},  # no duration: at the mean
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


def test_plan_for_another_provider_prints_no_aws_section(inventory, capsys):
    assert main(["plan", inventory, "--provider", "mux", "--rate", "1"]) == 0
    assert "aws target" not in capsys.readouterr().out
    assert main(["plan", inventory, "--provider", "mux", "--rate", "1", "--json"]) == 0
    assert "aws" not in json.loads(capsys.readouterr().out)


@pytest.mark.skipif("aws" not in TARGETS, reason="the aws target is being registered (issue 44)")
def test_plan_provider_aws_prints_the_section_and_its_json(inventory, capsys):
    assert main(["plan", inventory, "--provider", "aws", "--rate", "1"]) == 0
    out = capsys.readouterr().out
    assert "aws target      180.0 min of source video (1 of 2 rows without a duration, at the mean: 90.0 min)" in out
    assert "  total          $8.10 (Basic) to $12.96 (Professional) once" in out
    assert main(["plan", inventory, "--provider", "aws", "--rate", "1", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["aws"]["source_minutes"] == 180 and doc["aws"]["estimated_minutes"] == 90
    assert doc["providers"]["aws"]["encoding_usd"] == pytest.approx(8.10)
