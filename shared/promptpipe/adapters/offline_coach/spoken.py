"""A message as typed with care, from one written as people text or speak it (docs/offline-coach.md,
"Intakes that finish"): a comma where a voice-to-text run-on ends one answer and starts another, and an
everyday word a thumb typed with two letters swapped put back. Pure: ``re`` only."""

from __future__ import annotations

import re

from promptpipe.adapters.offline_coach.time_forms import HOUR_LEAD

# A voice-to-text run-on says where one answer ends with a filler ("um", "eh", "euh") or an "and" before
# another answer (a time, a routine's connective, a reason's cue), where a typed message has a comma.
_SPOKEN_FILLER = re.compile(r"\s+(?:u+m+|u+h+|e+rm|h+m+|e+h+|e+u+h+|heu|este|o sea|bah)(?=\s)", re.I)
_ENDS_WITH_TIME = re.compile(
    r"\d(?:\s*(?:[ap]\.?m\.?|h|ish))?(?:\s+(?:is fine|works|is good|ok|then|i guess|probably|est[aá] bien|me va))?$",
    re.I,
)
_AND_NEXT_ANSWER = re.compile(
    r"\s+(?:and|y|e|et)(?:\s+(?:then|also|luego|tambi[eé]n|puis|aussi))?"
    r"(?=\s+(?:right |just )?(?:after|before|when|once|while|as soon as|at|around|about|like|to|for|because|"
    r"bc|cuz|so|despu[eé]s|antes|cuando|en cuanto|a las|a eso|"
    r"como a|tipo|para|porque|apr[eè]s|avant|quand|d[eè]s que|vers|pour|parce|~?\d)\b)",
    re.I,
)


# "… my back is stiff", "… me duele la espalda", "… j'ai mal au dos": how the body feels starts a clause.
_BODY = (
    r"back|neck|knees?|head|body|legs?|hips?|shoulders?|mind|brain|stomach|feet|skin|joints?|"
    r"espalda|cabeza|cuello|rodillas?|cuerpo|piernas?|dos|t[eê]te|cou|genoux|corps|jambes?"
)
_BODY_STATEMENT = re.compile(
    rf"(?<![,;.])\s+(?=(?:my|mi|mon|ma|mes) (?:{_BODY}) (?:is|are|hurts?|aches?|gets?|feels?|kills?|has been|always|"
    rf"(?:me )?duele|est[aá]|est|(?:me )?fait)\b|(?:me duele|j'ai mal) (?:la |el |les |au |[àa] la )?(?:{_BODY})\b)",
    re.I,
)
# "for my back", "because my back hurts": a word that already joins the clause to what came before.
_ABOUT_THE_BODY = re.compile(
    r"\b(?:for|with|about|of|on|in|to|because|cause|cuz|coz|bc|since|as|that|so|and|when|if|while|por|para|con|de|"
    r"porque|que|y|cuando|si|pour|avec|parce|qu'|car|et|quand)$",
    re.I,
)
# Words of an everyday vocabulary a thumb mistypes by swapping two letters ("strecth", "dinenr", "mornign").
_VOCABULARY = frozenset(
    re.findall(
        r"\S+",
        "walk walking stretch stretching stretches yoga running exercise workout sleep water reading read "
        "books meditate meditation meditating journal journaling gratitude breakfast lunch dinner coffee "
        "shower brush brushing teeth morning evening night after before when work home office school kids "
        "exercise exercising pushups situps squats stretched running swimming cycling flossing "
        "alarm wake bed caminar estirar leer meditar dormir agua desayuno comida cena trabajo después antes "
        "cuando mañana noche tarde marcher lire méditer dormir petit déjeuner dîner après avant quand matin "
        "soir travail bureau",
    )
)


# Letters next to each other on a phone's keyboard (QWERTY, AZERTY and the Spanish layout share these rows).
_ROWS = ("qwertyuiop", "asdfghjklñ", "zxcvbnm")
_NEIGHBOURS = {
    letter: {row[i - 1] for i in (at,) if i > 0} | {row[i + 1] for i in (at,) if i + 1 < len(row)}
    for row in _ROWS
    for at, letter in enumerate(row)
}


def _slips(lower: str) -> list[str]:
    """The words ``lower`` is with one slip of the thumb undone, for a word of five letters or more: a letter
    doubled or added inside it ("excercise"), one left out inside it ("streching"), or a neighbouring key hit
    after its first letter ("caminat"). Never at the word's ends for an added or missing letter, so
    "works" is not "work"."""
    if len(lower) < 5:
        return []
    letters = "abcdefghijklmnopqrstuvwxyzñ"
    dropped = [lower[:at] + lower[at + 1 :] for at in range(1, len(lower) - 1)]
    added = [lower[:at] + c + lower[at:] for at in range(1, len(lower)) for c in letters]
    hit = [lower[:at] + c + lower[at + 1 :] for at in range(1, len(lower)) for c in _NEIGHBOURS.get(lower[at], ())]
    return [*dropped, *added, *hit]


