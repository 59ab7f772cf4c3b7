"""The List Blobs answer read a slice at a time (`azure.read_blob_list`): the same blobs, in order, and the same
NextMarker as the whole answer parsed as one tree, wherever the slices cut it; a body that is not XML refused."""

from xml.etree import ElementTree

import pytest
from migrator.sources import azure


def list_blobs_answer(count: int, marker: str = "") -> str:
    """An answer shaped as List Blobs documents it (EnumerationResults > Blobs > Blob), with a decoy <Blob>
    outside <Blobs> that is not one of the listing's blobs."""
    blobs = "".join(
        f"<Blob><Name>lib/clip-{i}.mp4</Name><Properties><Content-Type>video/mp4</Content-Type>"
        f"<Content-Length>{100 + i}</Content-Length><Last-Modified>Wed, 02 Dec 2026 10:00:0{i % 10} GMT"
        f"</Last-Modified></Properties><Metadata><title>Clip &amp; {i}</title></Metadata></Blob>"
        for i in range(count)
    )
    return (
        '<?xml version="1.0" encoding="utf-8"?><EnumerationResults ServiceEndpoint="https://acct.blob.core.windows.net/"'
        f' ContainerName="c"><Prefix>lib/</Prefix><MaxResults>5000</MaxResults><Blobs>{blobs}</Blobs>'
        f"<Blob><Name>decoy</Name></Blob><NextMarker>{marker}</NextMarker></EnumerationResults>"
    )


def whole_tree(text: str) -> tuple[list[dict], str]:
    root = ElementTree.fromstring(text)
    return [azure.blob_of_xml(n) for n in root.iterfind("./Blobs/Blob")], (root.findtext("NextMarker") or "").strip()


@pytest.mark.parametrize("slice_chars", [1, 7, 64, 4096, 64 * 1024])
@pytest.mark.parametrize("count, marker", [(0, ""), (3, "2!12!MDAwMDEx"), (40, "")])
def test_the_blobs_and_the_marker_are_those_of_the_whole_tree(monkeypatch, slice_chars, count, marker):
    text = list_blobs_answer(count, marker)
    monkeypatch.setattr(azure, "XML_SLICE", slice_chars)
    taken: list[dict] = []
    following = azure.read_blob_list(text, taken.append)
    assert (taken, following) == whole_tree(text)
    assert len(taken) == count and all(b["name"] != "decoy" for b in taken)
    if count:
        assert taken[-1]["metadata"]["title"] == f"Clip & {count - 1}"


@pytest.mark.parametrize("body", ["", "not xml", list_blobs_answer(3)[:-30], "<EnumerationResults><Blobs>"])
def test_a_body_that_is_not_a_whole_xml_answer_is_refused(body):
    with pytest.raises(ElementTree.ParseError):
        azure.read_blob_list(body, lambda blob: None)
