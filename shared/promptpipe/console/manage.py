"""Participants managed in the console, and a person in the conversation (docs/console.md).

Every action is one call of the participants API, so it runs the same use case the API runs
(``usecases/participants.py``, ``usecases/staff.py``) and is recorded in the audit with the
coordinator's name (``by``) and the reason given:

- ``/enrol``: one participant (a form); ``/import``: a cohort from a CSV file, first checked row by
  row by the API's own enrolment rules (``POST /conversation/enrolment-checks``, nothing written),
  then the rows without problems enrolled, one ``POST /conversation/participants`` each;
- ``/participants/<id>/edit`` (name, zone, preferred time: one update; a zone or a time moves the
  daily prompt's schedule), ``/withdraw`` (with a reason), ``/delete`` (the transcript kept), ``/erase`` (confirmed
  by typing the participant's name);
- ``/participants/<id>/staff``: a message from the study team, which holds the coach;
  ``/participants/<id>/release``: one click releases the hold, with the profile fields to correct.
"""

from __future__ import annotations

import csv
import io
import json
from email.parser import BytesParser
from email.policy import HTTP
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import parse_qsl, quote, urlencode

from promptpipe.coordinator.client import ApiError
from promptpipe.models.audit import AuditRecord

if TYPE_CHECKING:
    from promptpipe.console.identity import Identity
    from promptpipe.coordinator.client import CoordinatorClient


class Console(Protocol):
    """What the management pages use of ``console.app.Console`` (named here, so that the two modules
    do not import each other)."""

    client: CoordinatorClient

    def render(self, name: str, **context: Any) -> str: ...


MAX_IMPORT_BYTES = 1024 * 1024  # a cohort's CSV (about 10,000 rows)
MAX_IMPORT_ROWS = 1000  # the API checks up to 1,000 rows a call
PARTICIPANT_PAGES = ("edit", "withdraw", "delete", "erase")
PARTICIPANT_ACTIONS = (*PARTICIPANT_PAGES, "staff", "release")
# The CSV's columns: the enrolment request's fields (a few other spellings read as them).
COLUMN_NAMES = {"phone": "phone_number", "zone": "timezone", "time_zone": "timezone"}
CONSENT_COLUMNS = {"consent_at": "at", "consent_version": "version", "consent_method": "method"}
PROFILE_FIELDS = ("habit_domain", "motivational_frame", "preferred_time", "prompt_anchor", "additional_info")
DEFAULT_RELEASE_NOTE = "released in the console"


def shows(parts: list[str]) -> bool:
    return parts in (["enrol"], ["import"]) or (
        len(parts) == 3 and parts[0] == "participants" and parts[2] in PARTICIPANT_PAGES
    )


def acts_on(parts: list[str]) -> bool:
    return parts in (["enrol"], ["import"], ["import", "commit"]) or (
        len(parts) == 3 and parts[0] == "participants" and parts[2] in PARTICIPANT_ACTIONS
    )


def takes_a_file(path: str) -> bool:
    return path.rstrip("/") in ("/import", "/import/commit")


def read_form(content_type: str, raw: bytes) -> dict[str, str]:
    """A posted form: URL-encoded, or ``multipart/form-data`` (the CSV file), each field as text."""
    if not content_type.lower().startswith("multipart/form-data"):
        return dict(parse_qsl(raw.decode("utf-8", "replace")))
    message = BytesParser(policy=HTTP).parsebytes(f"Content-Type: {content_type}\r\n\r\n".encode() + raw)
    form: dict[str, str] = {}
    for part in message.iter_parts() if message.is_multipart() else ():
        name = part.get_param("name", header="content-disposition")
        if isinstance(name, str):
            payload = part.get_payload(decode=True)
            form[name] = payload.decode("utf-8-sig", "replace") if isinstance(payload, bytes) else ""
    return form


