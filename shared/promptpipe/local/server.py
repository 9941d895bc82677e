"""``promptpipe serve``: the API Gateway routes on a local HTTP server, through the real handlers.

The inbound queue is drained after each request and the scheduler pump fires due schedules while a
simulated clock runs at real speed from ``--start``. Tester-only routes: ``GET/POST /_local/clock``
and ``GET /_local/outbox``. ``GET /openapi.json`` and ``GET /docs`` (Swagger UI) document the API.
"""

from __future__ import annotations

import argparse
import errno
import json
import logging
import math
import threading
import time
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from promptpipe.errors import PromptPipeError, ValidationFailed, error_body
from promptpipe.exit_codes import EXIT_UNAVAILABLE, CliError
from promptpipe.local.environment import (
    LOCAL_TWILIO_AUTH_TOKEN,
    LOCAL_WHATSAPP_APP_SECRET,
    LOCAL_WHATSAPP_VERIFY_TOKEN,
    LocalEnvironment,
    model_label,
)
from promptpipe.local.request_guard import LocalHTTPServer, RequestGuard, serve_until_interrupted
from promptpipe.rules.http_body import PAYLOAD_TOO_LARGE, MalformedBody, parse_json

# A body over the cap is read and dropped up to this size (so the client sees the 413), else the
# connection is closed.
_MAX_DRAINED_BYTES = 16 * 1024 * 1024
_MAX_ADVANCE_SECONDS = 10 * 366 * 86400


class SimulatedTime:
    """The simulated clock runs at real speed from an anchor; moving it re-anchors."""

    def __init__(self, env: LocalEnvironment) -> None:
        self.env = env
        self._anchor_sim = env.clock.now()
        self._anchor_real = time.monotonic()
        self._lock = threading.Lock()

    def target(self) -> datetime:
        return self._anchor_sim + timedelta(seconds=time.monotonic() - self._anchor_real)

    def tick(self) -> list[Any]:
        with self._lock:
            target = self.target()
            return self.env.advance_to(target) if target > self.env.clock.now() else []

    def move_to(self, instant: datetime) -> list[Any]:
        with self._lock:
            firings = self.env.advance_to(max(instant, self.env.clock.now()))
            self._anchor_sim, self._anchor_real = self.env.clock.now(), time.monotonic()
            return firings


def _iso(instant: datetime) -> str:
    return instant.astimezone(UTC).isoformat().replace("+00:00", "Z")


SWAGGER_ASSETS = {
    "/docs/swagger-ui-bundle.min.js": "text/javascript; charset=utf-8",
    "/docs/swagger-ui.min.css": "text/css; charset=utf-8",
}


def local_openapi_document() -> dict[str, Any]:
    """The API's document as this server serves it: the same, except that no route needs a signature."""
    from functions.enrollment.openapi import openapi_document

    document = openapi_document()
    document["security"] = []  # the SigV4 scheme stays documented; API Gateway enforces it in AWS
    document["servers"] = [{"url": "/", "description": "promptpipe serve (no authorization locally)"}]
    return document


def _swagger_dir() -> Path:
    from aws_lambda_powertools.event_handler.openapi import swagger_ui

    return Path(swagger_ui.__file__).resolve().parent


class LocalRequestHandler(BaseHTTPRequestHandler):
    """What every request of the local server shares: the guard (set once the port is known) and
    errors in the API's JSON envelope, including the standard library's own (414, 431, 400, 505)."""

    server_version = "PromptPipeLocal/0.1"
    # A request line that cannot be parsed still gets a status line (HTTP/0.9 has none).
    default_request_version = "HTTP/1.0"
    guard = RequestGuard(frozenset())

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        self.close_connection = True  # the request could not be read: nothing after it can be
        text = message or self.responses.get(code, ("Error",))[0]
        data = json.dumps(error_body(text)).encode()
        self.send_response(code)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.send_header("connection", "close")
        self.end_headers()
        if self.command != "HEAD" and code >= 200 and code not in (204, 304):
            self.wfile.write(data)


