"""Opt-out, opt-in and HELP as the law reads them (docs/compliance.md), before anything else reads
the message.

``read_opt_message`` reads one inbound text, in the normal form of ``rules/normalise.py``:

- **A keyword as the whole message** — an opt-out word (STOP, STOPALL, UNSUBSCRIBE, CANCEL, END,
  QUIT, REVOKE, OPTOUT, OPT OUT; BAJA, PARAR, ALTO … in Spanish; PARE, SAIR … in Portuguese), an
  opt-in word (START, UNSTOP …) or a help word (HELP, INFO, AYUDA, AIDE, AJUDA), in any case, any
  Unicode form, with punctuation, emoji or a few polite words around it ("Stop.", "ＳＴＯＰ", "stop
  please 🛑", "unsubscribe pls", "unsubcribe": the long word read through a slip of the keyboard).
  The lists are settings, per language (``DEFAULT_KEYWORDS``: English, Spanish, French and
  Portuguese). A help request in a few words ("I need help", "necesito ayuda", "j'ai besoin
  d'aide", "preciso de ajuda") is a help request too.
- **A plain-language request to stop all messages** — the FCC's "any reasonable means", read by its
  structure, not by its sentence (see "plain-language requests" below): a verb of stopping with a
  verb of sending and me or the messages, a negated "send me", not wanting the messages or the
  study, removing me from the list, in English, Spanish, French and Portuguese, wherever it stands
  in a clause unless a negation or a frame before it takes it back. So "wrong number stop texting
  me", "bórrenme de la lista", "não quero mais receber mensagens" are requests, and "don't stop
  sending these!", "I'll stop by the gym", "no puedo parar de comer", "no me dejen de escribir"
  are nothing.
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
from enum import StrEnum
from typing import Literal

from promptpipe.rules.normalise import fold_accents, normalise_text, words

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

FALLBACK_LANGUAGE = "en"
OptKeywordKind = Literal["opt_out", "opt_in", "help"]


class OptKind(StrEnum):
    OPT_OUT = "opt_out"
    OPT_IN = "opt_in"
    HELP = "help"
    UNCLEAR_STOP = "unclear_stop"  # a stop request narrowed or hedged: the coach asks


@dataclass(frozen=True, slots=True)
class OptReading:
    kind: OptKind
    # The language whose word or pattern it was ("" when unknown: an unclear request's).
    language: str = ""
    # A keyword as the whole message (what a provider's own keyword filter may also have read),
    # rather than a sentence.
    keyword: bool = True


# Per kind, per language: the words that, as the whole message, opt out / opt in / ask for help.
# Written in any case and form: they are read through ``words`` as the messages are.
DEFAULT_KEYWORDS: dict[str, dict[str, list[str]]] = {
    "opt_out": {
        "en": ["stop", "stopall", "stop all", "unsubscribe", "cancel", "end", "quit", "revoke", "optout", "opt out"],
        "es": ["baja", "parar", "para", "alto", "detener", "cancelar", "basta", "darme de baja"],
        "fr": [
            "arret",
            "arreter",
            "arretez",
            "arrete",
            "desabonner",
            "desabonnement",
            "desinscrire",
            "desinscription",
            "me desabonner",
            "me desinscrire",
            "desabonnez moi",
            "desinscrivez moi",
        ],
        "pt": ["pare", "parar", "sair", "cancelar", "descadastrar", "chega"],
    },
    "opt_in": {
        "en": ["start", "unstop", "subscribe", "resume"],
        # Few words: an opt-in word from a participant who has not opted out is recorded, not answered.
        "es": ["alta", "reanudar"],
    },
    "help": {
        "en": ["help", "info"],
        "es": ["ayuda", "informacion", "info"],
        "fr": ["aide"],
        "pt": ["ajuda"],
    },
}

# Asking for help in a few words, as the whole message ("I need help", "necesito ayuda", "j'ai besoin
# d'aide", "preciso de ajuda"): answered with the help reply as the help words are.
_HELP_PHRASES: dict[tuple[str, ...], str] = {
    ("i", "need", "help"): "en",
    ("need", "help"): "en",
    ("help", "me"): "en",
    ("can", "you", "help"): "en",
    ("can", "u", "help"): "en",
    ("necesito", "ayuda"): "es",
    ("ayudame",): "es",
    ("ayudenme",): "es",
    ("j'ai", "besoin", "d'aide"): "fr",
    ("besoin", "d'aide"): "fr",
    ("aidez", "moi"): "fr",
    ("preciso", "de", "ajuda"): "pt",
    ("me", "ajuda"): "pt",
    ("me", "ajudem"): "pt",
}

# The words the FCC's revocation order names: read as opt-outs whatever the study's lists say.
REQUIRED_OPT_OUT_WORDS = ("stop", "quit", "end", "revoke", "opt out", "cancel", "unsubscribe")


def keyword_lists(
    overrides: Mapping[str, Mapping[str, Sequence[str]]] | None = None,
) -> dict[str, dict[str, list[str]]]:
    """The keyword lists in force: the defaults, each language ``overrides`` gives replaced by its
    list, and the FCC's English opt-out words kept in any case."""
    lists = {kind: {language: list(entries) for language, entries in by_language.items()}
             for kind, by_language in DEFAULT_KEYWORDS.items()}  # fmt: skip
    for kind, by_language in (overrides or {}).items():
        for language, entries in by_language.items():
            lists.setdefault(kind, {})[language] = list(entries)
    english = lists["opt_out"].setdefault(FALLBACK_LANGUAGE, [])
    english.extend(word for word in REQUIRED_OPT_OUT_WORDS if word not in english)
    return lists


