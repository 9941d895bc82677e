"""The intake's words: what it proposes (a routine, the one-word defaults), and how it knows a reason declined
("rather not say"), an acknowledgement of its own answer ("oh right the study. ok") and what a message
says beside a question it asks ("wait is this free? anyway i want to learn more")."""

from __future__ import annotations

import re

from promptpipe.adapters.offline_coach.text import ANCHOR, DOMAIN, MOTIVATION, TIME
from promptpipe.adapters.offline_coach.vocabulary import DAY_PARTS, LAUGH
from promptpipe.rules.message_reading import read_message

_DAYPART_ANCHOR = re.compile(r"^(?:after|before) (?:work|lunch|dinner|breakfast|bed|school)$", re.I)

_VAGUE_WORDS = re.compile(
    r"\b(?:in the|every|each|at|around|after|before|sometime|some time|please|maybe|i guess|probably|"
    rf"{DAY_PARTS}|lunch(?:time)?|dinner|breakfast|work|bed ?time|bed|tonight|"
    r"noon|midday)\b"
)

_OFF_TOPIC = "I can't help with that one, I'm afraid — I'm only your habit coach."

_PROPOSE_ROUTINE = {
    "en": "How about “{routine}”? Just reply yes, or tell me yours.",
    "es": "¿Qué tal “{routine}”? Responde sí, o dime la tuya.",
    "fr": "Et “{routine}” ? Répondez oui, ou dites-moi la vôtre.",
}

# "rather not say why", "skip", "prefiero no decirlo", "je préfère ne pas le dire": a reason declined.
_DECLINED = re.compile(
    r"^\W*(?:i'?d |i would )?(?:rather not(?: say| answer| tell| share)?(?: why)?|prefer not to (?:say|answer|share)|"
    r"skip(?: it| this| that| this one)?|pass|next(?: question)?|none of your business|no comment|"
    r"prefiero no (?:decirlo|decir|contestar|responder)|paso|siguiente|"
    rf"je pr[ée]f[èe]re ne pas (?:le )?dire|je passe|passons)\b[\s,.!]*(?:{LAUGH}|jaja+|thanks?|gracias|merci)?\W*$",
    re.I,
)

_DECLINED_VALUE = {"en": "(rather not say)", "es": "(prefiere no decirlo)", "fr": "(préfère ne pas le dire)"}

_DECLINED_ACK = {
    "en": "That's fine, we can skip that.",
    "es": "Sin problema, lo dejamos.",
    "fr": "Pas de souci, on passe.",
}

# "oh right the study. ok", "ah ya veo", "je vois": understood, and nothing new said.
_UNDERSTOOD = re.compile(
    r"^\W*(?:oh+|ah+|i see|got it|gotcha|makes sense|right|oh ok(?:ay)?|ah ok(?:ay)?|ya veo|ah ya|ah vale|ah bueno|"
    r"entiendo|ah d'accord|je vois|ah bon)\b",
    re.I,
)

_ACK_WORDS = frozenset(
    [
        "oh",
        "ah",
        "ahh",
        "ohh",
        "ok",
        "okay",
        "right",
        "i",
        "see",
        "got",
        "it",
        "gotcha",
        "makes",
        "sense",
        "cool",
        "alright",
        "thanks",
        "thank",
        "you",
        "ya",
        "veo",
        "vale",
        "bueno",
        "entiendo",
        "d'accord",
        "je",
        "vois",
        "bon",
        "that",
        "the",
        "a",
        "el",
        "la",
        "le",
    ]
)

_SUGGESTIONS = {ANCHOR: "“after my morning coffee”", TIME: "8am"}

# One-word defaults offered to someone who finds the questions a chore.
_EASY_DEFAULTS = {
    DOMAIN: "“a 2-minute walk”",
    MOTIVATION: "“to feel a bit better every day”",
    TIME: "8am",
    ANCHOR: "“after my morning coffee”",
}

_MOVING_ON = re.compile(
    r"^(?:(?:anyway|anyways|but|ok(?:ay)?|so|and|oh|well|en fin|bueno|pues|de todos modos|bref|enfin|sinon|bon)\b"
    r"[\s,]*)+",
    re.I,
)


def _beside_the_question(text: str) -> str:
    """What a message says beside the question it asks ("wait is this free? anyway i want to learn
    more", "i want to learn more. is this free?"), when that is more than a word or two; else ""."""
    sentences = [part.strip() for part in re.split(r"(?<=[.!?¿])\s+", text.strip()) if part.strip()]
    said = " ".join(part for part in sentences if "?" not in part and "¿" not in part)
    said = _MOVING_ON.sub("", said).strip(" ,.!")
    if len(sentences) < 2 or len(said.split()) < 2 or read_message(said).kind != "fact":
        return ""
    return said
