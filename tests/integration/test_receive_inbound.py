"""Non-text inbound traffic through the real webhook handler, the queue and the worker (moto), posted
as the providers post it (tests/data/inbound_payloads.json: published payloads, sources named):
number changes, reactions, deletions, media, status callbacks and senders without a phone number."""

from __future__ import annotations

import copy
import json
from datetime import timedelta
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

from promptpipe.adapters.scripted_llm import ScriptedLLM
from promptpipe.local.environment import ApiResponse, LocalEnvironment
from promptpipe.local.signing import meta_signature, twilio_form, twilio_signature
from promptpipe.usecases.receive_inbound import MEDIA_NOTICE
from tests.support import enroll_over_api

CORPUS = json.loads((Path(__file__).parent.parent / "data" / "inbound_payloads.json").read_text())
BASE = "/conversation/participants"
OLD = "+14155550100"
NEW = "+14155550177"
TWILIO_URL = "https://localhost/webhooks/twilio"
EMPTY_TWIML = '<?xml version="1.0" encoding="UTF-8"?><Response></Response>'


def meta(name: str, **message_updates: Any) -> dict[str, Any]:
    payload = copy.deepcopy(CORPUS["meta"][name]["payload"])
    payload["entry"][0]["changes"][0]["value"].get("messages", [{}])[0].update(message_updates)
    return payload


def post_meta(env: LocalEnvironment, payload: dict[str, Any]) -> ApiResponse:
    raw = json.dumps(payload, separators=(",", ":")).encode()
    return env.api(
        "POST",
        "/webhooks/whatsapp",
        body=raw.decode(),
        headers={
            "content-type": "application/json",
            "x-hub-signature-256": meta_signature(raw, env.settings.whatsapp_app_secret),
        },
    )


def post_twilio(env: LocalEnvironment, form: str, **updates: str) -> ApiResponse:
    params = dict(parse_qsl(form, keep_blank_values=True))
    params.update(updates)
    return env.api(
        "POST",
        "/webhooks/twilio",
        body=twilio_form(params),
        headers={
            "content-type": "application/x-www-form-urlencoded",
            "x-twilio-signature": twilio_signature(TWILIO_URL, params, env.settings.twilio_auth_token),
        },
        base64_body=True,
    )


def transcript(env: LocalEnvironment, pid: str) -> list[dict[str, Any]]:
    response = env.api("GET", f"{BASE}/{pid}/history", query={"include_audit": "true"})
    assert response.status == 200, response.body
    return response.body["result"]["messages"]


def greeted(llm: ScriptedLLM) -> ScriptedLLM:
    return llm.add(ScriptedLLM.text("Hi Alex!"))


# --- number changes -------------------------------------------------------------------------------


def test_a_number_change_moves_the_claim_and_the_next_message_from_the_new_number_is_a_turn(
    local_env_factory: Any,
) -> None:
    llm = greeted(ScriptedLLM())
    env = local_env_factory(llm=llm)
    pid = enroll_over_api(env, OLD)
    calls = llm.calls

    # When Meta reports the number change (from the old number, the new one in system.wa_id)
    response = post_meta(env, meta("system_user_changed_number"))

    # Then the participant now has the new number, no model call was made and nothing was sent
    assert response.status == 200
    assert env.api("GET", f"{BASE}/{pid}").body["result"]["phone_number"] == NEW
    assert llm.calls == calls
    assert [m.kind.value for m in env.messages(pid)] == ["greeting"]
    [change] = [e for e in transcript(env, pid) if e["kind"] == "phone_change"]
    assert change["direction"] == "system" and change["metadata"]["outcome"] == "moved"
    assert NEW not in json.dumps(change["metadata"])  # masked

    # And a message from the new number is their turn, answered at the new number
    llm.add(ScriptedLLM.text("Good to hear from you."))
    assert post_meta(env, meta("text", **{"from": "14155550177", "id": "wamid.AFTER"})).status == 200
    assert env.messages(pid)[-1].to == NEW
    assert env.messages(pid)[-1].body == "Good to hear from you."
    # And the old number no longer reaches anyone
    assert post_meta(env, meta("text", **{"id": "wamid.OLDNUMBER"})).status == 200
    assert llm.calls == calls + 1

    # And the same notice delivered again changes nothing
    assert post_meta(env, meta("system_user_changed_number")).status == 200
    assert len([e for e in transcript(env, pid) if e["kind"] == "phone_change"]) == 1