# What Twilio's own filter answers on a long code (single-word messages only, any case): when the
# provider confirms, the project sends nothing of its own for these (docs/compliance.md).
PROVIDER_KEYWORDS: dict[str, frozenset[str]] = {
    "opt_out": frozenset({"STOP", "STOPALL", "UNSUBSCRIBE", "CANCEL", "END", "QUIT", "REVOKE", "OPTOUT"}),
    "opt_in": frozenset({"START", "UNSTOP", "YES"}),
    "help": frozenset({"HELP", "INFO"}),
}

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
    tokens = _strip_fillers(tuple(_mend_word(word) for word in words(text)))
    if not tokens:
        return None
    forms = _keyword_forms(_freeze(DEFAULT_KEYWORDS if keywords is None else keywords))
    matches = forms.get(tokens)
    if matches:
        # An opt-out word wins over the same word listed as another kind: honouring it is the safe reading.
        ordered = sorted(matches, key=lambda match: (match[0] is not OptKind.OPT_OUT, match[1] != preferred_language))
        kind, language = ordered[0]
        return OptReading(kind, language, keyword=True)
    if tokens in _HELP_PHRASES:
        return OptReading(OptKind.HELP, _HELP_PHRASES[tokens], keyword=False)
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


# --- plain-language requests, read by their structure ---------------------------------------------
# Read on the normal form with accents folded, one clause at a time, by the shape of a request rather
# than by its sentences. A clause asks to stop every message when it holds, in English, Spanish,
# French or Portuguese, one of:
#
# - a verb of stopping + a verb of sending + me or the messages: "stop texting me", "deja de
#   escribirme", "arrêtez de m'envoyer des messages", "pare de me mandar mensagem";
# - a negated imperative of sending to me: "don't text this number again", "no me manden más", "ne
#   m'écrivez plus", "não me mande mais mensagens";
# - not wanting + the messages or taking part: "I don't want these texts", "ya no quiero seguir en el
#   estudio", "je ne veux plus recevoir de messages", "não quero mais participar";
# - removing me from the list, the study or the program, or unsubscribing me: "take me off this
#   list", "bórrenme de la lista", "merci de me retirer de votre liste", "me tire da lista",
#   "quiero darme de baja", "wrong number" (the person is not the participant).
#
# A *floating* structure may stand anywhere in the clause — a greeting, a reason or a run-on may come
# first ("wrong number stop texting me", "hey so honestly i don't want these texts anymore") — unless
# what comes before takes it back: a negation just before it ("don't stop sending these", "no me
# dejen de escribir", "no quiero que dejen de escribirme"), a subject other than the person ("you don't
# text me enough"), or a frame that makes it no request ("can I stop the messages later?", "my sister
# said stop texting her"). The short anchored ones ("stop these", "no more texts") must open the clause
# (after greetings, polite words and "can you …"). Words after it that narrow it to a time, a duration
# or one kind of message make it unclear.

