"""Webhook signature verification: published vector, tampering, replay window, rotation, caps."""

import base64
import hashlib
import hmac

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from migrator.signatures import (
    MAX_HEADER_CHARS,
    MAX_SIGNATURE_ENTRIES,
    MAX_TOKEN_CHARS,
    Scheme,
    SignatureError,
    Verified,
    decode_body,
    sign,
    verify,
)

# The Standard Webhooks 1.0 published test vector.
VECTOR_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
VECTOR_ID = "msg_p5jXN8AQM9LWM0D4loKWxJek"
VECTOR_TS = 1614265330
VECTOR_BODY = b'{"test": 2432232314}'
VECTOR_SIG = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="

SECRET = "whsec_" + base64.b64encode(b"current-key-0123456789abcdef").decode()
OLD_SECRET = "whsec_" + base64.b64encode(b"previous-key-0123456789abcde").decode()
SEED_SECRET = "seed-secret-do-not-leak"
NOW = 1_800_000_000.0
BODY = b'{"type": "video.encoded", "videoId": "v123"}'

REASONS = {
    "missing signature header",
    "missing webhook-id",
    "missing webhook-timestamp",
    "no valid signature",
    "timestamp outside tolerance",
    "malformed timestamp",
    "header too long",
    "duplicate header",
    "no secret configured",
    "secret is not valid base64",
    "body is not valid base64",
}


def vector_headers(**overrides: str) -> dict[str, str]:
    headers = {"webhook-id": VECTOR_ID, "webhook-timestamp": str(VECTOR_TS), "webhook-signature": VECTOR_SIG}
    headers.update(overrides)
    return headers


def refused(*args, **kwargs) -> SignatureError:
    with pytest.raises(SignatureError) as info:
        verify(*args, **kwargs)
    assert info.value.reason in REASONS
    assert str(info.value) == info.value.reason
    return info.value


def vector_reason(headers: dict[str, str], body: bytes = VECTOR_BODY) -> str:
    """Why the vector's secret and clock refuse this request."""
    return refused(Scheme.STANDARD, body, headers, [VECTOR_SECRET], now=VECTOR_TS).reason


def flip(data: bytes, index: int) -> bytes:
    return data[:index] + bytes([data[index] ^ 0x01]) + data[index + 1 :]


# --- the published vector ---------------------------------------------------------------


def test_vector_verifies():
    result = verify(Scheme.STANDARD, VECTOR_BODY, vector_headers(), [VECTOR_SECRET], now=VECTOR_TS)
    assert result == Verified(event_id=VECTOR_ID, timestamp=VECTOR_TS)


def test_sign_reproduces_vector():
    headers = sign(Scheme.STANDARD, VECTOR_BODY, VECTOR_SECRET, now=VECTOR_TS, event_id=VECTOR_ID)
    assert headers == vector_headers()


def test_vector_header_names_are_case_insensitive():
    headers = {"Webhook-Id": VECTOR_ID, "WEBHOOK-TIMESTAMP": str(VECTOR_TS), "Webhook-Signature": VECTOR_SIG}
    assert verify(Scheme.STANDARD, VECTOR_BODY, headers, [VECTOR_SECRET], now=VECTOR_TS).event_id == VECTOR_ID


def test_two_spellings_of_one_header_are_refused():
    headers = vector_headers()
    headers["Webhook-Signature"] = "v1,AAAA"
    assert vector_reason(headers) == "duplicate header"


# --- tampering and wrong secrets ---------------------------------------------------------


@pytest.mark.parametrize("index", [0, 5, len(VECTOR_BODY) - 1])
def test_tampered_body_is_refused(index):
    body = flip(VECTOR_BODY, index)
    exc = refused(Scheme.STANDARD, body, vector_headers(), [VECTOR_SECRET], now=VECTOR_TS)
    assert exc.reason == "no valid signature"


def test_extra_trailing_byte_is_refused():
    exc = refused(Scheme.STANDARD, VECTOR_BODY + b"\n", vector_headers(), [VECTOR_SECRET], now=VECTOR_TS)
    assert exc.reason == "no valid signature"


