"""Fault suite, the edges: the console and the local server under a hostile browser and a burst of
connections, and what the public webhook may do in AWS (docs/reliability.md, "Fault suite").

Each scenario drives the real servers over loopback sockets (or the real handlers under moto) and
asserts the effect: the clock did not move, the participant is still active, the schedule is live.
"""

from __future__ import annotations

import http.client
import json
import select
import socket
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from urllib.parse import urlencode, urlsplit

import pytest

from promptpipe.adapters.api_http import HttpTransport
from promptpipe.console.app import ConsoleServer
from promptpipe.coordinator.client import CoordinatorClient
from promptpipe.local.environment import LocalEnvironment, local_settings
from promptpipe.local.server import LocalServer

START = datetime(2026, 3, 2, 13, 0, tzinfo=UTC)
START_ISO = "2026-03-02T13:00:00Z"
EVIL = "evil.example"


@pytest.fixture
def server() -> Iterator[LocalServer]:
    env = LocalEnvironment(start=START, settings=local_settings(offline_coach=True, openai_api_key=None))
    running = LocalServer("127.0.0.1", 0, env=env, tick_seconds=3600).start()
    yield running
    running.stop()


def _call(
    base: str, method: str, path: str, body: bytes | None = None, headers: dict[str, str] | None = None
) -> tuple[int, dict[str, str], bytes]:
    """One request over a fresh connection; ``headers`` may replace Host."""
    parts = urlsplit(base)
    connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=30)
    try:
        given = {k.lower(): v for k, v in (headers or {}).items()}
        connection.putrequest(method, path, skip_host="host" in given, skip_accept_encoding=True)
        for name, value in given.items():
            connection.putheader(name, value)
        connection.putheader("content-length", str(len(body or b"")))
        connection.endheaders(body or b"")
        response = connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        connection.close()


def _clock(server: LocalServer) -> str:
    status, _, body = _call(server.url, "GET", "/_local/clock")
    assert status == 200
    return str(json.loads(body)["now"])


def _enrol_body() -> bytes:
    return json.dumps({"phone_number": "+14165550142", "name": "Sam", "timezone": "America/Toronto"}).encode()


# --- the local server: DNS rebinding, cross-site posts ---------------------------------------------------


def test_local_server_refuses_a_request_for_a_foreign_host(server: LocalServer) -> None:
    # Given a page on evil.example whose name now resolves to 127.0.0.1 (DNS rebinding)
    headers = {"host": f"{EVIL}:{urlsplit(server.url).port}", "content-type": "application/json"}
    # When it reads the outbox and enrols someone
    read = _call(server.url, "GET", "/_local/outbox", headers=headers)
    enrol = _call(server.url, "POST", "/conversation/participants", _enrol_body(), headers)
    # Then both are refused in the API's envelope, and nobody was enrolled
    for status, answer_headers, body in (read, enrol):
        assert status == 403 and answer_headers["content-type"] == "application/json"
        assert json.loads(body)["status"] == "error" and EVIL in json.loads(body)["message"]
    assert server.env.app.repo.list(limit=10, next_token=None)[0] == []
    assert not server.env.messages()


def test_local_server_refuses_cross_site_simple_posts_to_the_clock(server: LocalServer) -> None:
    advance = json.dumps({"advance_seconds": 86400}).encode()
    # When a foreign page posts to the clock as text/plain (no preflight), with or without Origin,
    # or as JSON from its own origin, or as a fetch the browser marks cross-site
    attempts = [
        ({"content-type": "text/plain"}, 415),
        ({"content-type": "text/plain", "origin": f"http://{EVIL}"}, 403),
        ({"content-type": "application/x-www-form-urlencoded"}, 415),
        ({"content-type": "application/json", "origin": f"http://{EVIL}"}, 403),
        ({"content-type": "application/json", "origin": "null"}, 403),
        ({"content-type": "application/json", "sec-fetch-site": "cross-site"}, 403),
    ]
    for headers, want in attempts:
        status, _, body = _call(server.url, "POST", "/_local/clock", advance, headers)
        # Then each is refused in the envelope and the clock has not moved
        assert (status, json.loads(body)["status"]) == (want, "error"), headers
        assert _clock(server) == START_ISO
    # While the server's own page (Swagger UI: same origin, JSON) moves it
    own = {"content-type": "application/json", "origin": server.url, "sec-fetch-site": "same-origin"}
    status, _, _ = _call(server.url, "POST", "/_local/clock", advance, own)
    assert status == 200 and _clock(server) == "2026-03-03T13:00:00Z"