_EN_LEAD = (
    r"(?:(?:hi|hey|hello|ok|okay|so|please|pls|plz|just|seriously|honestly|i said|again|now|"
    r"(?:can|could|would|will) (?:you|u)(?: please| pls| just)?|i (?:want|need) you to|i'd like you to|"
    r"kindly|omg|ugh|guys)\s+)*"
)
_EN_MESSAGES = r"(?:messages?|texts?|text messages?|msgs?|sms|txts?|notifications?|emails?|whatsapps?)"
_EN_THESE = (
    r"(?:these|those|this|them|the|your|ur|all|all the|all of (?:these|the|your|them)|all your|any more|anymore|"
    r"more|any|ya)"
)
# A verb of sending in any form people type ("texting", "sendin", "msging").
_EN_SEND = r"(?:send|text|txt|messag|msg|contact|writ|email|call|bother|spam)\w*"
_EN_SEND_BASE = r"(?:text|txt|message|msg|contact|send|write|email|call|bother|spam)"
_EN_NARROW_LEAD = r"(?:at|in|on|so|during|before|after|until|till|for|every|each|this|today|tonight)"
_EN_STUDY = r"(?:(?:the|this|your|ur|that) )?(?:study|program|programme|list|mailing list|texting list|research)"
_EN_ANCHORED = (
    # "stop texting", "stop texting at night": the verb alone, a request only with nothing or a narrowing after it
    rf"(?:stop|quit|cease) {_EN_SEND}(?=$| {_EN_NARROW_LEAD}\b)",
    # "stop all messages", "stop the texts", "stop these"
    rf"(?:stop|end|cancel) (?:{_EN_THESE} )*{_EN_MESSAGES}|(?:stop|end|cancel) (?:these|them|all|everything)",
    rf"no more {_EN_MESSAGES}",
    # "this is the wrong number", "wrong number": the person who answers is not the participant
    r"(?:sorry )?(?:(?:this is|you have|you've got|u have|u got|you got) )?(?:the |a )?wrong (?:number|person|#)",
)
_EN_FLOATING = (
    # "stop sending me these", "plz stop sendin me these", "quit messaging this number"
    rf"(?:stop|quit|cease|halt) {_EN_SEND}(?: to)? (?:me|us|this number|my number|my phone)\b",
    # "stop sending these texts", "stop sending them"
    rf"(?:stop|quit|cease|halt) {_EN_SEND} (?:(?:{_EN_THESE} )*{_EN_MESSAGES}|these|them|those)\b",
    # "don't text me anymore", "please don't text this number again", "never contact me"
    rf"(?:don't|dont|do not|never|no longer) (?:ever )?{_EN_SEND_BASE} (?:me|us|this number|my number)\b",
    # "I don't want these texts anymore", "i no longer wish to receive messages"
    rf"i (?:really )?(?:don't|dont|do not|no longer|never) (?:want|wish|need)(?: to (?:get|receive|be sent|have))?"
    rf"(?: (?:{_EN_THESE} )*(?:{_EN_MESSAGES})| these| them)\b",
    # "I don't want to be in this study anymore", "I do not want to participate"
    rf"i (?:really )?(?:don't|dont|do not|no longer) (?:want|wish) to (?:participate|take part|continue|"
    rf"be (?:in|part of|on) {_EN_STUDY})\b",
    # "I want to stop receiving these", "i'd like to unsubscribe", "i want out of the study"
    rf"i(?: want| would like|'d like| wanna| need| wish) to (?:unsubscribe|opt out|withdraw|leave {_EN_STUDY}|"
    rf"quit {_EN_STUDY}|stop (?:receiving|getting)(?: (?:{_EN_THESE} ))*(?: ?{_EN_MESSAGES})?)\b",
    rf"\bi want out\b|count me out\b|\bleave me alone\b|\bi quit {_EN_STUDY}",
    # "unsubscribe me", "opt me out", "take me off ur mailing list", "remove me", "be removed from this list"
    r"unsubscribe (?:me|us)\b|opt (?:me|us) out\b|take (?:me|my number) off\b|"
    r"(?:remove|delete|drop|erase) (?:me|my (?:phone )?number|this number|my info)\b|"
    r"be (?:removed|taken off|unsubscribed)\b",
)