def test_tampered_id_is_refused():
    headers = vector_headers(**{"webhook-id": VECTOR_ID + "x"})
    assert vector_reason(headers) == "no valid signature"


def test_wrong_secret_is_refused():
    exc = refused(Scheme.STANDARD, VECTOR_BODY, vector_headers(), [SECRET], now=VECTOR_TS)
    assert exc.reason == "no valid signature"


@pytest.mark.parametrize(
    ("missing", "reason"),
    [
        ("webhook-id", "missing webhook-id"),
        ("webhook-timestamp", "missing webhook-timestamp"),
        ("webhook-signature", "missing signature header"),
    ],
)
def test_missing_header_is_refused(missing, reason):
    headers = vector_headers()
    del headers[missing]
    assert vector_reason(headers) == reason


@pytest.mark.parametrize("name", ["webhook-id", "webhook-timestamp", "webhook-signature"])
def test_empty_header_counts_as_missing(name):
    exc = refused(Scheme.STANDARD, VECTOR_BODY, vector_headers(**{name: "  "}), [VECTOR_SECRET], now=VECTOR_TS)
    assert exc.reason.startswith("missing")


def test_no_secret_configured():
    exc = refused(Scheme.STANDARD, VECTOR_BODY, vector_headers(), [], now=VECTOR_TS)
    assert exc.reason == "no secret configured"


@pytest.mark.parametrize("secrets", [[""], ["whsec_"], ["", "whsec_"]])
def test_empty_keys_are_not_secrets(secrets):
    exc = refused(Scheme.STANDARD, VECTOR_BODY, vector_headers(), secrets, now=VECTOR_TS)
    assert exc.reason == "no secret configured"


def test_single_string_instead_of_list_is_a_type_error():
    with pytest.raises(TypeError):
        verify(Scheme.STANDARD, VECTOR_BODY, vector_headers(), VECTOR_SECRET, now=VECTOR_TS)


def test_prefixed_secret_with_bad_base64_is_refused():
    exc = refused(Scheme.STANDARD, VECTOR_BODY, vector_headers(), ["whsec_not base64!"], now=VECTOR_TS)
    assert exc.reason == "secret is not valid base64"


# --- secret forms --------------------------------------------------------------------------


def test_secret_without_prefix_is_base64_decoded():
    bare = VECTOR_SECRET.removeprefix("whsec_")
    assert verify(Scheme.STANDARD, VECTOR_BODY, vector_headers(), [bare], now=VECTOR_TS).timestamp == VECTOR_TS


def test_non_base64_secret_is_used_as_utf8_bytes():
    secret = "plain text secret!"
    digest = hmac.new(secret.encode(), f"{VECTOR_ID}.{VECTOR_TS}.".encode() + VECTOR_BODY, hashlib.sha256).digest()
    headers = sign(Scheme.STANDARD, VECTOR_BODY, secret, now=VECTOR_TS, event_id=VECTOR_ID)
    assert headers["webhook-signature"] == "v1," + base64.b64encode(digest).decode()
    assert verify(Scheme.STANDARD, VECTOR_BODY, headers, [secret], now=VECTOR_TS).event_id == VECTOR_ID


def test_sign_standard_requires_event_id():
    with pytest.raises(ValueError):
        sign(Scheme.STANDARD, BODY, SECRET, now=NOW)


# --- replay window -------------------------------------------------------------------------


@pytest.mark.parametrize("offset", [-301, 301])
def test_timestamp_just_outside_window_is_refused(offset):
    exc = refused(Scheme.STANDARD, VECTOR_BODY, vector_headers(), [VECTOR_SECRET], now=VECTOR_TS + offset)
    assert exc.reason == "timestamp outside tolerance"


@pytest.mark.parametrize("offset", [-300, -1, 1, 300])
def test_timestamp_just_inside_window_is_accepted(offset):
    result = verify(Scheme.STANDARD, VECTOR_BODY, vector_headers(), [VECTOR_SECRET], now=VECTOR_TS + offset)
    assert result.timestamp == VECTOR_TS