def make_handler(env: LocalEnvironment, sim: SimulatedTime) -> type[LocalRequestHandler]:  # noqa: C901
    class Handler(LocalRequestHandler):
        def _send(
            self, status: int, body: Any, content_type: str = "application/json", headers: dict[str, str] | None = None
        ) -> None:
            data = (
                body
                if isinstance(body, bytes)
                else (json.dumps(body).encode() if content_type == "application/json" else str(body).encode())
            )
            self.send_response(status)
            self.send_header("content-type", content_type)
            self.send_header("content-length", str(len(data)))
            for name, value in (headers or {}).items():
                if name.lower() not in ("content-type", "content-length"):
                    self.send_header(name, value)
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)

        def _error(self, status: int, message: str) -> None:
            self._send(status, error_body(message))

        def _body(self) -> bytes:
            """The body, at most ``MAX_WEBHOOK_BODY_BYTES`` (the larger of the two caps; each handler
            applies its own); a larger one is read and dropped and ``MalformedBody`` (413) raised."""
            cap = env.settings.max_webhook_body_bytes
            try:
                length = int(self.headers.get("content-length") or 0)
            except ValueError as exc:
                raise MalformedBody("content-length is not a number") from exc
            if length <= cap:
                return self.rfile.read(length) if length > 0 else b""
            if length > _MAX_DRAINED_BYTES:
                self.close_connection = True
            else:
                while length > 0:
                    length -= len(self.rfile.read(min(length, 65536))) or length
            raise MalformedBody(f"request body is larger than {cap} bytes", status=PAYLOAD_TOO_LARGE)

        def _clock_target(self) -> datetime:
            request = parse_json(self._body() or b"{}")
            if not isinstance(request, dict):
                raise ValidationFailed("the body must be a JSON object with advance_seconds or to")
            if "advance_seconds" in request:
                try:
                    seconds = float(request["advance_seconds"])
                except (TypeError, ValueError) as exc:
                    raise ValidationFailed("advance_seconds must be a number of seconds") from exc
                if not math.isfinite(seconds) or abs(seconds) > _MAX_ADVANCE_SECONDS:
                    raise ValidationFailed(
                        f"advance_seconds must be a number of seconds, at most {_MAX_ADVANCE_SECONDS}"
                    )
                return env.clock.now() + timedelta(seconds=seconds)
            if "to" in request:
                value = request["to"]
                try:
                    target = datetime.fromisoformat(value.replace("Z", "+00:00"))
                except (AttributeError, ValueError) as exc:
                    raise ValidationFailed("to must be an ISO 8601 date-time such as 2026-03-03T13:00:00Z") from exc
                return target if target.tzinfo is not None else target.replace(tzinfo=UTC)
            raise ValidationFailed("give advance_seconds or to")

        def _local(self, method: str, path: str, query: dict[str, str]) -> None:
            if path == "/_local/clock" and method == "GET":
                self._send(200, {"now": _iso(env.clock.now())})
            elif path == "/_local/clock" and method == "POST":
                try:
                    target = self._clock_target()
                except MalformedBody as exc:
                    self._error(exc.status, str(exc))
                    return
                except ValidationFailed as exc:
                    self._error(400, str(exc))
                    return
                firings = sim.move_to(target)
                self._send(
                    200,
                    {
                        "now": _iso(env.clock.now()),
                        "fired": [{"name": f.name, "kind": f.kind, "at": _iso(f.at)} for f in firings],
                    },
                )
            elif path == "/_local/outbox" and method == "GET":
                records = env.messages(query.get("participant_id"))
                self._send(
                    200,
                    {
                        "messages": [
                            {
                                "participant_id": r.participant_id,
                                "to": r.to,
                                "body": r.body_text,
                                "kind": r.kind.value,
                                "sent_at": _iso(r.sent_at),
                                "message_id": r.message_id,
                                "question": r.question.model_dump() if r.question else None,
                            }
                            for r in records
                        ]
                    },
                )
            else:
                self._error(404, "unknown local route")

        def _docs(self, path: str, query: dict[str, str]) -> None:
            """The OpenAPI document and Swagger UI (its assets ship inside Powertools; no CDN)."""
            if path == "/openapi.json" or (path == "/docs" and query.get("format") == "json"):
                self._send(200, local_openapi_document())
            elif path == "/docs":
                from aws_lambda_powertools.event_handler.openapi.swagger_ui.html import generate_swagger_html

                page = generate_swagger_html(
                    json.dumps(local_openapi_document()),
                    "/docs/swagger-ui-bundle.min.js",
                    "/docs/swagger-ui.min.css",
                    "/docs",
                    None,
                )
                self._send(200, page, "text/html; charset=utf-8")
            elif path in SWAGGER_ASSETS:
                self._send(200, (_swagger_dir() / path.rsplit("/", 1)[1]).read_bytes(), SWAGGER_ASSETS[path])
            else:
                self._error(404, "unknown documentation route")

        def _route(self, method: str) -> None:
            try:
                self._checked_route(method)
            except Exception:  # a bug here: still an answer in the envelope, never a dropped connection
                logging.getLogger(__name__).exception("local server failed")
                self.close_connection = True
                self._error(500, "Internal Server Error")

        def _checked_route(self, method: str) -> None:
            url = urlsplit(self.path)
            headers = {k.lower(): v for k, v in self.headers.items()}
            # Webhooks are form posts from the providers, checked by their signatures instead.
            refusal = self.guard.check(method, headers, json_only=not url.path.startswith("/webhooks/"))
            if refusal is not None:
                if method == "POST":
                    self.close_connection = True  # its body is not read
                self._error(refusal.status, refusal.message)
                return
            query = dict(parse_qsl(url.query, keep_blank_values=True))
            if url.path.startswith("/_local/"):
                self._local(method, url.path, query)
                return
            if method == "GET" and (url.path in ("/openapi.json", "/docs") or url.path in SWAGGER_ASSETS):
                self._docs(url.path, query)
                return
            try:
                body = self._body()
            except MalformedBody as exc:
                self._error(exc.status, str(exc))
                return
            try:
                response = env.api(
                    method, url.path, body=body or None, headers=headers, query=query or None, base64_body=bool(body)
                )
            except Exception:  # a function that raises: API Gateway answers 500 and the caller sees no more
                logging.getLogger(__name__).exception("function failed")
                self._send(500, {"message": "Internal Server Error"})
                return
            if isinstance(response.body, dict | list):
                self._send(response.status, response.body, headers=response.headers)
            else:
                content_type = response.headers.get("content-type", "text/plain")
                self._send(response.status, response.body or "", content_type, headers=response.headers)

        def do_GET(self) -> None:
            self._route("GET")

        def do_POST(self) -> None:
            self._route("POST")

        def do_PUT(self) -> None:
            self._route("PUT")

        def do_DELETE(self) -> None:
            self._route("DELETE")

        def __getattr__(self, name: str) -> Any:
            # Any other method (PATCH, TRACE, QUERY, …) goes to the routes too, which answer 405 or 404.
            if name.startswith("do_") and name[3:].isupper():
                return lambda: self._route(name[3:])
            raise AttributeError(name)

    return Handler