_ES_LEAD = (
    r"(?:(?:hola|oye|oiga|ok|ya|por favor|porfa|porfavor|solo|buenas|"
    r"(?:puedes|podrias|pueden|podrian|puede|podria)(?: por favor)?)\s+)*"
)
_ES_MESSAGES = (
    r"(?:(?:mas|los|las|sus|estos|esos|tus|mis|ningun|ninguno|ningunos) )*"
    r"(?:mensajes?|textos?|sms|msjs?|notificaciones|whatsapps?|nada)"
)
# "enviarme", "mandarnos", "escribir", "contactarme", "molestarme": an infinitive of sending, a pronoun on it.
_ES_SEND_INF = r"(?:enviar|mandar|escribir|contactar|textear|molestar|llamar)(?:me|nos)?"
# the negated imperative (a subjunctive): "no me mande(s/n)", "no me escribáis"
_ES_SEND_NEG = (
    r"(?:mand(?:e|es|en|eis)|envi(?:e|es|en|eis)|escrib(?:a|as|an|ais)|contact(?:e|es|en|eis)|molest(?:e|es|en|eis)|"
    r"textee?s?n?|llam(?:e|es|en))"
)
_ES_STUDY = r"(?:(?:el|este|su|la|esta|de la|del) )?(?:estudio|programa|lista)"
_ES_ANCHORED = (
    # "ya no me mandas mensajes": the present tense as people also say it
    rf"(?:ya )?no (?:me |nos )?(?:mandas|mandan|envias|envian)(?: mas)?(?: {_ES_MESSAGES})?(?: mas)?",
    rf"no mas {_ES_MESSAGES}",
    r"(?:numero )?equivocado|se equivocaron de numero|numero incorrecto",
)
_ES_FLOATING = (
    # "dejen de escribirme", "dejad de enviarme mensajes", "para de mandarme", "deje de molestarme"
    r"(?:deja|dejen|dejes|deje|dejad|dejar|para|paren|pare|parad|parar|deten|detengan|detenga|basta) "
    rf"de {_ES_SEND_INF}",
    # "no me manden más", "mijo ya no me mande mensaje", "no me escribáis más"
    rf"no (?:me|nos) (?:{_ES_SEND_NEG}\b|(?:vuelva|vuelvas|vuelvan|volvais) a {_ES_SEND_INF})",
    # "no quiero recibir más mensajes", "ya no quiero que me escriban", "ya no deseo participar"
    rf"no (?:quiero|kiero|deseo|quisiera)(?: mas)? (?:recibir|que me (?:mand|envi|escrib|contact)\w*|{_ES_MESSAGES}|"
    rf"participar|ser parte|seguir (?:participando|en {_ES_STUDY})|seguir$|continuar|estar en {_ES_STUDY})",
    # "quiero darme de baja", "me quiero dar de baja", "denme de baja"
    r"(?:dar(?:me|nos)?|denme|dame|me doy|me das|me dan|me den) de baja|me (?:quiero|quisiera) (?:dar de baja|salir)",
    # "bórrenme de la lista", "me borran de la lista", "quítenme de la lista", "eliminen mi número"
    rf"(?:borr|quit|sac|elimin|saqu)\w*(?:me|nos) de {_ES_STUDY}|me (?:borr|quit|sac|elimin)\w* de {_ES_STUDY}|"
    r"(?:borr|elimin|quit)\w* mi (?:numero|telefono|celular)",
    rf"(?:salirme|salir|me salgo) (?:de {_ES_STUDY}|del (?:estudio|programa))|cancela\w* (?:mi |la )?suscripcion",
    r"dejame en paz|dejenme en paz",
)

