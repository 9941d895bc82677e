"""Times as people say and type them, rewritten to the forms the offline coach's clock patterns read
(``times.py``): "9ish" -> "at 9", "half 8" -> "8:30", "quarter to 8" -> "7:45", "a las 8 y media" -> "at
8:30", "à neuf heures" -> "à 9:00", "8 or so" -> "at 8" (docs/offline-coach.md, "Times as people write
them"). Pure: ``re`` only."""

from __future__ import annotations

import re

_NUMBER_WORDS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
    "ten": 10, "eleven": 11, "twelve": 12, "una": 1, "dos": 2, "tres": 3, "cuatro": 4, "cinco": 5, "seis": 6,
    "siete": 7, "ocho": 8, "nueve": 9, "diez": 10, "once": 11, "doce": 12, "une": 1, "deux": 2, "trois": 3,
    "quatre": 4, "cinq": 5, "sept": 7, "huit": 8, "neuf": 9, "dix": 10, "onze": 11, "douze": 12,
}  # fmt: skip
_MINUTE_WORDS = {
    "thirty": 30, "fifteen": 15, "forty five": 45, "fortyfive": 45, "forty": 40, "twenty": 20, "fifty": 50,
    "ten": 10, "oh five": 5,
}  # fmt: skip
# How people say "about" before an hour in Spanish: "a las 8", "como a las 9", "a eso de las 8", "tipo 10".
_ES_ABOUT = r"(?:a|sobre|hacia|como a|como|tipo|a eso de|alrededor de|por ah[ií] de|cerca de)"
# What may follow an hour said in words: "nueve heures", "siete de la mañana", "seven in the evening".
_HOUR_FOLLOWS = (
    r"(?=\s*(?:h\b|heures?\b|et (?:demie?|quart)\b|moins\b|y (?:media|cuarto)\b|menos\b|"
    r"de la (?:ma[ñn]ana|tarde|noche)\b|du (?:matin|soir)\b|in the (?:morning|evening|afternoon)\b|at night\b|"
    r"tonight\b|o'?clock\b|[ap]\.?m\b))"
)
# A count of things, not an hour: "like ten squats", "like 10 pages" (a plural after the number).
COUNTED = (
    r"(?!\s+(?!(?:is|was|works|as|yes|always|thanks|pls|plus|cus|its|thats|this|afterwards|sometimes|despu[eé]s|antes)\b)"
    r"[a-zñé]{2,}s\b)"
)
# The words that put an hour ("at 7", "around 10 30", "like 8ish"), read by every clock pattern that needs one.
HOUR_LEAD = "at|around|about|by|like"
# The words that take back a time just said for the one that follows ("10pm wait no 10:45", "8? scratch that,
# 8:30", "a las 9, mejor dicho 9 y cuarto", "19h, non attends, 19h30"): one vocabulary for every reader of a
# correction ("no" apart: each reader says which "no" is one).
CORRECTION = (
    r"wait|nah|nope|sorry|actually|make (?:it|that)|i mean|i meant|or rather|rather|scratch that|correction|"
    r"on second thoughts?|second thoughts?|change (?:it|that) to|mejor dicho|mejor|bueno|perd[oó]n|digo|quiero decir|"
    r"o sea|me equivoqu[eé]|corrijo|uy|non|plut[oô]t|enfin|en fait|je veux dire|attends|hmm+|um+|uh+|err+|erm+|"
    r"nvm|never ?mind|jk|just kidding|kidding"
)
# A hedge said after the time ("8 or so", "las 11 más o menos", "7h environ"): the time, not a second one.
_HEDGE_AFTER = r"(?:or so|more or less|m[aá]s o menos|aprox\w*|environ|[àa] peu pr[eè]s)\b"
# Spanish minutes said after "y" ("9 y 20", "las 7 y cuarenta", "8 y cinco"): five-minute steps, as people say them.
_ES_MINUTE_WORDS = {
    "cinco": 5, "diez": 10, "quince": 15, "veinte": 20, "veinticinco": 25, "treinta": 30, "cuarenta y cinco": 45,
    "cuarenta": 40, "cincuenta y cinco": 55, "cincuenta": 50,
}  # fmt: skip
_ES_MINUTES = r"(?:[1-5][05]|0?5|(?:cuarenta|cincuenta) y (?:cinco|5)|" + "|".join(_ES_MINUTE_WORDS) + ")"
# Times as people write them, rewritten to a form the patterns below read: "9ish" → "at 9",
# "half 8" → "8:30", "quarter past 7" → "7:15", "a las 8 y media" → "at 8:30", "like six" → "at 6".
_SPOKEN: tuple[tuple[str, str], ...] = (
    (
        r"\b(?:like|at|around|about|by|for|las?|sobre las|half(?: past)?|quarter (?:past|to))\s+(NUM)\b" + COUNTED,
        "WORD",
    ),
    (r"(?<!-)(?<!forty )(?<!twenty )(?<!thirty )(?<!fifty )\b(NUM)" + _HOUR_FOLLOWS, "WORD"),  # "à neuf heures"
    (r"\b(NUM)(?=\s+(?:thirty|fifteen|forty[- ]?five|forty|twenty|fifty|ten|oh five)\b)", "WORD"),  # "seven thirty"
    (r"\b(?:noon|midday)\s*-?\s*ish\b", "at 12:00"),  # "noonish on my lunch break"
    (r"(?:^\W*|\b(?:at|around|about|by|a|al|[àa]|vers|sobre el|para el)\s+)midi\s+et quart\b", "at 12:15"),
    (
        r"(?:^\W*|\b(?:at|around|about|by|a|al|[àa]|vers|sobre el|para el)\s+)"
        r"(?:noon|midday|mediod[ií]a|midi)\s+et demie?\b",
        "at 12:30",
    ),
    # midnight said as the moment ("a medianoche", "à minuit"), not as a limit ("I scroll until midnight")
    (r"(?:^\W*|\b(?:at|around|about|a|a la|[àa]|vers|sobre la)\s+)(?:midnight|medianoche|minuit)\b", " at 0:00"),
    (
        r"\b(?:at|around|about|by|like|maybe|say|al|[àa]|vers|sobre el|para el|tipo|como al?)\s+"
        r"(?:noon|midday|mediod[ií]a|midi)\b",
        "at 12:00",
    ),
    # noon opening the message, before its routine ("noon at lunch", "midday w my sandwich"): the moment itself
    (r"^\W*(?:noon|midday)\b(?=\s+(?:at|on|with|w/?|during|after|before|when|once|while)\b)", "at 12:00"),
    (r"\b(\d{1,2}:[0-5]\d|\d{1,2})\s*([ap])\b(?!\.?m)(?!')", r"\1\2m"),  # "7:30p", "8a" (the texting forms)
    # a window's start: "between 7 and 8", "entre las 7 y las 8", "entre 7h et 8h"
    (r"\b(?:between|entre(?: las)?)\s+(\d{1,2}(?:[:.h][0-5]\d)?)h?\s+(?:and|y|et)\s+(?:las\s+)?\d{1,2}\b", r"at \1"),
    (r"(?<![:.\d])\b(\d{1,2}) and a half\b", r"\1:30"),  # "7 and a half"
    (r"(?<![:.\d])\b(\d{1,2}) (thirty|fifteen|forty[- ]?five|forty|twenty|fifty|ten|oh five)\b", "MINUTES"),
    (r"(?<![:.\d])\b(\d{1,2}) and a quarter\b", r"\1:15"),
    # an hour and its minutes apart, as voice-to-text writes them ("maybe 8 30", "a las 7 45", "8 15 pm"): after a
    # word that puts a time, at the start, or before am/pm; never a count ("like 10 15 min", "at 5 45 squats")
    (
        r"(?<![:.\d])((?:^\W*|[,.!?;…:]\s*|\b(?:at|around|about|by|like|say|maybe|probably|prob|tipo|las?|vers|sobre|no|"
        rf"{CORRECTION})\s+))"
        r"([1-9]|1[0-2]) ([0-5]\d)\b(?![:.\d])"
        r"(?!\s*(?:min\w*|hrs?\b|hours?|horas?|years?|yrs?\b|yo\b|a[nñ]os|%|x\b))" + COUNTED,
        r"\1\2:\3",
    ),
    (r"(?<![:.\d])\b([1-9]|1[0-2]) ([0-5]\d)(?=\s*[ap]\.?m\b)", r"\1:\2"),
    (r"\b(\d{1,2}[:.h][0-5]\d)\s*-?\s*ish\b", r"\1"),  # "7:15ish" is 7:15, not 15:00
    # "8 or so", "8:30 or so": a time with its hedge, not a second time after "or"
    (rf"(?<![:.\d])\b(\d{{1,2}}[:.h][0-5]\d)\s+{_HEDGE_AFTER}", r"\1"),
    (rf"(?<![:.\d])\b(\d{{1,2}})\s+{_HEDGE_AFTER}", r"at \1"),
    (r"(?<![:.\d])\b(\d{1,2})\s*-?\s*ish\b", r"at \1"),
    (r"\bquarter to (\d{1,2})\b(?!:)", "QUARTER_TO"),
    (r"\b(\d{1,2})\s*(?:h|heures?)?\s+moins (?:le )?quart\b", "QUARTER_TO"),  # "8h moins le quart"
    (r"\b(?:las )?(\d{1,2}) menos (?:cuarto|quince)\b", "QUARTER_TO"),  # "a las 8 menos cuarto"
    (r"(?<![:.\d])\b(\d{1,2})\s*(?:h|heures?)\s+et demie?\b", r"\1:30"),  # "8h et demie"
    (r"(?<![:.\d])\b(\d{1,2})\s*(?:h|heures?)\s+et quart\b", r"\1:15"),
    (r"(?<![:.\d])\b(\d{1,2})\s*heures?\b", r"\1:00"),  # "7 heures"
    (r"(?<![:.\d])\b([1-9]|1[0-2])([0-5]\d)\s*([ap]\.?m\.?)(?![a-z])", r"\1:\2\3"),  # "930 pm"
    # an hour without its colon said as a clause of its own ("730", "6 too early. 730", "1030?", "845ish")
    # (a please or a "then" may close it: "830 pls", "1015 porfa")
    (
        r"(?:^|(?<=[,.;!?…]))(\s*)([1-9]|1[0-2])([0-5]\d)(?:\s*-?\s*ish)?"
        r"(?=\s*(?:(?:pls|please|plz|porfa|por favor|then|instead|s'il te pla[iî]t)\s*)?(?:$|[,.;!?…]))",
        r"\1\2:\3",
    ),
    # "around 930", "nah make it 930", "mejor 1015", "better 845"
    (
        r"\b(at|around|about|by|like|make it|say|mejor|better|prefiero|rather|a las|plut[oô]t|instead|maybe)\s+"
        r"([1-9]|1[0-2])([0-5]\d)\b(?![:.\d])" + COUNTED,
        r"\1 \2:\3",
    ),
    # an hour without its colon correcting the time just said ("830am. no sorry 845", "7:30.. wait 745", "a las 8,
    # no, mejor 815"): the words of a correction between a time and it say it is one
    (
        r"(?<=\d)(h?\s*(?:[ap]\.?m\.?|de la (?:ma[ñn]ana|tarde|noche)|in the (?:morning|evening|afternoon)|at night|"
        rf"du (?:matin|soir))?[\s,.!…?\-–—:]*(?:\b(?:no|{CORRECTION})\b[\s,.!…?\-–—:]*)+)"
        r"([1-9]|1\d|2[0-3])([0-5]\d)\b(?![:.\d])" + COUNTED,
        r"\1\2:\3",
    ),
    # "815 right after dinner": an hour written without its colon, opening the message before its routine
    (
        r"^(\W*)([1-9]|1[0-2])([0-5]\d)(?=\s+(?:right |just )?(?:after|before|when|once|with|while|despu[eé]s|antes|"
        r"cuando|con|apr[eè]s|avant|quand|avec)\b)",
        r"\1at \2:\3",
    ),
    # an hour written without its colon, with its own day-part: "830 in the morning", "1015 de la noche"
    (
        r"(?<![:.\d])\b([1-9]|1[0-2])([0-5]\d)(?=\s+(?:in the (?:morning|evening|afternoon)|at night|tonight|"
        r"(?:de|en|por) la (?:manana|mañana|tarde|noche)|du (?:matin|soir))\b)",
        r"\1:\2",
    ),
    (r"\b(?:vers|pour|sur les|aux alentours de|[àa] partir de)\s+(\d{1,2})\b(?![:.])", r"at \1"),
    (r"(?<![:.\d])\b([01]?\d|2[0-3])h\b(?![0-5]\d)", r"\1:00"),  # "19h", "18h en rentrant"
    (r"\b(\d{1,2})\.([0-5]\d)\b(?!\s*%)", r"\1:\2"),
    (r"\bhalf (?:past )?(\d{1,2})\b(?!:)", r"\1:30"),
    (r"\bquarter past (\d{1,2})\b(?!:)", r"\1:15"),
    # "9 y 20", "las 7 y cuarenta de la tarde": an hour and its minutes (never a count: "5 y 10 minutos")
    (
        rf"(?<![:.\d])\b(\d{{1,2}}) y ({_ES_MINUTES})\b(?![:.\d])(?!\s*(?:min\w*|veces|horas?|d[ií]as|a[ñn]os)\b)"
        + COUNTED,
        "ES_MINUTES",
    ),
    # "las 11", "mejor las 10": the article says an hour (never a count: "las 2 semanas")
    (r"(?<![\w:.])las (\d{1,2})\b(?![:.\d])(?!\s*(?:veces|horas?|d[ií]as|semanas)\b)" + COUNTED, r"at \1"),
    (rf"\b{_ES_ABOUT} las (\d{{1,2}}) y media\b", r"at \1:30"),
    (rf"\b{_ES_ABOUT} las (\d{{1,2}}) y cuarto\b", r"at \1:15"),
    (r"\b(\d{1,2}) y cuarto\b", r"\1:15"),
    (r"\b(\d{1,2}) y media\b", r"\1:30"),
    (rf"\b{_ES_ABOUT} las? (\d{{1,2}})\b(?!:)", r"at \1"),
    (r"\btipo (\d{1,2})\b(?![:.\d])(?!\s*(?:veces|min|horas?|d[ií]as))", r"at \1"),  # "a la noche, tipo 10"
    (r"(?<![:\d])\b(\d{1,2}) de la (ma[ñn]ana|tarde|noche)\b", r"at \1 de la \2"),
    (r"(?<![:\d])\b(\d{1,2})\s*o'?clock\b", r"at \1"),
    (r"\b(like|make it|say) (\d{1,2})\b(?![:\d])" + COUNTED, r"\1 at \2"),  # "make it" stays: a second thought
    # a bare hour put up for judgement: "is 11 too late?", "is 9 ok?"
    (r"\bis (\d{1,2})\b(?![:.\d])(?=\s*(?:too|ok|okay|fine|good|alright|possible|better|doable)\b)", r"is at \1"),
    (r"\b(?:it|time|them|that|reminders?|prompts?|messages?|texts?) to (\d{1,2})\b(?![:.\d])", r"it at \1"),
    (
        r"(?<![:.\d])\b(\d{1,2})\s+(in the (?:morning|evening|afternoon)|at night|tonight|"
        r"(?:de|en|por) la (?:manana|mañana|tarde|noche)|du (?:matin|soir)|le (?:matin|soir)|(?:dans )?la nuit)\b",
        r"at \1 \2",
    ),
)


