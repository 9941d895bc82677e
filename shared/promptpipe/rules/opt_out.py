"""Opt-out, opt-in and HELP as the law reads them (docs/compliance.md), before anything else reads
the message.

``read_opt_message`` reads one inbound text, in the normal form of ``rules/normalise.py``:

- **A keyword as the whole message** — an opt-out word (STOP, STOPALL, UNSUBSCRIBE, CANCEL, END,
  QUIT, REVOKE, OPTOUT, OPT OUT; BAJA, PARAR, ALTO … in Spanish), an opt-in word (START, UNSTOP …)
  or a help word (HELP, INFO, AYUDA …), in any case, any Unicode form, with punctuation, emoji or a
  few polite words around it ("Stop.", "ＳＴＯＰ", "stop please 🛑", "unsubscribe pls"). The
  lists are settings, per language (``DEFAULT_KEYWORDS``: English, Spanish and French: ARRÊTEZ,
  DÉSABONNER …).
- **A plain-language request to stop all messages** — the FCC's "any reasonable means": "can you
  stop sending me these", "I don't want these texts anymore", "no quiero recibir más mensajes". A
  clause of the message must *be* such a request (only greetings and polite words around it),
  so a sentence that only contains the word ("I'll stop by the gym", "trying to stop snacking")
  is nothing. The patterns are written per language here (English, Spanish, French: "arrêtez de
  m'envoyer des messages", "je ne veux plus recevoir de messages", "désabonnez-moi").
- **An unclear request** — a stop request narrowed to a time or a kind of message ("stop texting
  me at night", "stop the messages for a week", "stop sending me reminders"): ``UNCLEAR_STOP``. It
  is not an opt-out; the coach asks what the person wants.

Pure: no I/O, no settings object (the caller passes the lists).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from promptpipe.rules.normalise import fold_accents, normalise_text, words
from promptpipe.rules.opt_words import (
    DEFAULT_HELP_TEXTS,
    DEFAULT_KEYWORDS,
    DEFAULT_OPT_IN_TEXTS,
    DEFAULT_OPT_OUT_TEXTS,
    FALLBACK_LANGUAGE,
    PROVIDER_KEYWORDS,
    REQUIRED_OPT_OUT_WORDS,
    OptKeywordKind,
    OptKind,
    fixed_text,
    keyword_lists,
    primary_language,
)

__all__ = [
    "DEFAULT_HELP_TEXTS",
    "DEFAULT_KEYWORDS",
    "DEFAULT_OPT_IN_TEXTS",
    "DEFAULT_OPT_OUT_TEXTS",
    "FALLBACK_LANGUAGE",
    "PROVIDER_KEYWORDS",
    "REQUIRED_OPT_OUT_WORDS",
    "OptKeywordKind",
    "OptKind",
    "OptReading",
    "fixed_text",
    "keyword_lists",
    "primary_language",
    "provider_keyword",
    "read_opt_message",
]


@dataclass(frozen=True, slots=True)
class OptReading:
    kind: OptKind
    # The language whose word or pattern it was ("" when unknown: an unclear request's).
    language: str = ""
    # A keyword as the whole message (what a provider's own keyword filter may also have read),
    # rather than a sentence.
    keyword: bool = True


# Polite or filler words allowed around a keyword or a request ("stop please", "ok STOP now").
_FILLERS = frozenset(
    [
        "please",
        "pls",
        "plz",
        "plss",
        "plez",
        "pleaseee",
        "thanks",
        "thank",
        "you",
        "thx",
        "ty",
        "ok",
        "okay",
        "now",
        "just",
        "already",
        "por",
        "favor",
        "porfa",
        "porfavor",
        "gracias",
        "svp",
        "stp",
        "merci",
        "s'il",
        "vous",
        "plait",
        "bonjour",
        "salut",
        "ya",
        "hola",
        "hi",
        "hey",
    ]
)


_Frozen = tuple[tuple[str, tuple[tuple[str, tuple[str, ...]], ...]], ...]


def _freeze(keywords: Mapping[str, Mapping[str, Sequence[str]]]) -> _Frozen:
    return tuple(
        (kind, tuple((language, tuple(entries)) for language, entries in by_language.items()))
        for kind, by_language in keywords.items()
    )


@functools.lru_cache(maxsize=8)  # one set of lists per deployment: normalised once, not per message
def _keyword_forms(keywords: _Frozen) -> dict[tuple[str, ...], list[tuple[OptKind, str]]]:
    forms: dict[tuple[str, ...], list[tuple[OptKind, str]]] = {}
    for kind_name, by_language in keywords:
        kind = OptKind(kind_name)
        for language, entries in by_language:
            for entry in entries:
                form = words(entry)
                if form:
                    forms.setdefault(form, []).append((kind, language))
    return forms


def _strip_fillers(tokens: tuple[str, ...]) -> tuple[str, ...]:
    start, end = 0, len(tokens)
    while start < end and tokens[start] in _FILLERS:
        start += 1
    while end > start and tokens[end - 1] in _FILLERS:
        end -= 1
    return tokens[start:end]


def read_opt_message(
    text: str,
    keywords: Mapping[str, Mapping[str, Sequence[str]]] | None = None,
    *,
    preferred_language: str = "",
) -> OptReading | None:
    """What ``text`` asks for, if it is an opt-out, an opt-in, a help request or an unclear stop
    request; ``None`` for every other message. ``keywords``: per kind (``opt_out``, ``opt_in``,
    ``help``), per language, the whole-message words (``DEFAULT_KEYWORDS`` when ``None``). A word
    listed in several languages is attributed to ``preferred_language`` (the participant's) when it
    is one of them, else to the first listed."""
    tokens = _strip_fillers(words(text))
    if not tokens:
        return None
    forms = _keyword_forms(_freeze(DEFAULT_KEYWORDS if keywords is None else keywords))
    matches = forms.get(tokens)
    if matches:
        # An opt-out word wins over the same word listed as another kind: honouring it is the safe reading.
        ordered = sorted(matches, key=lambda match: (match[0] is not OptKind.OPT_OUT, match[1] != preferred_language))
        kind, language = ordered[0]
        return OptReading(kind, language, keyword=True)
    return _leading_opt_out(text, forms) or _read_request(text)


# An opt-out word that stands as the message's first sentence ("STOP. i want to end it all", "Stop!!
# I mean it") is an opt-out whatever follows: honouring it is the safe reading. Not "end" or "cancel",
# which open other sentences as often ("Cancel. I'm sick today": today's prompt, not every message).
_FIRST_SENTENCE = re.compile(r"^\s*([^.!?;\n]+)[.!?;\n]+\s*\S")
_NOT_LEADING = frozenset({"end", "cancel", "fin", "cancelar"})


def _leading_opt_out(text: str, forms: Mapping[tuple[str, ...], list[tuple[OptKind, str]]]) -> OptReading | None:
    first = _FIRST_SENTENCE.match(text)
    if first is None:
        return None
    tokens = _strip_fillers(words(first[1]))
    if not tokens or " ".join(tokens) in _NOT_LEADING:
        return None
    language = next((language for kind, language in forms.get(tokens, []) if kind is OptKind.OPT_OUT), None)
    return None if language is None else OptReading(OptKind.OPT_OUT, language, keyword=False)


# --- plain-language requests ---------------------------------------------------------------------
# Read on the normal form with accents folded, one clause at a time. A clause is a request when it
# starts (after greetings, polite words and "can you …") with one of the cores below and nothing but
# polite words follow; a core followed by a narrowing word (a time, a kind of message, a duration)
# is an unclear request.

_EN_LEAD = (
    r"(?:(?:hi|hey|hello|ok|okay|so|please|pls|plz|just|seriously|honestly|i said|again|now|"
    r"(?:can|could|would|will) (?:you|u)(?: please| pls| just)?|i (?:want|need) you to|i'd like you to|"
    r"kindly|omg|ugh|guys)\s+)*"
)
_EN_MESSAGES = r"(?:messages?|texts?|text messages?|msgs?|sms|txts?|notifications?)"
_EN_THESE = (
    r"(?:these|those|this|them|the|your|all|all the|all of (?:these|the|your|them)|all your|any more|anymore|more|any)"
)
_EN_SEND = r"(?:sending|texting|messaging|contacting|msging|txting|txtng|writing to)"
_EN_NARROW_LEAD = r"(?:at|in|on|so|during|before|after|until|till|for|every|each|this|today|tonight)"
_EN_CORES = (
    # "stop sending me these", "stop texting me", "quit messaging us"
    rf"(?:stop|quit|cease|end) {_EN_SEND} (?:me|us)(?: {_EN_THESE})?(?: {_EN_MESSAGES})?",
    # "stop sending these texts", "stop sending texts", "stop sending them"
    rf"(?:stop|quit|cease|end) {_EN_SEND} (?:(?:{_EN_THESE} )?{_EN_MESSAGES}|{_EN_THESE})",
    # "stop texting", "stop texting at night": the verb alone, a request only with nothing or a narrowing after it
    rf"(?:stop|quit|cease) {_EN_SEND}(?=$| {_EN_NARROW_LEAD}\b)",
    # "stop all messages", "stop the texts", "stop these"
    rf"(?:stop|end|cancel) (?:{_EN_THESE} )?{_EN_MESSAGES}|(?:stop|end|cancel) (?:these|them|all|everything)",
    # "don't text me anymore", "do not contact me again", "don't send me any more messages"
    rf"(?:don't|dont|do not|never|no longer) (?:text|message|contact|msg|txt|sms|send|write)(?: me| us)"
    rf"(?: {_EN_THESE})?(?: {_EN_MESSAGES})?(?: anymore| any more| again| ever again)?",
    # "I don't want these texts anymore", "I do not want to receive any more messages"
    rf"i (?:don't|dont|do not|no longer) (?:want|wish|need)(?: to (?:get|receive|be sent))?(?: {_EN_THESE})?"
    rf"(?: {_EN_MESSAGES}| these| them| this)(?: anymore| any more)?",
    # "I want to stop receiving these", "i'd like to unsubscribe", "i want to opt out"
    rf"i(?: want| would like|'d like| wanna| need) to "
    rf"(?:unsubscribe|opt out|stop (?:receiving|getting)(?: {_EN_THESE})?(?: {_EN_MESSAGES})?)",
    rf"no more {_EN_MESSAGES}",
    r"unsubscribe (?:me|us)|opt (?:me|us) out|(?:take|remove) me off (?:the|your|this) (?:list|texts)",
    r"remove me from (?:the|your|this) (?:list|texts|messages|program|study)|remove my number|leave me alone",
)
_ES_LEAD = (
    r"(?:(?:hola|oye|ok|ya|por favor|porfa|porfavor|solo|"
    r"(?:puedes|podrias|pueden|podrian|puede|podria)(?: por favor)?)\s+)*"
)
_ES_MESSAGES = r"(?:mensajes?|textos?|sms|msjs?|notificaciones)"
_ES_CORES = (
    # "ya no me mandes mensajes", "no me escribas más", "no me envíen más textos"
    rf"(?:ya )?no (?:me |nos )?(?:mandes|mandas|manden|mandan|envies|envias|envien|envian|escribas|escriban)"
    rf"(?: mas)?(?: {_ES_MESSAGES})?(?: mas)?",
    # "no quiero recibir más mensajes", "ya no quiero mensajes"
    rf"(?:ya )?no quiero (?:recibir |que me (?:manden|envien|mandes|envies|escriban) )?(?:mas |estos |sus |los )?"
    rf"{_ES_MESSAGES}(?: mas)?|(?:ya )?no quiero (?:recibir|que me escriban|que me escribas)(?: mas)?",
    # "deja de enviarme mensajes", "dejen de escribirme"
    rf"(?:deja|dejen|dejes|dejar) de (?:enviarme|mandarme|escribirme|enviar|mandar|escribir)(?: {_ES_MESSAGES})?",
    r"(?:(?:quiero|quisiera) )?(?:darme|dame|denme|me doy) de baja|(?:borrame|sacame|quitame) de (?:la|esta|su) lista",
    rf"no mas {_ES_MESSAGES}|dejame en paz|dejenme en paz",
    # "ya no quiero participar", "quiero salirme del estudio", "cancela mi suscripción"
    r"(?:ya )?no quiero (?:participar|seguir participando|seguir en (?:el|este) (?:estudio|programa))"
    r"|(?:quiero |quisiera )?(?:salirme|salir) del (?:estudio|programa)|cancela\w* (?:mi |la )?suscripcion",
    r"(?:deja|dejen) de (?:molestarme|enviarme cosas)",
)


_FR_LEAD = (
    r"(?:(?:bonjour|salut|ok|svp|stp|s'il vous plait|s'il te plait|merci de|je vous prie de|"
    r"(?:pouvez-vous|pourriez-vous|vous pouvez|tu peux|peux-tu|pourrais-tu)(?: svp)?)\s+)*"
)
_FR_MESSAGES = r"(?:(?:de |des |les |vos |ces |tes )?(?:messages?|textos?|sms|notifications?|rappels?))"
_FR_CORES = (
    # "arrêtez de m'envoyer des messages", "arrête de m'écrire", "arrêtez les messages"
    rf"(?:arret\w*|cesse\w*) (?:de (?:m'envoyer|nous envoyer|m'ecrire|m'contacter|me contacter|me texter|"
    rf"m'envoyer)(?: {_FR_MESSAGES})?|{_FR_MESSAGES}|tout)",
    # "je ne veux plus (recevoir) de messages", "je veux plus de messages"
    rf"je (?:ne )?(?:veux|souhaite|desire) plus (?:recevoir )?{_FR_MESSAGES}|je (?:ne )?(?:veux|souhaite) plus "
    rf"(?:recevoir|etre contacte\w*|participer)",
    # "ne m'envoyez plus de messages", "ne m'écrivez plus", "merci de ne plus m'envoyer de messages"
    rf"(?:ne )?(?:m'envoyez|m'envoie|m'ecrivez|m'ecris|me contactez|me contacte) plus(?: {_FR_MESSAGES})?"
    rf"|ne plus (?:m'envoyer|m'ecrire|me contacter)(?: {_FR_MESSAGES})?",
    # "désabonnez-moi", "je veux me désabonner", "retirez-moi de la liste"
    r"(?:je (?:veux|voudrais|souhaite) )?me (?:desabonner|desinscrire)|desabonnez-moi|desinscrivez-moi"
    r"|(?:retirez|enlevez|supprimez)-moi de (?:la|votre|cette) liste|laissez-moi tranquille",
    rf"plus de {_FR_MESSAGES}",
)


@functools.cache
def _requests() -> tuple[tuple[str, re.Pattern[str]], ...]:
    """The request patterns, compiled at the first plain-language reading, not at import: the
    functions that only confirm (timers, the daily prompt) import this module for its texts."""
    return (
        ("en", re.compile(rf"^{_EN_LEAD}(?:{'|'.join(_EN_CORES)})\b")),
        ("es", re.compile(rf"^{_ES_LEAD}(?:{'|'.join(_ES_CORES)})\b")),
        ("fr", re.compile(rf"^{_FR_LEAD}(?:{'|'.join(_FR_CORES)})\b")),
    )


# A word that narrows a stop request to a time, a duration or one kind of message.
_NARROWING = re.compile(
    r"\b(?:morning|mornings|night|nights|nightly|evening|evenings|afternoon|afternoons|tonight|today|tomorrow|"
    r"weekends?|weekdays?|week|weeks|days?|hours?|months?|early|late|until|till|til|before|after|during|"
    r"while|for now|for a while|for a bit|so often|so many|twice|reminders?|prompts?|"
    r"manana|mananas|noche|noches|tarde|tardes|temprano|hoy|fin de semana|semana|semanas|dias?|mes|horas?|"
    r"hasta|antes|despues|durante|mientras|por ahora|un tiempo|recordatorios?|"
    r"matin|matins|soir|soirs|nuit|nuits|aujourd'hui|demain|semaines?|jours?|mois|heures?|jusqu'a|avant|apres|"
    r"pendant|pour l'instant|quelque temps|rappels?|\d+)\b"
)
_CLAUSE = re.compile(r"[.!?;,\n]+|\s+-\s+|\s+(?:but|pero)\s+")


def _read_request(text: str) -> OptReading | None:
    clauses = [clause.strip(" '\"") for clause in _CLAUSE.split(fold_accents(normalise_text(text)))]
    clauses = [clause for clause in clauses if clause]
    found: str | None = None
    unclear = False
    for clause in clauses:
        for language, pattern in _requests():
            match = pattern.match(clause)
            if match is None:
                continue
            rest = _strip_fillers(tuple(re.findall(r"[^\W_]+(?:'[^\W_]+)*", clause[match.end() :])))
            if rest and _NARROWING.search(" ".join(rest)):
                unclear = True
            else:
                found = found or language
            break
    if found and not unclear and not any(_NARROWING.search(clause) for clause in clauses):
        return OptReading(OptKind.OPT_OUT, found, keyword=False)
    if found or unclear:
        return OptReading(OptKind.UNCLEAR_STOP, "", keyword=False)
    return None


def provider_keyword(text: str) -> str | None:
    """The kind (``opt_out``, ``opt_in``, ``help``) of a message the provider's own filter answers:
    one of ``PROVIDER_KEYWORDS`` as the whole message, surrounding spaces aside, any case."""
    word = text.strip().upper()
    return next((kind for kind, words_ in PROVIDER_KEYWORDS.items() if word in words_), None)
