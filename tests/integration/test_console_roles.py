"""Roles enforced on every console route (docs/console.md, "Coordinators and their tokens"): the test
walks the console as a coordinator — every page, every link on it, every form it offers (the
import's confirmation too) — then, as a viewer, opens each page and posts each form. A viewer's page
never makes the API write, and every post is a 403 that reaches no API at all. A new route that
changes anything comes with a form or a link, so it is walked here and fails without a role check."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from promptpipe.console import manage
from promptpipe.console.app import ConsoleServer
from promptpipe.console.identity import Role, TokenBook, form_token
from promptpipe.coordinator.client import ApiAnswer, CoordinatorClient
from promptpipe.local.api_transport import InProcessTransport
from tests.support import enroll_over_api, hand_off_a_new_participant

READS = {"GET"}


class RecordingTransport(InProcessTransport):
    """The local stack's API, noting the method of each call the console makes."""

    def __init__(self, env: Any) -> None:
        super().__init__(env)
        self.methods: list[str] = []

    def request(
        self, method: str, path: str, *, query: dict[str, str] | None = None, json_body: Any = None
    ) -> ApiAnswer:
        self.methods.append(method.upper())
        return super().request(method, path, query=query, json_body=json_body)


@dataclass
class PageParts(HTMLParser):
    """The console's own links and the actions of its POST forms, read from a page."""

    links: set[str] = field(default_factory=set)
    posts: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        super().__init__()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        given = dict(attrs)
        if tag == "a" and (given.get("href") or "").startswith("/"):
            self.links.add(urlsplit(given["href"] or "").path)
        if tag == "form" and (given.get("method") or "").lower() == "post":
            self.posts.add(urlsplit(given.get("action") or "").path)


@dataclass
class Stack:
    console: ConsoleServer
    transport: RecordingTransport
    coordinator: str
    viewer: str
    participant: str


@pytest.fixture
def stack(local_env_factory: Any, tmp_path: Path) -> Iterator[Stack]:
    env = local_env_factory()
    pid = enroll_over_api(env, "+14165550142", name="Sam")
    hand_off_a_new_participant(env, "+14165550143")  # a held participant: the release and resolve forms
    env.api("POST", f"/conversation/participants/{pid}/staff-messages", json_body={"body": "Hi", "by": "Ana"})
    book = TokenBook(tmp_path / "console-tokens.json")
    coordinator, viewer = book.add("Ana", Role.COORDINATOR), book.add("Vic", Role.VIEWER)
    transport = RecordingTransport(env)
    console = ConsoleServer(CoordinatorClient(transport), port=0, tokens=book).start()
    yield Stack(console, transport, coordinator, viewer, pid)
    console.stop()


def _get(stack: Stack, token: str, path: str) -> httpx.Response:
    return httpx.get(stack.console.url + path, headers={"authorization": f"token {token}"}, timeout=60)


def _walk_as_coordinator(stack: Stack) -> tuple[set[str], set[str]]:
    """Every page reachable from the console's entry pages, and every form action they offer."""
    pages, posts = set(), set()
    todo = ["/", "/queue", "/study", "/export", "/enrol", "/import", f"/participants/{stack.participant}"]
    while todo:
        path = todo.pop()
        if path in pages or path.startswith("/static/"):
            continue
        answer = _get(stack, stack.coordinator, path)
        assert answer.status_code == 200, (path, answer.status_code)
        pages.add(path)
        parts = PageParts()
        parts.feed(answer.text)
        posts |= parts.posts
        todo.extend(parts.links - pages)
    # The import's confirmation is offered only on a preview: preview one row
    page = _get(stack, stack.coordinator, "/import")
    preview = httpx.post(
        stack.console.url + "/import",
        data={"token": form_token(stack.console.console.door.form_secret, stack.coordinator)},
        files={"csv": ("cohort.csv", b"phone_number,name\n+14165550199,Kim\n", "text/csv")},
        headers={"cookie": page.headers["set-cookie"].split(";", 1)[0], "origin": stack.console.url},
        timeout=60,
    )
    assert preview.status_code == 200, preview.text
    parts = PageParts()
    parts.feed(preview.text)
    return pages, posts | parts.posts


def test_a_viewer_reads_every_page_and_every_post_of_every_route_is_refused(stack: Stack) -> None:
    pages, posts = _walk_as_coordinator(stack)
    pid = stack.participant
    # The walk is not empty: the participant's management, the hand-off's release, enrolment, the import
    # and the export were found (and a route added later is found the same way)
    declared = {f"/participants/{pid}/{action}" for action in (*manage.PARTICIPANT_ACTIONS, "pause", "resume")}
    assert declared | {"/enrol", "/import", "/import/commit", "/export"} <= posts | declared
    assert {"/enrol", "/import", "/import/commit", "/export", f"/participants/{pid}/staff"} <= posts
    assert any(p.endswith("/resolve") for p in posts) and any(p.endswith("/release") for p in posts)
    # As the viewer, every page reads and makes no API write
    before = len(stack.transport.methods)
    for path in sorted(pages):
        answer = _get(stack, stack.viewer, path)
        assert answer.status_code == 200, path
    assert set(stack.transport.methods[before:]) <= READS
    # Every form, and every declared action, posted by the viewer: 403, and no API call at all
    # with the form token of the viewer's own credential (a viewer's page shows no form; a post without
    # it would be refused as out of date, which would not test the role)
    page = _get(stack, stack.viewer, f"/participants/{pid}")
    cookie = page.headers["set-cookie"].split(";", 1)[0]
    assert 'method="post"' not in page.text
    viewer_form = form_token(stack.console.console.door.form_secret, stack.viewer)
    before = len(stack.transport.methods)
    for path in sorted(posts | declared):
        answer = httpx.post(
            stack.console.url + path,
            data={"token": viewer_form, "body": "hi", "reason": "r", "note": "n", "confirm": "Sam"},
            headers={"cookie": cookie, "origin": stack.console.url},
            timeout=60,
        )
        assert answer.status_code == 403 and "viewer role" in answer.text, path
    assert stack.transport.methods[before:] == []
    # The same posts as the coordinator are admitted (the 403s above are the role's, not the form's)
    page = _get(stack, stack.coordinator, f"/participants/{pid}")
    answer = httpx.post(
        stack.console.url + f"/participants/{pid}/pause",
        data={"token": form_token(stack.console.console.door.form_secret, stack.coordinator), "reason": "holiday"},
        headers={"cookie": page.headers["set-cookie"].split(";", 1)[0], "origin": stack.console.url},
        timeout=60,
    )
    assert answer.status_code == 303 and "PUT" in stack.transport.methods[before:]
