"""Graceful endings as a property (docs/offline-coach.md, "Never claiming what did not happen"): whatever
the reader made of a message — gibberish, emoji, numbers, another language (German, Tagalog), a very
long run-on, or a real answer among them — while the intake lasts the coach's last reply to it ends with a
question that moves on, and no reply states a time or a state the stored state contradicts (the
corpus's own check, ``scripts/corpus/claims.py``, in English, Spanish and French)."""

from __future__ import annotations

from datetime import timedelta
from zoneinfo import ZoneInfo

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from promptpipe.adapters.offline_coach import OfflineCoach
from promptpipe.models.participant import ParticipantStatus
from promptpipe.models.state import StateData, SubState
from scripts.corpus.claims import asks_at_the_end, contradicted
from tests.support import memory_harness, turn

ODD = [
    "asdkjh qwe zzz",
    "lkjlkj",
    "🙃🙃🙃",
    "🤷‍♀️",
    "💯🔥",
    "12345",
    "0",
    "3.14159",
    "+1 (555) 010-0199",
    "Ich möchte jeden Morgen spazieren gehen",
    "Wann schickst du mir die Nachrichten?",
    "Gusto kong maglakad tuwing umaga",
    "Salamat po, sige",
    "ano ito?",
    "ok so like i was thinking maybe i could try to walk more but honestly my schedule is all over the place "
    "because of work and the kids and i dont really know what time would be good maybe in the morning or "
    "maybe at night idk what do you think " * 4,
    "?",
    "...",
    "lol",
    "no",
    "yes",
    "maybe",
    "idk",
    "hmm what",
    '=HYPERLINK("http://x","Done")',
    "<script>alert(1)</script>",
    "NULL",
    "ＦＵＬＬ ＷＩＤＴＨ",
]
REAL = [
    "I want to walk more",
    "quiero leer más",
    "je veux méditer",
    "to have more energy",
    "para dormir mejor",
    "8am",
    "a las 9 de la noche",
    "19h",
    "after breakfast",
    "después de cenar",
    "après le café",
    "sure",
    "sí",
    "oui",
]

messages = st.lists(st.sampled_from(ODD + REAL), min_size=1, max_size=8)


def _schedules(h: object, participant_id: str) -> tuple[str, ...]:
    data = StateData(h.store.flows[participant_id].state_data)  # type: ignore[attr-defined]
    return tuple(sorted(s.fixed_time or f"{s.random_start_time}-{s.random_end_time}" for s in data.schedules()))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
@given(said=messages)
def test_the_intake_ends_each_turn_on_a_question_and_claims_nothing_the_state_denies(said: list[str]) -> None:
    h = memory_harness(OfflineCoach())
    participant = h.enroll("+14155550177")
    zone = ZoneInfo(participant.timezone or "UTC")
    for text in said:
        h.clock.advance(timedelta(minutes=20))  # as people text: the engine's burst budget is not the point
        before = len(h.outbox.messages(participant.id))
        local_time = h.clock.now().astimezone(zone)
        turn(h, participant, text)
        stored = h.store.participants[participant.id]
        replies = [m.body for m in h.outbox.messages(participant.id)[before:]]
        schedules = _schedules(h, participant.id)
        for reply in replies:
            assert not contradicted(reply, schedules_after=schedules, local_time=local_time), (text, reply, schedules)
        data = StateData(h.store.flows[participant.id].state_data)
        if stored.status is not ParticipantStatus.ACTIVE or data.sub_state is not SubState.INTAKE:
            continue  # handed over to the daily prompts (or held for a person): the intake has ended
        assert replies, text
        assert asks_at_the_end(replies[-1]), (text, replies[-1])