_FR_LEAD = (
    r"(?:(?:bonjour|salut|ok|svp|stp|s'il vous plait|s'il te plait|merci de|je vous prie de|"
    r"(?:pouvez-vous|pourriez-vous|vous pouvez|tu peux|peux-tu|pourrais-tu)(?: svp)?)\s+)*"
)
_FR_MESSAGES = r"(?:(?:de |des |les |vos |ces |tes |d'autres )*(?:messages?|textos?|sms|notifications?|rappels?))"
_FR_SEND = r"(?:m'|me |nous )?(?:envoy|ecri|contact|text|harcel|embet|spam)\w*"
_FR_STUDY = r"(?:(?:la|votre|vos|cette|ta|l'|cet) ?)?(?:liste|etude|programme)"
_FR_ANCHORED = (
    rf"(?:arret\w*|cesse\w*) (?:{_FR_MESSAGES}|tout)",
    rf"plus de {_FR_MESSAGES}",
    r"(?:c'est un )?(?:mauvais|faux) numero|erreur de numero",
)
_FR_FLOATING = (
    # "arrêtez de m'écrire", "arrête de m'envoyer des messages stp"
    rf"(?:arret\w*|cess\w*) de {_FR_SEND}",
    # "ne m'écrivez plus", "merci de ne plus m'envoyer de messages"
    rf"ne {_FR_SEND} plus|ne plus {_FR_SEND}",
    # "je ne veux plus recevoir de messages", "je veux plus de vos messages", "je ne souhaite plus participer"
    r"je (?:ne )?(?:veux|souhaite|desire|voudrais) plus (?:rien )?"
    rf"(?:recevoir|participer|etre contact\w*|{_FR_MESSAGES})",
    # "désabonnez-moi", "je veux me désinscrire", "merci de me retirer de votre liste", "supprimez mon numéro"
    rf"me (?:desabonner|desinscrire|retirer|enlever|supprimer|radier)|(?:desabonn|desinscri)\w*-moi|"
    rf"(?:retir|enlev|supprim|effac|radi)\w*-moi (?:de|du|des) {_FR_STUDY}|(?:supprim|effac|retir)\w* mon numero|"
    r"laissez-moi tranquille|fichez-moi la paix|foutez-moi la paix",
)

