"""Asking for a person (rules/ask_person.py): the built examples, written as people write them; the
held-out messages (tests/data/ask_person/heldout.jsonl) are scored, not gated, and never tuned against."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from promptpipe.rules.ask_person import asks_for_person

HELDOUT = Path(__file__).resolve().parents[1] / "data" / "ask_person" / "heldout.jsonl"


@pytest.mark.parametrize(
    "text",
    [
        "talk to a person",
        "TALK TO A HUMAN!!",
        "Can I speak with someone?",
        "ok thanks. can i talk to a real person tho",
        "I need a human 😩",
        "human pls",
        "ＴＡＬＫ ＴＯ ＳＯＭＥＯＮＥ",
        "could somebody call me",
        "hablar con una persona",
        "¿Puedo hablar con alguien?",
        "Quiero hablar con un humano",
    ],
)
def test_a_request_for_a_person_is_read(text: str) -> None:
    assert asks_for_person(text)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "Done! walked 9ish",
        "talked to my mom about it",
        "I'm not a people person lol",
        "talk to you later",
        "my trainer is a great person",
        "ya hablé con mi jefe",
        "soy una persona ocupada",
    ],
)
def test_a_mention_of_people_is_not_a_request(text: str) -> None:
    assert not asks_for_person(text)


def test_the_heldout_messages_are_scored_not_gated(capsys: pytest.CaptureFixture[str]) -> None:
    rows = [json.loads(line) for line in HELDOUT.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert {row["label"] for row in rows} == {"person", "none"}
    asked = [row for row in rows if row["label"] == "person"]
    other = [row for row in rows if row["label"] == "none"]
    recall = sum(asks_for_person(row["text"]) for row in asked) / len(asked)
    false_alarms = sum(asks_for_person(row["text"]) for row in other) / len(other)
    with capsys.disabled():
        print(f"\nasking for a person, held out: recall {recall:.3f}, false alarms {false_alarms:.1%}")
    assert 0 <= recall <= 1 and 0 <= false_alarms <= 1