def test_local_server_answers_localhost_and_the_allowed_names_only() -> None:
    env = LocalEnvironment(start=START, settings=local_settings(offline_coach=True, openai_api_key=None))
    running = LocalServer("127.0.0.1", 0, env=env, tick_seconds=3600, allowed_hosts=["tunnel.example"]).start()
    try:
        port = urlsplit(running.url).port
        for host, want in (
            (f"localhost:{port}", 200),
            (f"127.0.0.1:{port}", 200),
            ("tunnel.example", 200),
            (f"tunnel.example:{port}", 200),
            (f"localhost:{port + 1}", 403),
            (f"{EVIL}:{port}", 403),
        ):
            assert _call(running.url, "GET", "/_local/clock", headers={"host": host})[0] == want, host
    finally:
        running.stop()


def test_webhooks_still_take_the_providers_form_posts(server: LocalServer) -> None:
    # A Twilio form post is not JSON: its signature protects it, not its content type (403 = checked)
    status, _, body = _call(
        server.url,
        "POST",
        "/webhooks/twilio",
        b"MessageSid=SM1&From=%2B14165550142&Body=hi",
        {"content-type": "application/x-www-form-urlencoded", "x-twilio-signature": "bogus"},
    )
    assert status == 403 and json.loads(body)["message"] == "bad_signature"


# --- the local server: errors in the envelope, the backlog, the banner -----------------------------------


def test_a_request_line_too_long_is_a_414_in_the_json_envelope(server: LocalServer) -> None:
    parts = urlsplit(server.url)
    with socket.create_connection((parts.hostname, parts.port), timeout=30) as sock:
        sock.sendall(b"GET /" + b"a" * 70_000 + b" HTTP/1.1\r\nHost: x\r\n\r\n")
        raw = b""
        while chunk := sock.recv(65536):
            raw += chunk
    head, _, body = raw.partition(b"\r\n\r\n")
    assert head.split(b"\r\n")[0].split(b" ")[1] == b"414"
    assert b"content-type: application/json" in head.lower()
    assert json.loads(body) == {"status": "error", "message": "Request-URI Too Long"}


def test_headers_too_many_and_a_bad_request_line_are_in_the_envelope(server: LocalServer) -> None:
    parts = urlsplit(server.url)
    for request, want in (
        (b"GET / HTTP/1.1\r\n" + b"".join(b"X-%d: y\r\n" % i for i in range(120)) + b"\r\n", b"431"),
        (b"NOT A REQUEST\r\n\r\n", b"400"),
    ):
        with socket.create_connection((parts.hostname, parts.port), timeout=30) as sock:
            sock.sendall(request)
            raw = b""
            while chunk := sock.recv(65536):
                raw += chunk
        head, _, body = raw.partition(b"\r\n\r\n")
        assert head.split(b" ")[1] == want, head
        assert json.loads(body)["status"] == "error"


CONNECTIONS = 200