def test_custom_tolerance():
    headers = sign(Scheme.STANDARD, BODY, SECRET, now=NOW, event_id="evt_1")
    assert verify(Scheme.STANDARD, BODY, headers, [SECRET], now=NOW + 30, tolerance_s=30).event_id == "evt_1"
    exc = refused(Scheme.STANDARD, BODY, headers, [SECRET], now=NOW + 31, tolerance_s=30)
    assert exc.reason == "timestamp outside tolerance"


def test_timestamp_is_checked_before_signature():
    headers = vector_headers(**{"webhook-signature": "v1,AAAA"})
    exc = refused(Scheme.STANDARD, VECTOR_BODY, headers, [VECTOR_SECRET], now=VECTOR_TS + 10_000)
    assert exc.reason == "timestamp outside tolerance"
    headers = vector_headers(**{"webhook-signature": "v1,AAAA", "webhook-timestamp": "soon"})
    assert vector_reason(headers) == "malformed timestamp"


@pytest.mark.parametrize("value", ["1614265330.0", "-1614265330", "+1614265330", "1.6e9", "0x60365cf2", "16142 65330"])
def test_non_integer_timestamp_is_malformed(value):
    headers = vector_headers(**{"webhook-timestamp": value})
    assert vector_reason(headers) == "malformed timestamp"


@pytest.mark.parametrize("value", ["\u00b2", "\uff11\uff16", "\u0661\u0666"])
def test_non_ascii_digits_are_malformed(value):
    headers = vector_headers(**{"webhook-timestamp": value})
    assert vector_reason(headers) == "malformed timestamp"


def test_huge_timestamp_is_outside_tolerance_not_a_crash():
    headers = vector_headers(**{"webhook-timestamp": "9" * 2000})
    exc = refused(Scheme.STANDARD, VECTOR_BODY, headers, [VECTOR_SECRET], now=VECTOR_TS)
    assert exc.reason == "timestamp outside tolerance"


def test_nan_clock_refuses():
    exc = refused(Scheme.STANDARD, VECTOR_BODY, vector_headers(), [VECTOR_SECRET], now=float("nan"))
    assert exc.reason == "timestamp outside tolerance"


# --- several signatures, versions, caps ------------------------------------------------------


def junk_v1(n: int) -> list[str]:
    return ["v1," + base64.b64encode(hashlib.sha256(str(i).encode()).digest()).decode() for i in range(n)]


def test_several_signatures_valid_one_last_with_v1a_ignored():
    v1a = "v1a," + VECTOR_SIG.removeprefix("v1,")
    value = " ".join([*junk_v1(3), v1a, "garbage", "v1,!!notb64!!", VECTOR_SIG])
    headers = vector_headers(**{"webhook-signature": value})
    result = verify(Scheme.STANDARD, VECTOR_BODY, headers, [VECTOR_SECRET], now=VECTOR_TS)
    assert result.event_id == VECTOR_ID


def test_v1a_entry_alone_does_not_verify():
    # Same signature bytes as the valid v1 entry: only the version makes it unusable here.
    v1a = "v1a," + VECTOR_SIG.removeprefix("v1,")
    headers = vector_headers(**{"webhook-signature": v1a})
    assert vector_reason(headers) == "no valid signature"


def test_valid_signature_as_tenth_entry_is_considered():
    value = " ".join([*junk_v1(MAX_SIGNATURE_ENTRIES - 1), VECTOR_SIG])
    headers = vector_headers(**{"webhook-signature": value})
    assert verify(Scheme.STANDARD, VECTOR_BODY, headers, [VECTOR_SECRET], now=VECTOR_TS).event_id == VECTOR_ID


def test_valid_signature_as_eleventh_entry_is_not_considered():
    value = " ".join([*junk_v1(MAX_SIGNATURE_ENTRIES), VECTOR_SIG])
    assert len(value) <= MAX_HEADER_CHARS  # refused by the entry cap, not the length cap
    headers = vector_headers(**{"webhook-signature": value})
    assert vector_reason(headers) == "no valid signature"