_PT_LEAD = r"(?:(?:oi|ola|ok|por favor|pfv|pf|bom dia|boa tarde|boa noite|so)\s+)*"
_PT_MESSAGES = (
    r"(?:(?:mais|as|essas|estas|suas|nenhuma) )*(?:mensage(?:m|ns)|sms|textos?|notificaco(?:es)?|nada|whatsapp)"
)
_PT_SEND = r"(?:mand|envi|escrev|contat|contact|text|incomod|lig)\w*"
_PT_STUDY = r"(?:(?:a|o|essa|esta|esse|este|sua|seu) )?(?:lista|estudo|programa|pesquisa)"
_PT_ANCHORED = (
    rf"(?:chega de|sem mais) {_PT_MESSAGES}",
    r"numero errado|engano|foi engano",
)
_PT_FLOATING = (
    # "pare de me mandar mensagem", "parem de me enviar mensagens", "deixe de me escrever"
    rf"(?:pare|parem|para|parar|deixe|deixem|deixa|chega) de (?:me )?{_PT_SEND}",
    # "não me mande mais mensagens", "nunca mais me escrevam"
    r"(?:nao|nunca mais) (?:me )?(?:mande|mandem|envie|enviem|escreva|escrevam|contate|contatem|incomode|incomodem|"
    r"ligue|liguem)\b",
    # "não quero mais receber mensagens", "nao quero mais participar", "não quero mais mensagens"
    rf"(?:nao|n) (?:quero|desejo)(?: mais)? (?:receber|participar|continuar|fazer parte|{_PT_MESSAGES})",
    # "me tire da lista", "me tirem dessa lista", "quero sair do estudo", "quero cancelar minha inscrição"
    rf"(?:me )?(?:tir|remov|exclu|apag|retir)\w*(?:-me)? d(?:a|o|e|essa|esta|esse|este)s? {_PT_STUDY}|"
    r"(?:apag|remov|exclu)\w* (?:o )?meu numero|"
    rf"sair d(?:a|o|essa|esta|esse|este) {_PT_STUDY}|cancelar (?:a |minha )?inscricao|descadastr\w*|"
    r"me deix(?:e|em|a) em paz",
)


def _alternation(cores: Sequence[str]) -> str:
    return "|".join(f"(?:{core})" for core in cores)


@functools.cache
def _requests() -> tuple[tuple[str, re.Pattern[str], re.Pattern[str]], ...]:
    """Per language the anchored and the floating request patterns, compiled at the first plain-language
    reading, not at import: the functions that only confirm (timers, the daily prompt) import this
    module for its texts."""
    return tuple(
        (
            language,
            re.compile(rf"^{lead}(?:{_alternation((*anchored, *floating))})\b"),
            re.compile(rf"(?<![\w'-])(?:{_alternation(floating)})(?![\w'])"),
        )
        for language, lead, anchored, floating in (
            ("en", _EN_LEAD, _EN_ANCHORED, _EN_FLOATING),
            ("es", _ES_LEAD, _ES_ANCHORED, _ES_FLOATING),
            ("fr", _FR_LEAD, _FR_ANCHORED, _FR_FLOATING),
            ("pt", _PT_LEAD, _PT_ANCHORED, _PT_FLOATING),
        )
    )


# What, just before a structure, takes it back: a negation ("don't stop sending these", "no me dejen
# de escribir", "no quiero que dejen de …", "não pare de …"), or a subject other than the person ("you
# don't text me enough", "they stopped texting me").
_TAKEN_BACK = re.compile(
    r"(?:\b(?:don't|dont|do not|does not|doesn't|didn't|did not|never|not|can't|cant|cannot|couldn't|won't|wont|"
    r"wouldn't|no|nunca|ni|jamas|ne|n'|nao|jamais|nem)(?: (?:me|nos|te|le|se|lo|m'))?"
    r"|\b(?:don't|dont|do not|never) (?:want|wish|need) (?:you|u|them|anyone|anybody) to|\bdon'?t (?:you|u) dare"
    r"|\bno (?:quiero|deseo|quisiera) que|\bje ne veux pas que|\bnao quero que"
    r"|\b(?:you|u|they|he|she|we|it|ellos|ellas|ella|usted|ustedes|ele|ela|eles|elas|voce|voces|il|elle|ils|elles|on))"
    r"\s*$"
)
# A frame before it that makes it no request of the person's own: a condition, a question of what is
# possible, somebody else's words ("if i want to stop …", "can I stop the messages later?", "my sister
# said stop texting her"). "I told you to stop texting me" is a request all the same.
_FRAME = re.compile(
    r"\b(?:if|whether|how|why|when|said|says|say|told|tell|tells|asked|asks|wonder|can i|could i|may i|should i|"
    r"do i|cuando|como|por que|dijo|dice|quand|comment|pourquoi|quando|disse|diz|si je|se eu)\b"
)
_OWN_REPEAT = re.compile(
    r"\bi (?:already |have |'ve )?(?:said|told (?:you|u|ya)|asked (?:you|u|ya))(?: to| (?:to )?please)?\s*$"
)

