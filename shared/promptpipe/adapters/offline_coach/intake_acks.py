"""The intake's acknowledgements: of what a message saved ("Water, great."), and the reading of an
acknowledgement of the coach's own answer ("oh right the study. ok")."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from promptpipe.adapters.offline_coach.intake_words import _ACK_WORDS, _DECLINED_ACK, _DECLINED_VALUE, _UNDERSTOOD
from promptpipe.adapters.offline_coach.phrases import clock, say
from promptpipe.adapters.offline_coach.text import ANCHOR, DOMAIN, MOTIVATION, TIME, _clean
from promptpipe.adapters.offline_coach.turn import Turn
from promptpipe.rules.normalise import words


class IntakeAcks:
    """The acknowledgements; ``IntakeRules`` decides when they are said (its detours' ``_promised_beside``)."""

    turn: Turn
    _promised_beside: Callable[[], list[str]]

    def _acknowledge(self, saved: dict[str, Any]) -> str:
        language, parts = self.turn.language, []
        if saved.get(DOMAIN):
            parts.append(say("ack_domain", language, habit=str(saved[DOMAIN]).capitalize()))
        if saved.get(MOTIVATION) in _DECLINED_VALUE.values():
            parts.append(_DECLINED_ACK.get(language, _DECLINED_ACK["en"]))
        elif saved.get(MOTIVATION):
            parts.append(say("ack_motivation", language))
        if saved.get(TIME):
            parts.append(say("ack_time", language, time=clock(str(saved[TIME]), language)))
        if saved.get(ANCHOR):
            parts.append(say("ack_anchor", language, anchor=_clean(str(saved[ANCHOR]))))
        return " ".join([*self._promised_beside(), *parts[:2]])  # "journaling but start next week": promised

    def _understood_only(self) -> bool:
        """ "oh right the study. ok": an acknowledgement of the coach's own answer, whose other words
        only echo that answer (not its question, whose examples may be a real answer: "ok, my coffee")."""
        text, last = self.turn.user, self.turn.last_assistant
        if not _UNDERSTOOD.match(text) or not last:
            return False
        first_question = re.search(r"[^.!?…”]*\?", last)
        answered = set(words(last[: first_question.start()] if first_question else last))
        said = [w for w in words(text) if w not in _ACK_WORDS]
        return all(w in answered for w in said)
