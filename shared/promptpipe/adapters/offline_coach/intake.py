"""The intake rules: save what the message says, then (profile complete) prompt → schedule → feedback."""

from __future__ import annotations

import re
from typing import Any

from promptpipe.adapters.offline_coach.intake_answers import parse_intake_message
from promptpipe.adapters.offline_coach.text import (
    _GREETINGS,
    _NON_ANSWERS,
    ANCHOR,
    DOMAIN,
    GENERATE,
    HOLDING_REPLY,
    INTAKE_ORDER,
    MOTIVATION,
    SAVE,
    SCHEDULER,
    TIME,
    TRANSITION,
    _clean,
    _is_hint,
)
from promptpipe.adapters.offline_coach.times import friendly_time, normalise_time
from promptpipe.adapters.offline_coach.turn import LoopCall, Turn, _error_reason, _Step


class IntakeRules:
    """Intake: save what the message says, then (profile complete) prompt → schedule → FEEDBACK."""

    def __init__(self, turn: Turn) -> None:
        self.turn = turn
        self.known = {name: turn.context.get(name, "") for name in INTAKE_ORDER}

    def profile(self) -> dict[str, str]:
        """The context block's values plus what this loop saved successfully."""
        profile = dict(self.known)
        for call in self.turn.called(SAVE):
            if call.ok:
                profile.update({k: v for k, v in call.args.items() if k in profile and isinstance(v, str) and v})
        return profile

    def expected(self) -> str | None:
        steered = self.steered(self.known)
        if steered is not None:
            return steered
        return next((name for name in INTAKE_ORDER if not self.known[name]), None)

    def steered(self, profile: dict[str, str]) -> str | None:
        """The field the flow controller says to pursue, when it names one still missing."""
        return next((f for f in self.turn.steer_fields if not self._has(f, profile)), None)

    def _has(self, name: str, profile: dict[str, str]) -> bool:
        if name in profile:
            return bool(profile[name])
        saved = any(c.ok and c.args.get(name) for c in self.turn.called(SAVE))
        return saved or bool(self.turn.context.get(name))

    def decide(self) -> tuple[_Step, str]:
        turn = self.turn
        failed = next((c for c in turn.calls if c.failed), None)
        if failed is not None:
            return self._error_reply(failed), f"intake: {failed.name} failed; telling the participant"
        if _is_hint(turn.user) and not turn.calls:
            return self._greeting(), "intake: greeting hint"
        if turn.steer_mode in ("HANDOFF", "PAUSED"):
            return HOLDING_REPLY, "intake: the flow controller is waiting for a person"
        if not turn.called(SAVE) and SAVE in turn.tools:
            learned = parse_intake_message(turn.user, self.known, self.expected())
            if learned:
                return [(SAVE, learned)], f"intake: learned {', '.join(learned)}"
        profile = self.profile()
        time = normalise_time(profile[TIME]) if profile[TIME] else None
        if profile[ANCHOR] and time and not self.steered(profile):
            return self._complete(time)
        return self._ask_next(profile), "intake: asking for the next missing field"

    def _greeting(self) -> str:
        hello = f"Hi {self.turn.name}!" if self.turn.name else "Hi there!"
        profile = self.profile()
        if profile[ANCHOR] and profile[TIME]:
            return f"{hello} Welcome back. Send me any message and I'll set up your first habit prompt."
        intro = "I'm your habit coach. Together we'll build one tiny daily habit that fits into your day."
        return f"{hello} {intro} {self._question(profile)}"

    def _complete(self, time: str) -> tuple[_Step, str]:
        turn = self.turn
        if not turn.called(GENERATE) and GENERATE in turn.tools:
            return [(GENERATE, {"delivery_mode": "immediate"})], "intake: profile complete; first prompt"
        if not turn.called(SCHEDULER, action="create") and SCHEDULER in turn.tools:
            args = {"action": "create", "type": "fixed", "fixed_time": time}
            return [(SCHEDULER, args)], "intake: daily schedule at the preferred time"
        if not turn.called(TRANSITION) and TRANSITION in turn.tools:
            args = {"target_state": "FEEDBACK", "reason": "intake complete: first prompt given, daily schedule set"}
            return [(TRANSITION, args)], "intake: done; moving to FEEDBACK"
        return self._summary(time), "intake: summarising the set-up"

    def _prompt_text(self) -> str:
        generated = next((c for c in self.turn.called(GENERATE) if c.ok), None)
        return (generated.result or "").split("\n", 1)[0].strip() if generated else ""

    def _schedule_sentence(self, time: str) -> str:
        created = next((c for c in self.turn.called(SCHEDULER, action="create") if c.ok), None)
        if created is None:
            return ""
        result = created.result or ""
        if "already exists" in result:
            return f"Your daily prompt is already set for around {friendly_time(time)}."
        when = re.search(r"arrives (today|tomorrow)", result)
        start = f" — the first one arrives {when[1]}" if when else ""
        return f"I'll send you a fresh prompt every day around {friendly_time(time)}{start}."

    def _summary(self, time: str) -> str:
        prompt = self._prompt_text()
        parts = [f"Here's your first one-minute habit to try: “{prompt}”" if prompt else "You're all set!"]
        schedule = self._schedule_sentence(time)
        if schedule:
            parts.append(schedule)
        parts.append("Reply anytime to tell me how it went!")
        return " ".join(parts)

    def _error_reply(self, failed: LoopCall) -> str:
        reason = _error_reason(failed.result)
        if failed.name == SAVE:
            return f"Sorry — I couldn't save that just now ({reason}). Could you send it again in a moment?"
        if failed.name == GENERATE:
            return (
                f"I have what I need, but I couldn't create your habit prompt just now ({reason}). "
                "Send me any message and I'll try again."
            )
        prompt = self._prompt_text()
        lead = f"Here's your first one-minute habit to try: “{prompt}” " if prompt else ""
        if failed.name == SCHEDULER:
            return (
                f"{lead}But I couldn't set up your daily prompt just now ({reason}). "
                "Send me any message and I'll try again."
            )
        return f"{lead}I couldn't finish setting things up on my side ({reason}), so I may check in again soon."

    def _ask_next(self, profile: dict[str, str]) -> str:
        saved = next((c for c in self.turn.called(SAVE) if c.ok), None)
        ack = self._acknowledge(saved.args if saved else {})
        said = _clean(self.turn.user).lower()
        if not ack and said in _GREETINGS:
            ack = "Hi!"
        elif not ack and any(said.startswith(n) for n in _NON_ANSWERS):
            ack = "No problem — small and simple is perfect."
        elif not ack and self.expected() == TIME and said:
            ack = "Sorry, I didn't catch a time there."
        return f"{ack} {self._question(profile)}".strip()

    @staticmethod
    def _acknowledge(saved: dict[str, Any]) -> str:
        parts: list[str] = []
        if saved.get(DOMAIN):
            parts.append(f"{str(saved[DOMAIN]).capitalize()} — great choice.")
        if saved.get(MOTIVATION):
            parts.append("That's a great reason.")
        if saved.get(TIME):
            parts.append(f"{friendly_time(str(saved[TIME]))} works.")
        if saved.get(ANCHOR):
            parts.append(f"Anchoring it {_clean(str(saved[ANCHOR]))} makes it easy to remember.")
        return " ".join(parts[:2])

    def _question(self, profile: dict[str, str]) -> str:
        missing = self.steered(profile) or next((name for name in INTAKE_ORDER if not profile[name]), None)
        if missing == DOMAIN:
            return (
                "What's one small habit you'd like to build — maybe moving more, sleeping better, "
                "drinking more water or reading?"
            )
        if missing == MOTIVATION:
            return f"Why does {profile[DOMAIN] or 'this habit'} matter to you? What would it give you?"
        if missing == TIME:
            return "What time of day would you like your daily prompt? For example 8am or 7:30pm."
        if missing == ANCHOR:
            return (
                "What's something you already do every day that we can attach it to — like your "
                "morning coffee or brushing your teeth?"
            )
        if missing:  # a field the flow definition added
            return f"One more thing before we start: could you tell me your {missing.replace('_', ' ')}?"
        return "Anything else you'd like me to know before we start?"
