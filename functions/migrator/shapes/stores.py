"""The answers the object-store sources read (sources/gcs.py, azure.py, s3.py), as they read them.

Cloud Storage answers JSON; Azure's List Blobs answers XML (checked as `xml_doc` makes it: each element an object
of its children, a leaf its text); S3 is read through boto3, whose parsed answer is checked (its datetimes as
ISO text), each call named by its operation (method "AWS").
"""

from __future__ import annotations

from .checker import BOOL, INT, STR, any_of, arr, either, obj
from .declared import Declared, Platform

GCS_OBJECT = obj(
    {"name": STR},
    # Cloud Storage sends `size` as a string of digits (the JSON API's uint64); sources/gcs.py reads it so.
    size=STR,
    contentType=STR,
    timeCreated=STR,
    updated=STR,
    storageClass=STR,
    metadata=obj(),
    customerEncryption=obj(),
)
GCS = Platform(
    "gcs",
    "source",
    (
        Declared(
            "the access token",
            "POST",
            r"(/.*)?/token",
            obj({"access_token": STR}, expires_in=INT, token_type=STR),
            "GcsSource._exchange",
            note="the service account's JWT bearer grant: a token for the reads, nothing stored",
        ),
        Declared(
            "the object list",
            "GET",
            r"/storage/v1/b/[^/]+/o",
            obj(items=arr(GCS_OBJECT), nextPageToken=STR),
            "GcsSource.page",
        ),
        Declared("the object", "GET", r"/storage/v1/b/[^/]+/o/[^/]+", GCS_OBJECT, "GcsSource.video"),
        Declared("the object's signed HEAD", "HEAD", r"/[^/]+/.+", None, "GcsSource._check"),
    ),
)

BLOB_PROPERTIES = obj(
    {"Content-Length": STR, "Last-Modified": STR},
    **{"Content-Type": STR, "Creation-Time": STR},
    AccessTier=STR,
    ArchiveStatus=STR,
    CopyStatus=STR,
)
AZURE_BLOB = obj({"Name": STR, "Properties": BLOB_PROPERTIES}, Metadata=either("object", "string"))
AZURE = Platform(
    "azure",
    "source",
    (
        Declared(
            "the blob list",
            "GET",
            r"(/[^/]+)?/[^/]+/?",
            obj(
                {
                    "EnumerationResults": obj(
                        # an empty list is `<Blobs />`, read as empty text
                        {"Blobs": any_of(obj(Blob=arr(AZURE_BLOB)), STR)},
                        NextMarker=STR,
                    )
                }
            ),
            "azure.read_blob_list",
            form="xml",
            xml_lists=("Blob",),
        ),
        Declared(
            "the blob's properties",
            "HEAD",
            r"(/[^/]+)?/[^/]+/.+",
            None,
            "azure.blob_of_headers",
            headers=("Content-Length", "Last-Modified"),
        ),
    ),
)

S3 = Platform(
    "s3",
    "source",
    (
        Declared(
            "the object list",
            "AWS",
            r"ListObjectsV2",
            obj(
                {"IsTruncated": BOOL},
                Contents=arr(
                    obj(
                        {"Key": STR},
                        Size=INT,
                        LastModified=STR,
                        StorageClass=STR,
                        RestoreStatus=obj(IsRestoreInProgress=BOOL),
                    )
                ),
                NextContinuationToken=STR,
            ),
            "S3Source.page",
        ),
        Declared(
            "the object's head",
            "AWS",
            r"HeadObject",
            obj({"ContentLength": INT}, ArchiveStatus=STR, Restore=STR, StorageClass=STR),
            "S3Source._tier",
        ),
    ),
)
