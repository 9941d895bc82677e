"""Consent on record (docs/safety.md#consent): through the participants API of the local stack
(moto, the real enrollment handler), the send rule in the worker, and the research export."""

from __future__ import annotations

import csv
from datetime import timedelta
from pathlib import Path

from promptpipe.adapters.scripted_llm import ScriptedLLM
from promptpipe.coordinator.client import CoordinatorClient
from promptpipe.coordinator.export import write_export
from promptpipe.local.api_transport import InProcessTransport
from promptpipe.models.participant import ConversationParticipant
from promptpipe.models.state import FlowState, new_state_data
from tests.integration.test_worker import BASE, PHONE, text_in

CONSENT = {"at": "2026-03-01T15:30:00Z", "version": "v2", "method": "electronic"}


def participant(env, pid: str) -> dict:
    response = env.api("GET", f"{BASE}/{pid}")
    assert response.status == 200, response.body
    return response.body["result"]


def test_enrolment_stores_the_consent_and_the_export_carries_it(local_env_factory, tmp_path: Path) -> None:
    # Given a participant enrolled with their consent, who later withdraws through a status change
    env = local_env_factory()
    created = env.api("POST", BASE, json_body={"phone_number": PHONE, "consent": CONSENT})
    assert created.status == 201, created.body
    pid = created.body["result"]["id"]
    env.clock.advance(timedelta(days=3))
    assert env.api("PUT", f"{BASE}/{pid}", json_body={"status": "withdrawn"}).status == 200

    # Then both records are on the participant: the consent as given, the withdrawal at the
    # request's time, under the version consented to, by the API
    stored = participant(env, pid)
    assert stored["consent"] == {"at": "2026-03-01T15:30:00Z", "version": "v2", "method": "electronic"}
    assert stored["withdrawal"]["version"] == "v2" and stored["withdrawal"]["method"] == "api"
    assert stored["withdrawal"]["at"].startswith("2026-03-05")

    # And the export carries both
    write_export(CoordinatorClient(InProcessTransport(env)), tmp_path)
    with (tmp_path / "participants.csv").open() as f:
        (row,) = list(csv.DictReader(f))
    consent = (row["consent_at"], row["consent_version"], row["consent_method"])
    assert consent == ("2026-03-01T15:30:00Z", "v2", "electronic")
    assert (row["withdrawal_version"], row["withdrawal_method"]) == ("v2", "api")


def test_a_withdrawal_given_is_recorded_as_given_and_contradicting_statuses_are_refused(local_env_factory) -> None:
    env = local_env_factory()
    pid = env.api("POST", BASE, json_body={"phone_number": PHONE, "consent": CONSENT}).body["result"]["id"]
    withdrawal = {"at": "2026-03-02T09:00:00Z", "version": "v2", "method": "verbal"}

    refused = env.api("PUT", f"{BASE}/{pid}", json_body={"status": "active", "withdrawal": withdrawal})
    assert refused.status == 400 and "withdrawal" in refused.body["message"]
    assert participant(env, pid)["withdrawal"] is None

    assert env.api("PUT", f"{BASE}/{pid}", json_body={"withdrawal": withdrawal}).status == 200
    stored = participant(env, pid)
    assert stored["status"] == "withdrawn" and stored["withdrawal"] == withdrawal


def test_when_consent_is_required_enrolment_without_it_is_refused_and_nobody_is_enrolled(local_env_factory) -> None:
    env = local_env_factory(consent_required=True)
    response = env.api("POST", BASE, json_body={"phone_number": PHONE})
    assert response.status == 400
    assert "consent is required" in response.body["message"]
    assert env.api("GET", BASE).body["result"]["participants"] == []
    incomplete = env.api("POST", BASE, json_body={"phone_number": PHONE, "consent": {"version": "v2"}})
    assert incomplete.status == 400
    assert env.api("POST", BASE, json_body={"phone_number": PHONE, "consent": CONSENT}).status == 201


