"""One home for the words of a request (``promptpipe.rules.intent_patterns``): the turn's rules
(``flow/intent_rules``) and the offline coach read a message alike. Each case is a message the two
used to read apart: the rules offered a tool (or answered a question) and the coach did otherwise."""

from __future__ import annotations

import json

from promptpipe.adapters.offline_coach import OfflineCoach
from promptpipe.flow.intent import SCHEDULER, TRANSITION, intent_hint
from promptpipe.flow.intent_rules import TurnContext, decide
from promptpipe.flow.modules import feedback_context, intake_context
from promptpipe.flow.tools import profile_save, prompt_generator, scheduler, state_transition
from promptpipe.models.llm import ChatMessage, ChatRequest, ChatResponse
from promptpipe.models.profile import UserProfile

BACKGROUND = "Name: Alex\nGender: \nEthnicity: \nBackground: "
TOOLS = [
    state_transition.StateTransitionTool().definition,
    profile_save.ProfileSaveTool().definition,
    scheduler.definition(10),
    prompt_generator.PromptGeneratorTool().definition,
]
DELIVERED = UserProfile(
    habit_domain="exercise",
    motivational_frame="feel more energetic",
    preferred_time="08:00",
    prompt_anchor="after my morning coffee",
    total_prompts=1,
)
LAST_PROMPT = "After your morning coffee, try 1 minute of stretching. Would that feel doable?"


def _coach(purpose: str, context: str, user: str) -> ChatResponse:
    messages = [
        ChatMessage(role="system", content=f"{purpose} system prompt"),
        ChatMessage(role="system", content=context),
        ChatMessage(role="user", content=user),
    ]
    return OfflineCoach().complete(ChatRequest(purpose=purpose, messages=messages, tools=TOOLS))  # type: ignore[arg-type]


def _feedback(user: str) -> ChatResponse:
    return _coach("feedback", feedback_context(DELIVERED, LAST_PROMPT, True, BACKGROUND), user)


def test_start_over_goes_back_to_intake_in_both() -> None:
    text = "honestly I want to start over"
    # The rules name the transition in a hint; nothing is forced (docs/pipeline.md, "Tools by context")
    intent = decide(TurnContext(module="feedback", text=text, has_schedule=True))
    assert (intent.name, TRANSITION in intent.tools, intent.tool_choice) == ("change_habit", True, "auto")
    assert TRANSITION in (intent_hint(intent) or "")
    # The coach makes it
    step = _feedback(text)
    assert [(c.name, json.loads(c.arguments)["target_state"]) for c in step.tool_calls] == [
        ("transition_state", "INTAKE")
    ]


def test_no_more_messages_in_intake_is_a_stop_request_in_both() -> None:
    text = "no more messages please"
    # The rules read a request to stop (acted on once there is a schedule to stop)
    intent = decide(TurnContext(module="intake", text=text, has_schedule=True))
    assert (intent.name, intent.tool_choice) == ("stop_messages", "auto")
    assert SCHEDULER in (intent_hint(intent) or "")
    # The coach, with nothing scheduled yet, says so rather than reading it as an answer
    step = _coach("intake", intake_context(UserProfile(habit_domain="walking"), BACKGROUND), text)
    assert step.tool_calls == []
    assert (step.content or "").startswith("Nothing is scheduled yet, so no daily messages will come.")


def test_how_do_i_move_the_reminder_is_a_question_answered_not_acted_on_in_both() -> None:
    text = "how do I move the reminder to another time?"
    intent = decide(TurnContext(module="feedback", text=text, has_schedule=True))
    assert (intent.name, SCHEDULER in intent.tools, intent.tool_choice) == ("change_time_question", True, "auto")
    step = _feedback(text)
    assert step.tool_calls == []
    # answered by asking for the new time (docs/offline-coach.md); nothing moves until it is given
    assert (step.content or "").startswith("Sure. What time would suit you better?")
