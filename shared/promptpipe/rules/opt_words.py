"""The opt-out, opt-in and help words and the fixed replies to them (docs/compliance.md): what the
functions that send those replies or read the settings need, without the reader of inbound texts
(``rules/opt_out.py``, which re-exports all of this), whose patterns only the functions that read
messages compile at cold start (docs/benchmarks.md, section 2).

Pure: no I/O, no settings object."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import StrEnum
from typing import Literal

FALLBACK_LANGUAGE = "en"
OptKeywordKind = Literal["opt_out", "opt_in", "help"]


class OptKind(StrEnum):
    OPT_OUT = "opt_out"
    OPT_IN = "opt_in"
    HELP = "help"
    UNCLEAR_STOP = "unclear_stop"  # a stop request narrowed or hedged: the coach asks


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
