"""The webhook's HTTP boundary: an API Gateway HTTP API event (payload 2.0) read into ``HttpRequest``
(its answers: ``rules.http_body.http_answer``).

The webhook has three routes, so it dispatches on a table of ``(method, path)`` instead of
Powertools' resolver, whose import (every resolver and event data class it ships) was 27 ms CPU of
each cold start, a tenth of the floor the function is measured against (docs/benchmarks.md,
section 2). The participants API, with its twenty-odd validated routes and OpenAPI document, keeps
the resolver.
"""

from typing import Any

from pydantic import ConfigDict, Field

from promptpipe.lazy_model import LazyModel


class HttpRequest(LazyModel):
    """What the webhook reads of a request. Header names are lower-cased (HTTP API sends them so;
    a hand-built event may not)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    method: str
    path: str
    raw_query_string: str = ""
    query: dict[str, str] = Field(default_factory=dict)
    headers: dict[str, str] = Field(default_factory=dict)
    body: str | None = None
    is_base64_encoded: bool = False
    domain_name: str = ""

    @classmethod
    def from_event(cls, event: dict[str, Any]) -> "HttpRequest":
        """The request of an HTTP API event; a ``ValidationError`` when the event is not one."""
        context = event.get("requestContext") or {}
        return cls.model_validate(
            {
                "method": (context.get("http") or {}).get("method", ""),
                "path": event.get("rawPath", ""),
                "raw_query_string": event.get("rawQueryString") or "",
                "query": event.get("queryStringParameters") or {},
                "headers": {name.lower(): value for name, value in (event.get("headers") or {}).items()},
                "body": event.get("body"),
                "is_base64_encoded": bool(event.get("isBase64Encoded")),
                "domain_name": context.get("domainName", ""),
            }
        )
