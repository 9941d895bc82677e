"""The engine's own fixed replies in the participant's language: the model budget's notice
(``flow/budget.py``), the reply after a failed or empty synthesis (``flow/modules.fallback_reply``)
and a module's fallback reply.

Chosen by the participant's stored language (``ConversationParticipant.language``, its primary
subtag: set at enrolment, or remembered from an opt-out word or the intake's first reading), English
otherwise. The English texts are the behavioural contract and stay where they were
(``budget.REPLY_FOR_AN_HOUR`` / ``REPLY_FOR_A_DAY``, ``modules.TRY_AGAIN_FALLBACK``,
``INTAKE_FALLBACK`` / ``FEEDBACK_FALLBACK`` and the tool table's ``done_phrase`` /
``failed_phrase``); this module adds Spanish and French beside them. A reply is written in one
language whole: a claimed tool without a phrase in the participant's language makes the whole reply
English (tests/unit/test_engine_texts.py keeps every claimed tool translated).
"""

from __future__ import annotations

from dataclasses import dataclass

from promptpipe.controller import tool_table
from promptpipe.rules.opt_words import primary_language

__all__ = [
    "BUDGET_REPLIES",
    "ENGLISH",
    "FALLBACKS",
    "MODULE_FALLBACKS",
    "TOOL_PHRASES",
    "FallbackWords",
    "fallback_in",
    "language_of",
    "module_fallback",
]

ENGLISH = "en"

# The budget's one notice a window (docs/safety.md#budgets), per window ("hour", "day"); English in budget.py.
BUDGET_REPLIES: dict[str, dict[str, str]] = {
    "hour": {
        "es": (
            "Gracias, tengo tus mensajes. Voy a pausar mis respuestas un rato: "
            "escríbeme de nuevo en una hora más o menos y responderé todo lo que enviaste."
        ),
        "fr": (
            "Merci, vos messages sont bien arrivés. Je mets mes réponses en pause un petit moment : "
            "écrivez-moi de nouveau dans une heure environ et je répondrai à tout ce que vous avez envoyé."
        ),
    },
    "day": {
        "es": (
            "Gracias, tengo tus mensajes. Llegué a mi límite de hoy: "
            "escríbeme de nuevo mañana y responderé todo lo que enviaste."
        ),
        "fr": (
            "Merci, vos messages sont bien arrivés. J'ai atteint ma limite pour aujourd'hui : "
            "écrivez-moi de nouveau demain et je répondrai à tout ce que vous avez envoyé."
        ),
    },
}


@dataclass(frozen=True)
class FallbackWords:
    """How ``fallback_reply`` writes in one language: nothing went through, what did, what did not."""

    try_again: str
    done: str  # "{done}": the done phrases joined
    failed: str  # "{failed}": the failed phrases joined, after the done sentence
    conjunction: str  # the last two phrases joined by it ("a, b and c")


# English in modules.py (the contract: ``TRY_AGAIN_FALLBACK``, "I've …. I couldn't …: could you try that again?").
FALLBACKS: dict[str, FallbackWords] = {
    "es": FallbackWords(
        try_again="Perdona, no pude terminar eso ahora. ¿Puedes intentarlo de nuevo en un momento?",
        done="He {done}.",
        failed=" No pude {failed}: ¿puedes intentarlo de nuevo?",
        conjunction=" y ",
    ),
    "fr": FallbackWords(
        try_again="Désolé, je n'ai pas pu terminer cela pour l'instant. Pouvez-vous réessayer dans un moment ?",
        done="J'ai {done}.",
        failed=" Je n'ai pas pu {failed} : pouvez-vous réessayer ?",
        conjunction=" et ",
    ),
}

# Per claimed tool (``tool_table`` rows with a ``done_phrase``), per language: (done, failed).
TOOL_PHRASES: dict[str, dict[str, tuple[str, str]]] = {
    tool_table.TRANSITION.name: {
        "es": ("avanzado en nuestra conversación", "avanzar en nuestra conversación"),
        "fr": ("fait avancer notre conversation", "faire avancer notre conversation"),
    },
    tool_table.PROFILE.name: {
        "es": ("guardado tus datos", "guardar tus datos"),
        "fr": ("enregistré vos informations", "enregistrer vos informations"),
    },
    tool_table.SCHEDULER.name: {
        "es": ("actualizado el horario de tus recordatorios", "cambiar el horario de tus recordatorios"),
        "fr": ("mis à jour l'horaire de vos rappels", "modifier l'horaire de vos rappels"),
    },
    tool_table.HABIT_PROMPT.name: {
        "es": ("preparado tu mensaje del hábito", "preparar tu mensaje del hábito"),
        "fr": ("préparé votre message d'habitude", "préparer votre message d'habitude"),
    },
}


def fallback_in(language: str, done: list[str], failed: list[str]) -> str:
    """``modules.fallback_reply`` in ``language`` (one of ``FALLBACKS``): the tools ``done`` and
    ``failed`` (names in ``TOOL_PHRASES``), or the request to try again when nothing went through."""
    words = FALLBACKS[language]
    if not done:
        return words.try_again
    text = words.done.format(done=joined([TOOL_PHRASES[name][language][0] for name in done], words.conjunction))
    if failed:
        phrases = [TOOL_PHRASES[name][language][1] for name in failed]
        text += words.failed.format(failed=joined(phrases, words.conjunction))
    return text


def joined(phrases: list[str], conjunction: str) -> str:
    """Phrases as a sentence lists them: "a", "a and b", "a, b and c" (``conjunction``: " and ")."""
    return phrases[0] if len(phrases) == 1 else ", ".join(phrases[:-1]) + conjunction + phrases[-1]


# The module's own reply when nothing else wrote one (``ConversationModule.fallback``; English in modules.py).
MODULE_FALLBACKS: dict[str, dict[str, str]] = {
    "intake": {
        "es": "Estoy aquí para ayudarte a crear un pequeño hábito diario. ¿En qué te gustaría trabajar?",
        "fr": (
            "Je suis là pour vous aider à prendre une petite habitude quotidienne. Sur quoi aimeriez-vous travailler ?"
        ),
    },
    "feedback": {
        "es": "¡Gracias por contarme! ¿Cómo te fue hoy con tu hábito?",
        "fr": "Merci pour ces nouvelles ! Comment s'est passée votre habitude aujourd'hui ?",
    },
}


def module_fallback(module: str, english: str, stored: str | None) -> str:
    """The module's fallback reply in the participant's language; ``english`` otherwise."""
    return MODULE_FALLBACKS.get(module, {}).get(language_of(stored), english)


def language_of(stored: str | None) -> str:
    """The language of the engine's texts for a participant: the stored one's primary subtag when
    the engine has texts in it, else English."""
    language = primary_language(stored or "")
    return language if language in FALLBACKS else ENGLISH
