"""A typed client of the participants API over a pluggable transport.

Transports: ``promptpipe.local.api_transport.InProcessTransport`` (the local stack in this process),
``promptpipe.adapters.api_http.HttpTransport`` (``promptpipe serve``, or a deployed API signed with
SigV4 using the operator's AWS credentials).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol

from promptpipe.errors import PromptPipeError
from promptpipe.models.audit import AuditRecord
from promptpipe.models.decision import DecisionRecord
from promptpipe.models.participant import ConversationParticipant, ParticipantStatus
from promptpipe.models.participant_list import ListView, ParticipantRowsPage
from promptpipe.models.store import TranscriptEntry

PAGE_SIZE = 1000  # the API's largest participants page: one query lists a study of 1,000
HISTORY_PAGE_SIZE = 500


@dataclass
class ApiAnswer:
    status: int
    body: Any


class ApiTransport(Protocol):
    """Sends one request to the participants API; raises ``ApiUnreachable`` when it cannot."""

    description: str

    def request(
        self, method: str, path: str, *, query: dict[str, str] | None = None, json_body: Any = None
    ) -> ApiAnswer: ...


class ApiError(PromptPipeError):
    """The API answered with an error envelope."""

    def __init__(self, status: int, message: str, result: Any = None) -> None:
        super().__init__(f"{message} (HTTP {status})")
        self.status = status
        self.message = message
        self.result = result  # the error's details, when the API gives some (a flow's problems)


class ApiUnreachable(PromptPipeError):
    """No answer from the API (connection refused, DNS, timeout)."""


BASE = "/conversation/participants"
FLOWS = "/conversation/flows"
ROWS = "/conversation/participant-rows"
AUDIT = "/conversation/audit"
STUDIES = "/conversation/studies"
DECISIONS_PAGE_SIZE = 1000


class CoordinatorClient:
    def __init__(self, transport: ApiTransport) -> None:
        self.transport = transport

    def _call(self, method: str, path: str, *, query: dict[str, str] | None = None, json_body: Any = None) -> Any:
        answer = self.transport.request(method, path, query=query, json_body=json_body)
        body = answer.body if isinstance(answer.body, dict) else {}
        if answer.status >= 400:
            raise ApiError(answer.status, str(body.get("message") or answer.body or "error"), body.get("result"))
        return body.get("result")

    def _paged(self, path: str, items: str, query: dict[str, str]) -> Iterator[Any]:
        """Every entry under ``items`` of a paged listing, one page at a time (its ``next_token``
        asks for the next; the last page has none)."""
        token: str | None = None
        while True:
            result = self._call("GET", path, query={**query, **({"next_token": token} if token else {})})
            yield from result[items]
            token = result.get("next_token")
            if not token:
                return

    # -- participants ---------------------------------------------------------------------------
    def iter_participants(self, *, page_size: int = PAGE_SIZE) -> Iterator[ConversationParticipant]:
        for item in self._paged(BASE, "participants", {"limit": str(page_size)}):
            yield ConversationParticipant.model_validate(item)

    def participants(self, *, status: str | None = None, phone: str | None = None) -> list[ConversationParticipant]:
        if phone:
            result = self._call("GET", BASE, query={"phone": phone})
            found = [ConversationParticipant.model_validate(p) for p in result["participants"]]
        else:
            found = list(self.iter_participants())
        return [p for p in found if status is None or p.status.value == status]

    def participant_rows(
        self,
        *,
        limit: int = 50,
        next_token: str | None = None,
        status: str = "",
        search: str = "",
        needs_person: bool = False,
        view: ListView | None = None,
        queue: bool = False,
    ) -> ParticipantRowsPage:
        """One page of the participants list's rows, with the total (one call; docs/console.md), sorted
        and narrowed as ``view`` says (only what differs from the plain list is sent); with ``queue``,
        the needs-a-person queue too (``needs_person_queue``, the same call)."""
        query = {"limit": str(limit)}
        for name, value in (("next_token", next_token), ("status", status), ("q", search)):
            if value:
                query[name] = value
        if needs_person:
            query["needs_person"] = "true"
        if queue:
            query["queue"] = "true"
        if view is not None:
            query |= {k: str(v) for k, v in view.model_dump(exclude_defaults=True).items() if v not in (None, "")}
        return ParticipantRowsPage.model_validate(self._call("GET", ROWS, query=query))

    def participant(self, participant_id: str) -> ConversationParticipant:
        return ConversationParticipant.model_validate(self._call("GET", f"{BASE}/{participant_id}"))

    def find(self, reference: str) -> ConversationParticipant:
        """By id (``p_…``) or by phone number in any form the API accepts."""
        if reference.startswith("p_"):
            return self.participant(reference)
        found = self.participants(phone=reference)
        if not found:
            raise ApiError(404, f"no participant has the phone number {reference}")
        return found[0]

    def participant_or_deleted(self, participant_id: str) -> tuple[ConversationParticipant, bool]:
        """The participant; or, for one deleted with their transcript kept (the API still serves
        it by id), a stand-in holding only the id, and ``True``. ``ApiError`` 404 when neither."""
        try:
            return self.participant(participant_id), False
        except ApiError as exc:
            if exc.status != 404:
                raise
        query = {"limit": "1", "include_audit": "false"}
        first = self._call("GET", f"{BASE}/{participant_id}/history", query=query)["messages"]
        if not first:
            raise ApiError(404, f"participant {participant_id} not found")
        return deleted_stand_in(participant_id, TranscriptEntry.model_validate(first[0]).at), True

    def find_kept(self, reference: str) -> tuple[ConversationParticipant, bool]:
        """``find``, and a deleted participant's kept transcript by id (``True`` then)."""
        if reference.startswith("p_"):
            return self.participant_or_deleted(reference)
        return self.find(reference), False

    def state(self, participant_id: str) -> dict[str, Any] | None:
        """The state view, or ``None`` for a deleted participant whose transcript was kept."""
        try:
            return self._call("GET", f"{BASE}/{participant_id}/state")
        except ApiError as exc:
            if exc.status == 404:
                return None
            raise

    def iter_history(self, participant_id: str, *, include_audit: bool = True) -> Iterator[TranscriptEntry]:
        query = {"limit": str(HISTORY_PAGE_SIZE), "include_audit": str(include_audit).lower()}
        for item in self._paged(f"{BASE}/{participant_id}/history", "messages", query):
            yield TranscriptEntry.model_validate(item)

    def decisions(self, study_id: str, *, page_size: int = DECISIONS_PAGE_SIZE) -> Iterator[DecisionRecord]:
        """Every decision record of a study, page by page (none for a study with none on record)."""
        for item in self._paged(f"{STUDIES}/{study_id}/decisions", "decisions", {"limit": str(page_size)}):
            yield DecisionRecord.model_validate(item)

    # -- actions ----------------------------------------------------------------------------------
    def set_status(
        self, participant_id: str, status: str, *, by: str | None = None, reason: str = ""
    ) -> ConversationParticipant:
        body: dict[str, Any] = {"status": status}
        body |= {"by": by} if by else {}
        body |= {"reason": reason} if reason else {}
        return ConversationParticipant.model_validate(self._call("PUT", f"{BASE}/{participant_id}", json_body=body))

    # -- the console's coordination (docs/console.md) --------------------------------------------
    def enrol(self, body: dict[str, Any]) -> ConversationParticipant:
        return ConversationParticipant.model_validate(self._call("POST", BASE, json_body=body))

    def update(self, participant_id: str, body: dict[str, Any]) -> ConversationParticipant:
        return ConversationParticipant.model_validate(self._call("PUT", f"{BASE}/{participant_id}", json_body=body))

    def delete(self, participant_id: str, *, keep_transcript: bool, by: str, reason: str = "") -> None:
        query = {"keep_transcript": str(keep_transcript).lower(), "by": by, **({"reason": reason} if reason else {})}
        self._call("DELETE", f"{BASE}/{participant_id}", query=query)

    def staff_message(self, participant_id: str, body: str, *, by: str) -> dict[str, Any]:
        result: dict[str, Any] = self._call(
            "POST", f"{BASE}/{participant_id}/staff-messages", json_body={"body": body, "by": by}
        )
        return result

    def audit(self, participant_id: str | None = None) -> list[AuditRecord]:
        query = {"participant_id": participant_id} if participant_id else None
        return [AuditRecord.model_validate(r) for r in self._call("GET", AUDIT, query=query)["records"]]

    def record_export(self, *, by: str | None) -> None:
        self._call("POST", AUDIT, json_body={"action": "export", **({"by": by} if by else {})})

    def check_enrolments(self, rows: list[dict[str, Any]]) -> list[tuple[int, list[str]]]:
        """Each row's problems, by the API's enrolment rules; nothing written."""
        result = self._call("POST", "/conversation/enrolment-checks", json_body={"rows": rows})
        return [(int(r["row"]), [str(p) for p in r["problems"]]) for r in result["rows"]]

    def override_state(self, participant_id: str, body: dict[str, Any]) -> dict[str, Any]:
        return self._call("POST", f"{BASE}/{participant_id}/state", json_body=body)

    # -- flow definitions (docs/controller.md) ----------------------------------------------------
    def flow(self, flow_id: str, *, version: int | None = None) -> dict[str, Any]:
        query = {"version": str(version)} if version is not None else None
        return self._call("GET", f"{FLOWS}/{flow_id}", query=query)

    def reconcile(self, participant_id: str | None) -> dict[str, Any]:
        """Repairs schedule drift for one participant, or everyone (``None``); returns the report."""
        path = "/conversation/reconcile" if participant_id is None else f"{BASE}/{participant_id}/reconcile"
        result: dict[str, Any] = self._call("POST", path)
        return result

    def push_flow(self, flow_id: str, definition: Any) -> dict[str, Any]:
        """Stores ``definition`` as the flow's next version; returns it as stored."""
        return self._call("PUT", f"{FLOWS}/{flow_id}", json_body=definition)


def deleted_stand_in(participant_id: str, first_message_at: datetime) -> ConversationParticipant:
    """What is known of a deleted participant whose transcript was kept: the id (no number, name
    or zone; the record is gone), for showing that transcript."""
    at = first_message_at.astimezone(UTC)
    return ConversationParticipant.model_construct(
        id=participant_id,
        phone_number="",
        name="",
        gender="",
        ethnicity="",
        background="",
        timezone="",
        status=ParticipantStatus.WITHDRAWN,
        opted_out=False,
        debug_mode=False,
        enrolled_at=at,
        created_at=at,
        updated_at=at,
    )