class PortUnavailable(PromptPipeError):
    """The server could not listen on the address (in use, or not allowed)."""

    def __init__(self, host: str, port: int, cause: OSError) -> None:
        in_use = cause.errno == errno.EADDRINUSE
        reason = "is already in use" if in_use else f"cannot be used ({cause.strerror or cause})"
        hint = f"; choose another with --port, e.g. --port {port + 1 if port else 8001}" if in_use else ""
        super().__init__(f"port {port} on {host} {reason}{hint}")
        self.host, self.port = host, port


class LocalServer:
    """A running local server (used by ``promptpipe serve`` and the tests)."""

    def __init__(
        self,
        host: str,
        port: int,
        *,
        start: datetime | None = None,
        env: LocalEnvironment | None = None,
        tick_seconds: float = 1.0,
        allowed_hosts: Iterable[str] = (),
    ) -> None:
        owned = env is None
        self.env = env or LocalEnvironment(start=start or datetime.now(UTC).replace(microsecond=0))
        self.sim = SimulatedTime(self.env)
        handler = make_handler(self.env, self.sim)
        try:
            self.httpd = LocalHTTPServer((host, port), handler)
        except OSError as exc:
            if owned:
                self.env.close()
            raise PortUnavailable(host, port, exc) from exc
        # Behind a tunnel the providers call the public address: that name is served on too.
        public = urlsplit(self.env.settings.public_webhook_base_url or "").netloc
        self.guard = handler.guard = RequestGuard.serving(
            host, self.httpd.server_address[1], [*allowed_hosts, *([public] if public else [])]
        )
        self._stop = threading.Event()
        self._tick_seconds = tick_seconds
        self._threads = [
            threading.Thread(target=self.httpd.serve_forever, daemon=True),
            threading.Thread(target=self._ticker, daemon=True),
        ]

    @property
    def url(self) -> str:
        return self.httpd.url

    def _ticker(self) -> None:
        while not self._stop.wait(self._tick_seconds):
            self.sim.tick()

    def start(self) -> LocalServer:
        for thread in self._threads:
            thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._threads[0].is_alive():  # shutdown() waits for a serve_forever that never started
            self.httpd.shutdown()
        self.httpd.server_close()
        self.env.close()


