"""``TurnContext``: the facts a turn's tools are decided from (docs/pipeline.md, "Tools by context").

Plain data, so anything that plays or imitates a turn — the rules of ``promptpipe.flow.intent_rules``,
the offline coach, the corpus stand-in — reads the same facts.
"""

from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict

from promptpipe.lazy_model import LazyModel


class TurnContext(LazyModel):
    """What the coach last asked or offered, what the state says, and the participant's message.
    Built by the module from the participant's state and the flow controller's decision."""

    model_config = ConfigDict(frozen=True)

    module: Literal["intake", "feedback"]
    text: str
    last_reply: str = ""  # the coach's last message ("" when nothing was said yet)
    missing_required: tuple[str, ...] = ()  # profile fields the prompt generator still needs
    prompt_offered: bool = False  # a habit prompt was given (generate_habit_prompt ran)
    has_schedule: bool = False  # a daily schedule exists
    node: str | None = None  # the flow controller's node this turn pursues (intake)
    node_mode: str | None = None  # EXECUTE, RETRY, BROADEN or HANDOFF
    # The tools the flow names for the node, and for the steps that follow it without another
    # question (the anchor that completes the profile is followed by the first prompt).
    node_tools: tuple[str, ...] = ()
    paused: bool = False  # the controller waits for a person
    flow_complete: bool = False  # the controller's goal holds

    @property
    def asked_question(self) -> bool:
        return "?" in self.last_reply

    @property
    def schedule_offer_pending(self) -> bool:
        """A first prompt was given and no daily schedule exists: the coach offered to send it daily."""
        return self.module == "intake" and self.prompt_offered and not self.has_schedule

    @property
    def awaiting_answer(self) -> bool:
        """The coach asked or offered something: a short message is an answer to it."""
        return self.asked_question or self.schedule_offer_pending or self.node_mode == "BROADEN"
