"""The participants API of a local stack in this process, as a ``coordinator.client.ApiTransport``."""

from __future__ import annotations

from typing import Any

from promptpipe.coordinator.client import ApiAnswer
from promptpipe.local.environment import LocalEnvironment


class InProcessTransport:
    def __init__(self, env: LocalEnvironment) -> None:
        self.env = env
        self.description = "the local stack in this process"

    def request(
        self, method: str, path: str, *, query: dict[str, str] | None = None, json_body: Any = None
    ) -> ApiAnswer:
        response = self.env.api(method, path, query=query, json_body=json_body)
        return ApiAnswer(response.status, response.body)
