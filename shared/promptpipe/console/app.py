"""The console's routes, rendered with Jinja2 over the coordinator API client.

Pages: ``/`` participants (search, status filter), ``/participants/<id>`` one participant (the
conversation in their local time, profile, schedules, controller state), ``/export`` (download the
research export as a zip). Actions are plain HTML forms (POST, then a redirect): pause, resume,
resolve a hand-off with a note (a state override with a sub-state, which releases the flow
controller's hold). Every request must name the console's own address (``Host``, and ``Origin``
when sent: docs/architecture.md#local-runs); every POST carries its credential in a
``SameSite=Strict`` cookie and the form token bound to that credential, both of which only a page of
the console has (``console/identity.py``).

A credential is the token printed at start (the operator) or a coordinator's own token
(``promptpipe console-token``), required of every request unless started with ``--no-token``; a
viewer reads and cannot post. Answers are ``no-store``; notices are the console's own
(``console/access.py``). The management pages and actions (enrol, import, edit, withdraw, delete,
erase, staff message, release) are ``console/manage.py``, who comes in ``console/identity.py``.
Longer than 500 lines because the pages, the request handler and the server share one ``Console``
(its door, templates and page cursors) and every route reads best beside the others in one handler.
"""

from __future__ import annotations

import io
import json
import logging
import secrets
import sys
import tempfile
import threading
import zipfile
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode, urlsplit

from jinja2 import Environment, FileSystemLoader, select_autoescape

from promptpipe.console import manage, views
from promptpipe.console.access import (
    NO_STORE,
    SUB_STATES,
    TOKEN_NEEDED,
    cookie_value,
    notice_text,
)
from promptpipe.console.charts import COLOURS, strip_svg
from promptpipe.console.delivery import CostPrices, delivery_context
from promptpipe.console.identity import DEFAULT_OPERATOR, Door, Identity, TokenBook
from promptpipe.console.listing import FORM, view_of
from promptpipe.console.queue import needs_person_queue, waiting
from promptpipe.console.study import study_context
from promptpipe.console.study_effects import api_study_report, effects_svg
from promptpipe.coordinator.adherence import DAY_WORDS, record_end, study_days
from promptpipe.coordinator.client import ApiError, ApiUnreachable, CoordinatorClient
from promptpipe.coordinator.export import write_export
from promptpipe.coordinator.study_report import StudyReport
from promptpipe.coordinator.summary import (
    TIMER_WORDS,
    ParticipantSummary,
    chat_lines,
    summarize,
    zone_label,
    zone_of,
)
from promptpipe.exit_codes import EXIT_UNAVAILABLE, CliError
from promptpipe.local.request_guard import LocalHTTPServer, RequestGuard, serve_until_interrupted
from promptpipe.models.participant import ConversationParticipant
from promptpipe.models.participant_list import ParticipantRowsPage
from promptpipe.models.study import StudyDefinition

logger = logging.getLogger(__name__)
HERE = Path(__file__).resolve().parent
STATIC = {"style.css": "text/css; charset=utf-8"}
STATUSES = ("active", "paused", "completed", "withdrawn")
PAGE_ROWS = 50
MAX_FORM_BYTES = 64 * 1024  # a note and a few fields
MAX_CURSOR_LISTS = 256


def _templates() -> Environment:
    env = Environment(
        loader=FileSystemLoader(HERE / "templates"), autoescape=select_autoescape(["html"]), trim_blocks=True
    )
    env.filters["local"] = views.local_time
    env.filters["shown"] = views.shown_value
    env.globals["schedule_words"] = views.schedule_words
    env.globals["pending_timers"] = views.pending_timers
    env.globals["timer_words"] = TIMER_WORDS
    env.filters["utc"] = lambda value: value.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC") if value else "—"
    env.filters["iso"] = lambda value: value.astimezone(UTC).isoformat() if value else ""
    env.globals["zone_of"] = zone_of
    env.globals["zone_label"] = zone_label
    env.filters["json"] = lambda value: json.dumps(value, ensure_ascii=False, default=str)
    env.globals["effects_svg"] = effects_svg
    env.filters["pct"] = lambda value: "—" if value is None else f"{round(value * 100)}%"
    return env


def _prep_minutes() -> int:
    """The preparation time of this console's settings (the deployment's, when they are the same)."""
    from promptpipe.settings import get_settings

    try:
        return get_settings().scheduler_prep_time_minutes
    except Exception:  # settings the console cannot read: the schedule is shown without the sentence
        return 0


