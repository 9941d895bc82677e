"""The participants API over HTTP: ``promptpipe serve`` (no auth) or a deployed API, whose IAM-authorised
routes are signed with SigV4 using the operator's own AWS credentials (the usual botocore chain:
environment, profile, SSO, instance role). No new public surface in AWS."""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import urlsplit

import httpx

from promptpipe.coordinator.client import ApiAnswer, ApiUnreachable
from promptpipe.errors import ConfigurationError

_LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "::1", "[::1]"})
_REGION_IN_HOST = re.compile(r"\.execute-api\.([a-z0-9-]+)\.amazonaws\.com$")


def needs_signing(base_url: str) -> bool:
    """A local server needs no signature; anything else is taken to be the deployed API."""
    return (urlsplit(base_url).hostname or "") not in _LOCAL_HOSTS


def region_of(base_url: str, default: str) -> str:
    match = _REGION_IN_HOST.search(urlsplit(base_url).hostname or "")
    return match.group(1) if match else default


class SigV4Signer:
    """Adds SigV4 headers (service ``execute-api``) with botocore's signer."""

    def __init__(self, region: str, credentials: Any = None) -> None:
        import botocore.session

        self.region = region
        self._credentials = credentials or botocore.session.Session().get_credentials()
        if self._credentials is None:
            raise ConfigurationError(
                "no AWS credentials to sign the API calls: configure a profile or set AWS_ACCESS_KEY_ID"
            )

    def headers(self, method: str, url: str, body: bytes | None, headers: dict[str, str]) -> dict[str, str]:
        from botocore.auth import SigV4Auth
        from botocore.awsrequest import AWSRequest

        request = AWSRequest(method=method, url=url, data=body or b"", headers=headers)
        SigV4Auth(self._credentials.get_frozen_credentials(), "execute-api", self.region).add_auth(request)
        return dict(request.headers.items())


class HttpTransport:
    def __init__(self, base_url: str, *, signer: SigV4Signer | None = None, timeout: float = 30.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.signer = signer
        self.description = f"{self.base_url}" + (" (SigV4-signed)" if signer else "")
        self._client = httpx.Client(timeout=timeout)

    def request(
        self, method: str, path: str, *, query: dict[str, str] | None = None, json_body: Any = None
    ) -> ApiAnswer:
        url = httpx.URL(self.base_url + path, params=query or None)
        body = json.dumps(json_body).encode() if json_body is not None else None
        headers = {"content-type": "application/json"} if body is not None else {}
        if self.signer is not None:
            headers = self.signer.headers(method, str(url), body, headers)
        try:
            response = self._client.request(method, url, content=body, headers=headers)
        except httpx.HTTPError as exc:
            raise ApiUnreachable(f"cannot reach the API at {self.base_url} ({exc})") from exc
        try:
            payload: Any = response.json()
        except ValueError:
            payload = response.text
        return ApiAnswer(response.status_code, payload)

    def close(self) -> None:
        self._client.close()


def http_transport(base_url: str, *, region: str) -> HttpTransport:
    """Plain HTTP for a local server, SigV4 for anything else."""
    signer = SigV4Signer(region_of(base_url, region)) if needs_signing(base_url) else None
    return HttpTransport(base_url, signer=signer)
