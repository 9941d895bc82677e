"""The offline coach's parity figures (docs/offline-coach.md, "Parity with the corpus"): false praise
is counted from what the coach replied, the delivered prompts the request showed and the corpus's
reading of the message."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from promptpipe.models.llm import ChatMessage, ChatRequest, ChatResponse
from scripts.corpus.model import Call, Conversation, Expected, Turn
from scripts.corpus.offline import false_praise, figures_of

DONE_SAVE = Call(tool="save_user_profile", args={"last_successful_prompt": "{last_prompt}"})


def observed(reply: str, delivered: int | None) -> Any:
    context = (
        "INTAKE CONVERSATION CONTEXT:"
        if delivered is None
        else (f"FEEDBACK TRACKING CONTEXT:\n- prompts completed: 0 of {delivered} delivered")
    )
    request = ChatRequest(
        purpose="intake" if delivered is None else "feedback",
        messages=[ChatMessage(role="system", content=context), ChatMessage(role="user", content="yes")],
    )
    return SimpleNamespace(
        purpose=request.purpose, request=request, response=ChatResponse(content=reply, model="offline-coach")
    )


def outcome(say: str, calls: list[Call], reply: str, delivered: int | None, *, completed: bool = True) -> Any:
    conversation = Conversation(
        id="c",
        title="one turn",
        turns=[Turn(say=say, calls=calls, reply="ok")],
        expect=Expected(sub_state="FEEDBACK"),
    )
    turn = SimpleNamespace(
        index=0,
        say=say,
        observations=[observed(reply, delivered)],
        schedules_after=(),
        local_time=None,
        delivered_before=1,
    )
    return SimpleNamespace(
        conversation=conversation, turns=[turn], completed=completed, end_problems=[] if completed else ["x"]
    )


def test_praise_before_any_delivered_prompt_is_false() -> None:
    found = false_praise(outcome("yes", [], "Nice work — you did it!", delivered=0))
    assert found == ["c turn 1 'yes': no daily prompt delivered yet: 'Nice work — you did it!'"]
    assert false_praise(outcome("yes", [], "Nice work — you did it!", delivered=None))  # still in intake


def test_praise_for_a_message_that_did_not_say_done_is_false() -> None:
    found = false_praise(outcome("ok", [], "Great job!", delivered=2))
    assert found == ["c turn 1 'ok': the message did not say done: 'Great job!'"]


def test_praise_for_a_done_report_after_a_delivered_prompt_is_not_counted() -> None:
    assert false_praise(outcome("1", [DONE_SAVE], "Nice work — you did it!", delivered=1)) == []
    # A typed outcome recorded by role (the held-out split): done is done, not_done is not
    recorded = Call(tool="record_outcome", args={"outcome": "done"})
    assert false_praise(outcome("listo", [recorded], "Great job!", delivered=1)) == []
    missed = Call(tool="record_outcome", args={"outcome": "not_done"})
    assert false_praise(outcome("nah", [missed], "Great job!", delivered=1))
    assert false_praise(outcome("yes", [], "Great! Your first prompt comes tomorrow.", delivered=0)) == []


def test_figures_split_intake_from_the_feedback_week() -> None:
    figures, problems = figures_of([outcome("yes", [], "Well done!", delivered=0, completed=False)])
    assert (figures.intake_completed, figures.intake_conversations, figures.false_praise) == (0, 1, 1)
    assert problems[0] == "c: end: x"


def test_a_marked_non_fact_saved_into_the_profile_is_counted() -> None:
    from promptpipe.models.llm import ToolCall
    from scripts.corpus.facts import is_echo, non_facts_saved

    assert is_echo("how did u get my", "how did u get my number") and is_echo("Quién eres", "quién eres?")
    assert not is_echo("drinking more water", "who is this?") and not is_echo("", "hi")
    conversation = Conversation(
        id="c",
        title="a question read as the habit",
        turns=[Turn(say="who is this?", reply="ok", not_a_fact="question"), Turn(say="water", reply="ok")],
        expect=Expected(sub_state="INTAKE"),
    )
    save = ToolCall(id="1", name="save_user_profile", arguments='{"habit_domain": "who is this"}')
    echoed = SimpleNamespace(response=ChatResponse(tool_calls=[save], model="offline-coach"))
    played = SimpleNamespace(
        conversation=conversation,
        turns=[SimpleNamespace(index=0, observations=[echoed]), SimpleNamespace(index=1, observations=[])],
        state={"profile": {"habit_domain": "who is this", "motivational_frame": "water"}},
    )
    assert non_facts_saved(played) == ["c turn 1 'who is this?' (question): saved as habit_domain: 'who is this'"]
    played.turns[0].observations = []
    assert non_facts_saved(played) == [
        "c turn 1 'who is this?' (question): in the profile at the end as habit_domain: 'who is this'"
    ]


def test_a_claim_the_state_contradicts_is_found() -> None:
    from datetime import datetime

    from scripts.corpus.claims import claim_problems, contradicted, ends_gracefully, statements

    at_7 = datetime(2026, 3, 2, 19, 0)
    assert statements("Shall I send you one every day around 8am? Done. “At 9pm, breathe.”") == ["Done."]
    assert (
        contradicted("Your daily prompt comes every day around 8pm.", schedules_after=("20:00",), local_time=at_7) == []
    )
    assert contradicted("It now comes around 8pm.", schedules_after=("21:00",), local_time=at_7) == [
        "says the prompt comes around 20:00; schedules: ['21:00']"
    ]
    late = contradicted("Your first prompt comes today around 6pm.", schedules_after=("18:00",), local_time=at_7)
    assert late == ["says today around 18:00, but it is 19:00 there"]
    assert contradicted(
        "Done — your daily prompts are paused until Monday.", schedules_after=("08:00",), local_time=at_7
    )
    assert contradicted("Shall I send you one every day around 9am?", schedules_after=(), local_time=at_7) == []

    def played(reply: str, delivered: int, *, completed: bool = False) -> Any:
        observation = SimpleNamespace(purpose="feedback", response=ChatResponse(content=reply, model="offline-coach"))
        turn = SimpleNamespace(
            index=0,
            say="ok",
            observations=[observation],
            schedules_after=(),
            local_time=at_7,
            delivered_before=delivered,
        )
        return SimpleNamespace(conversation=SimpleNamespace(id="c"), turns=[turn], completed=completed)

    assert claim_problems(played("Thanks! How did today's habit go?", 0)) == [
        "c turn 1 'ok': asks how it went before any prompt was delivered: \"Thanks! How did today's habit go?\""
    ]
    assert claim_problems(played("Thanks! How did today's habit go?", 1)) == []
    assert ends_gracefully(played("What time suits you?", 1)) and not ends_gracefully(played("Bye.", 1))
    assert ends_gracefully(played("Bye.", 1, completed=True))


def test_a_schedule_moved_by_a_message_that_asked_nothing_is_found() -> None:
    from scripts.corpus.claims import claim_problems

    conversation = Conversation(
        id="c",
        title="an errand",
        turns=[Turn(say="yes", reply="ok"), Turn(say="need to stop at the pharmacy first", reply="ok")],
        expect=Expected(sub_state="FEEDBACK"),
    )

    def turn(index: int, after: tuple[str, ...]) -> Any:
        say = conversation.turns[index].say
        return SimpleNamespace(
            index=index, say=say, observations=[], schedules_after=after, local_time=None, delivered_before=1
        )

    played = SimpleNamespace(conversation=conversation, turns=[turn(0, ("08:00",)), turn(1, ())])
    assert claim_problems(played) == [
        "c turn 2 'need to stop at the pharmacy first': the daily schedule ['08:00'] became []"
    ]
    played.turns[1].schedules_after = ("08:00",)
    assert claim_problems(played) == []