def test_when_consent_is_required_nothing_is_sent_before_it_is_on_record(local_env_factory) -> None:
    # Given a study that requires consent, and a participant without it on record (enrolled before
    # the setting, or by texting in)
    llm = ScriptedLLM([ScriptedLLM.text("Coach reply one"), ScriptedLLM.text("Coach reply two")])
    env = local_env_factory(llm=llm, consent_required=True)
    now = env.clock.now()
    person = ConversationParticipant(
        id="p_" + "a" * 32, phone_number=PHONE, enrolled_at=now, created_at=now, updated_at=now
    )
    env.app.repo.create(person, FlowState(participant_id=person.id, state_data=new_state_data()))

    # When they write
    text_in(env, "hello", "SM-no-consent")
    env.drain()

    # Then the message is recorded but nothing is sent: the reply is skipped, for that reason
    assert env.messages(person.id) == []
    history = env.api("GET", f"{BASE}/{person.id}/history", query={"include_audit": "true"}).body["result"]
    replies = [m for m in history["messages"] if m["direction"] == "outbound"]
    assert [(m["content"], m["delivery"]["status"], m["delivery"]["reason"]) for m in replies] == [
        ("Coach reply one", "skipped", "no consent on record")
    ]

    # When their consent is recorded and they write again
    assert env.api("PUT", f"{BASE}/{person.id}", json_body={"consent": CONSENT}).status == 200
    text_in(env, "hello again", "SM-consented")
    env.drain()

    # Then the reply goes out
    assert [m.body for m in env.messages(person.id)] == ["Coach reply two"]


def test_imported_participants_carry_the_method_imported_at_their_enrolment(tmp_path: Path, local_env_factory) -> None:
    from promptpipe.adapters.original_db import read_sqlite
    from promptpipe.usecases.import_participants import import_participants
    from tests.integration.test_import import ACTIVE_ID, build_original

    env = local_env_factory()
    originals = read_sqlite(str(build_original(tmp_path / "original.db")))
    import_participants(env.app, originals, default_timezone="America/Toronto")
    imported = env.app.repo.get(ACTIVE_ID)
    assert imported.consent is not None
    assert (imported.consent.method, imported.consent.version) == ("imported", "unrecorded")
    assert imported.consent.at == imported.enrolled_at


def test_a_new_consent_supersedes_a_withdrawal_and_a_repeated_withdrawal_keeps_the_first(local_env_factory) -> None:
    env = local_env_factory()
    pid = env.api("POST", BASE, json_body={"phone_number": PHONE, "consent": CONSENT}).body["result"]["id"]
    assert env.api("PUT", f"{BASE}/{pid}", json_body={"status": "withdrawn"}).status == 200
    first = participant(env, pid)["withdrawal"]
    env.clock.advance(timedelta(days=1))
    assert env.api("PUT", f"{BASE}/{pid}", json_body={"status": "withdrawn"}).status == 200
    assert participant(env, pid)["withdrawal"] == first

    again = {"at": "2026-03-10T10:00:00Z", "version": "v3", "method": "written"}
    assert env.api("PUT", f"{BASE}/{pid}", json_body={"status": "active", "consent": again}).status == 200
    stored = participant(env, pid)
    assert (stored["status"], stored["consent"], stored["withdrawal"]) == ("active", again, None)


def test_a_consent_time_outside_this_era_is_refused_and_a_naive_one_is_utc(local_env_factory) -> None:
    env = local_env_factory()
    far = {**CONSENT, "at": "0013-01-16T14:47:00Z"}
    refused = env.api("POST", BASE, json_body={"phone_number": PHONE, "consent": far})
    assert refused.status == 400 and env.api("GET", BASE).body["result"]["participants"] == []
    naive = {**CONSENT, "at": "2026-03-01T15:30:00"}
    created = env.api("POST", BASE, json_body={"phone_number": PHONE, "consent": naive})
    assert created.status == 201
    assert participant(env, created.body["result"]["id"])["consent"]["at"] == "2026-03-01T15:30:00Z"
