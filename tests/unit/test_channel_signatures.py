"""The webhook's own Twilio signature check agrees with the ``twilio`` SDK's ``RequestValidator``.

The SDK is a test dependency only (no function bundle carries it); these properties pin our HMAC-SHA1
implementation to the SDK's for any URL, form fields (repeated and blank ones included), token and
claimed signature.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from twilio.request_validator import RequestValidator

from promptpipe.channels.signatures import twilio_signature, verify_twilio_signature

TOKEN = "12345678901234567890123456789012"

texts = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=12)
pairs = st.lists(
    st.tuples(st.sampled_from(["Body", "From", "To", "Tag", "ToZip", "MediaUrl0", "É"]), texts), max_size=8
)
urls = st.builds(
    lambda scheme, host, port, path, query: f"{scheme}://{host}{port}{path}{query}",
    st.sampled_from(["https", "http"]),
    st.sampled_from(["abc.execute-api.us-east-1.amazonaws.com", "example.org", "localhost"]),
    st.sampled_from(["", ":443", ":80", ":8080"]),
    st.sampled_from(["/webhooks/twilio", "/prod/webhooks/twilio", "/", ""]),
    st.sampled_from(["", "?a=1", "?a=1&b=%20x", "?bodySHA256=abc"]),
)


class _MultiParams:
    """Repeated form keys the way the SDK's validator reads them (``getall``)."""

    def __init__(self, fields: list[tuple[str, str]]) -> None:
        self._values: dict[str, list[str]] = {}
        for key, value in fields:
            self._values.setdefault(key, []).append(value)

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self._values)

    def __bool__(self) -> bool:
        return bool(self._values)

    def getall(self, key: str) -> list[str]:
        return self._values[key]


@settings(max_examples=300, deadline=None)
@given(url=urls, fields=pairs, token=st.sampled_from([TOKEN, "other-token", "é-token"]))
def test_signature_is_the_sdks(url: str, fields: list[tuple[str, str]], token: str) -> None:
    sdk = RequestValidator(token)
    assert twilio_signature(url, fields, token) == sdk.compute_signature(url, _MultiParams(fields))
    as_dict = dict(fields)
    assert twilio_signature(url, as_dict, token) == sdk.compute_signature(url, as_dict)


@settings(max_examples=300, deadline=None)
@given(
    url=urls,
    signed_url=urls,
    fields=pairs,
    tamper=st.booleans(),
    token=st.sampled_from([TOKEN, "other-token"]),
)
def test_verdict_is_the_sdks(
    url: str, signed_url: str, fields: list[tuple[str, str]], tamper: bool, token: str
) -> None:
    """Signed for one URL (maybe another port or path), checked at another, maybe tampered."""
    signature = RequestValidator(TOKEN).compute_signature(signed_url, _MultiParams(fields))
    received = [*fields, ("Body", "tampered")] if tamper else fields
    expected = RequestValidator(token).validate(url, _MultiParams(received), signature)
    assert verify_twilio_signature(url, received, signature, token) == expected


@settings(max_examples=200, deadline=None)
@given(url=urls, fields=pairs, claimed=st.text(max_size=40))
def test_arbitrary_claimed_signatures_get_the_sdks_verdict(
    url: str, fields: list[tuple[str, str]], claimed: str
) -> None:
    expected = bool(claimed) and RequestValidator(TOKEN).validate(url, _MultiParams(fields), claimed)
    assert verify_twilio_signature(url, fields, claimed, TOKEN) == expected


def test_default_port_either_way() -> None:
    url = "https://abc.execute-api.us-east-1.amazonaws.com/webhooks/twilio"
    fields = [("Body", "hi"), ("ToCity", "")]
    signature = RequestValidator(TOKEN).compute_signature(url.replace(".com/", ".com:443/"), _MultiParams(fields))
    assert verify_twilio_signature(url, fields, signature, TOKEN)
    assert not verify_twilio_signature(url, fields[:1], signature, TOKEN)  # the blank field is signed


def test_a_bad_port_or_value_is_a_rejection_not_an_error() -> None:
    assert not verify_twilio_signature("https://h:notaport/x", [("Body", "a")], "sig", TOKEN)
    assert not verify_twilio_signature("https://h/x", {"Body": 1}, "sig", TOKEN)  # type: ignore[dict-item]
