"""Requests to the offline coach as the flow builds them, for its unit tests: an intake or feedback turn
after a given reply of the coach, the tool results fed back (``then``), and the calls a response makes."""

from __future__ import annotations

import json
from typing import Any

from promptpipe.adapters.offline_coach import OfflineCoach
from promptpipe.flow.context import feedback_context, intake_context
from promptpipe.flow.tools import profile_save, prompt_generator, scheduler, state_transition
from promptpipe.models.llm import ChatMessage, ChatRequest, ChatResponse, ToolDefinition
from promptpipe.models.profile import UserProfile

BACKGROUND = "Name: Maria\nGender: \nEthnicity: \nBackground: "
ALL_TOOLS = [
    state_transition.StateTransitionTool().definition,
    profile_save.ProfileSaveTool().definition,
    scheduler.definition(10),
    prompt_generator.PromptGeneratorTool().definition,
]
FEEDBACK_TOOLS = ALL_TOOLS[:3]
ASK_MOTIVATION = "Walking — great choice. Why does walking matter to you? What would it give you?"
ASK_TIME = "That's a great reason. What time of day would you like your daily prompt? For example 8am or 7:30pm."
ASK_ANCHOR = (
    "9am works. What's something you already do every day that we can attach it to — like your morning "
    "coffee or brushing your teeth?"
)
WALKING = UserProfile(habit_domain="walking", motivational_frame="more energy")
READY = WALKING.model_copy(update={"preferred_time": "08:30", "prompt_anchor": "after breakfast"})
PROMPT = "After breakfast, try 1 minute of walking — it helps you get more energy."
OFFER = f"Here's your first one-minute habit to try: “{PROMPT}” Shall I send you one like it every day around 8:30am?"
SUMMARY = (
    f"Here's your first one-minute habit to try: “{PROMPT} Would that feel doable?” I'll send you a fresh "
    "prompt every day around 8:30am — the first one arrives tomorrow. Reply anytime to tell me how it went!"
)
LISTED_8PM = "Active daily schedules:\n1. every day at 19:50 (America/Toronto), 10 min before 20:00 (internal id: s1)"
PRAISE = ("you did it", "nice work", "well done", "great job")


def intake(user: str, profile: UserProfile, last: str, *, steer: str = "", tools: Any = None) -> ChatRequest:
    messages = [
        ChatMessage(role="system", content="intake system prompt"),
        ChatMessage(role="system", content=intake_context(profile, BACKGROUND)),
    ]
    if steer:
        messages.append(ChatMessage(role="system", content=f"FLOW CONTROLLER:\n- pursue: {steer}"))
    messages += [ChatMessage(role="assistant", content=last), ChatMessage(role="user", content=user)]
    return ChatRequest(purpose="intake", messages=messages, tools=ALL_TOOLS if tools is None else tools)


def feedback(
    user: str, last: str, *, delivered: int = 1, replied: bool = False, tools: list[ToolDefinition] | None = None
) -> ChatRequest:
    profile = READY.model_copy(update={"total_prompts": delivered, "success_count": 0})
    messages = [
        ChatMessage(role="system", content="feedback system prompt"),
        ChatMessage(role="system", content=feedback_context(profile, PROMPT, replied, BACKGROUND)),
        ChatMessage(role="assistant", content=last),
        ChatMessage(role="user", content=user),
    ]
    return ChatRequest(purpose="feedback", messages=messages, tools=FEEDBACK_TOOLS if tools is None else tools)


def then(request: ChatRequest, response: ChatResponse, *results: str) -> ChatRequest:
    assert len(results) == len(response.tool_calls)
    messages = [*request.messages, ChatMessage(role="assistant", content=None, tool_calls=response.tool_calls)]
    pairs = zip(response.tool_calls, results, strict=True)
    messages += [ChatMessage(role="tool", tool_call_id=c.id, content=r) for c, r in pairs]
    return request.model_copy(update={"messages": messages})


def calls(response: ChatResponse) -> list[tuple[str, dict[str, Any]]]:
    return [(c.name, json.loads(c.arguments)) for c in response.tool_calls]


def text_of(request: ChatRequest) -> str:
    response = OfflineCoach().complete(request)
    assert response.tool_calls == [], calls(response)
    return response.content or ""
