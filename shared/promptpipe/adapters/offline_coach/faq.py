"""The offline coach's answers to a participant's questions about the study and the coach
(docs/offline-coach.md, "Questions"): who is this, is this a bot, how did you get my number, how long
does it take, what will you send, can I change the time, how do I stop, why do you ask, how many
questions are left. The study's facts come from
its settings (``StudyFacts.from_settings``); an answer never states what the study did not configure.
A question none of them answers is passed to the study team's contact, never guessed at."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

NO_TEAM = "the study team"
DEFAULT_SENDS = "one short habit prompt a day, at the time you pick, and a quick check-in on how it went"


@dataclass(frozen=True)
class StudyFacts:
    """What the coach may say of the study: its name, who runs it, how to reach them, what it sends."""

    name: str = "Habit coach"
    team: str = ""
    contact: str = ""
    sends: str = ""

    @classmethod
    def from_settings(cls, settings: Any) -> StudyFacts:
        return cls(
            name=getattr(settings, "study_name", "") or cls.name,
            team=getattr(settings, "study_team", "") or "",
            contact=getattr(settings, "study_contact", "") or "",
            sends=getattr(settings, "study_sends", "") or "",
        )

    @property
    def who_runs_it(self) -> str:
        return self.team or NO_TEAM

    @property
    def reach(self) -> str:
        """How to reach a person: the contact when configured."""
        return f"{self.who_runs_it} at {self.contact}" if self.contact else self.who_runs_it


def answer_faq(topic: str, study: StudyFacts, language: str = "en") -> str:
    """One or two sentences for ``topic`` (``rules.message_reading.TOPICS`` but ``rephrase``), in
    ``language`` (``en``, ``es``, ``fr``; English for any other)."""
    if language in ("es", "fr"):
        return _answer_in(language, topic, study)
    if topic == "who":
        return (
            f"I'm the automated habit coach of {study.name}, the study you signed up for, run by "
            f"{study.who_runs_it}. I help you build one small daily habit."
        )
    if topic == "bot":
        return f"Yes, I'm an automated coach (no person types these replies); {study.who_runs_it} can read our chat."
    if topic == "number":
        return (
            f"You gave it when you signed up for {study.name}; it is used only for these messages. "
            f"Questions about it: {study.reach}."
        )
    if topic == "how_long":
        return (
            "About a minute a day to begin with — small enough to do on a busy day. How many weeks "
            f"{study.name} runs is set by {study.who_runs_it}: {study.reach} can tell you when it ends."
        )
    if topic == "what_sent":
        return f"I'll send {study.sends or DEFAULT_SENDS}."
    if topic == "change_time_later":
        return "Yes — any time. Just text me the new time (like “7pm from now on”) and I'll move your daily prompt."
    if topic == "stop_later":
        return "Whenever you like: reply STOP to stop all messages, or “pause for a week” to take a break."
    if topic == "how_many":
        return "Just a few: your habit, why it matters, a time and what you already do then."
    if topic == "why_asked":
        return "It helps me word your daily prompts so they fit your day; a few words are plenty, and you can skip it."
    return f"I can't answer that one myself, but {study.reach} can."


# The same answers in Spanish and French; "{team}" is who runs the study, "{reach}" how to reach them.
_TEAM = {"es": "el equipo del estudio", "fr": "l'équipe de l'étude"}
_ANSWERS: dict[str, dict[str, str]] = {
    "es": {
        "who": "Soy el coach automático de hábitos de {study}, el estudio en el que te inscribiste, dirigido por "
        "{team}. Te ayudo a construir un pequeño hábito diario.",
        "bot": "Sí, soy un coach automático (ninguna persona escribe estas respuestas); {team} puede leer el chat.",
        "number": "Nos lo diste al inscribirte en {study}; solo se usa para estos mensajes. Dudas: {reach}.",
        "how_long": "Un minuto al día para empezar: lo bastante poco para un día ocupado.",
        "what_sent": "Te enviaré un mensaje corto al día, a la hora que elijas, y te preguntaré cómo te fue.",
        "change_time_later": "Sí, cuando quieras. Escríbeme la nueva hora (por ejemplo «a las 7 de la tarde») "
        "y muevo tu mensaje diario.",
        "stop_later": "Cuando quieras: responde BAJA para no recibir más mensajes, o «pausa una semana» para "
        "descansar.",
        "why_asked": "Me ayuda a escribir tus mensajes diarios para que encajen en tu día; bastan unas palabras, y "
        "puedes saltártelo.",
        "how_many": "Solo unas pocas: tu hábito, por qué te importa, una hora y qué haces ya a esa hora.",
        "other": "Eso no lo puedo contestar yo, pero {reach} sí.",
    },
    "fr": {
        "who": "Je suis le coach automatique d'habitudes de {study}, l'étude à laquelle vous vous êtes inscrit·e, "
        "menée par {team}. Je vous aide à prendre une petite habitude quotidienne.",
        "bot": "Oui, je suis un coach automatique (personne n'écrit ces réponses) ; {team} peut lire la conversation.",
        "number": "Vous l'avez donné en vous inscrivant à {study} ; il ne sert qu'à ces messages. Questions : {reach}.",
        "how_long": "Environ une minute par jour pour commencer : assez peu pour une journée chargée.",
        "what_sent": "Je vous enverrai un court message par jour, à l'heure choisie, et je vous demanderai comment "
        "ça s'est passé.",
        "change_time_later": "Oui, quand vous voulez. Écrivez-moi la nouvelle heure (par exemple « 19h ») et je "
        "déplace votre message quotidien.",
        "stop_later": "Quand vous voulez : répondez STOP pour ne plus recevoir de messages, ou « pause une "
        "semaine » pour faire une pause.",
        "why_asked": "Cela m'aide à écrire vos messages quotidiens pour qu'ils collent à votre journée ; quelques "
        "mots suffisent, et vous pouvez passer.",
        "how_many": "Juste quelques-unes : votre habitude, pourquoi elle compte, une heure et ce que vous faites "
        "déjà à ce moment-là.",
        "other": "Je ne peux pas répondre à cela moi-même, mais {reach} le peut.",
    },
}


def _answer_in(language: str, topic: str, study: StudyFacts) -> str:
    team = study.team or _TEAM[language]
    reach = f"{team} ({study.contact})" if study.contact else team
    answers = _ANSWERS[language]
    template = answers.get(topic, answers["other"])
    return template.replace("{study}", study.name).replace("{team}", team).replace("{reach}", reach)