def test_the_backlog_holds_200_concurrent_connections() -> None:
    # Given a server that has not accepted anything yet (every handler thread busy, as under a burst)
    env = LocalEnvironment(start=START, settings=local_settings(offline_coach=True, openai_api_key=None))
    server = LocalServer("127.0.0.1", 0, env=env, tick_seconds=3600)
    port = urlsplit(server.url).port
    sockets: list[socket.socket] = []
    try:
        # When 200 clients connect at once
        for _ in range(CONNECTIONS):
            sock = socket.socket()
            sock.setblocking(False)
            sock.connect_ex(("127.0.0.1", port))
            sockets.append(sock)
        # Then the kernel completes every handshake: the listen queue holds them all (with the
        # standard library's backlog of 5, the rest stay unanswered, their SYNs dropped)
        pending, deadline = set(sockets), time.monotonic() + 5
        while pending and time.monotonic() < deadline:
            _, writable, _ = select.select([], list(pending), [], 0.5)
            pending -= {s for s in writable if s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0}
        assert not pending, f"{len(pending)} of {CONNECTIONS} connections not established"
        # And once it serves, each one is answered
        server.start()
        request = f"GET /_local/clock HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n".encode()
        for sock in sockets:
            sock.setblocking(True)
            sock.settimeout(60)
            sock.sendall(request)
        answered = 0
        for sock in sockets:
            raw = b""
            while chunk := sock.recv(65536):
                raw += chunk
            answered += raw.startswith(b"HTTP/1.0 200")
        assert answered == CONNECTIONS
    finally:
        for sock in sockets:
            sock.close()
        if not server._threads[0].is_alive():
            server.start()  # (stop() before start() hung before this change)
        server.stop()


def test_the_banner_shows_the_secrets_in_use_masked_not_the_defaults() -> None:
    from promptpipe.local.server import banner

    in_use = "tw-token-from-the-environment-0123456789"
    settings = local_settings(offline_coach=True, openai_api_key=None).model_copy(
        update={"twilio_auth_token": in_use, "whatsapp_app_secret": "meta-app-secret-from-env-9876"}
    )
    env = LocalEnvironment(start=START, settings=settings)
    running = LocalServer("127.0.0.1", 0, env=env, tick_seconds=3600)
    try:
        text = "\n".join(banner(running))
    finally:
        running.stop()
    assert in_use not in text and "meta-app-secret-from-env-9876" not in text
    assert "local-twilio-auth-token" not in text and "local-whatsapp-app-secret" not in text
    assert "TWILIO_AUTH_TOKEN=tw…89 (40 characters), from the environment" in text
    assert "WHATSAPP_APP_SECRET=me…76 (29 characters), from the environment" in text
    assert "WHATSAPP_VERIFY_TOKEN=lo…en (18 characters), the local default" in text


# --- the console: DNS rebinding, cross-site forms ------------------------------------------------------


@pytest.fixture
def console_stack(server: LocalServer) -> Iterator[tuple[ConsoleServer, str]]:
    transport = HttpTransport(server.url)
    client = CoordinatorClient(transport)
    status, _, body = _call(
        server.url, "POST", "/conversation/participants", _enrol_body(), {"content-type": "application/json"}
    )
    assert status == 201
    running = ConsoleServer(client, port=0).start()
    yield running, json.loads(body)["result"]["id"]
    running.stop()
    transport.close()


def _participant_status(console: ConsoleServer, pid: str) -> str:
    return console.console.client.participant(pid).status.value


def _page_token(console: ConsoleServer, pid: str) -> tuple[str, str]:
    """The form token in the participant's page and the cookie the page sets."""
    status, headers, body = _call(
        console.url, "GET", f"/participants/{pid}", headers={"authorization": f"token {console.token}"}
    )
    assert status == 200
    page = body.decode()
    marker = 'name="token" value="'
    token = page[page.index(marker) + len(marker) :].split('"', 1)[0]
    cookie = headers["set-cookie"].split(";", 1)[0]
    assert "SameSite=Strict" in headers["set-cookie"] and "HttpOnly" in headers["set-cookie"]
    return token, cookie


def test_console_refuses_a_foreign_host_page_and_post(console_stack: tuple[ConsoleServer, str]) -> None:
    console, pid = console_stack
    token, cookie = _page_token(console, pid)
    foreign = {"host": f"{EVIL}:{urlsplit(console.url).port}"}
    # When a rebinding page reads the list, or posts "pause" with a token it somehow has
    status, _, page = _call(console.url, "GET", "/", headers=foreign)
    assert status == 403 and b"Sam" not in page
    form = urlencode({"token": token}).encode()
    headers = {**foreign, "content-type": "application/x-www-form-urlencoded", "cookie": cookie}
    status, _, _ = _call(console.url, "POST", f"/participants/{pid}/pause", form, headers)
    # Then both are refused and the participant is still active
    assert status == 403 and _participant_status(console, pid) == "active"


