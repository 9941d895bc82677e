"""``channels.http_event.HttpRequest``: what the webhook reads of an API Gateway HTTP API event."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from promptpipe.channels.http_event import HttpRequest
from promptpipe.local.lambda_runtime import http_api_event
from promptpipe.rules.http_body import error_response, http_answer


def test_the_request_of_an_http_api_event() -> None:
    event = http_api_event(
        "post",
        "/webhooks/twilio",
        body="Body=hi",
        headers={"X-Twilio-Signature": "abc", "Content-Type": "application/x-www-form-urlencoded"},
        query={"a": "1"},
        domain="abc.execute-api.us-east-1.amazonaws.com",
    )
    request = HttpRequest.from_event(event)
    assert (request.method, request.path, request.raw_query_string) == ("POST", "/webhooks/twilio", "a=1")
    assert request.query == {"a": "1"}
    assert request.headers["x-twilio-signature"] == "abc"
    assert (request.body, request.is_base64_encoded) == ("Body=hi", False)
    assert request.domain_name == "abc.execute-api.us-east-1.amazonaws.com"


def test_header_names_are_read_in_lower_case_whatever_the_event_says() -> None:
    event = http_api_event("GET", "/webhooks/whatsapp")
    event["headers"] = {"X-Hub-Signature-256": "sha256=00"}
    assert HttpRequest.from_event(event).headers == {"x-hub-signature-256": "sha256=00"}


def test_an_event_without_query_headers_or_body_reads_as_empty() -> None:
    event = {"rawPath": "/webhooks/whatsapp", "requestContext": {"http": {"method": "GET"}, "domainName": "d"}}
    request = HttpRequest.from_event(event)
    assert (request.query, request.headers, request.body, request.raw_query_string) == ({}, {}, None, "")


def test_an_event_that_is_not_an_http_api_event_is_refused() -> None:
    with pytest.raises(ValidationError):
        HttpRequest.from_event({"rawPath": 7, "requestContext": {"http": {"method": "GET"}}})


def test_answers_carry_their_content_type_and_a_json_body_for_a_mapping() -> None:
    assert http_answer(200, "<Response/>", "text/xml") == {
        "statusCode": 200,
        "headers": {"Content-Type": "text/xml"},
        "body": "<Response/>",
        "isBase64Encoded": False,
    }
    assert json.loads(http_answer(200, {"received": 2})["body"]) == {"received": 2}
    assert json.loads(error_response(403, "bad_signature")["body"]) == {"status": "error", "message": "bad_signature"}
