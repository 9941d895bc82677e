"""One error envelope (``errors.error_body``): the participants API, the webhooks, the answers a
function gives before its resolver runs and the local server all build it there, and it is what the
OpenAPI document promises (``ErrorEnvelope``)."""

from __future__ import annotations

import re
from pathlib import Path

import functions
import promptpipe
from promptpipe import errors
from promptpipe.errors import error_body
from promptpipe.models.api import ErrorEnvelope
from promptpipe.rules.http_body import error_response

PACKAGES = (Path(functions.__file__).parent, Path(promptpipe.__file__).parent)
BUILDER = Path(errors.__file__)
ENVELOPE_LITERAL = re.compile(r"""["']status["']\s*:\s*["']error["']""")


def test_the_error_envelope_is_built_in_one_place() -> None:
    builders = [
        str(path)
        for package in PACKAGES
        for path in sorted(package.rglob("*.py"))
        if path != BUILDER and ENVELOPE_LITERAL.search(path.read_text())
    ]
    assert builders == []


def test_the_envelope_is_the_documented_one() -> None:
    assert error_body("no such participant") == ErrorEnvelope(message="no such participant").model_dump()


def test_an_answer_before_the_resolver_carries_the_same_envelope() -> None:
    response = error_response(413, "request body is larger than 10 bytes")
    assert response["statusCode"] == 413
    assert ErrorEnvelope.model_validate_json(response["body"]) == ErrorEnvelope(
        message="request body is larger than 10 bytes"
    )
