"""Bad input at the webhooks: arbitrary bodies and headers never cause a 5xx, and
nothing without a valid signature ever becomes a turn."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from promptpipe.adapters.scripted_llm import ScriptedLLM
from promptpipe.local.signing import meta_signature

FUZZ = settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
form_fields = st.dictionaries(
    st.sampled_from(["MessageSid", "From", "To", "Body", "ButtonPayload", "MediaUrl0", "WaId", "junk"]),
    st.text(max_size=40),
    max_size=6,
)


def _queue_depth(env) -> int:
    attributes = env._sqs.get_queue_attributes(
        QueueUrl=env.resources.inbound_queue_url, AttributeNames=["ApproximateNumberOfMessages"]
    )
    return int(attributes["Attributes"]["ApproximateNumberOfMessages"])


@FUZZ
@given(fields=form_fields, signature=st.one_of(st.none(), st.text(max_size=40)), raw=st.booleans())
def test_twilio_webhook_fuzz(local_env_factory, fields, signature, raw) -> None:
    env = _env(local_env_factory)
    from urllib.parse import urlencode

    body = urlencode(fields) if not raw else "".join(f"{k}{v}" for k, v in fields.items())
    headers = {"content-type": "application/x-www-form-urlencoded"}
    if signature is not None:
        headers["x-twilio-signature"] = signature
    response = env.api("POST", "/webhooks/twilio", body=body, headers=headers, base64_body=True)
    assert response.status < 500
    assert response.status == 403  # no valid signature, whatever the body
    assert env.app.deps.llm.requests == []


@FUZZ
@given(
    payload=st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=20),
        lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=10), children, max_size=3),
        max_leaves=12,
    )
)
def test_meta_webhook_fuzz_signed_and_unsigned(local_env_factory, payload) -> None:
    env = _env(local_env_factory)
    raw = json.dumps(payload).encode()
    unsigned = env.api("POST", "/webhooks/whatsapp", body=raw, headers={"content-type": "application/json"})
    assert unsigned.status == 403
    signed = env.api(
        "POST",
        "/webhooks/whatsapp",
        body=raw,
        headers={
            "content-type": "application/json",
            "x-hub-signature-256": meta_signature(raw, env.settings.whatsapp_app_secret or ""),
        },
    )
    # Signed but meaningless payloads are acknowledged (Meta would retry a non-200 for days) and dropped.
    assert signed.status == 200
    assert _queue_depth(env) == 0
    assert env.app.deps.llm.requests == []


_ENV = {}


def _env(factory):
    # One environment per test function (hypothesis calls the body many times).
    key = id(factory)
    if key not in _ENV:
        _ENV.clear()
        _ENV[key] = factory(llm=ScriptedLLM([]))
    return _ENV[key]
