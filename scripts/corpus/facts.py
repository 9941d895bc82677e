"""Non-facts saved: the corpus marks participant messages that state no fact (``not_a_fact``: a
greeting, a question, a complaint; ``scripts/corpus/model.py``), and a player that saves their words
into the profile read them as answers.

A marked message counts as saved when a string value the player saved (a ``save_user_profile`` call
made for that message, or a field of the profile at the end) is made of the message's own words: all
of the value's words are in the message, or three of them are. Words are compared in the shared
normal form (``promptpipe.rules.normalise.words``: case, accents, width and punctuation aside).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from promptpipe.rules.normalise import words

_MIN_SHARED = 3


def is_echo(value: str, message: str) -> bool:
    """``value`` is made of ``message``'s words (all of them, or at least three)."""
    value_words, message_words = set(words(value)), set(words(message))
    if not value_words:
        return False
    shared = value_words & message_words
    return shared == value_words or len(shared) >= _MIN_SHARED


def saved_values(observations: Iterable[Any]) -> list[tuple[str, str]]:
    """(field, value) of every string a ``save_user_profile`` call in these model responses saved."""
    found: list[tuple[str, str]] = []
    for observation in observations:
        response = observation.response
        for call in response.tool_calls if response is not None else ():
            if call.name != "save_user_profile":
                continue
            try:
                args = call.parsed_arguments()
            except ValueError:
                continue
            found += [(name, value) for name, value in args.items() if isinstance(value, str) and value.strip()]
    return found


def non_facts_saved(outcome: Any) -> list[str]:
    """One line per marked message of a played conversation whose words were saved."""
    found: list[str] = []
    state = getattr(outcome, "state", None) or {}
    profile = {k: v for k, v in (state.get("profile") or {}).items() if isinstance(v, str)}
    for turn_outcome in outcome.turns:
        turn = outcome.conversation.turns[turn_outcome.index]
        if turn.not_a_fact is None:
            continue
        where = f"{outcome.conversation.id} turn {turn_outcome.index + 1} {turn.say!r} ({turn.not_a_fact})"
        saved = saved_values(turn_outcome.observations)
        for name, value in saved:
            if is_echo(value, turn.say):
                found.append(f"{where}: saved as {name}: {value!r}")
        for name, value in profile.items():
            if value.strip() and is_echo(value, turn.say) and (name, value) not in saved:
                found.append(f"{where}: in the profile at the end as {name}: {value!r}")
    return found