@pytest.mark.parametrize("name", ["webhook-id", "webhook-timestamp", "webhook-signature"])
def test_overlong_header_is_refused(name):
    headers = vector_headers(**{name: "a" * (MAX_HEADER_CHARS + 1)})
    assert vector_reason(headers) == "header too long"


def test_header_at_length_cap_is_read():
    value = VECTOR_SIG + " " * (MAX_HEADER_CHARS - len(VECTOR_SIG))
    headers = vector_headers(**{"webhook-signature": value})
    assert verify(Scheme.STANDARD, VECTOR_BODY, headers, [VECTOR_SECRET], now=VECTOR_TS).event_id == VECTOR_ID


# --- base64 bodies ---------------------------------------------------------------------------


def test_base64_body_decodes_to_signed_bytes():
    encoded = base64.b64encode(VECTOR_BODY).decode()
    body = decode_body(encoded, is_base64=True)
    assert body == VECTOR_BODY
    assert verify(Scheme.STANDARD, body, vector_headers(), [VECTOR_SECRET], now=VECTOR_TS).timestamp == VECTOR_TS


def test_binary_base64_body_round_trips():
    raw = bytes(range(256))
    headers = sign(Scheme.STANDARD, raw, SECRET, now=NOW, event_id="evt_bin")
    body = decode_body(base64.b64encode(raw).decode(), is_base64=True)
    assert verify(Scheme.STANDARD, body, headers, [SECRET], now=NOW).event_id == "evt_bin"


def test_base64_text_not_decoded_when_flag_is_false():
    encoded = base64.b64encode(VECTOR_BODY).decode()
    body = decode_body(encoded, is_base64=False)
    assert body == encoded.encode()
    assert vector_reason(vector_headers(), body) == "no valid signature"


@pytest.mark.parametrize("value", ["not base64!", "abc", "eyJ0ZXN0Ijo\nx", "é"])
def test_invalid_base64_body_is_refused(value):
    with pytest.raises(SignatureError) as info:
        decode_body(value, is_base64=True)
    assert info.value.reason == "body is not valid base64"


def test_plain_and_absent_bodies():
    assert decode_body("héllo", is_base64=False) == "héllo".encode()
    assert decode_body(None, is_base64=False) == b""
    assert decode_body(None, is_base64=True) == b""


# --- secret rotation -------------------------------------------------------------------------


def test_rotation_window():
    headers = sign(Scheme.STANDARD, BODY, OLD_SECRET, now=NOW, event_id="evt_rot")
    assert verify(Scheme.STANDARD, BODY, headers, [SECRET, OLD_SECRET], now=NOW).event_id == "evt_rot"
    assert verify(Scheme.STANDARD, BODY, headers, [OLD_SECRET, SECRET], now=NOW).event_id == "evt_rot"
    assert refused(Scheme.STANDARD, BODY, headers, [SECRET], now=NOW).reason == "no valid signature"


def test_seed_rotation_window():
    headers = sign(Scheme.SEED, BODY, "old-seed", now=NOW)
    assert verify(Scheme.SEED, BODY, headers, ["new-seed", "old-seed"], now=NOW) == Verified(None, None)
    assert refused(Scheme.SEED, BODY, headers, ["new-seed"], now=NOW).reason == "no valid signature"


# --- seed scheme -----------------------------------------------------------------------------


def seed_hex(body: bytes = BODY, secret: str = SEED_SECRET) -> str:
    return hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def test_seed_sign_matches_plain_hmac():
    assert sign(Scheme.SEED, BODY, SEED_SECRET, now=NOW) == {"x-signature": seed_hex()}


def test_seed_valid():
    # No replay window in this scheme: any clock is fine.
    result = verify(Scheme.SEED, BODY, {"x-signature": seed_hex()}, [SEED_SECRET], now=0.0)
    assert result == Verified(event_id=None, timestamp=None)


