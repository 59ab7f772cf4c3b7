"""The stack's playback signing key (Mux's), kept in Secrets Manager: use `StackPlaybackKeys` wherever the
operator's machine signs a playback URL for itself (`migrator verify` of signed videos).

Mux plays a signed playback id only with a JWT signed by one of the environment's signing keys; a key is
made through Mux's API, which shows its private key once. So the first run that needs one makes it through
the stack's provider credentials and keeps it in Secrets Manager as `<stack>/playback-signing-key`
(`{"key_id": ..., "private_key": <base64 PEM, as Mux returns it>}`); every later run, on any machine with
the operator's AWS credentials, reads it back. Two runs that race both make a key and one is stored: the
other key exists at Mux unused (Mux allows many; `migrator doctor` does not need it). The private key is
never printed, logged or written anywhere else.
"""

from __future__ import annotations

import json

from botocore.exceptions import ClientError
from migrator.playback_tokens import SigningKey

from .errors import CliError


class StackPlaybackKeys:
    """migrator.providers.PlaybackKeys over one stack's secret."""

    def __init__(self, secretsmanager, stack_name: str, provider, cloudfront_secret: str | None = None):
        self.secretsmanager, self.provider = secretsmanager, provider
        self.name = f"{stack_name}/playback-signing-key"
        self._key: SigningKey | None = None
        # The aws target's: the key group's private key, which the stack made and keeps (PlaybackKeySecretArn).
        self.cloudfront_secret = cloudfront_secret

    def cloudfront(self) -> SigningKey:
        """The aws target's CloudFront signing key, read from the secret the stack's key group resource filled."""
        from migrator.cloudfront_key_plan import KeyResourceError, signing_key_from_secret

        if not self.cloudfront_secret:
            raise CliError("the stack names no PlaybackKeySecretArn: is it an aws target's stack?")
        text = self.secretsmanager.get_secret_value(SecretId=self.cloudfront_secret).get("SecretString") or ""
        try:
            return signing_key_from_secret(text)
        except KeyResourceError as exc:
            raise CliError(f"the stack's playback key secret: {exc}") from None

    def mux(self) -> SigningKey:
        if self._key is None:
            self._key = self._stored() or self._made()
        return self._key

    def _stored(self) -> SigningKey | None:
        try:
            text = self.secretsmanager.get_secret_value(SecretId=self.name)["SecretString"]
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") == "ResourceNotFoundException":
                return None
            raise
        try:
            doc = json.loads(text)
            return SigningKey.from_mux(str(doc["key_id"]), str(doc["private_key"]))
        except (ValueError, KeyError, TypeError):
            raise CliError(
                f"the secret {self.name} is not a playback signing key: delete it to make a new one"
            ) from None

    def _made(self) -> SigningKey:
        key = self.provider.create_signing_key()
        secret = json.dumps({"key_id": key.key_id, "private_key": key.private_key_pem})
        try:
            self.secretsmanager.create_secret(
                Name=self.name,
                SecretString=secret,
                Description="Playback signing key migrator verify signs its own playback URLs with",
            )
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") != "ResourceExistsException":
                raise
            return self._stored() or key  # another run stored one first: use the stored one
        return key