def _untyped(word: str) -> str:
    """``word``, or the everyday word it is with two neighbouring letters swapped back ("dinenr" → "dinner")
    or one slip of the thumb undone ("streching" → "stretching", "excercise" → "exercise")."""
    lower = word.lower()
    if len(word) < 4 or lower in _VOCABULARY:
        return word
    for at in range(len(word) - 1):
        swapped = lower[:at] + lower[at + 1] + lower[at] + lower[at + 2 :]
        if swapped in _VOCABULARY:
            return swapped
    meant = {w for w in _slips(lower) if w in _VOCABULARY}
    return meant.pop() if len(meant) == 1 else word  # two everyday words it could be: left as typed


# Spanish words a "de" follows ("después de", "antes de", "bajar de peso", "cerca de", "a la hora de").
_TAKES_DE = (
    r"despu[eé]s|antes|luego|cerca|lejos|hora|bajar|subir|dejar|tratar|acabar|terminar|salir|fuera|dentro|encima|"
    r"debajo|delante|detr[aá]s|adem[aá]s|rato|poco|m[aá]s|menos|ropa|lavarme|cepillarme"
)
# Connectives as people text them: "b4 work", "aftr dinner", "wen i get home", "post-workout", "pre bed".
_TEXTED_CONNECTIVES = (
    (re.compile(r"\b(?:b4|bfore|befor|bfr)\b", re.I), "before"),
    (re.compile(r"\b(?:aftr|afta|aftah|afer)\b", re.I), "after"),
    (re.compile(r"\b(?:wen|whn)\b", re.I), "when"),
    (re.compile(r"\b(?:wenever|whenevr|whenver)\b", re.I), "whenever"),
    # Spanish as texted: "despues d cenar", "antes q me duerma", "dsp del trabajo", "xq me relaja"
    # ("d" only after a word that takes "de": "vitamin d daily" stays)
    (re.compile(rf"\b((?:{_TAKES_DE}) )d(?= [a-záéíóúñ])", re.I), r"\1de"),
    (re.compile(r"(?<=[a-záéíóúñ] )q(?= [a-záéíóúñ])", re.I), "que"),
    (re.compile(r"\b(?:dsp|dsps|dps|desp)\b", re.I), "después"),
    (re.compile(r"\b(?:xq|pq|porq)\b", re.I), "porque"),
)
# "post"/"pre" before an everyday activity: the sequence it says ("post workout" is after my workout).
_ACTIVITY = r"(?:work ?outs?|work|gym|runs?|dinner|lunch|breakfast|supper|shower|bed|class|school|shift|meetings?)\b"
_PREFIXED = re.compile(rf"\b(?P<p>post|pre)(?:\s+(?=(?:the |my )?{_ACTIVITY})|-(?=[a-z]))", re.I)
# A clock time typed with no colon after a hedge ("maybe 630", "like 745", "around 1015"): "6:30".
_NO_COLON = re.compile(
    r"\b(?P<lead>maybe|like|around|about|at|@|~|probably|prob|say|approx|usually|by)\s*(?P<h>1[0-2]|0?[1-9])(?P<m>[0-5]\d)\b"
    r"(?!\s*(?:steps?|pages?|cal\w*|mg|ml|km|m\b|miles?|words?|reps?|times?|%|k\b|pounds?|lbs?|kilos?|kg|libras?|"
    r"grams?|g\b|bpm|dollars?|bucks))",
    re.I,
)
# Voice-to-text writes "ten thirty" as "10 30": after a hedge, the hour and two-digit minutes with nothing
# after them but the end, a pause or the half of the day ("around 10 30", "like 7 45 pm").
_SPACED = re.compile(
    rf"\b(?P<lead>{HOUR_LEAD}|at like|at around)\s+(?P<h>1[0-2]|0?[1-9])\s(?P<m>[0-5]\d)"
    r"(?=\s*(?:$|[,.;!?]|[ap]\.?m\b|ish\b|at night|in the (?:morning|evening)|tonight))",
    re.I,
)


def as_words(text: str) -> str:
    """``text`` with the connectives and clock times people text spelled out: "b4 work like 645" → "before
    work like 6:45", "post-workout" → "after workout", "aftr dinner" → "after dinner"."""
    for pattern, word in _TEXTED_CONNECTIVES:
        text = pattern.sub(word, text)
    text = _PREFIXED.sub(lambda m: "after " if m["p"].lower() == "post" else "before ", text)
    text = _SPACED.sub(lambda m: f"{m['lead']} {int(m['h'])}:{m['m']}", text)
    return _NO_COLON.sub(lambda m: f"{m['lead']} {int(m['h'])}:{m['m']}", text)


def with_clause_breaks(text: str) -> str:
    """``text`` as typed with care: a comma where a spoken run-on ends one answer and starts another ("7pm
    um after dinner" → "7pm, after dinner"; "yoga and to relax" → "yoga, to relax"; "stretch when i wake up
    my back is stiff" → "…, my back is stiff") and an everyday word's swapped letters put back."""
    text = as_words(re.sub(r"[^\W\d_]{4,}", lambda m: _untyped(m[0]), text))
    # A filler right after a time leaves the time's clause open ("7am um i feed the dog": its routine).
    text = _SPOKEN_FILLER.sub(lambda m: "" if _ENDS_WITH_TIME.search(text[: m.start()]) else ",", text)
    text = _AND_NEXT_ANSWER.sub(",", text)
    return _BODY_STATEMENT.sub(lambda m: m[0] if _ABOUT_THE_BODY.search(text[: m.start()]) else ", ", text)
