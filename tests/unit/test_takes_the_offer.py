"""The coach's offer taken as an instruction is a yes (docs/offline-coach.md, "A reader before an
answerer"): "just do that" to "How about 8am? Just reply yes, or tell me yours." agrees, in the three
languages; a habit or a request that starts with the same verbs is no yes."""

from __future__ import annotations

import pytest

from promptpipe.rules.message_reading import read_message


@pytest.mark.parametrize(
    "text",
    [
        "just do that",
        "ok do that",
        "go with that one",
        "lets go with that",
        "perfect, send it",
        "just start it",
        "haz eso",
        "mándalo así",
        "así está bien",
        "vale, eso",
        "fais ça",
        "va pour ça",
        "envoie-le",
    ],
)
def test_the_offer_taken_as_an_instruction_is_a_yes(text: str) -> None:
    assert read_message(text).kind == "yes"


@pytest.mark.parametrize("text", ["take a walk", "start running", "send it at 9", "use my phone less", "i do yoga"])
def test_a_habit_or_a_request_with_those_verbs_is_no_yes(text: str) -> None:
    assert read_message(text).kind != "yes"