class Console:
    """Renders pages from the API; shared by every request thread."""

    # The randomised decisions' report for the study view (docs/studies.md); None: not shown.
    study_report: Callable[[], StudyReport | None] | None = None
    # What the cost estimate prices at: the study's own prices when the console is given the study.
    prices: CostPrices = CostPrices()

    def __init__(
        self,
        client: CoordinatorClient,
        *,
        require_token: bool = True,
        tokens: TokenBook | None = None,
        operator: str = DEFAULT_OPERATOR,
    ) -> None:
        self.client = client
        self.require_token = require_token
        self.templates = _templates()
        self.token = secrets.token_urlsafe(16)
        # Who comes in (console/identity.py): the start-up token is the operator's; each coordinator's own.
        self.door = Door(self.token, tokens, operator, require_token=require_token)
        self.lock = threading.Lock()
        self.guard = RequestGuard(frozenset())  # set once the server knows its port
        self.cookie_name = "promptpipe_console"
        # The cursor of the page shown before each page's cursor (its "← Previous"); "" is the first page.
        self._previous: dict[str, str] = {}

    def serve_on(self, guard: RequestGuard, port: int) -> None:
        self.guard = guard
        # Cookies ignore the port: two consoles on one machine keep one cookie each.
        self.cookie_name = f"promptpipe_console_{port}"

    def token_cookie(self, credential: str | None = None) -> str:
        return f"{self.cookie_name}={credential or self.token}; Path=/; HttpOnly; SameSite=Strict"

    def render(self, name: str, **context: Any) -> str:
        template = self.templates.get_template(name)
        token, me = self.door.page_token(), self.door.me()
        return template.render(token=token, me=me, api=self.client.transport.description, **context)

    def summary(self, participant: ConversationParticipant, state: dict[str, Any] | None = None) -> ParticipantSummary:
        state = state if state is not None else self.client.state(participant.id)
        return summarize(participant, self.client.iter_history(participant.id, include_audit=True), state)

    def list_page(self, query: dict[str, str]) -> str:
        """One page of ``PAGE_ROWS`` participants in one API call (``GET /conversation/participant-rows``:
        the rows with their sub-state, hold, counts and next timer, the total, where the page starts,
        and the needs-a-person queue shown above them; docs/console.md). The API pages by cursor, a
        place in the list: "Next" carries the cursor of the page shown (``?after=``), so participants
        enrolled meanwhile (listed first) never push anyone off the pages, and the numbers shown are
        the API's, counted at the read."""
        search, status = query.get("q", "").strip(), query.get("status", "")
        status = status if status in STATUSES else ""
        needs = query.get("needs") == "1"
        after = query.get("after") or None
        view, view_keep = view_of(query)  # sorting and the filters beyond status (console/listing.py)

        def rows(cursor: str | None) -> ParticipantRowsPage:  # the needs-a-person queue comes with them
            return self.client.participant_rows(
                limit=PAGE_ROWS,
                next_token=cursor,
                status=status,
                search=search,
                needs_person=needs,
                view=view,
                queue=True,
            )

        try:
            result = rows(after)
        except ApiError as exc:
            if exc.status != 400 or after is None:
                raise
            after, result = None, rows(None)  # a cursor of another listing: page 1
        with self.lock:
            if len(self._previous) > MAX_CURSOR_LISTS * 16:  # a bound on what a long-running console keeps
                self._previous.clear()
            if result.next_token is not None:
                self._previous[result.next_token] = after or ""
            previous = self._previous.get(after) if after else None
        pages = max(1, -(-result.total // PAGE_ROWS))
        keep = {k: v for k, v in (("q", search), ("status", status), ("needs", "1" if needs else "")) if v}
        keep |= view_keep
        page = min(result.offset // PAGE_ROWS + 1, pages)  # the page the first row is on

        def link(cursor: str | None) -> str:
            return "/?" + urlencode({**keep, **({"after": cursor} if cursor else {})})

        return self.render(
            "participants.html",
            rows=result.rows,
            total=result.total,
            first=result.offset + 1,
            page=page,
            pages=pages,
            next_link=link(result.next_token) if result.next_token else None,
            previous_link=link(previous or None) if after else None,
            search=search,
            status=status,
            needs=needs,
            statuses=STATUSES,
            notice=notice_text(query.get("notice")),
            view=view,
            # Nobody missed: the needs-a-person queue above the list, with the same call (docs/console.md)
            waiting=waiting(result.needs_person_queue, result.read_at or datetime.now(UTC)),
            **FORM,
        )

    def study_page(self) -> str:
        """The study by date, by study day and by cohort over every participant (two calls per participant);
        with a study report, the effect of each arm."""
        decisions = self.study_report() if self.study_report else None
        context = study_context([self.summary(p) for p in self.client.iter_participants()])
        return self.render("study.html", **context, decisions=decisions)

    def participant_page(self, participant_id: str, query: dict[str, str]) -> str:
        participant, deleted = self.client.participant_or_deleted(participant_id)
        entries = list(self.client.iter_history(participant_id, include_audit=True))
        state = self.client.state(participant_id)
        summary = summarize(participant, entries, state)
        zone = zone_of(participant)
        days: list[tuple[str, list[Any]]] = []
        lines = chat_lines(entries, zone)
        for line in lines:
            heading = line.local.strftime("%A %d %B %Y")
            if not days or days[-1][0] != heading:
                days.append((heading, []))
            days[-1][1].append(line)
        controller = (state or {}).get("controller")
        end = record_end([summary])
        days_held = study_days(summary, end) if end is not None else []
        return self.render(
            "participant.html",
            audit=manage.audit_of(self, participant_id),
            hold=(state or {}).get("hold"),
            p=participant,
            deleted=deleted,
            prep_minutes=_prep_minutes(),
            strip=strip_svg(days_held) if days_held else None,
            legend=[(DAY_WORDS[state], state) for state in COLOURS],
            s=summary,
            state=state,
            zone=zone,
            days=days,
            controller=controller if isinstance(controller, dict) else None,
            sub_states=SUB_STATES,
            notice=notice_text(query.get("notice")),
            **delivery_context(lines, entries, zone, self.prices),  # docs/console.md, "Every delivery visible"
        )

    def queue_page(self) -> str:
        """Every participant held for a person, the longest wait first (docs/console.md)."""
        return self.render("queue.html", entries=needs_person_queue(self.client, datetime.now(UTC)))

    def export_zip(self, by: str | None = None) -> bytes:
        with tempfile.TemporaryDirectory() as folder:
            write_export(self.client, Path(folder))
            buffer = io.BytesIO()
            with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
                for name in ("participants.csv", "prompts.csv", "messages.jsonl", "adherence.csv", "audit.csv"):
                    archive.write(Path(folder) / name, name)
        self.client.record_export(by=by or self.door.operator.name)
        return buffer.getvalue()

    def act(self, participant_id: str, action: str, form: dict[str, str], by: str | None = None) -> str:
        """Run one action; answers the code of the notice shown after the redirect (``NOTICES``)."""
        if action == "pause":
            self.client.set_status(participant_id, "paused", by=by, reason=form.get("reason", "").strip())
            return "paused"
        if action == "resume":
            self.client.set_status(participant_id, "active", by=by)
            return "resumed"
        if action == "resolve":
            # The controller's release path (docs/controller.md): a state override with a sub-state
            # releases the hold; the note is the override's reason, recorded in the transcript.
            note = form.get("note", "").strip()
            if not note:
                raise ApiError(400, "write a note saying how the hand-off was resolved")
            sub_state = form.get("sub_state", "")
            if sub_state not in SUB_STATES:
                raise ApiError(400, f"choose where the conversation continues: {', '.join(SUB_STATES)}")
            body = {"sub_state": sub_state, "reason": note, **({"by": by} if by else {})}
            self.client.override_state(participant_id, body)
            return f"resolved:{sub_state}"
        raise ApiError(404, f"unknown action {action}")


def make_handler(console: Console) -> type[BaseHTTPRequestHandler]:  # noqa: C901
    class Handler(BaseHTTPRequestHandler):
        server_version = "PromptPipeConsole/0.1"
        # A request line that cannot be parsed still gets a status line (HTTP/0.9 has none).
        default_request_version = "HTTP/1.0"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        # Whether this request holds a token of the console: only then does a page carry its cookie.
        admitted = False
        credential: str | None = None
        identity: Identity | None = None

        def _send(self, status: int, body: bytes | str, content_type: str = "text/html; charset=utf-8") -> None:
            data = body.encode() if isinstance(body, str) else body
            self.send_response(status)
            self.send_header("cache-control", NO_STORE)
            self.send_header("content-type", content_type)
            self.send_header("content-length", str(len(data)))
            self.send_header("x-content-type-options", "nosniff")
            self.send_header("referrer-policy", "same-origin")  # "no-referrer" makes a form post say Origin: null
            self.send_header("content-security-policy", "default-src 'self'; frame-ancestors 'none'")
            if content_type.startswith("text/html") and self.admitted:
                self.send_header("set-cookie", console.token_cookie(self.credential))  # with the page's form token
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)

        def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
            # The standard library's own errors (414, 431, 400, 501, 505) as the console's page.
            self.close_connection = True
            text = message or self.responses.get(code, ("Error",))[0]
            self._send(code, console.render("error.html", status=code, message=text))

        def _refused(self, method: str) -> bool:
            headers = {k.lower(): v for k, v in self.headers.items()}
            refusal = console.guard.check(method, headers, json_only=False)
            if refusal is None:
                return False
            self.close_connection = True  # a refused POST's body is never read
            self._error(refusal.status, refusal.message)
            return True

        def _admitted(self, method: str) -> bool:
            """The console's token held; a GET that brings it as ``?token=`` is answered with the
            cookie and sent on to the same address without it (no token left in the history)."""
            url = urlsplit(self.path)
            pairs = parse_qsl(url.query, keep_blank_values=True)
            given = dict(pairs).get("token") if method != "POST" else None
            headers = {k.lower(): v for k, v in self.headers.items()}
            cookie = cookie_value(headers.get("cookie", ""), console.cookie_name)
            found = console.door.credential_of(given, cookie, headers.get("authorization", ""))
            if found is None:
                self.close_connection = True
                self._error(403, TOKEN_NEEDED)
                return False
            self.admitted = True
            self.credential, self.identity = found
            console.door.serving(*found)
            if given is not None and self.credential == given and console.require_token:
                rest = urlencode([(k, v) for k, v in pairs if k != "token"])
                self._redirect(url.path + (f"?{rest}" if rest else ""), cookie=True)
                return False
            return True

        def _answer(self, method: str, work: Callable[[], None]) -> None:
            if self._refused(method) or not self._admitted(method):
                return
            try:
                work()
            except Exception:  # a bug: still a page, never a dropped connection
                logger.exception("console request failed")
                self.close_connection = True
                self._error(500, "The console failed on this request; see its log.")

        def _redirect(self, location: str, *, cookie: bool = False) -> None:
            self.send_response(303)
            self.send_header("cache-control", NO_STORE)
            if cookie:
                self.send_header("set-cookie", console.token_cookie(self.credential))
            self.send_header("location", location)
            self.send_header("content-length", "0")
            self.end_headers()

        def _error(self, status: int, message: str) -> None:
            self._send(status, console.render("error.html", status=status, message=message))

        def _guarded(self, work: Any) -> None:
            try:
                work()
            except ApiError as exc:
                self._error(exc.status if 400 <= exc.status < 600 else 502, exc.message)
            except ApiUnreachable as exc:
                self._error(502, str(exc))

        def do_GET(self) -> None:
            self._answer("GET", self._get)

        def do_HEAD(self) -> None:
            self._answer("HEAD", self._get)

        def do_POST(self) -> None:
            self._answer("POST", self._post)

        def _get(self) -> None:
            url = urlsplit(self.path)
            query = dict(parse_qsl(url.query))
            parts = [p for p in url.path.split("/") if p]
            if not parts:
                self._guarded(lambda: self._send(200, console.list_page(query)))
            elif parts[0] == "participants" and len(parts) == 2:
                self._guarded(lambda: self._send(200, console.participant_page(parts[1], query)))
            elif parts == ["export"]:
                self._send(200, console.render("export.html"))
            elif parts == ["queue"]:
                self._guarded(lambda: self._send(200, console.queue_page()))
            elif parts == ["study"]:
                self._guarded(lambda: self._send(200, console.study_page()))
            elif manage.shows(parts):
                self._guarded(lambda: self._send(200, manage.page(console, parts, query)))
            elif parts[0] == "static" and len(parts) == 2 and parts[1] in STATIC:
                self._send(200, (HERE / "static" / parts[1]).read_bytes(), STATIC[parts[1]])
            else:
                self._error(404, "No such page")

        def _post(self) -> None:
            url = urlsplit(self.path)
            try:
                length = int(self.headers.get("content-length") or 0)
            except ValueError:
                length = -1
            limit = manage.MAX_IMPORT_BYTES if manage.takes_a_file(url.path) else MAX_FORM_BYTES
            if not 0 <= length <= limit:
                self.close_connection = True
                self._error(413 if length > 0 else 400, f"a form is at most {limit} bytes")
                return
            raw = self.rfile.read(length) if length else b""
            form = manage.read_form(self.headers.get("content-type", ""), raw)
            cookie = cookie_value(self.headers.get("cookie", ""), console.cookie_name)
            identity = console.door.form_identity(form.get("token", ""), cookie)
            if identity is None:
                self._error(403, "This form is out of date: reload the page and try again.")
                return
            if not identity.can_act:
                self._error(403, f"{identity.name} has the viewer role: the console's pages only, no actions.")
                return
            parts = [p for p in url.path.split("/") if p]
            if manage.acts_on(parts):

                def managed() -> None:
                    answer = manage.act(console, parts, form, identity)
                    if answer.startswith("/"):
                        self._redirect(answer)
                    else:
                        self._send(200, answer)

                self._guarded(managed)
            elif parts == ["export"]:

                def export() -> None:
                    data = console.export_zip(identity.name)
                    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
                    self.send_response(200)
                    self.send_header("cache-control", NO_STORE)
                    self.send_header("content-type", "application/zip")
                    self.send_header("content-disposition", f'attachment; filename="promptpipe-export-{stamp}.zip"')
                    self.send_header("content-length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)

                self._guarded(export)
            elif len(parts) == 3 and parts[0] == "participants":
                participant_id, action = parts[1], parts[2]

                def act() -> None:
                    notice = console.act(participant_id, action, form, identity.name)
                    self._redirect(f"/participants/{quote(participant_id)}?{urlencode({'notice': notice})}")

                self._guarded(act)
            else:
                self._error(404, "No such action")

    return Handler


class ConsoleServer:
    def __init__(
        self,
        client: CoordinatorClient,
        host: str = "127.0.0.1",
        port: int = 8080,
        allowed_hosts: Iterable[str] = (),
        *,
        require_token: bool = True,
        tokens: TokenBook | None = None,
        operator: str = DEFAULT_OPERATOR,
    ) -> None:
        from promptpipe.local.server import PortUnavailable

        self.console = Console(client, require_token=require_token, tokens=tokens, operator=operator)
        try:
            self.httpd = LocalHTTPServer((host, port), make_handler(self.console))
        except OSError as exc:
            raise PortUnavailable(host, port, exc) from exc
        bound_port = self.httpd.server_address[1]
        self.console.serve_on(RequestGuard.serving(host, bound_port, allowed_hosts), bound_port)
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return self.httpd.url

    @property
    def token(self) -> str:
        return self.console.token

    @property
    def login_url(self) -> str:
        """The address to open: with the token, unless the console was started with ``--no-token``."""
        return f"{self.url}/?token={self.token}" if self.console.require_token else f"{self.url}/"

    def start(self) -> ConsoleServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread.is_alive():  # shutdown() waits for a serve_forever that never started
            self.httpd.shutdown()
        self.httpd.server_close()


def run_console(
    client: CoordinatorClient,
    *,
    host: str,
    port: int,
    allowed_hosts: Iterable[str] = (),
    require_token: bool = True,
    tokens: TokenBook | None = None,
    operator: str = DEFAULT_OPERATOR,
    study: StudyDefinition | None = None,
) -> int:
    """Serve the console until interrupted; with ``study``, the study view shows its decisions' report."""
    from promptpipe.local.server import PortUnavailable

    try:
        client.participants()
    except ApiUnreachable as exc:  # e.g. `serve` is still starting: the pages say so until it answers
        print(f"promptpipe console: warning: {exc}", file=sys.stderr)
    try:
        server = ConsoleServer(
            client, host, port, allowed_hosts, require_token=require_token, tokens=tokens, operator=operator
        )
        if study is not None:
            server.console.study_report = api_study_report(client, study)
            server.console.prices = CostPrices.of(study)
        server.start()
    except PortUnavailable as exc:
        raise CliError(str(exc), EXIT_UNAVAILABLE) from None
    print(f"PromptPipe console on {server.login_url} — API: {client.transport.description}", flush=True)
    if not require_token:
        print("promptpipe console: warning: started with --no-token: any local process can use it", file=sys.stderr)
    return serve_until_interrupted(server)
