"""The participants list in pages of up to 1,000: the coordinator's tools list a study of more than
100 participants in one query (docs/benchmarks.md section 9)."""

from __future__ import annotations

from typing import Any

from promptpipe.coordinator.client import CoordinatorClient
from promptpipe.local.api_transport import InProcessTransport

BASE = "/conversation/participants"
STUDY_SIZE = 101  # one more than the API's largest page before it took 1,000


class CountingTransport(InProcessTransport):
    def __init__(self, env: Any) -> None:
        super().__init__(env)
        self.calls: list[tuple[str, str]] = []

    def request(self, method: str, path: str, *args: Any, **kwargs: Any) -> Any:
        self.calls.append((method, path))
        return super().request(method, path, *args, **kwargs)


def enroll_study(env: Any) -> set[str]:
    ids = set()
    for n in range(STUDY_SIZE):
        answer = env.api("POST", BASE, json_body={"phone_number": f"+1416555{n:04d}", "name": f"P{n}"})
        assert answer.status == 201, answer.body
        ids.add(answer.body["result"]["id"])
    return ids


def test_list_page_of_1000_returns_the_whole_study_without_a_token(local_env_factory) -> None:
    # Given a study of more than 100 participants
    env = local_env_factory()
    ids = enroll_study(env)

    # When the list is asked for with a page of 1,000
    response = env.api("GET", BASE, query={"limit": "1000"})

    # Then one page holds every participant once, and it is the last one
    assert response.status == 200
    listed = [p["id"] for p in response.body["result"]["participants"]]
    assert sorted(listed) == sorted(ids)
    assert response.body["result"]["next_token"] is None


def test_coordinator_client_lists_the_study_in_one_call(local_env_factory) -> None:
    # Given a study of more than 100 participants and the coordinator's client over the API
    env = local_env_factory()
    ids = enroll_study(env)
    transport = CountingTransport(env)

    # When the client lists every participant (as the console's list and the export do)
    listed = [p.id for p in CoordinatorClient(transport).iter_participants()]

    # Then every participant comes back once, from a single list call
    assert sorted(listed) == sorted(ids)
    assert transport.calls == [("GET", BASE)]