def test_seed_uppercase_hex_and_header_name_valid():
    headers = {"X-Signature": seed_hex().upper()}
    assert verify(Scheme.SEED, BODY, headers, [SEED_SECRET], now=NOW) == Verified(None, None)


def test_seed_tampered_body_is_refused():
    exc = refused(Scheme.SEED, flip(BODY, 3), {"x-signature": seed_hex()}, [SEED_SECRET], now=NOW)
    assert exc.reason == "no valid signature"


def test_seed_wrong_secret_is_refused():
    exc = refused(Scheme.SEED, BODY, {"x-signature": seed_hex(secret="other")}, [SEED_SECRET], now=NOW)
    assert exc.reason == "no valid signature"


def test_seed_missing_header_is_refused():
    # Standard Webhooks headers do not stand in for the seed header.
    headers = sign(Scheme.STANDARD, BODY, SECRET, now=NOW, event_id="evt_1")
    assert refused(Scheme.SEED, BODY, headers, [SEED_SECRET], now=NOW).reason == "missing signature header"


@pytest.mark.parametrize("value", ["é" * 64, seed_hex()[:-1], seed_hex() + "0", "sha256=" + seed_hex()])
def test_seed_malformed_values_are_refused(value):
    assert refused(Scheme.SEED, BODY, {"x-signature": value}, [SEED_SECRET], now=NOW).reason == "no valid signature"


def test_seed_overlong_header_is_refused():
    headers = {"x-signature": "0" * (MAX_HEADER_CHARS + 1)}
    assert refused(Scheme.SEED, BODY, headers, [SEED_SECRET], now=NOW).reason == "header too long"


# --- nothing secret leaks into messages ------------------------------------------------------


def test_error_messages_carry_no_secret_or_signature():
    seed_sig = seed_hex(secret="other")
    sig_value = VECTOR_SIG.removeprefix("v1,")
    cases = [
        (Scheme.STANDARD, flip(VECTOR_BODY, 0), vector_headers(), [VECTOR_SECRET], VECTOR_TS),
        (Scheme.STANDARD, VECTOR_BODY, vector_headers(), [VECTOR_SECRET], VECTOR_TS + 1_000),
        (Scheme.STANDARD, VECTOR_BODY, vector_headers(**{"webhook-timestamp": "x"}), [VECTOR_SECRET], VECTOR_TS),
        (Scheme.STANDARD, VECTOR_BODY, vector_headers(), ["whsec_" + SEED_SECRET], VECTOR_TS),
        (Scheme.STANDARD, VECTOR_BODY, vector_headers(), [SECRET], VECTOR_TS),
        (Scheme.SEED, BODY, {"x-signature": seed_sig}, [SEED_SECRET], NOW),
    ]
    forbidden = [VECTOR_SECRET, VECTOR_SECRET.removeprefix("whsec_"), SEED_SECRET, SECRET, sig_value, seed_sig]
    for scheme, body, headers, secrets, now in cases:
        exc = refused(scheme, body, headers, secrets, now=now)
        text = str(exc) + repr(exc) + " ".join(map(str, exc.args))
        for value in forbidden:
            assert value not in text
        # No chained exception that could surface secret-bearing text in a traceback.
        assert exc.__cause__ is None
        assert exc.__context__ is None or exc.__suppress_context__


# --- properties ------------------------------------------------------------------------------

RELEVANT_NAMES = ["x-signature", "X-Signature", "webhook-id", "Webhook-Id", "webhook-timestamp", "webhook-signature"]
header_names = st.one_of(st.sampled_from(RELEVANT_NAMES), st.text(max_size=20))
header_values = st.one_of(
    st.text(max_size=80),
    st.from_regex(r"\A[0-9]{1,12}\Z"),
    # Timestamps inside the window, so random signatures reach the HMAC comparison.
    st.integers(int(NOW) - 400, int(NOW) + 400).map(str),
    st.from_regex(r"\A(v1a?,[A-Za-z0-9+/]{0,44}={0,2} ?){1,12}\Z"),
    st.from_regex(r"\A[0-9a-fA-F]{64}\Z"),
)
junk_headers = st.dictionaries(header_names, header_values, max_size=8)
schemes = st.sampled_from(list(Scheme))


