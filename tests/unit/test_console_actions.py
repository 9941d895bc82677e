"""The console's management actions (console/manage.py) against a recording API client: each is one
API call naming the coordinator; what a coordinator gets wrong is refused before any call, saying
what to do."""

from __future__ import annotations

import json
from typing import Any

import pytest

from promptpipe.console import manage
from promptpipe.console.identity import Identity, Role
from promptpipe.coordinator.client import ApiError
from promptpipe.models.participant import ConversationParticipant

ANA = Identity("Ana", Role.COORDINATOR)


def _participant(pid: str = "p_1", name: str = "Sam", phone: str = "+14165550142") -> ConversationParticipant:
    # Constructed, not validated: the fake's ids and numbers are short
    return ConversationParticipant.model_construct(id=pid, phone_number=phone, name=name, timezone="")


class RecordingClient:
    def __init__(self, refuse: set[str] | None = None) -> None:
        self.calls: list[tuple[str, Any]] = []
        self.refuse = refuse or set()

    def participant(self, participant_id: str) -> ConversationParticipant:
        return _participant(participant_id)

    def state(self, participant_id: str) -> dict[str, Any]:
        return {"profile": {"preferred_time": "08:00"}}

    def enrol(self, body: dict[str, Any]) -> ConversationParticipant:
        self.calls.append(("enrol", body))
        if body.get("phone_number") in self.refuse:
            raise ApiError(409, "Phone number already enrolled (by another request)")
        return _participant(f"p_{len(self.calls)}", body.get("name", ""), body["phone_number"])

    def update(self, participant_id: str, body: dict[str, Any]) -> None:
        self.calls.append(("update", body))

    def override_state(self, participant_id: str, body: dict[str, Any]) -> None:
        self.calls.append(("override", body))

    def delete(self, participant_id: str, **kwargs: Any) -> None:
        self.calls.append(("delete", kwargs))

    def staff_message(self, participant_id: str, body: str, *, by: str) -> None:
        self.calls.append(("staff", (body, by)))

    def check_enrolments(self, rows: list[dict[str, Any]]) -> list[tuple[int, list[str]]]:
        return [(n, ["phone_number: bad"] if row.get("phone_number") == "12" else []) for n, row in enumerate(rows, 1)]


class FakeConsole:
    def __init__(self, client: RecordingClient) -> None:
        self.client = client
        self.rendered: list[tuple[str, dict[str, Any]]] = []

    def render(self, name: str, **context: Any) -> str:
        self.rendered.append((name, context))
        return name


def _act(client: RecordingClient, path: str, **form: str) -> str:
    return manage.act(FakeConsole(client), [p for p in path.split("/") if p], form, ANA)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("path", "form", "says"),
    [
        ("participants/p_1/withdraw", {"reason": " "}, "say why"),
        ("participants/p_1/staff", {"body": ""}, "write the message"),
        ("participants/p_1/erase", {"confirm": "sam"}, "type the participant's name exactly"),
        ("import", {"csv": ""}, "holds no rows"),
        ("import", {"csv": "phone_number\n" + "+1\n" * 1001}, "at most 1000 rows"),
        ("import/commit", {"rows": "{not json"}, "upload the file again"),
        ("import/commit", {"rows": '{"a": 1}'}, "upload the file again"),
    ],
)
def test_what_a_coordinator_gets_wrong_is_refused_before_any_call(path: str, form: dict[str, str], says: str) -> None:
    client = RecordingClient()
    with pytest.raises(ApiError, match=says) as refused:
        _act(client, path, **form)
    assert refused.value.status == 400 and client.calls == []


def test_each_action_is_one_api_call_naming_the_coordinator() -> None:
    client = RecordingClient()
    assert _act(client, "enrol", phone_number=" +1 416 555 0101 ", name="Rita", other="x", token="t").endswith(
        "?notice=enrolled"
    )
    _act(client, "participants/p_1/withdraw", reason="moved")
    _act(client, "participants/p_1/delete", reason="")
    assert _act(client, "participants/p_1/erase", confirm=" Sam ", reason="asked") == "/?notice=erased"
    _act(client, "participants/p_1/staff", body=" Hi ")
    _act(client, "participants/p_1/release", note="", preferred_time="19:00", habit_domain=" ")
    assert client.calls == [
        ("enrol", {"phone_number": "+1 416 555 0101", "name": "Rita", "by": "Ana"}),
        ("update", {"status": "withdrawn", "reason": "moved", "by": "Ana"}),
        ("delete", {"keep_transcript": True, "by": "Ana", "reason": ""}),
        ("delete", {"keep_transcript": False, "by": "Ana", "reason": "asked"}),
        ("staff", ("Hi", "Ana")),
        # a corrected time goes through the update (the schedule moves with it), then the release
        ("update", {"preferred_time": "19:00", "by": "Ana", "reason": "corrected at release"}),
        ("override", {"release_hold": True, "reason": "released in the console", "by": "Ana"}),
    ]


def test_a_release_sends_only_the_profile_fields_corrected() -> None:
    """The release form shows the current profile: a plain release is no edit, a field left as it
    was is not sent."""
    client = RecordingClient()
    _act(client, "participants/p_1/release", note="talked", preferred_time="08:00", habit_domain="walking")
    assert client.calls == [
        ("override", {"release_hold": True, "reason": "talked", "profile": {"habit_domain": "walking"}, "by": "Ana"})
    ]


def test_an_edit_sends_only_what_changed() -> None:
    client = RecordingClient()
    _act(client, "participants/p_1/edit", name="Sam", timezone="Europe/Madrid", preferred_time="08:00", reason="")
    assert client.calls == [("update", {"timezone": "Europe/Madrid", "by": "Ana"})]
    client = RecordingClient()
    _act(client, "participants/p_1/edit", name="Sam", timezone="", preferred_time="19:00", reason="asked")
    # the preferred time is the API's update, which moves the daily prompt's schedule
    assert client.calls == [("update", {"preferred_time": "19:00", "by": "Ana", "reason": "asked"})]
    client = RecordingClient()
    _act(client, "participants/p_1/edit", name="Samuel", timezone="Europe/Madrid", preferred_time="7:30", reason="")
    assert client.calls == [
        ("update", {"name": "Samuel", "timezone": "Europe/Madrid", "preferred_time": "7:30", "by": "Ana"})
    ]


def test_the_import_previews_then_enrols_the_good_rows_and_lists_the_refused() -> None:
    client = RecordingClient(refuse={"+14165550102"})
    console = FakeConsole(client)
    manage.act(console, ["import"], {"csv": "phone_number,name\n+14165550101,A\n12,B\n+14165550102,C\n"}, ANA)  # type: ignore[arg-type]
    ((name, preview),) = console.rendered
    assert name == "import_preview.html" and preview["bad"] == [2] and preview["good"] == 2
    assert client.calls == []  # the preview writes nothing
    manage.act(console, ["import", "commit"], {"rows": preview["rows_json"]}, ANA)  # type: ignore[arg-type]
    done = console.rendered[-1][1]
    assert [label for _, label in done["enrolled"]] == ["A"]
    assert done["refused"] == [("+14165550102", "Phone number already enrolled (by another request)")]
    assert [body["by"] for _, body in client.calls] == ["Ana", "Ana"]
    assert json.loads(preview["rows_json"])[1] == {"phone_number": "+14165550102", "name": "C"}


def test_a_csv_the_console_cannot_read_says_so() -> None:
    with pytest.raises(ApiError, match="not a CSV"):
        _act(RecordingClient(), "import", csv='phone_number\n"unclosed\n')
