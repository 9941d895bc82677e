"""The messengers' one HTTP client (adapters/messenger_http.py): what both Twilio and Meta rely on.

The messengers' own behaviour over it (payloads, templates, the window) is in test_messengers.py.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from promptpipe.adapters.messenger_http import MessengerHttp
from promptpipe.errors import MessagingError

URL = "https://provider.test/messages"


def _read_error(response: httpx.Response) -> tuple[Any, str]:
    body = response.json()
    return body.get("code"), str(body.get("message"))


def _http(answer: httpx.Response | Exception, client: httpx.Client | None = None) -> tuple[MessengerHttp, list[Any]]:
    seen: list[Any] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if isinstance(answer, Exception):
            raise answer
        return answer

    given = client or httpx.Client(transport=httpx.MockTransport(handler))
    http = MessengerHttp(
        URL, provider="Provider", read_error=_read_error, failure="Provider send failed", http_client=given
    )
    return http, seen


def test_a_2xx_answer_comes_back_and_the_request_goes_to_the_url() -> None:
    http, seen = _http(httpx.Response(201, json={"sid": "SM1"}))
    response = http.post(data={"Body": "hi"})
    assert response.json() == {"sid": "SM1"}
    assert [(r.method, str(r.url), r.content) for r in seen] == [("POST", URL, b"Body=hi")]


@pytest.mark.parametrize(
    ("status", "code", "retryable", "undeliverable"),
    [(429, 20429, True, False), (503, None, True, False), (400, 21610, False, True), (400, 21000, False, False)],
)
def test_a_refusal_is_a_messaging_error_with_its_code(
    status: int, code: int | None, retryable: bool, undeliverable: bool
) -> None:
    http, _ = _http(httpx.Response(status, json={"code": code, "message": "To +14155550100 refused"}))
    with pytest.raises(MessagingError) as raised:
        http.post(json={})
    error = raised.value
    assert (error.status, error.code, error.retryable, error.undeliverable) == (
        status,
        None if code is None else str(code),
        retryable,
        undeliverable,
    )
    assert str(error) == f"Provider refused the message (HTTP {status}, code {code}): To +*******0100 refused"
    assert "4155550100" not in str(error)  # the recipient's number is masked


def test_a_transport_error_is_retryable_and_names_only_its_kind() -> None:
    http, _ = _http(httpx.ConnectError("connect to +14155550100 failed"))
    with pytest.raises(MessagingError) as raised:
        http.post(json={})
    assert str(raised.value) == "Provider send failed: ConnectError"
    assert raised.value.retryable


def test_a_given_client_is_left_open_and_a_built_one_is_closed() -> None:
    given = httpx.Client(transport=httpx.MockTransport(lambda _r: httpx.Response(200)))
    http, _ = _http(httpx.Response(200), client=given)
    http.close()
    assert not given.is_closed  # the caller owns it
    built = MessengerHttp(URL, provider="Provider", read_error=_read_error, failure="failed")
    client = built._get_client()
    assert built._get_client() is client  # one client, reused
    built.close()
    assert client.is_closed