def test_console_actions_need_the_page_token_and_its_cookie(console_stack: tuple[ConsoleServer, str]) -> None:
    console, pid = console_stack
    token, cookie = _page_token(console, pid)
    form = urlencode({"token": token}).encode()
    plain = {"content-type": "application/x-www-form-urlencoded"}
    for headers in (
        plain,  # the token without the cookie (a foreign page cannot send the SameSite=Strict cookie)
        {**plain, "cookie": cookie.split("=")[0] + "=guess"},
        {**plain, "cookie": cookie, "origin": f"http://{EVIL}"},  # a cross-site form post
        {**plain, "cookie": cookie, "sec-fetch-site": "cross-site"},
    ):
        status, _, _ = _call(console.url, "POST", f"/participants/{pid}/pause", form, headers)
        assert status == 403, headers
        assert _participant_status(console, pid) == "active"
    # The console's own page: its token, its cookie, its origin
    own = {**plain, "cookie": cookie, "origin": console.url, "sec-fetch-site": "same-origin"}
    status, headers, _ = _call(console.url, "POST", f"/participants/{pid}/pause", form, own)
    assert status == 303 and _participant_status(console, pid) == "paused"


def test_console_errors_of_the_http_layer_are_its_pages(console_stack: tuple[ConsoleServer, str]) -> None:
    console, _ = console_stack
    parts = urlsplit(console.url)
    with socket.create_connection((parts.hostname, parts.port), timeout=30) as sock:
        sock.sendall(b"GET /" + b"a" * 70_000 + b" HTTP/1.1\r\nHost: x\r\n\r\n")
        raw = b""
        while chunk := sock.recv(65536):
            raw += chunk
    head, _, body = raw.partition(b"\r\n\r\n")
    assert head.split(b" ")[1] == b"414" and b"text/html" in head and b"Request-URI Too Long" in body


# --- the console: its token, no-store, its own notices ----------------------------


def _authorised(console: ConsoleServer) -> dict[str, str]:
    return {"authorization": f"token {console.token}"}


def test_console_requires_the_token_printed_at_start(console_stack: tuple[ConsoleServer, str]) -> None:
    console, pid = console_stack
    # Without the token, or with a wrong one, no page, no transcript, no cookie
    for path, headers in (
        ("/", {}),
        (f"/participants/{pid}", {}),
        ("/?token=guess", {}),
        ("/", {"authorization": "token guess"}),
        ("/", {"cookie": f"promptpipe_console_{urlsplit(console.url).port}=guess"}),
        ("/static/style.css", {}),
    ):
        status, answer_headers, body = _call(console.url, "GET", path, headers=headers)
        assert status == 403, (path, headers)
        assert b"Sam" not in body and b"needs its token" in body
        assert "set-cookie" not in answer_headers
    # And a POST without it changes nothing
    status, _, _ = _call(
        console.url,
        "POST",
        f"/participants/{pid}/pause",
        b"token=x",
        {"content-type": "application/x-www-form-urlencoded"},
    )
    assert status == 403 and _participant_status(console, pid) == "active"
    # With the printed address: the cookie, and the same address without the token
    assert console.login_url == f"{console.url}/?token={console.token}"
    status, headers, _ = _call(console.url, "GET", f"/?q=Sam&token={console.token}")
    assert status == 303 and headers["location"] == "/?q=Sam"
    cookie = headers["set-cookie"].split(";", 1)[0]
    assert "HttpOnly" in headers["set-cookie"] and "SameSite=Strict" in headers["set-cookie"]
    status, _, body = _call(console.url, "GET", "/?q=Sam", headers={"cookie": cookie})
    assert status == 200 and b"Sam" in body
    status, _, body = _call(console.url, "GET", f"/participants/{pid}", headers=_authorised(console))
    assert status == 200 and b"Sam" in body