def audit_of(console: Console, participant_id: str) -> list[AuditRecord]:
    """The participant's audit records, newest first (none when the API cannot say)."""
    try:
        return list(reversed(console.client.audit(participant_id)))
    except ApiError:
        return []


# -- pages ----------------------------------------------------------------------------------------
def page(console: Console, parts: list[str], query: dict[str, str]) -> str:
    if parts == ["enrol"]:
        return console.render("enrol.html", values={})
    if parts == ["import"]:
        return console.render("import.html")
    participant = console.client.participant(parts[1])
    state = console.client.state(participant.id) or {}
    profile = state.get("profile") if isinstance(state.get("profile"), dict) else {}
    return console.render(
        f"{parts[2]}.html", p=participant, preferred_time=str((profile or {}).get("preferred_time") or "")
    )


# -- actions --------------------------------------------------------------------------------------
def act(console: Console, parts: list[str], form: dict[str, str], identity: Identity) -> str:
    """Run one action: a redirect (``/…?notice=…``) or a page (the import's preview and result)."""
    by = identity.name
    if parts == ["enrol"]:
        body = {k: v.strip() for k, v in form.items() if k in ENROL_FIELDS and v.strip()}
        participant = console.client.enrol({**body, "by": by})
        return _to(participant.id, "enrolled")
    if parts == ["import"]:
        return _preview(console, form.get("csv", ""))
    if parts == ["import", "commit"]:
        return _commit(console, form.get("rows", "[]"), by)
    participant_id, action = parts[1], parts[2]
    reason = form.get("reason", "").strip()
    if action == "edit":
        return _edit(console, participant_id, form, by)
    if action == "withdraw":
        if not reason:
            raise ApiError(400, "say why the participant is withdrawn (the audit keeps it)")
        console.client.update(participant_id, {"status": "withdrawn", "reason": reason, "by": by})
        return _to(participant_id, "withdrawn")
    if action == "delete":
        console.client.delete(participant_id, keep_transcript=True, by=by, reason=reason)
        return "/?" + urlencode({"notice": "deleted"})
    if action == "erase":
        participant = console.client.participant(participant_id)
        expected = participant.name.strip() or participant.id
        if form.get("confirm", "").strip() != expected:
            raise ApiError(400, "Not erased: type the participant's name exactly as shown to confirm the erasure.")
        console.client.delete(participant_id, keep_transcript=False, by=by, reason=reason)
        return "/?" + urlencode({"notice": "erased"})
    if action == "staff":
        text = form.get("body", "").strip()
        if not text:
            raise ApiError(400, "write the message to send")
        console.client.staff_message(participant_id, text, by=by)
        return _to(participant_id, "staff-sent")
    # release: one click; the profile fields corrected (the form shows the current ones: only those
    # changed are sent, so a plain release records no edit) are what the coach will continue from
    current = _profile(console, participant_id)
    facts = {
        name: value
        for name in PROFILE_FIELDS
        if (value := form.get(name, "").strip()) and value != str(current.get(name) or "")
    }
    release: dict[str, Any] = {"release_hold": True, "reason": form.get("note", "").strip() or DEFAULT_RELEASE_NOTE}
    if "preferred_time" in facts:  # the time through the update, which moves the daily prompt with it
        reason = "corrected at release"
        console.client.update(
            participant_id, {"preferred_time": facts.pop("preferred_time"), "by": by, "reason": reason}
        )
    console.client.override_state(participant_id, {**release, **({"profile": facts} if facts else {}), "by": by})
    return _to(participant_id, "released")


ENROL_FIELDS = ("phone_number", "name", "timezone", "language", "gender", "ethnicity", "background")


def _profile(console: Console, participant_id: str) -> dict[str, Any]:
    """The coach's profile of the participant as the API holds it now ({} when none)."""
    state = console.client.state(participant_id) or {}
    profile = state.get("profile")
    return profile if isinstance(profile, dict) else {}


def _to(participant_id: str, notice: str) -> str:
    return f"/participants/{quote(participant_id)}?{urlencode({'notice': notice})}"