# A word that narrows a stop request to a time, a duration or one kind of message.
_NARROWING = re.compile(
    r"\b(?:morning|mornings|night|nights|nightly|evening|evenings|afternoon|afternoons|tonight|today|tomorrow|"
    r"weekends?|weekdays?|week|weeks|days?|hours?|months?|early|late|until|till|til|before|after|during|"
    r"while|for now|for a while|for a bit|so often|so many|twice|reminders?|prompts?|"
    r"manana|mananas|noche|noches|tarde|tardes|temprano|hoy|fin de semana|semana|semanas|dias?|mes|horas?|"
    r"hasta|antes|despues|durante|mientras|por ahora|un tiempo|recordatorios?|"
    r"matin|matins|soir|soirs|nuit|nuits|aujourd'hui|demain|semaines?|jours?|mois|heures?|jusqu'a|avant|apres|"
    r"pendant|pour l'instant|quelque temps|rappels?|week-end|"
    r"manha|noite|amanha|hoje|fim de semana|ate|depois|enquanto|lembretes?|\d+)\b"
)
_CLAUSE = re.compile(r"[.!?;,\n]+|\s+-\s+|\s+(?:but|pero)\s+")  # not "mais", "mas": "more" in Portuguese and Spanish


def _request_in(clause: str) -> tuple[str, int] | None:
    """The language of the request structure in ``clause`` and where it ends, if there is one."""
    for language, anchored, floating in _requests():
        match = anchored.match(clause)
        if match is not None:
            return language, match.end()
        for found in floating.finditer(clause):
            before = clause[: found.start()]
            if _OWN_REPEAT.search(before) or not (_TAKEN_BACK.search(before) or _FRAME.search(before)):
                return language, found.end()
    return None


def _read_request(text: str) -> OptReading | None:
    clauses = [clause.strip(" '\"") for clause in _CLAUSE.split(_mend(fold_accents(normalise_text(text))))]
    clauses = [re.sub(r"\s+", " ", clause) for clause in clauses if clause]
    found: str | None = None
    unclear = False
    for clause in clauses:
        request = _request_in(clause)
        if request is None:
            continue
        language, end = request
        rest = _strip_fillers(tuple(re.findall(r"[^\W_]+(?:'[^\W_]+)*", clause[end:])))
        if rest and _NARROWING.search(" ".join(rest)):
            unclear = True
        else:
            found = found or language
    if found and not unclear and not any(_NARROWING.search(clause) for clause in clauses):
        return OptReading(OptKind.OPT_OUT, found, keyword=False)
    if found or unclear:
        return OptReading(OptKind.UNCLEAR_STOP, "", keyword=False)
    return None


# The long opt-out word, read through a slip of the keyboard ("unsubcribe", "unsubscibe me"): a word at
# most two edits away is the word. Not the French and Portuguese ones, whose conjugations are as close.
_LONG_WORDS = ("unsubscribe",)
_WORD_RE = re.compile(r"[^\W\d_]{9,}")


def _edits(a: str, b: str) -> int:
    """The optimal string alignment distance (insertions, deletions, substitutions, swaps)."""
    previous2: list[int] = []
    previous = list(range(len(b) + 1))
    for i, char_a in enumerate(a, start=1):
        current = [i] + [0] * len(b)
        for j, char_b in enumerate(b, start=1):
            cost = char_a != char_b
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            if i > 1 and j > 1 and char_a == b[j - 2] and a[i - 2] == char_b:
                current[j] = min(current[j], previous2[j - 2] + 1)
        previous2, previous = previous, current
    return previous[-1]