def mask_secret(value: str) -> str:
    """Enough of a secret to tell which one is in use, never enough to use it."""
    shown = f"{value[:2]}…{value[-2:]}" if len(value) >= 12 else "…"
    return f"{shown} ({len(value)} characters)"


def _secret_line(name: str, value: str | None, default: str) -> str:
    if not value:
        return f"{name} not set"
    source = "the local default" if value == default else "from the environment"
    return f"{name}={mask_secret(value)}, {source}"


def banner(server: LocalServer) -> list[str]:
    """The start banner: where everything is, and which webhook secrets are in use (masked)."""
    settings, url = server.env.settings, server.url
    twilio = _secret_line("TWILIO_AUTH_TOKEN", settings.twilio_auth_token, LOCAL_TWILIO_AUTH_TOKEN)
    app_secret = _secret_line("WHATSAPP_APP_SECRET", settings.whatsapp_app_secret, LOCAL_WHATSAPP_APP_SECRET)
    verify = _secret_line("WHATSAPP_VERIFY_TOKEN", settings.whatsapp_verify_token, LOCAL_WHATSAPP_VERIFY_TOKEN)
    hosts = ", ".join(sorted(server.guard.authorities))
    return [
        f"PromptPipe local server on {url} — coach model: {model_label(server.env)}",
        f"  simulated clock starts at {_iso(server.env.clock.now())} and runs at real speed",
        f"  participants API: {url}/conversation/participants (no auth locally; POST bodies as application/json)",
        f"  API documentation: {url}/docs (Swagger UI), {url}/openapi.json",
        f"  Twilio webhook:   {url}/webhooks/twilio   ({twilio})",
        f"  WhatsApp webhook: {url}/webhooks/whatsapp ({app_secret}; {verify})",
        f"  tester routes:    GET/POST {url}/_local/clock, GET {url}/_local/outbox",
        f"  answers requests addressed to: {hosts} (--allow-host adds a name)",
    ]


def run_server(args: argparse.Namespace) -> int:
    from promptpipe.local.failures import quiet_function_logs

    with quiet_function_logs(verbose=getattr(args, "verbose", False)):
        return _serve(args)


def _serve(args: argparse.Namespace) -> int:

    env = None
    if getattr(args, "with_demo", False):
        from promptpipe.local.demo import DEMO_START, run_demo
        from promptpipe.local.environment import local_settings

        env = LocalEnvironment(start=args.start or DEMO_START, settings=local_settings(offline_coach=True))
        run_demo(env)
    try:
        server = LocalServer(
            args.host, args.port, start=args.start, env=env, allowed_hosts=getattr(args, "allow_host", None) or ()
        ).start()
    except PortUnavailable as exc:
        if env is not None:
            env.close()
        raise CliError(str(exc), EXIT_UNAVAILABLE) from None
    for line in banner(server):
        print(line)
    print("  ready", flush=True)
    return serve_until_interrupted(server)
