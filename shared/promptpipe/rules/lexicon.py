"""The words several readers of a message share, named once.

Each set is a piece of a regular expression (``a|b|c``) on the shared normal form (lower case, accents
folded: ``rules/normalise.py``), for a reader to place in its own pattern: ``rf"^(?:{THANKS})\\b"``. A set
says what the words mean; the pattern around it says how the reader uses them. A word only one reader
uses stays in that reader. Pure: no imports.
"""

from __future__ import annotations

__all__ = [
    "INSTEAD_OF",
    "LAUGHS",
    "PLEASE",
    "SHRUGS",
    "STILL_TO_DO_EN",
    "THANKS",
    "THE_MESSAGES",
    "TIME_CHANGE",
    "WEEKDAYS_EN",
    "WEEKDAYS_ES",
    "WEEKDAYS_FR",
]

# Thanks as typed in English: beside a report, a yes or a filler it adds nothing to what is said.
THANKS = r"thanks?|thank you|thx|ty"

# Laughter typed as a word ("lol", "hahaha", "jajaja"): tone around an answer, never the answer.
LAUGHS = r"lol|haha+|jaja+"

# Not knowing, said ("idk", "no idea", "ni idea", "je sais pas"): no answer, wherever the words stand.
SHRUGS = (
    r"not sure|unsure|idk|i dunno|dunno|i don'?t know|no idea|no clue|no se|ni idea|no lo se|no tengo idea|"
    r"pues no se|je (?:ne )?sais pas|j'sais pas|aucune idee"
)

# What is left for something else ("at 5:30 instead of in the morning", "en vez de", "au lieu du matin").
INSTEAD_OF = r"instead of|rather than|en vez de|en lugar de|au lieu du?|au lieu de|plutot que"

# A change of time named as a thing ("time change pls", "un cambio de horario").
TIME_CHANGE = r"(?:time|schedule) change|cambio de (?:hora|horario)"

# Something still to do, in English ("gotta", "let me", "i'll"): before a verb of thinking it over, the
# answer is put off ("gotta think", "let me check"), not given.
STILL_TO_DO_EN = r"gotta|got to|have to|need to|lemme|let me|i'?ll|i will"

# The daily messages named as what a request is about ("no more texts", "hold the reminders").
THE_MESSAGES = r"texts?|messages?|reminders?|prompts?"

# Please in the three languages: it makes a day-part or a way said alone an ask ("evenings pls").
PLEASE = r"pls|plz|please|porfa|por favor|stp|svp"

# The days of the week, Monday first, in each language (accents folded).
WEEKDAYS_EN = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
WEEKDAYS_ES = ("lunes", "martes", "miercoles", "jueves", "viernes", "sabado", "domingo")
WEEKDAYS_FR = ("lundi", "mardi", "mercredi", "jeudi", "vendredi", "samedi", "dimanche")