@pytest.mark.slow  # seconds of real time or work: `make unit` and CI run it, `make quick` does not
@settings(max_examples=400, deadline=None)
@given(scheme=schemes, body=st.binary(max_size=200), headers=junk_headers)
def test_random_headers_never_verify_and_only_raise_signature_error(scheme, body, headers):
    with pytest.raises(SignatureError):
        verify(scheme, body, headers, [SECRET, SEED_SECRET], now=NOW)


# Complete, well-formed Standard Webhooks headers with random signatures: every example
# gets past the header and timestamp checks into the HMAC comparison.
standard_shaped = st.fixed_dictionaries(
    {
        "webhook-id": st.text(alphabet=st.characters(codec="ascii", exclude_characters=" \t"), min_size=1),
        "webhook-timestamp": st.integers(int(NOW) - 300, int(NOW) + 300).map(str),
        "webhook-signature": st.lists(
            st.binary(min_size=0, max_size=40).map(lambda raw: "v1," + base64.b64encode(raw).decode()),
            min_size=1,
            max_size=MAX_SIGNATURE_ENTRIES,
        ).map(" ".join),
    }
)


@settings(max_examples=300, deadline=None)
@given(body=st.binary(max_size=200), headers=standard_shaped)
def test_random_standard_signatures_never_verify(body, headers):
    with pytest.raises(SignatureError) as info:
        verify(Scheme.STANDARD, body, headers, [SECRET, OLD_SECRET], now=NOW)
    assert info.value.reason == "no valid signature"


@settings(max_examples=200, deadline=None)
@given(
    scheme=schemes,
    body=st.binary(max_size=200),
    extra=st.dictionaries(st.text(max_size=20), st.text(max_size=40), max_size=5),
    event_id=st.text(alphabet=st.characters(codec="ascii", exclude_characters=" \t"), min_size=1, max_size=40),
    now=st.integers(0, 2**33),
)
def test_signed_headers_verify_only_with_the_right_secret(scheme, body, extra, event_id, now):
    secret = SECRET if scheme is Scheme.STANDARD else SEED_SECRET
    signed = sign(scheme, body, secret, now=now, event_id=event_id)
    # Unrelated extra headers must not change the outcome (those clashing with ours are dropped).
    headers = {k: v for k, v in extra.items() if k.lower() not in signed} | signed
    result = verify(scheme, body, headers, [secret], now=float(now))
    assert result.event_id == (event_id if scheme is Scheme.STANDARD else None)
    with pytest.raises(SignatureError):
        verify(scheme, body, headers, [OLD_SECRET], now=float(now))
    if body:
        with pytest.raises(SignatureError):
            verify(scheme, flip(body, 0), headers, [secret], now=float(now))


@given(body=st.binary(max_size=300))
def test_decode_body_round_trips_base64(body):
    assert decode_body(base64.b64encode(body).decode(), is_base64=True) == body


def test_a_jw_player_token_may_carry_an_event_longer_than_other_headers_up_to_api_gateways_quota():
    """JW Player's token is the whole event: one of 5 KB is read; one past the 10,240 bytes API Gateway lets a
    request's headers be is refused before any HMAC."""
    long_event = b'{"event": "media_available", "media_id": "abcd1234", "note": "' + b"x" * 5000 + b'"}'
    headers = sign(Scheme.JWPLAYER, long_event, SEED_SECRET, now=NOW)
    assert len(headers["Authorization"]) > MAX_HEADER_CHARS
    assert verify(Scheme.JWPLAYER, long_event, headers, [SEED_SECRET], now=NOW)
    too_long = b'{"note": "' + b"x" * MAX_TOKEN_CHARS + b'"}'
    assert (
        refused(
            Scheme.JWPLAYER, too_long, sign(Scheme.JWPLAYER, too_long, SEED_SECRET, now=NOW), [SEED_SECRET], now=NOW
        ).reason
        == "header too long"
    )
