"""The archive's layout and parts (issue 43), as tables: where each file goes, how a file is cut, what S3's
composite checksum of the parts is, and what is refused."""

from __future__ import annotations

import base64
import hashlib
import itertools

import pytest
from migrator.archive.plan import (
    MAX_ARCHIVE_BYTES,
    MAX_PARTS,
    MIN_PART_BYTES,
    MiB,
    PartPlan,
    composite_sha256,
    content_range_total,
    file_key,
    key_of_id,
    original_key,
    parts_in_order,
    plan_parts,
    sha256_b64,
    sidecar_key,
    suffix_of,
)


@pytest.mark.parametrize(
    ("prefix", "asset_id", "key"),
    [
        ("masters", "vimeo/700000001", "masters/vimeo/700000001/original.mp4"),
        ("/masters/", "a", "masters/a/original.mp4"),  # slashes around the prefix do not double
        ("", "a", "a/original.mp4"),  # no prefix: the bucket's root
    ],
)
def test_each_original_has_its_folder_beside_its_row_and_files(prefix, asset_id, key):
    assert original_key(prefix, asset_id, "mp4") == key
    assert sidecar_key(prefix, asset_id) == key.replace("original.mp4", "row.json")
    assert file_key(prefix, asset_id, "captions/en.vtt") == key.replace("original.mp4", "captions/en.vtt")


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("thumbnail.jpg", "masters/a/thumbnail.jpg"),
        ("captions/pt-BR.subtitles.Director%27s.srt", "masters/a/captions/pt-BR.subtitles.Director%2527s.srt"),
        ("../../../etc/x", "masters/a/etc/x"),  # never out of the asset's folder
        ("captions/./../en.vtt", "masters/a/captions/en.vtt"),
        ("a b/ü.vtt", "masters/a/a%20b/%C3%BC.vtt"),
        ("//", "masters/a/file"),
    ],
)
def test_a_side_files_name_stays_inside_the_assets_folder(name, key):
    assert file_key("masters", "a", name) == key


@pytest.mark.parametrize(
    ("asset_id", "key"),
    [
        ("vimeo/700000001", "vimeo/700000001"),
        ("talks/2024 keynote (final).mp4", "talks/2024%20keynote%20%28final%29.mp4"),
        ("../../etc/passwd", "..%2F..%2Fetc%2Fpasswd"),  # a path a sync to disk would walk out by: one segment
        ("a//b", "a%2F%2Fb"),
        ("/lead", "%2Flead"),
        ("..", "%2E%2E"),
        ("a%2Fb", "a%252Fb"),  # `%` encoded: never the same key as `a/b`
        ("café/é", "caf%C3%A9/%C3%A9"),
    ],
)
def test_an_asset_id_becomes_key_segments_a_restore_to_disk_reads_back_safely(asset_id, key):
    assert key_of_id(asset_id) == key
    assert original_key("masters", asset_id, "mp4") == f"masters/{key}/original.mp4"


@pytest.mark.parametrize(
    ("url", "content_type", "suffix"),
    [
        ("https://cdn.example.com/talks/Keynote.MOV?sig=x", None, "mov"),
        ("s3://bucket/a%20b.mkv", None, "mkv"),
        ("vimeo://videos/123", "video/mp4", "mp4"),  # a reference names no file: its link's type says
        ("https://h/download", "video/quicktime; charset=binary", "mov"),
        ("https://h/download", "application/octet-stream", "bin"),
        ("https://h/file.tar.gz-very-long-suffix", None, "bin"),  # not a suffix worth keeping
    ],
)
def test_the_originals_suffix_comes_from_its_name_else_its_type(url, content_type, suffix):
    assert suffix_of(url, content_type) == suffix


@pytest.mark.parametrize(
    ("size", "part", "count"),
    [
        (1, MIN_PART_BYTES, 1),
        (100 * MiB, MIN_PART_BYTES, 7),  # 16 MiB parts: six whole, one of 4 MiB
        (5 * 1024 * MiB, MIN_PART_BYTES, 320),
        (20 * 1024 * MiB, 24 * MiB, 854),  # past 1,000 parts of 16 MiB the parts grow, 4 MiB at a time
        (16 * 1024 * MiB + 1, 20 * MiB, 820),  # one byte past 1,000 parts of 16 MiB: the next step
        (MAX_ARCHIVE_BYTES, 256 * MiB, MAX_PARTS),
    ],
)
def test_a_file_is_cut_into_at_most_a_thousand_parts_of_whole_4_mib_blocks(size, part, count):
    plan = plan_parts(size)
    assert isinstance(plan, PartPlan) and (plan.part_bytes, plan.count) == (part, count)
    assert plan.count <= MAX_PARTS and plan.part_bytes % (4 * MiB) == 0  # Dropbox's blocks never straddle a part
    covered = [plan.byte_range(n) for n in range(1, plan.count + 1)]
    assert covered[0][0] == 0 and covered[-1][1] == size - 1  # every byte, once, in order
    assert all(b[0] == a[1] + 1 for a, b in itertools.pairwise(covered))
    assert sum(plan.length(n) for n in range(1, plan.count + 1)) == size


@pytest.mark.parametrize(("size", "why"), [(0, "empty"), (MAX_ARCHIVE_BYTES + 1, "aws s3 cp")])
def test_an_empty_file_or_one_past_the_largest_copy_is_refused_with_the_way_out(size, why):
    refused = plan_parts(size)
    assert isinstance(refused, str) and why in refused


def test_a_part_outside_the_plan_is_an_error_not_a_range():
    with pytest.raises(ValueError):
        PartPlan(10, 4).byte_range(4)


@pytest.mark.parametrize(
    ("header", "total"),
    [("bytes 0-99/1234", 1234), ("bytes 0-0/1", 1), ("bytes 0-99/*", None), (None, None), ("items 0-9/10", None)],
)
def test_the_files_size_is_read_from_a_partial_answers_content_range(header, total):
    assert content_range_total(header) == total


def test_s3s_composite_checksum_is_the_sha256_of_the_parts_digests_then_their_number():
    parts = [b"a" * 10, b"b" * 7, b"c"]
    each = [sha256_b64(p) for p in parts]
    assert each[0] == base64.b64encode(hashlib.sha256(parts[0]).digest()).decode()
    joined = b"".join(hashlib.sha256(p).digest() for p in parts)
    assert composite_sha256(each) == base64.b64encode(hashlib.sha256(joined).digest()).decode() + "-3"
    assert composite_sha256(each) != composite_sha256(list(reversed(each)))  # the order is the file's


@pytest.mark.parametrize(
    ("done", "count", "next_part"), [([], 3, 1), ([1, 2], 3, 3), ([1, 3], 3, 2), ([1, 2, 3], 3, 4)]
)
def test_the_next_part_is_the_first_not_recorded(done, count, next_part):
    assert parts_in_order(done, count) == next_part


def test_the_composite_checksum_is_the_one_the_emulators_s3_answered_for_the_same_parts():
    """Cross-checked once against the emulator's CompleteMultipartUpload (ministack, 2026-12-06: a 5 MiB part of
    `a`, a 100-byte part of `b`, ChecksumAlgorithm SHA256, ChecksumType COMPOSITE); an upload_part whose
    ChecksumSHA256 did not match its bytes was refused there with BadDigest, as S3 documents."""
    parts = [sha256_b64(b"a" * (5 * MiB)), sha256_b64(b"b" * 100)]
    assert composite_sha256(parts) == "7n1ZEEGpZyRgQtPvGMqYL80UbaFJA89T+2OobG6XQAs=-2"