def test_a_number_change_to_a_number_another_participant_holds_changes_nothing(local_env_factory: Any) -> None:
    env = local_env_factory(llm=greeted(greeted(ScriptedLLM())))
    alex, other = enroll_over_api(env, OLD), enroll_over_api(env, NEW)

    response = post_meta(env, meta("system_user_changed_number"))

    assert response.status == 200
    assert env.api("GET", f"{BASE}/{alex}").body["result"]["phone_number"] == OLD
    assert env.api("GET", f"{BASE}/{other}").body["result"]["phone_number"] == NEW
    [change] = [e for e in transcript(env, alex) if e["kind"] == "phone_change"]
    assert change["metadata"]["outcome"] == "conflict"
    assert env.app.repo.find_id_by_phone(OLD) == alex and env.app.repo.find_id_by_phone(NEW) == other


# --- reactions, deletions, identity notices --------------------------------------------------------


def test_reactions_deletions_and_identity_notices_are_recorded_without_a_turn(local_env_factory: Any) -> None:
    llm = greeted(ScriptedLLM())
    env = local_env_factory(llm=llm)
    pid = enroll_over_api(env, OLD)
    calls, sent = llm.calls, len(env.messages(pid))

    for name in ("reaction", "reaction_removed", "revoke", "system_customer_identity_changed"):
        assert post_meta(env, meta(name)).status == 200, name

    assert llm.calls == calls and len(env.messages(pid)) == sent
    entries = [(e["kind"], e["content"], e["metadata"].get("refers_to")) for e in transcript(env, pid)]
    assert ("reaction", "👍", "wamid.PROMPT1") in entries
    assert ("reaction", "", "wamid.PROMPT1") in entries
    assert ("revoke", "", "wamid.TEXT1") in entries
    assert any(kind == "system" for kind, _, _ in entries)


# --- media ----------------------------------------------------------------------------------------


def test_media_without_text_gets_one_notice_a_day_and_no_model_call(local_env_factory: Any) -> None:
    llm = greeted(ScriptedLLM())
    env = local_env_factory(llm=llm)
    pid = enroll_over_api(env, OLD)
    calls = llm.calls

    for n, name in enumerate(("sticker", "audio", "location", "contacts", "unknown_131051")):
        assert post_meta(env, meta(name, id=f"wamid.M{n}")).status == 200

    notices = [m for m in env.messages(pid) if m.body == MEDIA_NOTICE]
    assert len(notices) == 1 and llm.calls == calls
    media = [e for e in transcript(env, pid) if e["kind"] in ("media", "unsupported")]
    assert [e["metadata"].get("attachments", [{}])[0].get("type") for e in media] == [
        "sticker",
        "audio",
        "location",
        "contacts",
        None,
    ]
    assert media[0]["metadata"]["attachments"][0]["media_id"] == "STICKER_ID"

    # The next day, one more notice
    env.advance(timedelta(days=1))
    assert post_meta(env, meta("sticker", id="wamid.NEXTDAY")).status == 200
    assert len([m for m in env.messages(pid) if m.body == MEDIA_NOTICE]) == 2


def test_media_with_a_caption_is_a_turn_on_the_caption_and_keeps_the_attachment(local_env_factory: Any) -> None:
    llm = greeted(ScriptedLLM()).add(ScriptedLLM.text("Lovely walk!"))
    env = local_env_factory(llm=llm)
    pid = enroll_over_api(env, OLD)

    assert post_meta(env, meta("image_with_caption")).status == 200

    assert llm.requests[-1].messages[-1].content == "My walk today"
    assert env.messages(pid)[-1].body == "Lovely walk!"
    kinds = [(e["kind"], e["content"]) for e in transcript(env, pid) if e["direction"] == "inbound"]
    assert ("attachments", "") in kinds and ("message", "My walk today") in kinds
    [attached] = [e for e in transcript(env, pid) if e["kind"] == "attachments"]
    assert attached["metadata"]["attachments"] == [
        {"type": "image", "media_id": "1203432151215", "mime_type": "image/jpeg"}
    ]