def test_console_started_with_no_token_serves_without_it(server: LocalServer) -> None:
    transport = HttpTransport(server.url)
    running = ConsoleServer(CoordinatorClient(transport), port=0, require_token=False).start()
    try:
        assert running.login_url == running.url + "/"
        status, headers, _ = _call(running.url, "GET", "/")
        assert status == 200 and "set-cookie" in headers  # the forms' token still binds the POSTs
    finally:
        running.stop()
        transport.close()


def test_console_pages_redirects_errors_and_exports_are_never_stored(console_stack: tuple[ConsoleServer, str]) -> None:
    console, pid = console_stack
    token, cookie = _page_token(console, pid)
    for path in ("/", f"/participants/{pid}", "/export", "/study", "/no-such-page", "/static/style.css"):
        status, headers, _ = _call(console.url, "GET", path, headers=_authorised(console))
        assert status in (200, 404) and headers["cache-control"] == "no-store", path
    _, headers, _ = _call(console.url, "GET", "/")  # refused: no token
    assert headers["cache-control"] == "no-store"
    _, headers, _ = _call(console.url, "GET", f"/?token={console.token}")
    assert headers["cache-control"] == "no-store"
    own = {"content-type": "application/x-www-form-urlencoded", "cookie": cookie, "origin": console.url}
    status, headers, body = _call(console.url, "POST", "/export", urlencode({"token": token}).encode(), own)
    assert status == 200 and headers["content-type"] == "application/zip" and body[:2] == b"PK"
    assert headers["cache-control"] == "no-store"
    status, headers, _ = _call(
        console.url, "POST", f"/participants/{pid}/pause", urlencode({"token": token}).encode(), own
    )
    assert status == 303 and headers["cache-control"] == "no-store"


def test_console_shows_only_its_own_notices(console_stack: tuple[ConsoleServer, str]) -> None:
    console, pid = console_stack
    token, cookie = _page_token(console, pid)
    # A link with its own text as the notice: not shown, on either page
    spoof = "Your session expired: sign in again at evil.example"
    for path in (f"/participants/{pid}", "/"):
        status, _, body = _call(
            console.url, "GET", f"{path}?{urlencode({'notice': spoof})}", headers=_authorised(console)
        )
        assert status == 200 and b"evil.example" not in body and b'class="notice"' not in body
    status, _, body = _call(
        console.url, "GET", f"/participants/{pid}?notice=resolved:evil", headers=_authorised(console)
    )
    assert b'class="notice"' not in body
    # The console's own action: its redirect names a code, and the page says the console's words
    own = {"content-type": "application/x-www-form-urlencoded", "cookie": cookie, "origin": console.url}
    status, headers, _ = _call(
        console.url, "POST", f"/participants/{pid}/pause", urlencode({"token": token}).encode(), own
    )
    assert status == 303 and headers["location"] == f"/participants/{pid}?notice=paused"
    status, _, body = _call(console.url, "GET", headers["location"], headers=_authorised(console))
    assert b"Paused: no prompts or reminders until resumed." in body


