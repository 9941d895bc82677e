"""The operator's state override over HTTP: the facts of a participant handed to a person, given in
the same call that releases the hold (docs/controller.md, "Hand-offs that resume")."""

from __future__ import annotations

from datetime import UTC, datetime

from promptpipe.local.environment import LocalEnvironment, local_settings

BASE = "/conversation/participants"


def test_the_override_saves_the_facts_and_the_controller_records_them() -> None:
    settings = local_settings(offline_coach=True, openai_api_key=None)
    with LocalEnvironment(start=datetime(2026, 3, 2, 13, 0, tzinfo=UTC), settings=settings) as env:
        pid = env.api("POST", BASE, json_body={"phone_number": "+14165550142"}).body["result"]["id"]
        body = {
            "sub_state": "INTAKE",
            "profile": {"habit_domain": "a short walk", "prompt_anchor": "after lunch"},
            "reason": "they told me on the phone",
        }
        answer = env.api("POST", f"{BASE}/{pid}/state", json_body=body)
        assert answer.status == 200
        state = env.api("GET", f"{BASE}/{pid}/state").body["result"]
        assert (state["profile"]["habit_domain"], state["profile"]["prompt_anchor"]) == ("a short walk", "after lunch")
        assert state["controller"] is not None and {"habit", "anchor"} <= set(state["controller"]["facts"])
        history = env.api("GET", f"{BASE}/{pid}/history").body["result"]["messages"]
        assert any("profile=habit_domain,prompt_anchor" in m["content"] for m in history if m["kind"] == "override")

        for bad in ({"habit_domain": ""}, {"favourite_colour": "blue"}):
            refused = env.api("POST", f"{BASE}/{pid}/state", json_body={"profile": bad, "reason": "x"})
            assert refused.status == 400, bad
