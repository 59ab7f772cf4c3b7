"""The webhook's pure parts: the signing secrets it accepts during a rotation.

How each provider's events become ledger actions is in test_providers.py.
"""

from migrator.webhook import parse_secrets


def test_secrets_for_rotation():
    assert parse_secrets('{"current": "new", "previous": "old"}') == ["new", "old"]
    assert parse_secrets('{"current": "new"}') == ["new"]
    assert parse_secrets("plain-secret\n") == ["plain-secret"]
    assert parse_secrets("") == []