def test_twilio_whatsapp_location_is_not_an_empty_turn_and_an_mms_keeps_its_media(local_env_factory: Any) -> None:
    llm = greeted(ScriptedLLM())
    env = local_env_factory(llm=llm)
    pid = enroll_over_api(env, OLD)
    calls = llm.calls

    assert post_twilio(env, CORPUS["twilio"]["whatsapp_location"]["form"]).body == EMPTY_TWIML
    assert llm.calls == calls
    assert env.messages(pid)[-1].body == MEDIA_NOTICE

    llm.add(ScriptedLLM.text("Nice one."))
    assert post_twilio(env, CORPUS["twilio"]["mms_with_text"]["form"]).status == 200
    assert llm.requests[-1].messages[-1].content == "Here is my walk"
    [attached] = [e for e in transcript(env, pid) if e["kind"] == "attachments"]
    assert attached["metadata"]["attachments"][0]["mime_type"] == "image/jpeg"


# --- status callbacks and senders without a phone number -----------------------------------------


def test_twilio_status_callbacks_are_200_and_failures_are_recorded(local_env_factory: Any) -> None:
    llm = greeted(ScriptedLLM())
    env = local_env_factory(llm=llm)
    pid = enroll_over_api(env, OLD)
    sent = len(env.messages(pid))

    for name in ("status_delivered", "status_whatsapp_delivered", "status_with_body"):
        response = post_twilio(env, CORPUS["twilio"][name]["form"])
        assert (response.status, response.body) == (200, EMPTY_TWIML), name
    assert not [e for e in transcript(env, pid) if e["kind"] == "delivery_failed"]

    for name in ("status_failed_63016", "status_undelivered_21610"):
        assert post_twilio(env, CORPUS["twilio"][name]["form"]).status == 200
    failures = [e["metadata"] for e in transcript(env, pid) if e["kind"] == "delivery_failed"]
    assert [(f["error_code"], f["status"]) for f in failures] == [("63016", "failed"), ("21610", "undelivered")]
    # No turn, no reply, no model call
    assert len(env.messages(pid)) == sent and llm.remaining == 0


def test_meta_failed_status_is_recorded(local_env_factory: Any) -> None:
    env = local_env_factory(llm=greeted(ScriptedLLM()))
    pid = enroll_over_api(env, OLD)
    assert post_meta(env, CORPUS["meta"]["status_failed"]["payload"]).status == 200
    [failure] = [e["metadata"] for e in transcript(env, pid) if e["kind"] == "delivery_failed"]
    assert (failure["provider_message_id"], failure["error_code"]) == ("wamid.OUT1", "131053")


def test_senders_without_a_phone_number_are_acknowledged_and_dropped(local_env_factory: Any) -> None:
    llm = ScriptedLLM()
    env = local_env_factory(llm=llm, auto_enroll_new_users=True)

    twilio = post_twilio(env, CORPUS["twilio"]["whatsapp_business_scoped_user_id"]["form"])
    cloud = post_meta(env, CORPUS["meta"]["business_scoped_user_id_only"]["payload"])

    assert (twilio.status, twilio.body) == (200, EMPTY_TWIML)
    assert cloud.status == 200
    assert env.api("GET", BASE).body["result"]["participants"] == []
    assert llm.calls == 0 and env.messages() == []


# --- redelivery -------------------------------------------------------------------------------------


def test_every_kind_of_event_delivered_twice_is_recorded_once(local_env_factory: Any) -> None:
    # Given a participant, and providers that deliver each webhook twice (they retry on any doubt)
    llm = greeted(ScriptedLLM()).add(ScriptedLLM.text("Lovely walk!"))
    env = local_env_factory(llm=llm)
    pid = enroll_over_api(env, OLD)
    # When a reaction, a sticker, a captioned image and a failed-delivery status each arrive twice
    for payload in (
        meta("reaction"),
        meta("sticker", id="wamid.STICKER"),
        meta("image_with_caption"),
        CORPUS["meta"]["status_failed"]["payload"],
    ):
        for _ in range(2):
            assert post_meta(env, payload).status == 200
    twilio_failure = CORPUS["twilio"]["status_failed_63016"]["form"]
    for _ in range(2):
        assert post_twilio(env, twilio_failure).status == 200
    # Then each is in the transcript once, the notice and the reply went out once, one model turn ran
    kinds = [e["kind"] for e in transcript(env, pid)]
    assert kinds.count("reaction") == 1
    assert kinds.count("media") == 1
    assert kinds.count("attachments") == 1
    assert kinds.count("delivery_failed") == 2  # the Meta failure and the Twilio one
    bodies = [m.body for m in env.messages(pid)]
    assert bodies.count(MEDIA_NOTICE) == 1 and bodies.count("Lovely walk!") == 1
    assert llm.remaining == 0