def test_console_command_prints_its_address_with_the_token(
    server: LocalServer, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import time as time_module

    from promptpipe.console import app

    def interrupt(_seconds: float) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(time_module, "sleep", interrupt)
    transport = HttpTransport(server.url)
    try:
        assert app.run_console(CoordinatorClient(transport), host="127.0.0.1", port=0) == 0
        line = capsys.readouterr().out.splitlines()[0]
        assert "/?token=" in line and len(line.split("/?token=")[1].split()[0]) >= 20
        assert app.run_console(CoordinatorClient(transport), host="127.0.0.1", port=0, require_token=False) == 0
        printed = capsys.readouterr()
        assert "token=" not in printed.out and "--no-token" in printed.err
    finally:
        transport.close()


# --- the public webhook changes no schedule: STOP / START's schedule changes run behind the queue ------


class SchedulerCalls:
    """Every EventBridge Scheduler call made while ``recording``."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        from botocore.client import BaseClient

        self.recording = False
        self.calls: list[str] = []
        original = BaseClient._make_api_call

        def record(client: BaseClient, operation: str, params: dict[str, object]) -> object:
            if self.recording and client.meta.service_model.service_name == "scheduler":
                self.calls.append(operation)
            return original(client, operation, params)

        monkeypatch.setattr(BaseClient, "_make_api_call", record)


def test_stop_and_start_by_text_change_schedules_only_in_the_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    from promptpipe.flow.timer_names import participant_prefix
    from promptpipe.local.demo import send_sms

    env = LocalEnvironment(start=START, settings=local_settings(offline_coach=True, openai_api_key=None))
    try:
        enrolled = env.api("POST", "/conversation/participants", json_body=json.loads(_enrol_body()))
        pid, phone = enrolled.body["result"]["id"], enrolled.body["result"]["phone_number"]
        for index, text in enumerate(
            [
                "I'd like to exercise more",
                "I want to feel more energetic",
                "Around 7:30am works",
                "After my coffee",
                "yes",
            ]
        ):
            assert send_sms(env, phone, text, f"SMintake{index}") == 200
        live = set(env.app.timers.list_names(participant_prefix(pid)))
        assert live, "intake set a daily prompt"
        scheduler = SchedulerCalls(monkeypatch)
        drain = env.drain
        for word, confirmation, want_live in (("STOP", "unsubscribed", set()), ("START", "Welcome back", live)):
            # Given the worker not running yet (the queue holds what the webhook enqueued)
            monkeypatch.setattr(env, "drain", lambda *_args, **_kwargs: 0)
            sent_before = len(env.messages(pid))
            # When the participant texts the keyword
            scheduler.recording = True
            assert send_sms(env, phone, word, f"SM{word}") == 200
            scheduler.recording = False
            # Then the webhook confirmed at once and called no Scheduler API at all
            env._collect_outbox()
            assert confirmation in env.messages(pid)[sent_before].body_text
            assert scheduler.calls == [], f"the webhook called {scheduler.calls}"
            # And once the worker runs, the schedules are as the committed state wants them
            monkeypatch.setattr(env, "drain", drain)
            env.drain()
            assert set(env.app.timers.list_names(participant_prefix(pid))) == want_live
            assert len(env.messages(pid)) == sent_before + 1  # the worker sent nothing more
    finally:
        env.close()


@pytest.mark.logs_errors  # the worker logs each failed attempt at ERROR, as in AWS
def test_deferred_schedule_changes_survive_a_failing_scheduler(monkeypatch: pytest.MonkeyPatch) -> None:
    from promptpipe.errors import TimerError
    from promptpipe.flow.timer_names import participant_prefix
    from promptpipe.local.demo import send_sms

    env = LocalEnvironment(start=START, settings=local_settings(offline_coach=True, openai_api_key=None))
    try:
        enrolled = env.api("POST", "/conversation/participants", json_body=json.loads(_enrol_body()))
        pid, phone = enrolled.body["result"]["id"], enrolled.body["result"]["phone_number"]
        for index, text in enumerate(
            [
                "I'd like to exercise more",
                "I want to feel more energetic",
                "Around 7:30am works",
                "After my coffee",
                "yes",
            ]
        ):
            send_sms(env, phone, text, f"SMintake{index}")
        assert env.app.timers.list_names(participant_prefix(pid))
        # Given a Scheduler that refuses the first two deletions (throttled)
        timers = env.app.timers
        real_cancel, failures = timers.cancel, []

        def throttled_cancel(name: str) -> None:
            if len(failures) < 2:
                failures.append(name)
                raise TimerError("ThrottlingException: Rate exceeded")
            real_cancel(name)

        monkeypatch.setattr(timers, "cancel", throttled_cancel)
        # When the participant texts STOP / Then the confirmation goes out, and the worker's event
        # is redelivered until the schedules are gone (no operator, no reconcile)
        assert send_sms(env, phone, "STOP", "SMstop") == 200
        assert "unsubscribed" in env.messages(pid)[-1].body_text
        assert len(failures) == 2
        assert env.app.timers.list_names(participant_prefix(pid)) == []
    finally:
        env.close()