def _edit(console: Console, participant_id: str, form: dict[str, str], by: str) -> str:
    """One update of the API: the name and zone as given, and the preferred time when it changed
    (the API moves the daily prompt's schedule to it, in the participant's zone: docs/console.md)."""
    participant = console.client.participant(participant_id)
    changes: dict[str, Any] = {
        name: form[name].strip()
        for name in ("name", "timezone")
        if name in form and form[name].strip() != getattr(participant, name)
    }
    preferred = form.get("preferred_time", "").strip()
    if preferred and preferred != str(_profile(console, participant_id).get("preferred_time") or ""):
        changes["preferred_time"] = preferred
    reason = form.get("reason", "").strip()
    if changes:
        console.client.update(participant_id, {**changes, "by": by, **({"reason": reason} if reason else {})})
    return _to(participant_id, "edited")


# -- the cohort import ----------------------------------------------------------------------------
def read_rows(text: str) -> list[dict[str, Any]]:
    """The CSV's rows as enrolment requests: the header names the fields; empty cells are left out;
    ``consent_at``, ``consent_version`` and ``consent_method`` make the consent."""
    reader = csv.DictReader(io.StringIO(text.lstrip("\ufeff")), strict=True)  # a broken quote is said, not read on
    rows: list[dict[str, Any]] = []
    for raw in reader:
        row: dict[str, Any] = {}
        consent: dict[str, str] = {}
        for header, value in raw.items():
            if header is None:  # more cells than the header names
                row["extra cells"] = ", ".join(str(v) for v in value or [])
                continue
            name = header.strip().lower().replace(" ", "_")
            name = COLUMN_NAMES.get(name, name)
            cell = (value or "").strip()
            if not cell:
                continue
            if name in CONSENT_COLUMNS:
                consent[CONSENT_COLUMNS[name]] = cell
            else:
                row[name] = cell
        if consent:
            row["consent"] = consent
        if row:
            rows.append(row)
    return rows


def _preview(console: Console, text: str) -> str:
    """A dry run: each row's problems by the API's rules; nothing is written."""
    try:
        rows = read_rows(text)
    except csv.Error as exc:
        raise ApiError(400, f"the file is not a CSV the console can read: {exc}") from None
    if not rows:
        raise ApiError(400, "the file holds no rows: the first line names the columns (phone_number, name, timezone…)")
    if len(rows) > MAX_IMPORT_ROWS:
        raise ApiError(400, f"a cohort is at most {MAX_IMPORT_ROWS} rows a file; split it")
    checked = dict(console.client.check_enrolments(rows))
    lines = [(number, row, checked.get(number, [])) for number, row in enumerate(rows, start=1)]
    good = [row for _, row, problems in lines if not problems]
    bad = [number for number, _, problems in lines if problems]
    return console.render(
        "import_preview.html", lines=lines, good=len(good), bad=bad, rows_json=json.dumps(good, ensure_ascii=False)
    )


def _commit(console: Console, rows_json: str, by: str) -> str:
    """Enrol the rows the preview found without problems, each as one enrolment; any refused now
    (a number enrolled since the preview) is listed with why."""
    try:
        rows = json.loads(rows_json)
    except ValueError:
        raise ApiError(400, "the preview's rows are missing: upload the file again") from None
    if not isinstance(rows, list) or len(rows) > MAX_IMPORT_ROWS or not all(isinstance(r, dict) for r in rows):
        raise ApiError(400, "the preview's rows are not readable: upload the file again")
    enrolled: list[tuple[str, str]] = []
    refused: list[tuple[str, str]] = []
    for row in rows:
        try:
            participant = console.client.enrol({**row, "by": by})
        except ApiError as exc:
            refused.append((str(row.get("phone_number", "")), exc.message))
        else:
            enrolled.append((participant.id, participant.name or participant.phone_number))
    return console.render("import_done.html", enrolled=enrolled, refused=refused)
