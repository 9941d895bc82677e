"""Words the offline coach's readers share, as regex pieces (alternatives joined by ``|``, no group of their
own), so a list is spelt once and every reader that needs it says its name: the hours said in words, the
meals of French. Pure: strings only."""

from __future__ import annotations

__all__ = ["DAILY", "DAY_PARTS", "HOURS_ES", "HOURS_FR", "LAUGH", "MAYBE", "MEALS_FR", "OPINION"]

# The hours one to twelve said in words: "a las ocho", "vers huit".
HOURS_ES = "una|dos|tres|cuatro|cinco|seis|siete|ocho|nueve|diez|once|doce"
HOURS_FR = "une|deux|trois|quatre|cinq|six|sept|huit|neuf|dix|onze|douze"

# The meals in French, lunch, dinner and breakfast: "au déjeuner", "pendant le dîner", "au petit-déjeuner".
MEALS_FR = r"d[ée]jeuner|d[îi]ner|petit[- ]d[ée]jeuner"

# Small words said beside an answer, no part of it: a hedge of opinion, a maybe, laughter, every day.
OPINION = "i guess|i think"
MAYBE = "maybe|probably"
LAUGH = "lol|haha+"
DAILY = "every ?day|daily"

# The parts of the day, said by name: "in the morning", "evenings", "at night".
DAY_PARTS = "mornings?|evenings?|afternoons?|nights?"