def spoken_times(text: str) -> str:
    """``text`` with its times rewritten to the forms the clock patterns read ("9ish" -> "at 9", "half 8"
    -> "8:30", "a las 8 y media" -> "at 8:30", "like six" -> "at 6")."""
    words = "|".join(_NUMBER_WORDS)
    for pattern, replacement in _SPOKEN:
        if replacement == "MINUTES":
            text = re.sub(
                pattern, lambda m: f"{m[1]}:{_MINUTE_WORDS[m[2].lower().replace('-', ' ')]:02d}", text, flags=re.I
            )
        elif replacement == "ES_MINUTES":
            text = re.sub(pattern, lambda m: f"{m[1]}:{_es_minutes(m[2]):02d}", text, flags=re.I)
        elif replacement == "QUARTER_TO":
            text = re.sub(pattern, lambda m: f"{(int(m[1]) - 1) % 12 or 12}:45", text, flags=re.I)
        elif replacement == "WORD":
            text = re.sub(
                pattern.replace("NUM", words),
                lambda m: m[0][: m.start(1) - m.start()] + str(_NUMBER_WORDS[m[1].lower()]),
                text,
                flags=re.I,
            )
        else:
            text = re.sub(pattern, replacement, text, flags=re.I)
    return text


def _es_minutes(said: str) -> int:
    """ "20" -> 20, "cuarenta" -> 40."""
    return int(said) if said.isdigit() else _ES_MINUTE_WORDS[re.sub(r"\b5$", "cinco", said.lower())]
