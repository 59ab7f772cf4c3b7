"""The provider token and webhook secrets, read from Secrets Manager and SSM in the emulator."""

from __future__ import annotations

import json

import pytest
from aws_lambda_powertools.utilities import parameters
from migrator.providers import build
from migrator.secrets import read_secret
from migrator.webhook import secret_getter

from tests.conftest import unique

pytestmark = pytest.mark.emulator


@pytest.fixture
def env_endpoint(endpoint, monkeypatch):
    """Powertools builds its own clients: point them at the emulator, as Lambda's env does."""
    monkeypatch.setenv("AWS_ENDPOINT_URL", endpoint)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "test")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "test")
    parameters.clear_caches()
    yield
    parameters.clear_caches()


def test_token_from_a_json_secret(aws, env_endpoint):
    name = unique("token")
    aws("secretsmanager").create_secret(Name=name, SecretString=json.dumps({"token": "t-123"}))
    provider = build("generic", "https://p.example", lambda: read_secret(name, None))
    assert provider.auth_headers() == {"Authorization": "Bearer t-123"}


def test_token_from_an_ssm_securestring(aws, env_endpoint):
    name = "/" + unique("token")
    aws("ssm").put_parameter(Name=name, Value="t-456", Type="SecureString")
    provider = build("generic", "https://p.example", lambda: read_secret(None, name))
    assert provider.auth_headers() == {"Authorization": "Bearer t-456"}


def test_mux_credentials_from_a_json_secret(aws, env_endpoint):
    name = unique("mux")
    aws("secretsmanager").create_secret(Name=name, SecretString=json.dumps({"token_id": "i", "token_secret": "s"}))
    assert build("mux", None, lambda: read_secret(name, None)).auth_headers() == {"Authorization": "Basic aTpz"}


def test_no_token_configured_means_no_header():
    assert read_secret(None, None) is None
    assert build("generic", "https://p.example", lambda: read_secret(None, None)).auth_headers() == {}


def test_webhook_secrets_during_rotation(aws, env_endpoint):
    name = unique("whsec")
    aws("secretsmanager").create_secret(Name=name, SecretString=json.dumps({"current": "new", "previous": "old"}))
    assert secret_getter(name, None)() == ["new", "old"]
