"""The defaults the intake takes when a participant hands a choice over ("you pick", "tú decide"), and
the field a default the coach suggested stands for (docs/offline-coach.md, "Intakes that finish")."""

from __future__ import annotations

import re
from collections.abc import Callable

from promptpipe.adapters.offline_coach.intake_words import _EASY_DEFAULTS
from promptpipe.adapters.offline_coach.phrases import clock, say
from promptpipe.adapters.offline_coach.reading import suggestion
from promptpipe.adapters.offline_coach.text import ANCHOR, DOMAIN, INTAKE_ORDER, MOTIVATION, TIME
from promptpipe.adapters.offline_coach.times import normalise_time, parse_vague_time, propose_time
from promptpipe.adapters.offline_coach.turn import Turn


class IntakeDefaults:
    """The defaults' steps; ``IntakeRules`` decides when they are taken."""

    turn: Turn
    asked: str | None
    steered: Callable[[dict[str, str]], str | None]  # IntakeRules': the field the flow's controller steers to

    def _suggested_field(self) -> str | None:
        """The field a default the coach suggested stands for ("How about “a 2-minute walk”?": the habit)."""
        offered = suggestion(self.turn.last_assistant).strip("“”")
        if not offered:
            return None
        if re.search(r"\d", offered):  # "How about 7pm?": a time, in place of any earlier one
            return TIME
        return next(
            (
                n
                for n in (DOMAIN, MOTIVATION, ANCHOR)
                if offered in (_EASY_DEFAULTS[n].strip("“”"), self._default(n).strip("“”"))
            ),
            None,
        )

    def _chosen_default(self, profile: dict[str, str]) -> dict[str, str]:
        """A sensible default for the field still open, when the participant hands the choice over: the
        time from the routine already known (else 8am), the routine from the time of day already known."""
        missing = self.asked if self.asked in INTAKE_ORDER and not profile[self.asked] else None
        missing = missing or self.steered(profile) or next((n for n in INTAKE_ORDER if not profile[n]), None)
        if missing == TIME:
            anchor = profile[ANCHOR]
            return {TIME: (propose_time(anchor) or parse_vague_time(anchor, loose=True) if anchor else None) or "08:00"}
        if missing == ANCHOR:
            time = normalise_time(profile[TIME]) if profile[TIME] else None
            hour = int(time.split(":")[0]) if time else 8
            key = (
                "default_anchor"
                if 4 <= hour < 11
                else "default_anchor_midday"
                if hour < 15
                else "default_anchor_evening"
                if hour < 21
                else "default_anchor_night"
            )
            # With no time yet, the time that goes with the routine chosen (the morning coffee: 8am): both
            # the moment and its hour are theirs to change, and the set-up need not wait for either.
            when = {} if time else {TIME: f"{hour:02d}:00"}
            return {ANCHOR: say(key, self.turn.language).strip("“”"), **when}
        if missing in (DOMAIN, MOTIVATION):
            return {missing: self._default(missing).strip("“”")}
        return {}

    def _rest_by_default(self, profile: dict[str, str]) -> dict[str, str]:
        """Every field still open with its default, in the order they are asked ("just send it")."""
        chosen: dict[str, str] = {}
        for _ in INTAKE_ORDER:
            merged = {**profile, **chosen}
            step = {name: value for name, value in self._chosen_default(merged).items() if not merged.get(name)}
            if not step:
                break
            chosen |= step
        return chosen

    def _default(self, missing: str) -> str:
        """The one-word default for ``missing`` in the participant's language (``_EASY_DEFAULTS``)."""
        language = self.turn.language
        if missing == TIME:
            at = clock(normalise_time(_EASY_DEFAULTS[TIME]) or "08:00", language)
            return f"a las {at}" if language == "es" else at
        key = {DOMAIN: "default_domain", MOTIVATION: "default_motivation", ANCHOR: "default_anchor"}.get(missing)
        return say(key, language) if key else _EASY_DEFAULTS[missing]