def _mend_word(word: str) -> str:
    for long_word in _LONG_WORDS:
        # not a word ending in "d": "unsubscribed" says what was done
        close = word != long_word and abs(len(word) - len(long_word)) <= 2 and word[:3] == long_word[:3]
        if close and _edits(word, long_word) <= 2 and not word.endswith("d"):
            return long_word
    return word


def _mend(text: str) -> str:
    """``text`` with the long opt-out words mended (``_LONG_WORDS``)."""
    return _WORD_RE.sub(lambda match: _mend_word(match[0]), text)


def provider_keyword(text: str) -> str | None:
    """The kind (``opt_out``, ``opt_in``, ``help``) of a message the provider's own filter answers:
    one of ``PROVIDER_KEYWORDS`` as the whole message, surrounding spaces aside, any case."""
    word = text.strip().upper()
    return next((kind for kind, words_ in PROVIDER_KEYWORDS.items() if word in words_), None)


# --- the fixed texts -----------------------------------------------------------------------------
# ``{study}``: the study's name; ``{contact}``: its contact. A2P 10DLC registration texts must match
# the study's HELP and STOP replies (docs/compliance.md): a study sets its own through the settings.
DEFAULT_OPT_OUT_TEXTS: dict[str, str] = {
    "en": "You're unsubscribed from {study} and won't get more messages. Reply START to restart.",
    "es": "Te diste de baja de {study} y no recibirás más mensajes. Responde START para volver a recibirlos.",
    "fr": "Vous êtes désabonné·e de {study} et ne recevrez plus de messages. Répondez START pour recommencer.",
    "pt": "Você saiu de {study} e não receberá mais mensagens. Responda START para voltar a recebê-las.",
}
DEFAULT_OPT_IN_TEXTS: dict[str, str] = {
    "en": "Welcome back! Your {study} messages are on again. Reply STOP to stop.",
    "es": "¡Hola de nuevo! Los mensajes de {study} vuelven a llegar. Responde BAJA para dejar de recibirlos.",
    "fr": "Bon retour ! Les messages de {study} reprennent. Répondez STOP pour les arrêter.",
    "pt": "Bem-vindo(a) de volta! As mensagens de {study} voltaram. Responda PARE para parar.",
}
DEFAULT_HELP_TEXTS: dict[str, str] = {
    "en": "{study}: daily habit-coaching texts. Help: {contact}. Msg & data rates may apply. "
    "Reply STOP to stop, START to restart.",
    "es": "{study}: mensajes diarios para tu hábito. Ayuda: {contact}. Pueden aplicarse tarifas de mensajes "
    "y datos. Responde BAJA para dejar de recibirlos, START para volver.",
    "fr": "{study} : des messages quotidiens pour votre habitude. Aide : {contact}. Des frais de messagerie peuvent "
    "s'appliquer. Répondez STOP pour arrêter, START pour recommencer.",
    "pt": "{study}: mensagens diárias para o seu hábito. Ajuda: {contact}. Podem ser cobradas tarifas de mensagens "
    "e dados. Responda PARE para parar, START para voltar.",
}


def primary_language(language: str) -> str:
    """The primary subtag, lower case: ``es-MX`` -> ``es``, ``EN_us`` -> ``en``, ``""`` -> ``""``."""
    return language.strip().split("-")[0].split("_")[0].lower()


def fixed_text(
    templates: Mapping[str, str], defaults: Mapping[str, str], language: str, *, study: str, contact: str
) -> str:
    """The text in ``language`` (its primary subtag: ``es-MX`` reads as ``es``): the study's own
    template for it, else the built-in one, else English's (the study's, else the built-in)."""
    primary = primary_language(language)
    template = (
        templates.get(primary)
        or defaults.get(primary)
        or templates.get(FALLBACK_LANGUAGE)
        or defaults[FALLBACK_LANGUAGE]
    )
    return template.replace("{study}", study).replace("{contact}", contact)
