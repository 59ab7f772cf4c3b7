"""The archive bucket, as the archiver writes it: one S3 multipart upload per original, each part sent with its
SHA-256 (S3 refuses a part whose bytes do not match: BadDigest), and small files (the row's JSON, a caption)
put whole. A thin adapter: what to send and whether the result stands are `plan`'s and `decide`'s.

The original is written in the stack's storage class, with SHA-256 as its checksum algorithm, so S3 keeps the
composite checksum of the parts (`HeadObject` with ChecksumMode, which answers for an object in any class) that
`migrator verify --archive` reads back. The small files beside it (the row's JSON, captions, a thumbnail) stay in
STANDARD whatever the class: an object in GLACIER or DEEP_ARCHIVE cannot be read without a restore of hours
(GetObject answers InvalidObjectState), and what the archive holds should be readable at a glance.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class SentPart:
    number: int
    etag: str
    sha256: str  # base64, as S3 takes and answers it


@dataclass(frozen=True)
class Archived:
    """What S3 holds at a key: its size and its SHA-256 checksum (composite `...-N` for a multipart object)."""

    size: int
    sha256: str | None
    storage_class: str


@dataclass
class ArchiveStore:
    bucket: str
    s3: Any  # a boto3 S3 client (boto3 ships no types)
    storage_class: str = "STANDARD"

    def start(self, key: str, content_type: str) -> str:
        """A new multipart upload for `key`: its upload id."""
        made = self.s3.create_multipart_upload(
            Bucket=self.bucket,
            Key=key,
            ContentType=content_type,
            ChecksumAlgorithm="SHA256",
            StorageClass=self.storage_class,
        )
        return str(made["UploadId"])

    def open_uploads(self, key: str) -> list[str]:
        """The upload ids still open for `key` (one a crash left after its create, before the ledger heard of it)."""
        listed = self.s3.list_multipart_uploads(Bucket=self.bucket, Prefix=key)
        return [str(u["UploadId"]) for u in listed.get("Uploads", []) if u.get("Key") == key]

    def send_part(self, key: str, upload_id: str, number: int, body: bytes, sha256: str) -> SentPart:
        answer = self.s3.upload_part(
            Bucket=self.bucket,
            Key=key,
            UploadId=upload_id,
            PartNumber=number,
            Body=body,
            ChecksumSHA256=sha256,
        )
        return SentPart(number, str(answer["ETag"]), str(answer.get("ChecksumSHA256") or sha256))

    def sent_parts(self, key: str, upload_id: str) -> list[SentPart]:
        """The parts S3 holds for an open upload, every page (each with the ETag its completion names)."""
        found: list[SentPart] = []
        marker = 0
        while True:
            page = self.s3.list_parts(Bucket=self.bucket, Key=key, UploadId=upload_id, PartNumberMarker=marker)
            for part in page.get("Parts", []):
                found.append(SentPart(int(part["PartNumber"]), str(part["ETag"]), str(part.get("ChecksumSHA256", ""))))
            if not page.get("IsTruncated"):
                return found
            marker = int(page["NextPartNumberMarker"])

    def complete(self, key: str, upload_id: str, parts: Sequence[SentPart]) -> str | None:
        """Join the parts into the object: S3's composite SHA-256 of it (None where S3 gave none)."""
        done = self.s3.complete_multipart_upload(
            Bucket=self.bucket,
            Key=key,
            UploadId=upload_id,
            MultipartUpload={
                "Parts": [
                    {"PartNumber": p.number, "ETag": p.etag, "ChecksumSHA256": p.sha256}
                    for p in sorted(parts, key=lambda p: p.number)
                ]
            },
        )
        return done.get("ChecksumSHA256")

    def abort(self, key: str, upload_id: str) -> None:
        self.s3.abort_multipart_upload(Bucket=self.bucket, Key=key, UploadId=upload_id)

    def held(self, key: str) -> Archived | None:
        """What S3 holds at `key`, its checksum read back; None when nothing is there."""
        try:
            head = self.s3.head_object(Bucket=self.bucket, Key=key, ChecksumMode="ENABLED")
        except self.s3.exceptions.ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in ("404", "NoSuchKey", "NotFound"):
                return None
            raise
        return Archived(int(head["ContentLength"]), head.get("ChecksumSHA256"), head.get("StorageClass") or "STANDARD")

    def put(self, key: str, body: bytes, content_type: str) -> None:
        """A small file whole (the row's JSON, a caption, a thumbnail), with its SHA-256 checked by S3, in STANDARD."""
        self.s3.put_object(
            Bucket=self.bucket,
            Key=key,
            Body=body,
            ContentType=content_type,
            ChecksumAlgorithm="SHA256",
            StorageClass="STANDARD",
        )

    def put_json(self, key: str, doc: Mapping) -> None:
        body = json.dumps(doc, ensure_ascii=False, sort_keys=True, indent=1, default=str).encode("utf-8")
        self.put(key, body, "application/json")
