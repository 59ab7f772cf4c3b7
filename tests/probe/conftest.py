"""Fixtures for the probe tests: real media made once per session, served on 127.0.0.1."""

from __future__ import annotations

import pytest

from tests.probe.media import MediaServer, make_certificate, make_media


@pytest.fixture(scope="session")
def media_dir(tmp_path_factory):
    directory = tmp_path_factory.mktemp("media")
    make_media(directory)
    return directory


@pytest.fixture(scope="session")
def server(media_dir):
    with MediaServer(media_dir) as running:
        yield running


@pytest.fixture(scope="session")
def tls_server(media_dir, tmp_path_factory):
    cert, key = make_certificate(tmp_path_factory.mktemp("tls"))
    with MediaServer(media_dir, tls=(cert, key)) as running:
        yield running
